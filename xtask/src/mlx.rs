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
    // The wheel's layout (mlx/lib next to mlx_cpu.libs, which libmlx.so's rpath names) is kept.
    let unpacked = super::wheels::fetch(&format!("mlx-cpu=={MLX_VERSION}"), "mlx_cpu", &cache);
    if unpacked && complete(&prefix) {
        Some(prefix)
    } else {
        eprintln!(
            "xtask: could not fetch the mlx-cpu {MLX_VERSION} wheel; the MLX plugin builds \
             empty and its tests skip"
        );
        None
    }
}

/// `cargo xtask bench --mlx`: the MLX plugin's rows (PINN step, elementwise chain, matmul)
/// beside the CPU plugin's, with MLX's own Python API on the same workloads in the same run
/// (`benches/mlx_suite.py`, in the benchmark venv with `mlx[cpu]` from PyPI) as the anchor;
/// the table goes to `target/bench/report-mlx.md`.
pub fn bench(quick: bool) {
    use super::{bench_rows, field, plugin_file, root, run, target_dir};
    if ensure().is_none() {
        std::process::exit(1);
    }
    super::build_bench_suite();
    let py = super::bench_venv_python();
    run(
        "install MLX's Python API (CPU build) for the anchor",
        Command::new(&py)
            .args(["-m", "pip", "install", "--quiet", "numpy"])
            .arg(format!("mlx[cpu]=={MLX_VERSION}")),
    );
    let plugins = std::env::join_paths([
        plugin_file("release", "quabla_cpu"),
        plugin_file("release", "quabla_mlx"),
    ])
    .unwrap_or_default();
    let mut rows = Vec::new();
    for one_thread in [true, false] {
        let t = if one_thread {
            "1 thread"
        } else {
            "all threads"
        };
        for dtype in ["f32", "f64"] {
            for platform in ["cpu", "mlx"] {
                let mut q = Command::new(target_dir().join("release").join("bench_suite"));
                q.args(["--dtype", dtype, "--only", "mlx"]);
                if quick {
                    q.arg("--quick");
                }
                q.env("QUABLA_PLUGIN_PATH", &plugins)
                    .env("QUABLA_PLATFORMS", platform);
                let what = format!("Quabla on the {platform} plugin, {dtype}, {t}");
                rows.extend(bench_rows(&what, q, one_thread).into_iter().map(|l| {
                    l.replacen(
                        "\"system\": \"quabla\"",
                        &format!("\"system\": \"quabla-{platform}\""),
                        1,
                    )
                }));
            }
            let mut m = Command::new(&py);
            m.arg(root().join("benches/mlx_suite.py"))
                .args(["--dtype", dtype]);
            if quick {
                m.arg("--quick");
            }
            rows.extend(bench_rows(
                &format!("MLX's Python API, {dtype}, {t}"),
                m,
                one_thread,
            ));
        }
    }
    let mut md = String::from(
        "| workload | dtype | threads | CPU plugin ms | MLX plugin ms | raw MLX ms (its faster way) | MLX plugin / raw MLX | MLX plugin / CPU plugin |\n|---|---|---|---|---|---|---|---|\n",
    );
    let num = |l: &str, k: &str| field(l, k).and_then(|v| v.parse::<f64>().ok());
    for r in rows
        .iter()
        .filter(|r| field(r, "system") == Some("quabla-mlx"))
    {
        let key = |l: &&String| {
            field(l, "name") == field(r, "name")
                && field(l, "dtype") == field(r, "dtype")
                && field(l, "threads") == field(r, "threads")
        };
        let cpu = rows
            .iter()
            .filter(key)
            .find(|l| field(l, "system") == Some("quabla-cpu"));
        let raw = rows
            .iter()
            .filter(key)
            .find(|l| field(l, "system") == Some("mlx"));
        let ms = |l: Option<&String>| l.and_then(|l| num(l, "steady_ms")).unwrap_or(f64::NAN);
        let plugin = num(r, "steady_ms").unwrap_or(f64::NAN);
        md.push_str(&format!(
            "| {} | {} | {} | {:.3} | {plugin:.3} | {:.3} ({}) | {:.2} | {:.2} |\n",
            field(r, "name").unwrap_or("?"),
            field(r, "dtype").unwrap_or("?"),
            field(r, "threads").unwrap_or("?"),
            ms(cpu),
            ms(raw),
            raw.and_then(|l| field(l, "variant")).unwrap_or("?"),
            plugin / ms(raw),
            plugin / ms(cpu),
        ));
    }
    let dir = target_dir().join("bench");
    let _ = std::fs::create_dir_all(&dir);
    let report = dir.join("report-mlx.md");
    if let Err(e) = std::fs::write(&report, &md) {
        eprintln!("xtask: cannot write {}: {e}", report.display());
    }
    println!("{md}");
    eprintln!("xtask: wrote {}", report.display());
}
