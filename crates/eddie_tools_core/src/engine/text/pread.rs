//! File tools: `file_read` (paged, character-safe, O(page) at any offset) and `file_write`
//! (confirmed, atomic). Paths go through [`crate::workspace::Workspace::resolve`].

use std::os::unix::fs::FileExt;

/// `pread` until `buf` is full or the file ends; returns the bytes read.
pub fn read_at_most(file: &std::fs::File, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
    let mut done = 0;
    while done < buf.len() {
        match file.read_at(&mut buf[done..], offset + done as u64) {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(done)
}
