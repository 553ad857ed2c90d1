//! Processes: the supervisor (every command runs as a tree that cannot outlive its call or
//! this process), the command runner on top of it, output capture, and the child environment.

pub mod capture;
pub mod command;
pub mod env;
pub mod risk;
pub mod supervisor;
