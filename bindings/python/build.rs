//! With the `bundle-cpu-plugin` feature (maturin turns it on), builds the CPU backend plugin
//! as its own shared library and places it in `python/quabla/plugins/`, so the wheel ships
//! it and the plugin host finds it there at run time. A nested cargo build is the only
//! stable way to get a dependency's `cdylib` (artifact dependencies are unstable).

use std::path::PathBuf;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    if std::env::var_os("CARGO_FEATURE_BUNDLE_CPU_PLUGIN").is_none() {
        return;
    }
    let here = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let root = here.join("../..");
    for dir in ["backends/cpu/src", "backend-abi/src"] {
        println!("cargo:rerun-if-changed={}", root.join(dir).display());
    }
    println!("cargo:rerun-if-env-changed=QUABLA_CPU_PLUGIN_PREBUILT");
    let dest = here.join("python/quabla/plugins");
    std::fs::create_dir_all(&dest).expect("creating python/quabla/plugins");
    // A plugin already built with the workspace (`cargo xtask test` builds it in the same
    // target folder as this extension, sharing every dependency) is copied, not rebuilt.
    if let Some(prebuilt) = std::env::var_os("QUABLA_CPU_PLUGIN_PREBUILT") {
        let prebuilt = PathBuf::from(prebuilt);
        println!("cargo:rerun-if-changed={}", prebuilt.display());
        let name = prebuilt
            .file_name()
            .expect("QUABLA_CPU_PLUGIN_PREBUILT names a file");
        std::fs::copy(&prebuilt, dest.join(name)).unwrap_or_else(|e| {
            panic!(
                "copying the prebuilt CPU plugin {}: {e}",
                prebuilt.display()
            )
        });
        return;
    }
    let target = root.join("target/python-plugins");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.args(["build", "--release", "-p", "quabla-cpu", "--manifest-path"])
        .arg(root.join("Cargo.toml"))
        .arg("--target-dir")
        .arg(&target);
    // The outer build's settings (features, jobserver, profile flags) are not the plugin's.
    for (k, _) in std::env::vars_os() {
        let k = k.to_string_lossy().into_owned();
        if k.starts_with("CARGO_FEATURE_")
            || k.starts_with("CARGO_CFG_")
            || k.starts_with("CARGO_PKG_")
            || matches!(
                k.as_str(),
                "CARGO_MAKEFLAGS"
                    | "MAKEFLAGS"
                    | "MFLAGS"
                    | "CARGO_TARGET_DIR"
                    | "RUSTFLAGS"
                    | "CARGO_ENCODED_RUSTFLAGS"
                    | "CARGO_PRIMARY_PACKAGE"
                    | "CARGO_MANIFEST_DIR"
                    | "CARGO_MANIFEST_PATH"
                    | "CARGO_CRATE_NAME"
                    | "TARGET"
                    | "HOST"
                    | "OUT_DIR"
                    | "OPT_LEVEL"
                    | "PROFILE"
                    | "DEBUG"
                    | "NUM_JOBS"
                    | "RUSTC_WRAPPER"
                    | "CARGO_BUILD_TARGET"
            )
        {
            cmd.env_remove(&k);
        }
    }
    let status = cmd
        .status()
        .expect("could not run cargo to build the CPU plugin");
    assert!(status.success(), "building the CPU plugin failed");
    let lib = if cfg!(target_os = "macos") {
        "libquabla_cpu.dylib"
    } else if cfg!(target_os = "windows") {
        "quabla_cpu.dll"
    } else {
        "libquabla_cpu.so"
    };
    std::fs::copy(target.join("release").join(lib), dest.join(lib))
        .expect("copying the CPU plugin into the package");
}
