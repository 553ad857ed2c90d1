//! The one error type of the crate, [`ToolError`], with stable string codes ([`ErrorCode`]).
//!
//! Messages keep the exact texts of `@eddie/tools` (an LLM and existing callers match on them);
//! the code is what programs should branch on.

use std::io;
use std::path::Path;

use serde_json::{Map, Value};

/// Stable, append-only error codes. `as_str` is the `code` a JS caller sees.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorCode {
    /// An argument has the wrong type, is missing, or is out of range.
    InvalidArgument,
    /// A path (or a symlink on it) leaves the workspace.
    OutsideWorkspace,
    /// A file or directory does not exist.
    NotFound,
    /// A directory was given where a file is needed.
    IsADirectory,
    /// A file was given where a directory is needed.
    NotADirectory,
    /// The OS refused access.
    PermissionDenied,
    /// Any other I/O failure.
    Io,
    /// A regular expression does not compile.
    InvalidRegex,
    /// A stored document (plan, task list, config) is not valid JSON/YAML.
    Parse,
    /// A task id or task number does not exist.
    TaskNotFound,
    /// A command exited with a non-zero status or was killed by a signal.
    CommandFailed,
    /// A command ran past its time limit and was killed.
    Timeout,
    /// A command wrote more than its output limit and was killed.
    OutputLimit,
    /// The caller aborted the call (`ctx.signal`).
    Cancelled,
    /// `ctx.confirm` threw, rejected, or returned something other than a boolean.
    ConfirmFailed,
    /// No tool has this name.
    UnknownTool,
    /// A bug: a panic or a broken invariant inside the addon.
    Internal,
    /// The file changed since it was read: its content hash differs from `expectedHash`.
    Stale,
    /// The text to replace (or a patch hunk's context) was not found; carries `reason` and `candidates`.
    NoMatch,
    /// The text to replace occurs more than once; carries the matching `lines`.
    AmbiguousMatch,
    /// An edit cannot be written back losslessly in the file's encoding, or the file does not round-trip.
    Unencodable,
    /// A text operation was asked of a binary file.
    BinaryFile,
    /// The target exists and the call does not allow overwriting it.
    AlreadyExists,
    /// A diff, patch or SEARCH/REPLACE text is malformed.
    InvalidPatch,
    /// No background process has this id (in this workspace).
    ProcessNotFound,
    /// The background process has already exited (or closed its stdin).
    ProcessNotRunning,
    /// Too many background processes are running; kill one first.
    TooManyProcesses,
    /// No command was given and none could be detected for this project.
    NoRunner,
    /// A tool needs `ctx.ask` and the caller gave none.
    AskUnavailable,
    /// `ctx.ask` threw, rejected, or returned something other than a string.
    AskFailed,
    /// The path is not inside a git repository.
    NotARepository,
    /// A git revision, branch, remote or checkpoint does not exist.
    RefNotFound,
    /// A commit would record no change (pass `allowEmpty` to commit anyway).
    NothingToCommit,
    /// A merge, pull or restore would conflict; nothing was changed.
    MergeConflict,
    /// A push or update is not a fast-forward of the remote branch.
    NonFastForward,
    /// The operation is not allowed on a protected branch.
    ProtectedBranch,
    /// A lock (such as git's `index.lock`) is held by another process; nothing changed.
    Locked,
    /// Local changes would be overwritten; commit, stash or checkpoint them first.
    DirtyWorktree,
    /// A remote refused the credentials, or none were available.
    AuthFailed,
    /// A repository hook exited non-zero; its output is in the error.
    HookFailed,
    /// The network guard refused the address (the message names the rule).
    BlockedAddress,
    /// The URL's scheme is not `http` or `https`.
    UnsupportedScheme,
    /// The URL does not parse.
    InvalidUrl,
    /// A body or value is larger than its cap.
    TooLarge,
    /// The server answered with an error status (carries `status`).
    HttpStatus,
    /// The TLS handshake or certificate check failed.
    Tls,
    /// The host name did not resolve.
    Dns,
    /// The connection failed (refused, reset or closed early).
    Network,
    /// No web search provider is configured (the message names the variables).
    NoProvider,
    /// A store's database was damaged; it was moved aside and a new one started.
    StoreCorrupted,
    /// A store (database or Redis) could not be opened or reached.
    StoreUnavailable,
    /// No Chrome or Chromium was found (the message says where it looked).
    BrowserNotFound,
    /// No page element matches the ref or selector (carries the nearest candidates).
    ElementNotFound,
    /// No browser tab has this id.
    TabNotFound,
    /// The call needs an approval that was not given, and no one could be asked (no
    /// `ctx.confirm`, or a host that approves before the call did not show this prompt). The
    /// message lists every prompt that still needs approval; nothing ran.
    ApprovalRequired,
    /// The host's policy refuses this call (a permission ceiling, a required sandbox, a
    /// sandbox mode that forbids it); no one was asked and nothing ran.
    PolicyDenied,
    /// The host requires a sandbox for commands and this system cannot provide one (the
    /// message says what is missing); nothing ran.
    SandboxUnavailable,
    /// The person asked declined the call of a tool that has no declined result of its own
    /// (the pipeline asked before it ran); nothing ran.
    Declined,
    /// The repository uses a format or extension libgit2 cannot read (a split or sparse
    /// index, reftable refs, SHA-256 object names, an unknown `extensions.*`); the message
    /// names it and, where git has one, the command that converts the repository.
    UnsupportedRepository,
}

impl ErrorCode {
    /// The SCREAMING_SNAKE_CASE string of the code.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::InvalidArgument => "INVALID_ARGUMENT",
            Self::OutsideWorkspace => "OUTSIDE_WORKSPACE",
            Self::NotFound => "NOT_FOUND",
            Self::IsADirectory => "IS_A_DIRECTORY",
            Self::NotADirectory => "NOT_A_DIRECTORY",
            Self::PermissionDenied => "PERMISSION_DENIED",
            Self::Io => "IO",
            Self::InvalidRegex => "INVALID_REGEX",
            Self::Parse => "PARSE",
            Self::TaskNotFound => "TASK_NOT_FOUND",
            Self::CommandFailed => "COMMAND_FAILED",
            Self::Timeout => "TIMEOUT",
            Self::OutputLimit => "OUTPUT_LIMIT",
            Self::Cancelled => "CANCELLED",
            Self::ConfirmFailed => "CONFIRM_FAILED",
            Self::UnknownTool => "UNKNOWN_TOOL",
            Self::Internal => "INTERNAL",
            Self::Stale => "STALE",
            Self::NoMatch => "NO_MATCH",
            Self::AmbiguousMatch => "AMBIGUOUS_MATCH",
            Self::Unencodable => "UNENCODABLE",
            Self::BinaryFile => "BINARY_FILE",
            Self::AlreadyExists => "ALREADY_EXISTS",
            Self::InvalidPatch => "INVALID_PATCH",
            Self::ProcessNotFound => "PROCESS_NOT_FOUND",
            Self::ProcessNotRunning => "PROCESS_NOT_RUNNING",
            Self::TooManyProcesses => "TOO_MANY_PROCESSES",
            Self::NoRunner => "NO_RUNNER",
            Self::AskUnavailable => "ASK_UNAVAILABLE",
            Self::AskFailed => "ASK_FAILED",
            Self::NotARepository => "NOT_A_REPOSITORY",
            Self::RefNotFound => "REF_NOT_FOUND",
            Self::NothingToCommit => "NOTHING_TO_COMMIT",
            Self::MergeConflict => "MERGE_CONFLICT",
            Self::NonFastForward => "NON_FAST_FORWARD",
            Self::ProtectedBranch => "PROTECTED_BRANCH",
            Self::Locked => "LOCKED",
            Self::DirtyWorktree => "DIRTY_WORKTREE",
            Self::AuthFailed => "AUTH_FAILED",
            Self::HookFailed => "HOOK_FAILED",
            Self::BlockedAddress => "BLOCKED_ADDRESS",
            Self::UnsupportedScheme => "UNSUPPORTED_SCHEME",
            Self::InvalidUrl => "INVALID_URL",
            Self::TooLarge => "TOO_LARGE",
            Self::HttpStatus => "HTTP_STATUS",
            Self::Tls => "TLS",
            Self::Dns => "DNS",
            Self::Network => "NETWORK",
            Self::NoProvider => "NO_PROVIDER",
            Self::StoreCorrupted => "STORE_CORRUPTED",
            Self::StoreUnavailable => "STORE_UNAVAILABLE",
            Self::BrowserNotFound => "BROWSER_NOT_FOUND",
            Self::ElementNotFound => "ELEMENT_NOT_FOUND",
            Self::TabNotFound => "TAB_NOT_FOUND",
            Self::ApprovalRequired => "APPROVAL_REQUIRED",
            Self::PolicyDenied => "POLICY_DENIED",
            Self::SandboxUnavailable => "SANDBOX_UNAVAILABLE",
            Self::Declined => "DECLINED",
            Self::UnsupportedRepository => "UNSUPPORTED_REPOSITORY",
        }
    }

    /// Every code, in declaration order (for docs and tests).
    pub const ALL: &'static [ErrorCode] = &[
        Self::InvalidArgument,
        Self::OutsideWorkspace,
        Self::NotFound,
        Self::IsADirectory,
        Self::NotADirectory,
        Self::PermissionDenied,
        Self::Io,
        Self::InvalidRegex,
        Self::Parse,
        Self::TaskNotFound,
        Self::CommandFailed,
        Self::Timeout,
        Self::OutputLimit,
        Self::Cancelled,
        Self::ConfirmFailed,
        Self::UnknownTool,
        Self::Internal,
        Self::Stale,
        Self::NoMatch,
        Self::AmbiguousMatch,
        Self::Unencodable,
        Self::BinaryFile,
        Self::AlreadyExists,
        Self::InvalidPatch,
        Self::ProcessNotFound,
        Self::ProcessNotRunning,
        Self::TooManyProcesses,
        Self::NoRunner,
        Self::AskUnavailable,
        Self::AskFailed,
        Self::NotARepository,
        Self::RefNotFound,
        Self::NothingToCommit,
        Self::MergeConflict,
        Self::NonFastForward,
        Self::ProtectedBranch,
        Self::Locked,
        Self::DirtyWorktree,
        Self::AuthFailed,
        Self::HookFailed,
        Self::BlockedAddress,
        Self::UnsupportedScheme,
        Self::InvalidUrl,
        Self::TooLarge,
        Self::HttpStatus,
        Self::Tls,
        Self::Dns,
        Self::Network,
        Self::NoProvider,
        Self::StoreCorrupted,
        Self::StoreUnavailable,
        Self::BrowserNotFound,
        Self::ElementNotFound,
        Self::TabNotFound,
        Self::ApprovalRequired,
        Self::PolicyDenied,
        Self::SandboxUnavailable,
        Self::Declined,
        Self::UnsupportedRepository,
    ];
}

/// Which JS constructor the error should be thrown as (eddie throws a few `RangeError`s).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum JsErrorKind {
    /// `Error`
    #[default]
    Error,
    /// `RangeError`
    RangeError,
    /// `TypeError`
    TypeError,
    /// `SyntaxError`
    SyntaxError,
}

/// An error from a tool: a stable code, eddie's message, and optional extra properties
/// (for example `exitCode`, `stdout` on a failed command).
#[derive(Debug, Clone, thiserror::Error)]
#[error("{message}")]
pub struct ToolError {
    code: ErrorCode,
    message: String,
    kind: JsErrorKind,
    props: Map<String, Value>,
}

/// The crate's result type.
pub type Result<T, E = ToolError> = std::result::Result<T, E>;

impl ToolError {
    /// A new error with `code` and `message`.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self { code, message: message.into(), kind: JsErrorKind::Error, props: Map::new() }
    }

    /// `INVALID_ARGUMENT` with `message`.
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::InvalidArgument, message)
    }

    /// `OUTSIDE_WORKSPACE` for a path argument, with the §5.2 text.
    pub fn outside_workspace(path_as_given: &str) -> Self {
        Self::new(ErrorCode::OutsideWorkspace, format!("Path is outside the workspace: {path_as_given}"))
    }

    /// `INTERNAL`: a bug.
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::Internal, message)
    }

    /// `CANCELLED`: the caller aborted.
    pub fn cancelled() -> Self {
        Self::new(ErrorCode::Cancelled, "The operation was aborted")
    }

    /// Throw as another JS constructor.
    pub fn with_kind(mut self, kind: JsErrorKind) -> Self {
        self.kind = kind;
        self
    }

    /// Attach an extra property to the thrown JS error.
    pub fn with_prop(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.props.insert(key.to_owned(), value.into());
        self
    }

    /// The stable code.
    pub fn code(&self) -> ErrorCode {
        self.code
    }

    /// The message (eddie's text).
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The JS constructor to use.
    pub fn kind(&self) -> JsErrorKind {
        self.kind
    }

    /// Extra properties for the JS error object.
    pub fn props(&self) -> &Map<String, Value> {
        &self.props
    }

    /// The same error with the workspace's absolute path left out of its message and `path`:
    /// `<root>/a/b.txt` becomes `a/b.txt`, the root itself `.`. What a model reads then names
    /// the file as the model does, and does not show where the workspace lives on the host.
    #[must_use]
    pub fn relative_to(mut self, root: &Path) -> Self {
        let root = root.to_string_lossy();
        if root.len() <= 1 {
            return self;
        }
        let inside = format!("{root}/");
        let relative = |text: &str| -> String {
            let text = text.replace(&inside, "");
            // The root on its own (quoted, or at the end of the text) is `.`.
            text.replace(&format!("'{root}'"), "'.'").replace(&format!("`{root}`"), "`.`")
        };
        self.message = relative(&self.message);
        if let Some(Value::String(p)) = self.props.get("path") {
            let p = if *p == *root { ".".to_owned() } else { relative(p) };
            self.props.insert("path".to_owned(), Value::String(p));
        }
        self
    }

    /// A Node-style fs error: `ENOENT: no such file or directory, open '/abs/path'`.
    /// `path` is omitted from the text when `None` (Node does so for `read` on a directory).
    pub fn fs(err: &io::Error, syscall: &str, path: Option<&Path>) -> Self {
        // Windows refuses to open a folder as a file with "access denied": say EISDIR, as Node
        // and Linux do.
        #[cfg(windows)]
        let eisdir = io::Error::new(io::ErrorKind::IsADirectory, "Is a directory");
        #[cfg(windows)]
        let err = if err.kind() == io::ErrorKind::PermissionDenied && path.is_some_and(Path::is_dir) {
            &eisdir
        } else {
            err
        };
        let (errno, text, code) = describe_io(err);
        let message = match path {
            Some(p) => format!("{errno}: {text}, {syscall} '{}'", p.display()),
            None => format!("{errno}: {text}, {syscall}"),
        };
        let mut e = Self::new(code, message).with_prop("errno_code", errno).with_prop("syscall", syscall);
        if let Some(p) = path {
            e = e.with_prop("path", p.display().to_string());
        }
        e
    }
}

/// (errno name, libuv description, our code) for an I/O error.
fn describe_io(err: &io::Error) -> (String, String, ErrorCode) {
    #[cfg(windows)]
    let raw = windows_errno(err);
    #[cfg(unix)]
    let raw = err.raw_os_error();
    let known: Option<(&str, &str, ErrorCode)> = match raw {
        Some(libc::ENOENT) => Some(("ENOENT", "no such file or directory", ErrorCode::NotFound)),
        Some(libc::EACCES) => Some(("EACCES", "permission denied", ErrorCode::PermissionDenied)),
        Some(libc::EPERM) => Some(("EPERM", "operation not permitted", ErrorCode::PermissionDenied)),
        Some(libc::EISDIR) => Some(("EISDIR", "illegal operation on a directory", ErrorCode::IsADirectory)),
        Some(libc::ENOTDIR) => Some(("ENOTDIR", "not a directory", ErrorCode::NotADirectory)),
        Some(libc::EEXIST) => Some(("EEXIST", "file already exists", ErrorCode::Io)),
        Some(libc::ELOOP) => Some(("ELOOP", "too many symbolic links encountered", ErrorCode::Io)),
        Some(libc::ENAMETOOLONG) => Some(("ENAMETOOLONG", "name too long", ErrorCode::InvalidArgument)),
        Some(libc::ENOSPC) => Some(("ENOSPC", "no space left on device", ErrorCode::Io)),
        Some(libc::EROFS) => Some(("EROFS", "read-only file system", ErrorCode::PermissionDenied)),
        Some(libc::EMFILE) => Some(("EMFILE", "too many open files", ErrorCode::Io)),
        _ => None,
    };
    match known {
        Some((n, t, c)) => (n.to_owned(), t.to_owned(), c),
        None => match err.kind() {
            io::ErrorKind::NotFound => {
                ("ENOENT".into(), "no such file or directory".into(), ErrorCode::NotFound)
            }
            io::ErrorKind::PermissionDenied => {
                ("EACCES".into(), "permission denied".into(), ErrorCode::PermissionDenied)
            }
            _ => ("EIO".into(), err.to_string(), ErrorCode::Io),
        },
    }
}

/// Windows: the errno an error stands for (its raw code is a Win32 error, not an errno).
#[cfg(windows)]
fn windows_errno(err: &io::Error) -> Option<i32> {
    use windows_sys::Win32::Foundation as w;
    let raw = err.raw_os_error().and_then(|r| u32::try_from(r).ok());
    Some(match (raw, err.kind()) {
        (Some(w::ERROR_STOPPED_ON_SYMLINK | w::ERROR_CANT_RESOLVE_FILENAME), _) => libc::ELOOP,
        (Some(w::ERROR_DIRECTORY), _) => libc::ENOTDIR,
        // Our own code makes errors from libc's errno values (`from_raw_os_error(libc::EISDIR)`);
        // as Win32 codes 20 and 21 are device errors (bad unit, not ready) no file tool meets.
        (Some(20), _) => libc::ENOTDIR,
        (Some(21), _) => libc::EISDIR,
        (Some(w::ERROR_FILENAME_EXCED_RANGE), _) => libc::ENAMETOOLONG,
        (Some(w::ERROR_TOO_MANY_OPEN_FILES), _) => libc::EMFILE,
        (_, io::ErrorKind::NotFound) => libc::ENOENT,
        (_, io::ErrorKind::PermissionDenied) => libc::EACCES,
        (_, io::ErrorKind::IsADirectory) => libc::EISDIR,
        (_, io::ErrorKind::NotADirectory) => libc::ENOTDIR,
        (_, io::ErrorKind::AlreadyExists) => libc::EEXIST,
        (_, io::ErrorKind::StorageFull) => libc::ENOSPC,
        (_, io::ErrorKind::ReadOnlyFilesystem) => libc::EROFS,
        _ => return None,
    })
}

/// Prefix an error's message (keeping code and properties).
pub fn prefixed(e: ToolError, prefix: &str) -> ToolError {
    let mut out = ToolError::new(e.code(), format!("{prefix}{}", e.message())).with_kind(e.kind());
    for (k, v) in e.props() {
        out = out.with_prop(k, v.clone());
    }
    out
}

/// `ALREADY_EXISTS` for `path`.
pub fn exists_error(path: &str, hint: &str) -> ToolError {
    ToolError::new(ErrorCode::AlreadyExists, format!("{path} already exists; {hint}")).with_prop("path", path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_unique_screaming_snake() {
        let mut seen = std::collections::HashSet::new();
        for c in ErrorCode::ALL {
            let s = c.as_str();
            assert!(s.chars().all(|ch| ch.is_ascii_uppercase() || ch == '_'), "{s}");
            assert!(seen.insert(s), "duplicate {s}");
        }
    }

    #[test]
    fn relative_to_leaves_out_the_workspace_root() {
        let e = io::Error::from_raw_os_error(libc::ENOENT);
        let t = ToolError::fs(&e, "open", Some(Path::new("/w/ws/sub/x.txt"))).relative_to(Path::new("/w/ws"));
        assert_eq!(t.message(), "ENOENT: no such file or directory, open 'sub/x.txt'");
        assert_eq!(t.props().get("path"), Some(&Value::from("sub/x.txt")));
        assert_eq!(t.code(), ErrorCode::NotFound);
        let t = ToolError::fs(&e, "scandir", Some(Path::new("/w/ws"))).relative_to(Path::new("/w/ws"));
        assert_eq!(t.message(), "ENOENT: no such file or directory, scandir '.'");
        // A sibling whose name starts like the root is not inside it.
        let t = ToolError::fs(&e, "open", Some(Path::new("/w/ws2/x"))).relative_to(Path::new("/w/ws"));
        assert_eq!(t.message(), "ENOENT: no such file or directory, open '/w/ws2/x'");
    }

    #[test]
    fn fs_error_uses_node_text() {
        let e = io::Error::from_raw_os_error(libc::ENOENT);
        let t = ToolError::fs(&e, "open", Some(Path::new("/w/x.txt")));
        assert_eq!(t.message(), "ENOENT: no such file or directory, open '/w/x.txt'");
        assert_eq!(t.code(), ErrorCode::NotFound);
        let e = io::Error::from_raw_os_error(libc::EISDIR);
        let t = ToolError::fs(&e, "read", None);
        assert_eq!(t.message(), "EISDIR: illegal operation on a directory, read");
        assert_eq!(t.code(), ErrorCode::IsADirectory);
    }
}
