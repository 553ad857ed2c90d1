//! On Linux, builds `shim/eddie_shim.rs` (std only) into `$OUT_DIR/eddie-shim` with the same
//! `rustc` and target, for `src/engine/process/supervisor.rs` to embed, and sets `cfg(eddie_shim)`. On
//! macOS it sets `cfg(eddie_kq)` (the kqueue shim). Elsewhere
//! (or with `EDDIE_TOOLS_GROUP_ONLY=1`, to test that path on Linux) commands run in a plain
//! process group instead.

use std::path::PathBuf;
use std::process::Command;

fn main() {
    println!("cargo::rustc-check-cfg=cfg(eddie_shim)");
    println!("cargo:rerun-if-env-changed=EDDIE_TOOLS_GROUP_ONLY");
    println!("cargo:rerun-if-env-changed=RUSTC_LINKER");
    println!("cargo::rustc-check-cfg=cfg(eddie_kq)");
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    if std::env::var_os("EDDIE_TOOLS_GROUP_ONLY").is_some() {
        return;
    }
    if os == "macos" {
        // macOS: the in-process shim on kqueue (`src/engine/process/kqueue_shim.rs`).
        println!("cargo:rustc-cfg=eddie_kq");
        return;
    }
    if os != "linux" {
        return;
    }
    let src = "shim/eddie_shim.rs";
    println!("cargo:rerun-if-changed={src}");
    println!("cargo:rerun-if-changed=src/engine/process/sandbox_child.rs");
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap_or_else(|_| ".".into())).join("eddie-shim");
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let build = |static_libc: bool| {
        let mut cmd = Command::new(&rustc);
        cmd.args(["--edition=2024", "--crate-name", "eddie_shim", "--crate-type", "bin"])
            // Size over speed (it forks and execs), whole-program LTO over std: 190 kB less.
            .args(["-C", "opt-level=s", "-C", "lto=fat", "-C", "codegen-units=1"])
            .args(["-C", "panic=abort", "-C", "strip=symbols", "-C", "debuginfo=0"])
            .arg("-o")
            .arg(&out)
            .arg(src);
        if static_libc {
            // Starts faster (no dynamic loading); needs the static C library (libc.a).
            cmd.args(["-C", "target-feature=+crt-static"]);
            // Quiet: without libc.a this attempt fails and the dynamic build is used.
            cmd.stderr(std::process::Stdio::null());
        }
        if let Ok(target) = std::env::var("TARGET") {
            cmd.args(["--target", &target]);
        }
        // Cross builds (zigbuild, mingw): link with the linker cargo uses for the target, not
        // the host `cc`. Cargo sets RUSTC_LINKER for build scripts when one is configured.
        if let Ok(linker) = std::env::var("RUSTC_LINKER") {
            cmd.args(["-C", &format!("linker={linker}")]);
        }
        cmd.status().is_ok_and(|s| s.success())
    };
    if !build(true) && !build(false) {
        panic!("building the process shim ({src}) with {rustc} failed");
    }
    // Embedded deflated (the statically linked C library makes it 1.1 MB, 0.5 MB deflated);
    // supervisor.rs inflates it once, when the first command starts.
    let program = std::fs::read(&out).unwrap_or_else(|e| panic!("reading {}: {e}", out.display()));
    let packed = miniz_oxide::deflate::compress_to_vec(&program, 10);
    let packed_path = out.with_extension("deflate");
    std::fs::write(&packed_path, packed).unwrap_or_else(|e| panic!("writing {}: {e}", packed_path.display()));
    println!("cargo:rustc-env=EDDIE_SHIM_LEN={}", program.len());
    println!("cargo:rustc-cfg=eddie_shim");
}
