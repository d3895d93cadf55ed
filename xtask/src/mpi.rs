//! MPI for the MPI collectives plugin (`backends/mpi`): Debian's OpenMPI (`mpicc`, `mpirun`)
//! and the libclang rsmpi's build script runs bindgen with, installed from apt once; the
//! plugin is then built with its `mpi` feature, and the tests start `mpirun`.

use std::path::PathBuf;
use std::process::Command;

/// The feature that builds the plugin against MPI (passed to the workspace build and tests).
pub const FEATURE: &str = "quabla-mpi/mpi";

fn has(program: &str) -> bool {
    Command::new(program)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// A folder holding libclang, for bindgen's `LIBCLANG_PATH`.
fn libclang_dir() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("LIBCLANG_PATH") {
        return Some(PathBuf::from(p));
    }
    let mut dirs: Vec<PathBuf> = std::fs::read_dir("/usr/lib")
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("llvm-"))
        })
        .map(|p| p.join("lib"))
        .filter(|lib| {
            std::fs::read_dir(lib).is_ok_and(|mut d| {
                d.any(|e| {
                    e.ok().is_some_and(|e| {
                        e.file_name()
                            .to_str()
                            .is_some_and(|n| n.starts_with("libclang") && n.contains(".so"))
                    })
                })
            })
        })
        .collect();
    dirs.sort();
    dirs.pop()
}

/// Makes sure OpenMPI and libclang are there (installing them from apt when missing) and
/// points bindgen at libclang for every cargo this process starts. Returns whether the
/// plugin can be built with MPI; when not, it builds without and its tests skip.
pub fn ensure() -> bool {
    if !(has("mpicc") && has("mpirun") && libclang_dir().is_some()) {
        let ok = super::apt::install(
            "the MPI plugin and its tests",
            &[
                "libopenmpi-dev",
                "openmpi-bin",
                "libclang1-14",
                "libclang-common-14-dev",
            ],
        );
        if !ok {
            eprintln!("xtask: could not install OpenMPI; the MPI plugin builds without MPI");
            return false;
        }
    }
    match libclang_dir() {
        Some(dir) if has("mpicc") && has("mpirun") => {
            // Read by rsmpi's build script (bindgen) in every cargo started from here on.
            std::env::set_var("LIBCLANG_PATH", dir);
            true
        }
        _ => {
            eprintln!("xtask: no mpicc/mpirun or libclang; the MPI plugin builds without MPI");
            false
        }
    }
}

/// `cargo xtask mpi`: OpenMPI, then the plugin built with it (`target/debug/libquabla_mpi.so`).
pub fn build() -> bool {
    if !ensure() {
        return false;
    }
    let mut c = super::cargo();
    c.args(["build", "-p", "quabla-mpi", "--features", "mpi"]);
    super::run("build the MPI plugin against OpenMPI", &mut c);
    true
}

/// `mpirun` as the tests and benches start it: as root in containers, more ranks than cores,
/// no shared-memory copy mechanism that needs ptrace.
pub fn mpirun(ranks: usize) -> Command {
    let mut c = Command::new("mpirun");
    c.args([
        "--allow-run-as-root",
        "--oversubscribe",
        "-np",
        &ranks.to_string(),
    ])
    .args(["--mca", "btl_vader_single_copy_mechanism", "none"]);
    c
}

/// `cargo xtask bench --data-parallel`: the data-parallel PINN step (N=16384, jvp-of-grad,
/// f32) on 1 and 2 ranks, each part timed, beside JAX's single-process step on 1 and all
/// threads, in one run; the table goes to `target/bench/report-data-parallel.md`.
pub fn bench() {
    use super::{bench_rows, field, jax_venv_python, plugin_file, root, target_dir};
    if !ensure() {
        std::process::exit(1)
    }
    let mut b = super::cargo();
    b.args(["build", "--release", "-p", "quabla-cpu", "-p", "quabla-mpi"])
        .args([
            "-p",
            "quabla-examples",
            "--lib",
            "--bin",
            "bench_data_parallel",
        ])
        .args(["--features", FEATURE]);
    super::run("build the data-parallel bench (release)", &mut b);
    let exe = target_dir().join("release").join("bench_data_parallel");
    let plugins = std::env::join_paths([
        plugin_file("release", "quabla_cpu"),
        plugin_file("release", "quabla_mpi"),
    ])
    .unwrap_or_default();
    let mut rows = Vec::new();
    // (ranks, threads per rank): one core per rank, and one rank on every core.
    for (ranks, threads) in [(1, Some(1)), (2, Some(1)), (1, None)] {
        let mut c = mpirun(ranks);
        c.arg(&exe).env("QUABLA_PLUGIN_PATH", &plugins);
        if let Some(t) = threads {
            c.env("RAYON_NUM_THREADS", t.to_string());
        }
        rows.extend(bench_rows(
            &format!("data-parallel PINN step, {ranks} rank(s)"),
            c,
            false,
        ));
    }
    let py = jax_venv_python();
    let mut jax = Vec::new();
    for one_thread in [true, false] {
        let mut j = Command::new(&py);
        j.arg(root().join("benches/jax_suite.py"))
            .args(["--dtype", "f32", "--only", "pinn16384"]);
        let t = if one_thread {
            "1 thread"
        } else {
            "all threads"
        };
        for r in bench_rows(&format!("JAX single-process PINN step, {t}"), j, one_thread) {
            jax.push((t, r));
        }
    }
    let jax_ms = |t: &str| {
        jax.iter()
            .find(|(th, _)| *th == t)
            .and_then(|(_, r)| field(r, "steady_ms"))
            .and_then(|v| v.parse::<f64>().ok())
    };
    let mut md = String::from(
        "Data-parallel PINN step, N=16384 collocation points (jvp-of-grad Laplacian), f32, \
         medians. JAX: one process, the same step jitted.\n\n| system | ranks | threads per \
         rank | step ms | grad ms | collective ms | update ms | collective share | step / JAX \
         1 thread | step / JAX all threads |\n|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for r in &rows {
        let num = |k| {
            field(r, k)
                .and_then(|v| v.parse::<f64>().ok())
                .unwrap_or(f64::NAN)
        };
        let step = num("step_ms");
        let ratio = |t: &str| jax_ms(t).map_or("n/a".into(), |j| format!("{:.2}", step / j));
        md.push_str(&format!(
            "| Quabla | {} | {} | {step:.2} | {:.2} | {:.2} | {:.2} | {:.1}% | {} | {} |\n",
            field(r, "ranks").unwrap_or("?"),
            field(r, "threads_per_rank").unwrap_or("?"),
            num("grad_ms"),
            num("collective_ms"),
            num("update_ms"),
            100.0 * num("collective_ms") / step,
            ratio("1 thread"),
            ratio("all threads"),
        ));
    }
    for (t, _) in &jax {
        md.push_str(&format!(
            "| JAX | 1 | {t} | {:.2} | | | | | | |\n",
            jax_ms(t).unwrap_or(f64::NAN)
        ));
    }
    let dir = target_dir().join("bench");
    let _ = std::fs::create_dir_all(&dir);
    let path = dir.join("report-data-parallel.md");
    if let Err(e) = std::fs::write(&path, &md) {
        eprintln!("xtask: cannot write {}: {e}", path.display());
    }
    println!("{md}");
}
