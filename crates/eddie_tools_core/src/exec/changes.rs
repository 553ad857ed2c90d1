//! The files a formatter changed: a snapshot (path → size and a hash of the contents) of the
//! files below the target before the run, compared with one after it. The walk is the one
//! ignore engine's (gitignored and dependency folders skipped, as formatters skip them).

use std::collections::BTreeMap;
use std::hash::Hasher;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use crate::engine::walk::{self, Entry, Root, Stop, Visitor, WalkOptions};
use crate::error::Result;

/// At most this many files are compared; a larger tree reports no list.
pub const MAX_FILES: usize = 50_000;
/// Files above this size are compared by size and modification time only.
const MAX_HASHED: u64 = 8 * 1024 * 1024;

/// What a file was at one moment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seen {
    len: u64,
    fingerprint: u64,
}

/// One snapshot: workspace-relative path → what it was; `None` when the tree is too large.
pub type Snapshot = Option<BTreeMap<String, Seen>>;

fn fingerprint(path: &Path, meta: &std::fs::Metadata) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    if meta.len() > MAX_HASHED {
        let modified = meta.modified().ok().and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok());
        h.write_u128(modified.map_or(0, |d| d.as_nanos()));
        return h.finish();
    }
    if let Ok(mut f) = std::fs::File::open(path) {
        let mut buf = [0u8; 64 * 1024];
        while let Ok(n) = f.read(&mut buf) {
            if n == 0 {
                break;
            }
            h.write(&buf[..n]);
        }
    }
    h.finish()
}

#[derive(Default)]
struct Collect {
    seen: Vec<(String, Seen)>,
}

impl Visitor for Collect {
    fn visit(&mut self, e: &Entry<'_>, _: &Stop) -> bool {
        if !e.file_type.is_file() {
            return true;
        }
        if let Ok(meta) = std::fs::metadata(e.path) {
            self.seen
                .push((e.rel.to_owned(), Seen { len: meta.len(), fingerprint: fingerprint(e.path, &meta) }));
        }
        true
    }
}

/// Snapshot the files below `target` (a file or a directory; real path), `rel` being its
/// workspace-relative path.
pub fn snapshot(workspace_real: &Path, target: &Path, rel: &str) -> Result<Snapshot> {
    if target.is_file() {
        let mut map = BTreeMap::new();
        if let Ok(meta) = std::fs::metadata(target) {
            map.insert(rel.to_owned(), Seen { len: meta.len(), fingerprint: fingerprint(target, &meta) });
        }
        return Ok(Some(map));
    }
    let root = Root { real: PathBuf::from(target), rel: rel.to_owned() };
    let opts = WalkOptions { respect_gitignore: true, skip_dependency_dirs: true, ..Default::default() };
    let stop = Stop::new(Arc::new(AtomicBool::new(false)), None);
    let (collectors, _) = walk::walk(workspace_real, &root, &opts, &stop, Collect::default)?;
    let total: usize = collectors.iter().map(|c| c.seen.len()).sum();
    if total > MAX_FILES {
        return Ok(None);
    }
    Ok(Some(collectors.into_iter().flat_map(|c| c.seen).collect()))
}

/// Paths whose contents differ between the snapshots, or that appeared (sorted); `None`
/// when either snapshot was too large to take.
pub fn changed(before: &Snapshot, after: &Snapshot) -> Option<Vec<String>> {
    let (before, after) = (before.as_ref()?, after.as_ref()?);
    Some(
        after
            .iter()
            .filter(|(path, seen)| before.get(*path) != Some(*seen))
            .map(|(p, _)| p.clone())
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_what_changed_and_what_appeared() {
        let t = tempfile::tempdir().unwrap();
        let w = crate::workspace::realpath(t.path()).unwrap();
        std::fs::create_dir_all(w.join("src/node_modules")).unwrap();
        std::fs::write(w.join("src/a.py"), "x=1\n").unwrap();
        std::fs::write(w.join("src/b.py"), "y = 2\n").unwrap();
        std::fs::write(w.join("src/node_modules/c.js"), "z\n").unwrap();
        let before = snapshot(&w, &w.join("src"), "src").unwrap();
        std::fs::write(w.join("src/a.py"), "x = 1\n").unwrap();
        // Rewritten with the same bytes: not a change.
        std::fs::write(w.join("src/b.py"), "y = 2\n").unwrap();
        std::fs::write(w.join("src/d.py"), "new\n").unwrap();
        std::fs::write(w.join("src/node_modules/c.js"), "changed\n").unwrap();
        let after = snapshot(&w, &w.join("src"), "src").unwrap();
        assert_eq!(changed(&before, &after).unwrap(), ["src/a.py", "src/d.py"]);
        let one = snapshot(&w, &w.join("src/a.py"), "src/a.py").unwrap();
        assert_eq!(changed(&one, &one).unwrap(), Vec::<String>::new());
        assert_eq!(changed(&None, &after), None);
    }
}
