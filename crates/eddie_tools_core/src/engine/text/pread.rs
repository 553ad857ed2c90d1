//! File tools: `file_read` (paged, character-safe, O(page) at any offset) and `file_write`
//! (confirmed, atomic). Paths go through [`crate::workspace::Workspace::resolve`].

#[cfg(unix)]
use std::os::unix::fs::FileExt;
#[cfg(windows)]
use std::os::windows::fs::FileExt;

/// `pread` until `buf` is full or the file ends; returns the bytes read.
pub fn read_at_most(file: &std::fs::File, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
    let mut done = 0;
    while done < buf.len() {
        // Windows has no pread: `seek_read` moves the file's cursor, which no caller relies on.
        #[cfg(unix)]
        let got = file.read_at(&mut buf[done..], offset + done as u64);
        #[cfg(windows)]
        let got = file.seek_read(&mut buf[done..], offset + done as u64);
        match got {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(done)
}
