//! The one workspace resolver. Every path argument goes through [`Workspace::resolve`]:
//! lexical `..`/absolute escapes and symlinks whose target leaves the workspace are refused
//! before anything is read, written, confirmed or spawned.

use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};

use crate::error::{ErrorCode, Result, ToolError};

/// Maximum symlinks followed while resolving one path (as Linux's `MAXSYMLINKS`).
const MAX_LINKS: usize = 40;

/// A workspace root (`ctx.cwd`).
#[derive(Debug, Clone)]
pub struct Workspace {
    /// The root as given, made absolute and lexically normalised (used for messages and
    /// relative paths, as `path.resolve` would).
    root: PathBuf,
}

/// A path inside the workspace.
#[derive(Debug, Clone)]
pub struct Resolved {
    /// `path.resolve(cwd, p)`: absolute, normalised, symlinks kept (for messages).
    pub lexical: PathBuf,
    /// The same path with every symlink resolved (for the operation itself). A missing tail
    /// is appended as given.
    pub real: PathBuf,
}

impl Workspace {
    /// A workspace at `cwd` (made absolute against the process's cwd).
    pub fn new(cwd: &str) -> Result<Self> {
        check_nul(cwd)?;
        if cwd.is_empty() {
            return Err(ToolError::invalid("ctx.cwd must be a non-empty string"));
        }
        let p = Path::new(cwd);
        let abs = if p.is_absolute() {
            p.to_path_buf()
        } else {
            std::env::current_dir().map_err(|e| ToolError::fs(&e, "uv_cwd", None))?.join(p)
        };
        Ok(Self { root: normalize(&abs) })
    }

    /// The workspace root (absolute, lexical).
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `path.resolve(root, p)` without any check.
    pub fn lexical(&self, p: &str) -> PathBuf {
        normalize(&self.root.join(p))
    }

    /// Resolve `p` (relative to the root, or absolute) and refuse it unless it stays inside
    /// the workspace, following symlinks. `Err(OUTSIDE_WORKSPACE)` carries
    /// `Path is outside the workspace: <p>`.
    pub fn resolve(&self, p: &str) -> Result<Resolved> {
        self.resolve_with(p, || ToolError::outside_workspace(p))
    }

    /// [`Workspace::resolve`] with a custom error for an escape.
    pub fn resolve_with(&self, p: &str, outside: impl Fn() -> ToolError) -> Result<Resolved> {
        check_nul(p)?;
        let lexical = self.lexical(p);
        if !within(&lexical, &self.root) {
            return Err(outside());
        }
        let real_root = realpath(&self.root)?;
        let real = realpath(&lexical)?;
        if !within(&real, &real_root) {
            return Err(outside());
        }
        Ok(Resolved { lexical, real })
    }

    /// The workspace-relative POSIX form of a lexical path inside it (`""` for the root).
    pub fn relative(&self, lexical: &Path) -> String {
        #[cfg(windows)]
        if within(lexical, &self.root) {
            let skip = self.root.components().count();
            return lexical
                .components()
                .skip(skip)
                .map(|c| c.as_os_str().to_string_lossy())
                .collect::<Vec<_>>()
                .join("/");
        }
        lexical
            .strip_prefix(&self.root)
            .map(|r| r.components().map(|c| c.as_os_str().to_string_lossy()).collect::<Vec<_>>().join("/"))
            .unwrap_or_default()
    }
}

/// Whether `p` is `root` or below it. On Windows names compare case-insensitively (as NTFS
/// does) and `\\?\C:\` is `C:\` (both are absolute, normalised paths).
pub fn within(p: &Path, root: &Path) -> bool {
    #[cfg(windows)]
    {
        let (p, root) = (windows::key(p), windows::key(root));
        p.len() >= root.len() && p[..root.len()] == root[..]
    }
    #[cfg(not(windows))]
    p.starts_with(root)
}

/// The root `p` starts at: `/`, or on Windows its drive or share (`C:\`, `\\server\share\`), in
/// plain (not `\\?\`) form.
fn root_of(p: &Path) -> PathBuf {
    #[cfg(windows)]
    return windows::root_of(p);
    #[cfg(not(windows))]
    {
        let _ = p;
        PathBuf::from("/")
    }
}

#[cfg(windows)]
mod windows {
    use std::path::{Component, Path, PathBuf, Prefix};

    /// The plain form of a prefix: `\\?\C:` is `C:`, `\\?\UNC\s\sh` is `\\s\sh`.
    fn plain(prefix: Prefix<'_>) -> String {
        match prefix {
            Prefix::VerbatimDisk(d) | Prefix::Disk(d) => format!("{}:", char::from(d).to_ascii_uppercase()),
            Prefix::VerbatimUNC(s, sh) | Prefix::UNC(s, sh) => {
                format!(r"\\{}\{}", s.to_string_lossy(), sh.to_string_lossy())
            }
            Prefix::Verbatim(v) => format!(r"\\?\{}", v.to_string_lossy()),
            Prefix::DeviceNS(d) => format!(r"\\.\{}", d.to_string_lossy()),
        }
    }

    /// `p`'s root in plain form (`C:\` when `p` has none: never the case for our absolute paths).
    pub(super) fn root_of(p: &Path) -> PathBuf {
        match p.components().next() {
            Some(Component::Prefix(pre)) => PathBuf::from(format!("{}\\", plain(pre.kind()))),
            _ => std::env::current_dir()
                .ok()
                .and_then(|d| {
                    d.components().next().map(|c| PathBuf::from(format!("{}\\", c.as_os_str().display())))
                })
                .unwrap_or_else(|| PathBuf::from(r"C:\")),
        }
    }

    /// The components of `p` for comparison: plain prefix, names case-folded.
    pub(super) fn key(p: &Path) -> Vec<String> {
        p.components()
            .filter_map(|c| match c {
                Component::Prefix(pre) => Some(plain(pre.kind()).to_lowercase()),
                Component::RootDir | Component::CurDir => None,
                other => Some(other.as_os_str().to_string_lossy().to_lowercase()),
            })
            .collect()
    }
}

fn check_nul(p: &str) -> Result<()> {
    if p.contains('\0') {
        return Err(ToolError::invalid("path must not contain NUL bytes"));
    }
    Ok(())
}

/// Lexical normalisation of an absolute path (`.` removed, `..` applied), like `path.resolve`.
pub fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::Prefix(_) | Component::RootDir => out.push(c.as_os_str()),
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(n) => out.push(n),
        }
    }
    if out.as_os_str().is_empty() { PathBuf::from("/") } else { out }
}

/// `realpath` that tolerates a missing tail: every existing component is resolved (symlinks
/// followed, including dangling ones, whose target decides), the rest is appended lexically.
pub fn realpath(p: &Path) -> Result<PathBuf> {
    realpath_links(p).map(|(real, _)| real)
}

/// [`realpath`], and the (real) directories holding each symbolic link it followed: who can
/// write one of them could have changed where `p` leads.
pub fn realpath_links(p: &Path) -> Result<(PathBuf, Vec<PathBuf>)> {
    let mut link_dirs = Vec::new();
    let mut pending: Vec<OsString> = Vec::new();
    push_components(&mut pending, p);
    let mut cur = root_of(p);
    let mut links = 0usize;
    let mut exists = true;
    while let Some(name) = pending.pop() {
        if name == ".." {
            cur.pop();
            continue;
        }
        if name == "." || name.is_empty() {
            continue;
        }
        let next = cur.join(&name);
        if !exists {
            cur = next;
            continue;
        }
        match std::fs::symlink_metadata(&next) {
            Ok(meta) if meta.file_type().is_symlink() => {
                link_dirs.push(cur.clone());
                links += 1;
                if links > MAX_LINKS {
                    return Err(ToolError::new(
                        ErrorCode::Io,
                        format!("ELOOP: too many symbolic links encountered, stat '{}'", p.display()),
                    ));
                }
                let target =
                    std::fs::read_link(&next).map_err(|e| ToolError::fs(&e, "readlink", Some(&next)))?;
                // An absolute target starts again at its root (on Windows a junction reads as
                // `\\?\C:\...`, and a rooted `\x` stays on the current drive).
                if target.has_root() {
                    cur = if target.is_absolute() { root_of(&target) } else { root_of(&cur) };
                }
                push_components(&mut pending, &target);
            }
            Ok(_) => cur = next,
            Err(_) => {
                // Missing (or unreadable): nothing below can be a symlink we could follow.
                exists = false;
                cur = next;
            }
        }
    }
    Ok((cur, link_dirs))
}

/// Push the components of `p` onto a stack so that the first component is popped first.
fn push_components(stack: &mut Vec<OsString>, p: &Path) {
    let parts: Vec<OsString> = p
        .components()
        .filter_map(|c| match c {
            Component::Normal(n) => Some(n.to_os_string()),
            Component::ParentDir => Some(OsString::from("..")),
            _ => None,
        })
        .collect();
    stack.extend(parts.into_iter().rev());
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn ws() -> (tempfile::TempDir, Workspace) {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let w = Workspace::new(dir.path().to_str().unwrap_or_default()).unwrap_or_else(|e| panic!("{e}"));
        (dir, w)
    }

    #[test]
    fn lexical_escapes_are_refused() {
        let (_d, w) = ws();
        for p in ["..", "../x", "a/../../x", "/etc/passwd"] {
            let e = w.resolve(p).err().unwrap_or_else(|| panic!("{p} accepted"));
            assert_eq!(e.code(), ErrorCode::OutsideWorkspace);
            assert_eq!(e.message(), format!("Path is outside the workspace: {p}"));
        }
        assert!(w.resolve(".").is_ok());
        assert!(w.resolve("a/../b").is_ok());
        assert!(w.resolve("..foo").is_ok());
        assert!(w.resolve(&w.root().join("x").display().to_string()).is_ok());
    }

    #[test]
    fn symlink_escapes_are_refused() {
        let (d, w) = ws();
        let outside = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        symlink(outside.path(), d.path().join("out")).unwrap_or_else(|e| panic!("{e}"));
        symlink("/nonexistent-target/x", d.path().join("dangling")).unwrap_or_else(|e| panic!("{e}"));
        std::fs::create_dir(d.path().join("in")).unwrap_or_else(|e| panic!("{e}"));
        symlink("in", d.path().join("inlink")).unwrap_or_else(|e| panic!("{e}"));
        for p in ["out", "out/new.txt", "dangling", "inlink/../out/x"] {
            let e = w.resolve(p).err().unwrap_or_else(|| panic!("{p} accepted"));
            assert_eq!(e.code(), ErrorCode::OutsideWorkspace, "{p}");
        }
        let r = w.resolve("inlink/new.txt").unwrap_or_else(|e| panic!("{e}"));
        assert!(r.real.ends_with("in/new.txt"));
    }

    #[test]
    fn workspace_root_may_be_a_symlink() {
        let real = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let holder = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let link = holder.path().join("ws");
        symlink(real.path(), &link).unwrap_or_else(|e| panic!("{e}"));
        let w = Workspace::new(link.to_str().unwrap_or_default()).unwrap_or_else(|e| panic!("{e}"));
        assert!(w.resolve("a.txt").is_ok());
        assert_eq!(w.resolve("../x").err().map(|e| e.code()), Some(ErrorCode::OutsideWorkspace));
    }

    #[test]
    fn nul_bytes_are_invalid() {
        let (_d, w) = ws();
        assert_eq!(w.resolve("a\0b").err().map(|e| e.code()), Some(ErrorCode::InvalidArgument));
    }
}
