//! Windows: a command tree is a Job Object.
//!
//! The command is started suspended, assigned to a new job and only then resumed, so neither
//! it nor anything it starts can run outside the job (children inherit their parent's job;
//! `CREATE_BREAKAWAY_FROM_JOB` is refused, as the job does not allow breakaway). The job is
//! created with `JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE`, and its only handle is ours (not
//! inheritable): when Node exits or crashes, Windows closes the handle and kills the whole
//! tree, the part Linux's parent-death signal plays. [`Job::terminate`] is
//! `TerminateJobObject`: every process of the tree at once, detached daemons included (the
//! part of Linux's tree walk).

use std::io;
use std::os::windows::io::{AsRawHandle, FromRawHandle, OwnedHandle, RawHandle};
use std::time::Duration;

use windows_sys::Win32::Foundation::{HANDLE, INVALID_HANDLE_VALUE};
use windows_sys::Win32::System::Diagnostics::ToolHelp::{
    CreateToolhelp32Snapshot, TH32CS_SNAPTHREAD, THREADENTRY32, Thread32First, Thread32Next,
};
use windows_sys::Win32::System::JobObjects::{
    AssignProcessToJobObject, CreateJobObjectW, JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
    JOBOBJECT_BASIC_ACCOUNTING_INFORMATION, JOBOBJECT_EXTENDED_LIMIT_INFORMATION,
    JobObjectBasicAccountingInformation, JobObjectExtendedLimitInformation, QueryInformationJobObject,
    SetInformationJobObject, TerminateJobObject,
};
use windows_sys::Win32::System::Threading::{OpenThread, ResumeThread, THREAD_SUSPEND_RESUME};

/// The exit code a tree killed by [`crate::engine::process::supervisor::Tree::terminate`]
/// gets (reported as `SIGTERM`, as on Linux).
pub const TERM_CODE: u32 = 0xEDD1_000F;
/// The exit code of a tree killed at once (reported as `SIGKILL`).
pub const KILL_CODE: u32 = 0xEDD1_0009;

/// `CREATE_SUSPENDED`: the command's first thread waits until the job holds it.
pub const CREATE_SUSPENDED: u32 = windows_sys::Win32::System::Threading::CREATE_SUSPENDED;
/// No console window for console programs started from a GUI host (VS Code, Electron).
pub const CREATE_NO_WINDOW: u32 = windows_sys::Win32::System::Threading::CREATE_NO_WINDOW;

/// A Job Object that kills its processes when its last handle closes.
#[derive(Debug)]
pub struct Job(OwnedHandle);

impl Job {
    /// A new, anonymous job with kill-on-close.
    pub fn new() -> io::Result<Self> {
        // SAFETY: no security attributes (the handle is not inheritable) and no name; the
        // call returns a new handle or null.
        let raw = unsafe { CreateJobObjectW(std::ptr::null(), std::ptr::null()) };
        if raw.is_null() {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: CreateJobObjectW just returned this handle; the `OwnedHandle` is its only
        // owner and closes it once.
        let job = Self(unsafe { OwnedHandle::from_raw_handle(raw as RawHandle) });
        let mut info = JOBOBJECT_EXTENDED_LIMIT_INFORMATION::default();
        info.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
        // SAFETY: `info` is a local of exactly the size passed, read by the call; the handle
        // is the job we own.
        let ok = unsafe {
            SetInformationJobObject(
                job.handle(),
                JobObjectExtendedLimitInformation,
                (&raw const info).cast(),
                size_of::<JOBOBJECT_EXTENDED_LIMIT_INFORMATION>() as u32,
            )
        };
        if ok == 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(job)
    }

    fn handle(&self) -> HANDLE {
        self.0.as_raw_handle() as HANDLE
    }

    /// Put the (suspended) process `process` of id `pid` in the job, then resume its threads.
    pub fn adopt(&self, process: RawHandle, pid: u32) -> io::Result<()> {
        // SAFETY: both handles are open: the job is ours, `process` belongs to a child the
        // caller has not reaped.
        if unsafe { AssignProcessToJobObject(self.handle(), process as HANDLE) } == 0 {
            return Err(io::Error::last_os_error());
        }
        resume_threads(pid)
    }

    /// Kill every process of the job with `code`.
    pub fn terminate(&self, code: u32) {
        // SAFETY: the job handle is ours and open; the call takes no pointers.
        unsafe { TerminateJobObject(self.handle(), code) };
    }

    /// How many processes of the job are still running.
    pub fn active(&self) -> u32 {
        let mut info = JOBOBJECT_BASIC_ACCOUNTING_INFORMATION::default();
        // SAFETY: `info` is a local of exactly the size passed, written by the call; the
        // return-length pointer may be null.
        let ok = unsafe {
            QueryInformationJobObject(
                self.handle(),
                JobObjectBasicAccountingInformation,
                (&raw mut info).cast(),
                size_of::<JOBOBJECT_BASIC_ACCOUNTING_INFORMATION>() as u32,
                std::ptr::null_mut(),
            )
        };
        if ok == 0 { 0 } else { info.ActiveProcesses }
    }

    /// Kill what is left and wait (up to `limit`) until no process of the job runs.
    pub async fn empty(&self, limit: Duration) {
        let start = std::time::Instant::now();
        self.terminate(KILL_CODE);
        while self.active() > 0 && start.elapsed() < limit {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
}

/// Resume every thread of process `pid` (a process started with `CREATE_SUSPENDED` has one).
fn resume_threads(pid: u32) -> io::Result<()> {
    // SAFETY: takes integers; returns a new snapshot handle or INVALID_HANDLE_VALUE.
    let snap = unsafe { CreateToolhelp32Snapshot(TH32CS_SNAPTHREAD, 0) };
    if snap == INVALID_HANDLE_VALUE {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the snapshot handle was just created; this `OwnedHandle` closes it once.
    let snap = unsafe { OwnedHandle::from_raw_handle(snap as RawHandle) };
    let mut entry = THREADENTRY32 { dwSize: size_of::<THREADENTRY32>() as u32, ..Default::default() };
    let mut resumed = 0;
    // SAFETY: `entry` is a local THREADENTRY32 with dwSize set, as Thread32First/Next require;
    // they write one entry into it.
    let mut more = unsafe { Thread32First(snap.as_raw_handle() as HANDLE, &raw mut entry) } != 0;
    while more {
        if entry.th32OwnerProcessID == pid {
            // SAFETY: takes integers; returns a new thread handle or null.
            let thread = unsafe { OpenThread(THREAD_SUSPEND_RESUME, 0, entry.th32ThreadID) };
            if !thread.is_null() {
                // SAFETY: the handle was just opened; this `OwnedHandle` closes it once.
                let thread = unsafe { OwnedHandle::from_raw_handle(thread as RawHandle) };
                // SAFETY: an open thread handle with THREAD_SUSPEND_RESUME access.
                if unsafe { ResumeThread(thread.as_raw_handle() as HANDLE) } != u32::MAX {
                    resumed += 1;
                }
            }
        }
        // SAFETY: as for Thread32First.
        more = unsafe { Thread32Next(snap.as_raw_handle() as HANDLE, &raw mut entry) } != 0;
    }
    if resumed == 0 {
        return Err(io::Error::other("the suspended command's thread could not be resumed"));
    }
    Ok(())
}
