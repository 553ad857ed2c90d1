//! Writing safely: atomic single-file writes, per-path locks, and the all-or-nothing commit
//! of changes to several files.

pub mod atomic;
pub mod commit;
pub mod locks;
pub mod safe_dir;
pub mod staged;
