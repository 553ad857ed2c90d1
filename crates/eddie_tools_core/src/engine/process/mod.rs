//! Processes: the supervisor (every command runs as a tree that cannot outlive its call or
//! this process), the command runner on top of it, output capture, the child environment, and
//! the sandbox every command runs in.

pub mod capture;
pub mod command;
pub mod env;
#[cfg(windows)]
pub mod job;
#[cfg(eddie_kq)]
pub mod kqueue_shim;
pub mod risk;
pub mod sandbox;
pub mod sandbox_child;
pub mod shell;
pub mod supervisor;
#[cfg(unix)]
pub mod walk;
