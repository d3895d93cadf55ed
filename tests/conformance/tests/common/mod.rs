//! Helpers shared by the plugin test files.

use std::path::{Path, PathBuf};

/// A plugin's shared library in this build's target folder (`name` without prefix/suffix).
pub fn plugin_library(name: &str) -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let dir = exe.parent().and_then(Path::parent).unwrap();
    let lib = dir.join(format!(
        "{}{name}{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    ));
    assert!(
        lib.is_file(),
        "{} is missing: build it first (`cargo xtask test` does)",
        lib.display()
    );
    lib
}
