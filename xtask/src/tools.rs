//! Where tools installed with `cargo install` (wasm-bindgen-cli, cargo-fuzz) are kept between
//! runs, so a machine builds each once.

use super::target_dir;
use std::path::PathBuf;
use std::process::Command;

/// `QUABLA_TOOLS_DIR`, default `~/.cache/quabla/tools` (binaries in its `bin`).
pub fn tools_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("QUABLA_TOOLS_DIR") {
        return PathBuf::from(d);
    }
    std::env::var_os("HOME")
        .map(|h| PathBuf::from(h).join(".cache/quabla/tools"))
        .unwrap_or_else(|| target_dir().join("tools"))
}

/// `cargo install <args> --root tools_dir()`, optimised at level 1: a fresh machine compiles
/// these tools (hundreds of crates) once, level 1 compiles faster than release's level 3, and
/// what they do here (rewrite one .wasm, drive a browser, run libFuzzer) is not their speed's
/// test.
pub fn cargo_install(args: &[&str]) -> Command {
    let mut c = super::cargo();
    c.arg("install")
        .args(args)
        .arg("--root")
        .arg(tools_dir())
        .env("CARGO_PROFILE_RELEASE_OPT_LEVEL", "1");
    c
}

/// Whether `tools_dir()/bin/<bin> --version` runs and names `version`.
pub fn installed(bin: &str, version: &str) -> bool {
    Command::new(tools_dir().join("bin").join(bin))
        .arg("--version")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains(version))
}
