//! Downloading a wheel from PyPI into a cache folder and unpacking it there (a wheel is a
//! zip; Python's zipfile unpacks it without another tool), for the native libraries some
//! plugins build or run against (MLX, NVRTC). The wheel's own layout is kept, since the
//! libraries' rpaths name their neighbours.

use std::path::Path;
use std::process::Command;

/// `pip download --no-deps <spec>` into `into/wheel`, then unpacks the wheel whose file name
/// starts with `prefix` into `into`. Returns whether both steps succeeded.
pub fn fetch(spec: &str, prefix: &str, into: &Path) -> bool {
    let wheels = into.join("wheel");
    let python = std::env::var_os("PYTHON").unwrap_or_else(|| "python3".into());
    let fetched = Command::new(&python)
        .args([
            "-m",
            "pip",
            "download",
            "--quiet",
            "--disable-pip-version-check",
        ])
        .args(["--no-deps", "--only-binary=:all:", spec, "-d"])
        .arg(&wheels)
        .status()
        .is_ok_and(|s| s.success());
    let unpack = "import sys, zipfile, pathlib\n\
                  w = sorted(pathlib.Path(sys.argv[1]).glob(sys.argv[3] + '-*.whl'))[-1]\n\
                  zipfile.ZipFile(w).extractall(sys.argv[2])\n";
    fetched
        && Command::new(&python)
            .args(["-c", unpack])
            .arg(&wheels)
            .arg(into)
            .arg(prefix)
            .status()
            .is_ok_and(|s| s.success())
}
