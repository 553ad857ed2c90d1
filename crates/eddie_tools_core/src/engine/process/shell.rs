//! Which shell runs a command line. On Unix: `bash` when it is on `PATH`, else `sh`. On
//! Windows: Git Bash when it is installed (so the same command lines work), else PowerShell
//! (`pwsh`, then Windows PowerShell), else `cmd.exe`.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

/// A shell, and how it takes a command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shell {
    /// `bash`, `sh`, `git-bash` (Windows' Git Bash: bash), `powershell` or `cmd`: what the line
    /// is parsed as, and the name results give it (`data.shell`).
    pub kind: &'static str,
    /// The program to start.
    pub program: String,
    /// Its arguments before the line (`-c`; `-NoProfile -NonInteractive -Command`; `/d /s /c`).
    pub flags: &'static [&'static str],
}

impl Shell {
    /// The argv (program first) that runs `line`.
    pub fn argv(&self, line: &str) -> Vec<String> {
        let mut v = vec![self.program.clone()];
        v.extend(self.flags.iter().map(|s| (*s).to_owned()));
        v.push(line.to_owned());
        v
    }
}

/// The first `name` found in the folders of `path` (a `PATH` value).
fn on_path(path: Option<&OsStr>, name: &str) -> Option<PathBuf> {
    std::env::split_paths(path?).map(|d| d.join(name)).find(|p| p.is_file())
}

/// The shell for a command line, given the child's `PATH`.
pub fn pick(path: Option<&OsStr>) -> Shell {
    #[cfg(windows)]
    return pick_windows(path, std::env::var_os("ProgramFiles").as_deref().map(Path::new));
    #[cfg(not(windows))]
    {
        match on_path(path, "bash") {
            Some(_) => Shell { kind: "bash", program: "bash".into(), flags: &["-c"] },
            None => Shell { kind: "sh", program: "sh".into(), flags: &["-c"] },
        }
    }
}

/// Windows: Git Bash (on `PATH`, not WSL's `System32\bash.exe`, or under `program_files\Git`),
/// PowerShell, or `cmd.exe`.
#[cfg_attr(not(windows), allow(dead_code))]
fn pick_windows(path: Option<&OsStr>, program_files: Option<&Path>) -> Shell {
    let wsl = |p: &Path| p.to_string_lossy().to_ascii_lowercase().contains(r"\system32\");
    let git_bash = on_path(path, "bash.exe")
        .filter(|p| !wsl(p))
        .or_else(|| program_files.map(|d| d.join(r"Git\bin\bash.exe")).filter(|p| p.is_file()));
    if let Some(bash) = git_bash {
        return Shell { kind: "git-bash", program: bash.to_string_lossy().into_owned(), flags: &["-c"] };
    }
    for ps in ["pwsh.exe", "powershell.exe"] {
        if let Some(p) = on_path(path, ps) {
            return Shell {
                kind: "powershell",
                program: p.to_string_lossy().into_owned(),
                flags: &["-NoProfile", "-NonInteractive", "-Command"],
            };
        }
    }
    Shell { kind: "cmd", program: "cmd.exe".into(), flags: &["/d", "/s", "/c"] }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn touch(p: &Path) {
        if let Some(d) = p.parent() {
            std::fs::create_dir_all(d).unwrap_or_else(|e| panic!("{e}"));
        }
        std::fs::write(p, "").unwrap_or_else(|e| panic!("{e}"));
    }

    #[test]
    fn windows_prefers_git_bash_then_powershell_then_cmd() {
        let t = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let (bin, pf) = (t.path().join("bin"), t.path().join("pf"));
        std::fs::create_dir_all(&bin).unwrap_or_else(|e| panic!("{e}"));
        let path = std::env::join_paths([&bin]).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(pick_windows(Some(&path), Some(&pf)).kind, "cmd");
        touch(&bin.join("powershell.exe"));
        let ps = pick_windows(Some(&path), Some(&pf));
        assert_eq!((ps.kind, ps.flags[0]), ("powershell", "-NoProfile"));
        // (On Unix this is one file name with backslashes in it, which is what the lookup joins.)
        touch(&pf.join(r"Git\bin\bash.exe"));
        let installed = pick_windows(Some(&path), Some(&pf));
        assert_eq!(installed.kind, "git-bash");
        assert!(installed.program.ends_with("bash.exe"));
        touch(&bin.join("bash.exe"));
        let b = pick_windows(Some(&path), Some(&pf));
        assert_eq!(b.kind, "git-bash");
        assert_eq!(b.argv("echo hi")[1..], ["-c", "echo hi"]);
    }

    #[cfg(unix)]
    #[test]
    fn unix_prefers_bash() {
        let t = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let path = std::env::join_paths([t.path()]).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(pick(Some(&path)).kind, "sh");
        touch(&t.path().join("bash"));
        assert_eq!(pick(Some(&path)).argv("x"), ["bash", "-c", "x"]);
    }
}
