//! What the remote-transport tests (`git_http`, `git_ssh`) share: the git CLI as the oracle, a
//! tool call through the registry, and incompressible bytes.
#![allow(clippy::expect_used, dead_code)]

use std::path::Path;
use std::process::Command;

use eddie_tools_core::{Ctx, registry};
use serde_json::Value;

/// Run the git CLI (the oracle) in `dir` with a fixed identity and no user config.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "Ada")
        .env("GIT_AUTHOR_EMAIL", "ada@example.com")
        .env("GIT_COMMITTER_NAME", "Ada")
        .env("GIT_COMMITTER_EMAIL", "ada@example.com")
        .output()
        .expect("git runs");
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// Run `tool` through the registry: its `data`, or its code and message.
pub async fn call(ctx: &Ctx, tool: &str, args: Value) -> Result<Value, (String, String)> {
    registry::run(tool, &args, ctx)
        .await
        .map(|o| o.data_value().expect("data"))
        .map_err(|e| (e.code().as_str().to_owned(), e.message().to_owned()))
}

/// Bytes that do not compress (so that the pack is as big as they are).
pub fn noise(n: usize) -> Vec<u8> {
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}
