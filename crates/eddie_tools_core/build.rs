//! Builds `shim/eddie_shim.rs` (std only) into `$OUT_DIR/eddie-shim` with the same `rustc`
//! and target; `src/supervisor.rs` embeds it.

use std::path::PathBuf;
use std::process::Command;

fn main() {
    let src = "shim/eddie_shim.rs";
    println!("cargo:rerun-if-changed={src}");
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap_or_else(|_| ".".into())).join("eddie-shim");
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let build = |static_libc: bool| {
        let mut cmd = Command::new(&rustc);
        cmd.args(["--edition=2024", "--crate-name", "eddie_shim", "--crate-type", "bin"])
            .args(["-C", "opt-level=2", "-C", "panic=abort", "-C", "strip=symbols", "-C", "debuginfo=0"])
            .arg("-o")
            .arg(&out)
            .arg(src);
        if static_libc {
            // Starts faster (no dynamic loading); needs the static C library (libc.a).
            cmd.args(["-C", "target-feature=+crt-static"]);
        }
        if let Ok(target) = std::env::var("TARGET") {
            cmd.args(["--target", &target]);
        }
        if static_libc {
            // Quiet: without libc.a this attempt fails and the dynamic build is used.
            cmd.stderr(std::process::Stdio::null());
        }
        cmd.status().is_ok_and(|s| s.success())
    };
    if !build(true) && !build(false) {
        panic!("building the process shim ({src}) with {rustc} failed");
    }
}
