//! File tools: `file_read` (paged, character-safe, O(page) at any offset) and `file_write`
//! (confirmed, atomic). Paths go through [`crate::workspace::Workspace::resolve`].

pub mod file_read;
pub mod file_write;
