//! Where tools installed with `cargo install` (wasm-bindgen-cli, cargo-fuzz) are kept between
//! runs, so a machine builds each once.

use super::target_dir;
use std::path::PathBuf;

/// `QUABLA_TOOLS_DIR`, default `~/.cache/quabla/tools` (binaries in its `bin`).
pub fn tools_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("QUABLA_TOOLS_DIR") {
        return PathBuf::from(d);
    }
    std::env::var_os("HOME")
        .map(|h| PathBuf::from(h).join(".cache/quabla/tools"))
        .unwrap_or_else(|| target_dir().join("tools"))
}
