//! Finds MLX (a prefix with `include/mlx/mlx.h` and `lib/libmlx.so`: `QUABLA_MLX_DIR`, or
//! the `mlx` folder of the `mlx-cpu` wheel that `cargo xtask` unpacks into
//! `~/.cache/quabla/mlx/mlx-cpu-<version>`), compiles the C++ shim against it and links the
//! library with an rpath to it. Without MLX the crate builds empty (no plugin symbols, so no
//! host loads it) and says how to get MLX; nothing else in the workspace depends on it.

use std::path::{Path, PathBuf};

/// The MLX release the shim is written and tested against (PyPI's `mlx-cpu` wheel).
const MLX_VERSION: &str = "0.32.4";

fn cached_wheel() -> Option<PathBuf> {
    let home = std::env::var_os("HOME")?;
    Some(
        Path::new(&home)
            .join(".cache/quabla/mlx")
            .join(format!("mlx-cpu-{MLX_VERSION}"))
            .join("mlx"),
    )
}

fn has_mlx(prefix: &Path) -> bool {
    prefix.join("include/mlx/mlx.h").is_file() && prefix.join("lib/libmlx.so").is_file()
}

fn main() {
    println!("cargo::rustc-check-cfg=cfg(quabla_mlx)");
    println!("cargo::rerun-if-env-changed=QUABLA_MLX_DIR");
    println!("cargo::rerun-if-changed=shim/qmlx.cpp");
    println!("cargo::rerun-if-changed=shim/qmlx.h");
    let explicit = std::env::var_os("QUABLA_MLX_DIR").map(PathBuf::from);
    let prefix = match explicit.clone().or_else(cached_wheel) {
        Some(p) if has_mlx(&p) => p,
        found => {
            let looked = found
                .map(|p| p.display().to_string())
                .unwrap_or_else(|| "(no HOME)".into());
            println!(
                "cargo::warning=quabla-mlx builds without MLX (none at {looked}): run \
                 `cargo xtask mlx` to fetch the mlx-cpu {MLX_VERSION} wheel, or set \
                 QUABLA_MLX_DIR to a prefix with include/mlx/mlx.h and lib/libmlx.so"
            );
            if explicit.is_some() {
                // Asked for by name and not there: a mistake worth stopping for.
                panic!("QUABLA_MLX_DIR={looked} has no include/mlx/mlx.h and lib/libmlx.so");
            }
            return;
        }
    };
    println!(
        "cargo::rerun-if-changed={}",
        prefix.join("lib/libmlx.so").display()
    );
    cc::Build::new()
        .cpp(true)
        .std("c++20")
        .file("shim/qmlx.cpp")
        .include(prefix.join("include"))
        .include("shim")
        .flag_if_supported("-Wno-unused-parameter")
        .compile("qmlx");
    let lib = prefix.join("lib");
    println!("cargo::rustc-link-search=native={}", lib.display());
    println!("cargo::rustc-link-lib=dylib=mlx");
    // Installed from its wheel, the plugin sits in site-packages/quabla_mlx beside the
    // mlx-cpu wheel's site-packages/mlx/lib; built here, MLX is where the build found it.
    println!("cargo::rustc-link-arg=-Wl,-rpath,$ORIGIN/../mlx/lib");
    println!("cargo::rustc-link-arg=-Wl,-rpath,{}", lib.display());
    println!("cargo::rustc-cfg=quabla_mlx");
    println!("cargo::metadata=lib={}", lib.display());
}
