//! MLX for the MLX backend plugin (`backends/mlx`): PyPI's `mlx-cpu` wheel (MLX's CPU build
//! for Linux: `libmlx.so`, its C++ headers and a bundled BLAS/LAPACK), downloaded once with
//! `pip download --no-deps` and unpacked into `~/.cache/quabla/mlx/mlx-cpu-<version>`, where
//! the plugin's build script looks for it (or wherever `QUABLA_MLX_DIR` points).

use std::path::{Path, PathBuf};
use std::process::Command;

/// The MLX release the plugin's shim is written against (the build script pins the same).
pub const MLX_VERSION: &str = "0.32.4";

/// Where the unpacked wheel lives; its `mlx` folder is the prefix the build script uses.
pub fn cache_dir() -> Option<PathBuf> {
    std::env::var_os("HOME").map(|h| {
        PathBuf::from(h)
            .join(".cache/quabla/mlx")
            .join(format!("mlx-cpu-{MLX_VERSION}"))
    })
}

fn complete(prefix: &Path) -> bool {
    prefix.join("include/mlx/mlx.h").is_file() && prefix.join("lib/libmlx.so").is_file()
}

/// Makes sure MLX is there for the plugin's build; returns its prefix, or `None` (with the
/// reason printed) when it cannot be had, in which case the plugin builds empty.
pub fn ensure() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("QUABLA_MLX_DIR") {
        let dir = PathBuf::from(dir);
        return complete(&dir).then_some(dir);
    }
    let cache = cache_dir()?;
    let prefix = cache.join("mlx");
    if complete(&prefix) {
        return Some(prefix);
    }
    if !cfg!(all(target_os = "linux", target_arch = "x86_64")) {
        eprintln!(
            "xtask: the mlx-cpu wheel is fetched for x86-64 Linux only; set QUABLA_MLX_DIR \
             to an MLX install (include/mlx/mlx.h, lib/libmlx.so) to build the MLX plugin"
        );
        return None;
    }
    eprintln!(
        "xtask: fetching MLX {MLX_VERSION} (PyPI's mlx-cpu wheel) into {}",
        cache.display()
    );
    let wheels = cache.join("wheel");
    let python = std::env::var_os("PYTHON").unwrap_or_else(|| "python3".into());
    let fetched = Command::new(&python)
        .args([
            "-m",
            "pip",
            "download",
            "--quiet",
            "--disable-pip-version-check",
        ])
        .args(["--no-deps", "--only-binary=:all:"])
        .arg(format!("mlx-cpu=={MLX_VERSION}"))
        .arg("-d")
        .arg(&wheels)
        .status()
        .is_ok_and(|s| s.success());
    // A wheel is a zip; Python's zipfile unpacks it without another tool. The wheel's
    // layout (mlx/lib next to mlx_cpu.libs, which libmlx.so's rpath names) is kept.
    let unpack = "import sys, zipfile, pathlib\n\
                  w = sorted(pathlib.Path(sys.argv[1]).glob('mlx_cpu-*.whl'))[-1]\n\
                  zipfile.ZipFile(w).extractall(sys.argv[2])\n";
    let unpacked = fetched
        && Command::new(&python)
            .args(["-c", unpack])
            .arg(&wheels)
            .arg(&cache)
            .status()
            .is_ok_and(|s| s.success());
    if unpacked && complete(&prefix) {
        // Zip entries carry no permission bits through zipfile; the library only needs to be
        // readable, which it is.
        Some(prefix)
    } else {
        eprintln!(
            "xtask: could not fetch the mlx-cpu {MLX_VERSION} wheel; the MLX plugin builds \
             empty and its tests skip"
        );
        None
    }
}
