//! The least a content search of given files can cost (never shipped; for `bench/index.mjs`):
//! every file read on every core and each of its bytes looked at once (its newlines counted),
//! with no matcher, no result and no crossing into JS. A search that must read these files
//! cannot be faster than this on this machine.
//!
//! `read_floor <root> [rounds]` with the files (relative to `root`, one per line) on stdin.
//! Files from 512 KiB to 32 MiB are memory-mapped and the others read whole into a reused
//! buffer, as `engine::search` does. Prints one JSON line: `files`, `bytes`, `threads`, and
//! `ms`, the fastest and the median round (the first round is left out: it warms up).

use std::io::Read;
use std::sync::atomic::{AtomicUsize, Ordering};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut argv = std::env::args().skip(1);
    let root = std::path::PathBuf::from(argv.next().ok_or("usage: read_floor <root> [rounds] < files")?);
    let rounds: usize = argv.next().map_or(Ok(9), |r| r.parse())?;
    let mut list = String::new();
    std::io::stdin().read_to_string(&mut list)?;
    // Largest first, as `engine::search` orders its large files, so that no core is left
    // alone with a large file at the end.
    let mut files: Vec<(u64, std::path::PathBuf)> = list
        .lines()
        .filter(|l| !l.is_empty())
        .map(|l| {
            let p = root.join(l);
            (std::fs::metadata(&p).map_or(0, |m| m.len()), p)
        })
        .collect();
    files.sort_by_key(|f| std::cmp::Reverse(f.0));
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    let mut times = Vec::new();
    let mut newlines = 0;
    for _ in 0..=rounds {
        let next = AtomicUsize::new(0);
        let start = std::time::Instant::now();
        newlines = std::thread::scope(|s| {
            let workers: Vec<_> = (0..threads).map(|_| s.spawn(|| read_share(&files, &next))).collect();
            workers.into_iter().map(|w| w.join().unwrap_or(0)).sum::<usize>()
        });
        times.push(start.elapsed().as_secs_f64() * 1e3);
    }
    let mut measured = times.split_off(1);
    measured.sort_by(f64::total_cmp);
    let bytes: u64 = files.iter().map(|f| f.0).sum();
    println!(
        "{}",
        serde_json::json!({
            "files": files.len(),
            "bytes": bytes,
            "newlines": newlines,
            "threads": threads,
            "ms": {"min": measured.first(), "median": measured.get(measured.len() / 2)},
        })
    );
    Ok(())
}

/// Take files from the shared list until it is done; the newlines counted.
fn read_share(files: &[(u64, std::path::PathBuf)], next: &AtomicUsize) -> usize {
    let mut buf = Vec::new();
    let mut newlines = 0;
    while let Some((size, path)) = files.get(next.fetch_add(1, Ordering::Relaxed)) {
        let Ok(mut file) = std::fs::File::open(path) else { continue };
        if (512 * 1024..=32 * 1024 * 1024).contains(size) {
            // SAFETY: a bench over files nobody writes while it runs; the map is dropped here.
            if let Ok(map) = unsafe { memmap2::Mmap::map(&file) } {
                newlines += memchr::memchr_iter(b'\n', &map).count();
            }
        } else {
            buf.clear();
            if file.read_to_end(&mut buf).is_ok() {
                newlines += memchr::memchr_iter(b'\n', &buf).count();
            }
        }
    }
    newlines
}
