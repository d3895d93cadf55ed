//! `cargo xtask <command>`: the project's automation, in Rust so it runs wherever cargo does.
//!
//! - `main`: builds the CPU plugin and runs the main job, the PINN example (release), loading
//!   the plugin at run time through `QUABLA_PLUGIN_PATH`; extra arguments (`--steps 500`) go
//!   to the example.
//! - `test`: builds the workspace once (every target the tests run, the plugin libraries
//!   included, in one cargo invocation, so dependencies compile once), runs every test of
//!   the workspace (the conformance suite
//!   against the CPU plugin's shared library included), the conformance CLI, the example,
//!   and the Python package's tests (`pip install ./bindings/python` into a venv under
//!   `target/`, then pytest), the browser build's tests (`wasm-test`), the fuzz targets
//!   (`fuzz`, 30 s each) and, last, the out-of-tree crate (`out-of-tree`).
//! - `conformance [ARGS]`: runs the conformance CLI against the CPU plugin (extra ARGS such as
//!   `--filter 'ops/unary/*'` are passed on).
//! - `fuzz [--seconds N | --runs N] [--dev] [--no-sanitizer] [TARGET ...]`: the cargo-fuzz
//!   targets in `fuzz/`
//!   (QIR text, QIR binary, the CPU plugin's compile through the ABI, safetensors loading),
//!   seeded from the conformance programs, 30 s each by default; `test` runs them so, built
//!   with `--dev --no-sanitizer`.
//! - `mlx`: fetches MLX (PyPI's `mlx-cpu` wheel, unpacked into `~/.cache/quabla/mlx`) for
//!   the MLX plugin's build; `test` does it first, then requires the plugin's tests to run,
//!   and installs the `quabla` and `quabla-mlx` wheels into a fresh venv to run a jitted
//!   gradient on `device="mlx"`.
//! - `cuda`: fetches NVRTC (PyPI's `nvidia-cuda-nvrtc` wheel, into `~/.cache/quabla/cuda`)
//!   for the CUDA plugin's kernel compiler; `test` does it first, then requires the test
//!   that compiles every conformance program's kernels for sm_80 and sm_90 to run.
//! - `mpi`: installs OpenMPI and libclang from Debian's packages (once) and builds the MPI
//!   collectives plugin against them; `test` does it first, builds the plugin with its `mpi`
//!   feature, and requires the tests that start `mpirun` to run.
//! - `out-of-tree`: builds and runs `examples/out-of-tree`, a crate outside the workspace
//!   that depends on `quabla` as a user's does (`static-cpu`), with nothing set, in the
//!   workspace's `target/` with its dev profile (see `out_of_tree.rs`).
//! - `goldens`: dumps the QIR the transformations emit, then regenerates every conformance
//!   golden with the numpy/mpmath reference.
//! - `wasm`: builds the browser/Node package (`bindings/wasm`): Debian's rustc-web with
//!   build-std for wasm32, then wasm-bindgen (installed once into `~/.cache/quabla/tools`) into
//!   `bindings/wasm/www/pkg` (web) and `target/wasm/pkg-node` (Node). Installs the toolchain
//!   and Chromium from Debian's packages when missing.
//! - `wasm-test`: `wasm`, then the Node tests of the JS API and of the PINN gradients against
//!   the native build, the conformance suite and API tests in headless Chromium
//!   (wasm-bindgen-test, CPU and WebGPU), and the demo page test (screenshots in
//!   `target/wasm/artifacts`). `test` ends with it.
//! - `wasm-bench`: the browser-anchor workloads against jax-js and TensorFlow.js (installed
//!   from npm into `target/wasm/bench`) in Node and in headless Chromium; tables in
//!   `target/wasm/bench/report-node.md` and `report-chromium.md`.
//! - `bench [--compare-jax] [--quick] [--only ode|conv]`: the benchmark suite
//!   (`examples/src/bin/bench_suite.rs`) in f32 and f64 on one thread (pinned with `taskset`)
//!   and on all; with `--compare-jax` the same workloads in JAX (`benches/jax_suite.py`, in a
//!   venv under `target/` with jax, optax and diffrax from PyPI) in the same run, and a table
//!   of ratios in `target/bench/report.md`. `--only ode` (or `conv`) runs those rows alone.
//!   `bench --mlx`: the MLX plugin's rows beside the CPU plugin's and MLX's own Python API
//!   (`benches/mlx_suite.py`) in one run, into `target/bench/report-mlx.md`.
//!   `bench --data-parallel`: the data-parallel PINN step (N=16384) on 1 and 2 MPI ranks with
//!   the collective's share, beside JAX's single-process step, into
//!   `target/bench/report-data-parallel.md`.

mod apt;
mod cuda;
mod fuzz;
mod mlx;
mod mpi;
mod out_of_tree;
mod plugin_wheels;
mod tools;
mod wasm;
mod wheels;

use std::path::{Path, PathBuf};
use std::process::{exit, Command};

/// The main job: the PINN example (README).
const MAIN_EXAMPLE: &str = "pinn_poisson";
/// The quick end-to-end check `test` runs against the plugin library.
const SMOKE_EXAMPLE: &str = "quickstart";

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives in the workspace")
        .to_path_buf()
}

fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("target"))
}

fn plugin_file(profile: &str, name: &str) -> PathBuf {
    target_dir().join(profile).join(format!(
        "{}{name}{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    ))
}

fn run(what: &str, cmd: &mut Command) {
    run_then(what, cmd, || {});
}

/// [`run`], with `after` called once the command has ended, whatever its outcome (before a
/// failure exits).
fn run_then(what: &str, cmd: &mut Command, after: impl FnOnce()) {
    eprintln!("xtask: {what}");
    let start = std::time::Instant::now();
    let status = cmd.current_dir(root()).status();
    after();
    let status = status.unwrap_or_else(|e| {
        eprintln!("xtask: cannot start {what}: {e}");
        exit(2)
    });
    // Each step's time, so a CI log shows where its minutes go.
    eprintln!("xtask: {what}: {:.0} s", start.elapsed().as_secs_f64());
    if !status.success() {
        eprintln!("xtask: {what} failed ({status})");
        exit(status.code().unwrap_or(1));
    }
}

fn cargo() -> Command {
    Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
}

fn build_plugins(release: bool) {
    let mut c = cargo();
    c.args([
        "build",
        "-p",
        "quabla-cpu",
        "-p",
        "quabla-wgpu",
        "-p",
        "quabla-fixture-abi-major-mismatch",
        "-p",
        "quabla-fixture-lying-plugin",
        "-p",
        "quabla-toy-backend",
        "-p",
        "quabla-mlx",
        "-p",
        "quabla-cuda",
    ]);
    if release {
        c.arg("--release");
    }
    run("build the plugin libraries", &mut c);
}

fn main_job(extra: &[String]) {
    build_plugins(true);
    let mut c = cargo();
    c.args([
        "run",
        "--release",
        "-p",
        "quabla-examples",
        "--bin",
        MAIN_EXAMPLE,
        "--",
    ]);
    c.args(extra);
    c.env("QUABLA_PLUGIN_PATH", plugin_file("release", "quabla_cpu"));
    run("run the main job", &mut c);
}

fn conformance(extra: &[String]) {
    build_plugins(false);
    let mut build = cargo();
    build.args(["build", "-q", "-p", "quabla-conformance"]);
    run("build the conformance CLI", &mut build);
    run_conformance(extra);
}

/// The conformance CLI as built in `target/debug`, on the CPU plugin.
fn run_conformance(extra: &[String]) {
    let mut c = Command::new(debug_binary("quabla-conformance"));
    c.arg("--plugin").arg(plugin_file("debug", "quabla_cpu"));
    if extra.is_empty() {
        c.arg("--quiet");
    }
    c.args(extra);
    run("run the conformance suite on the CPU plugin", &mut c);
}

/// A workspace binary built in `target/debug`.
fn debug_binary(name: &str) -> PathBuf {
    target_dir()
        .join("debug")
        .join(format!("{name}{}", std::env::consts::EXE_SUFFIX))
}

/// Builds every target `cargo test --workspace` runs, the plugin libraries included, in one
/// cargo invocation. Cargo unifies dependency features over the packages and targets a
/// command selects, so any other selection (`build -p quabla-cpu`, `run -p ...`) resolves
/// them differently and compiles the whole dependency tree again; every later step of
/// `test` therefore runs these artifacts directly instead of asking cargo.
fn build_for_tests(features: &[&str]) {
    let mut c = cargo();
    c.args([
        "build",
        "--workspace",
        "--lib",
        "--bins",
        "--tests",
        "--examples",
    ]);
    for f in features {
        c.args(["--features", f]);
    }
    run(
        "build the workspace, its tests and the plugin libraries",
        &mut c,
    );
    for lib in [
        "quabla_cpu",
        "quabla_wgpu",
        "quabla_fixture_abi_major_mismatch",
        "quabla_fixture_lying_plugin",
        "quabla_toy_backend",
        "quabla_mlx",
        "quabla_cuda",
        "quabla_mpi",
    ] {
        if !plugin_file("debug", lib).is_file() {
            eprintln!(
                "xtask: the workspace build left no {}",
                plugin_file("debug", lib).display()
            );
            exit(2);
        }
    }
}

/// Makes sure a Vulkan driver is there for the wgpu plugin's tests: Mesa's lavapipe (a
/// software driver, so CI needs no GPU), from Debian's packages when the machine lacks it.
/// Returns whether one is installed.
fn ensure_vulkan_driver() -> bool {
    let icd = Path::new("/usr/share/vulkan/icd.d");
    let has_driver = || {
        std::fs::read_dir(icd)
            .map(|d| {
                d.flatten()
                    .any(|e| e.file_name().to_string_lossy().starts_with("lvp_icd"))
            })
            .unwrap_or(false)
            && Path::new("/usr/lib/x86_64-linux-gnu/libvulkan.so.1").exists()
    };
    if has_driver() {
        return true;
    }
    apt::install(
        "Mesa's lavapipe Vulkan driver, for the wgpu plugin's tests",
        &["mesa-vulkan-drivers", "libvulkan1"],
    );
    has_driver()
}

fn test() {
    let has_mlx = mlx::ensure().is_some();
    let has_nvrtc = cuda::ensure().is_some();
    let has_mpi = mpi::ensure();
    let features: &[&str] = if has_mpi { &[mpi::FEATURE] } else { &[] };
    build_for_tests(features);
    let mut tests = cargo();
    tests.args(["test", "--workspace", "--no-fail-fast"]);
    for f in features {
        tests.args(["--features", f]);
    }
    if has_mpi {
        // MPI is there, so the tests that start `mpirun` must run, not skip.
        tests.env("QUABLA_REQUIRE_MPI", "1");
    }
    if ensure_vulkan_driver() {
        // The driver is there, so the wgpu conformance test must run, not skip.
        tests.env("QUABLA_REQUIRE_WGPU", "1");
    }
    if has_mlx {
        // Likewise MLX: the plugin was built against it, so its tests must run.
        tests.env("QUABLA_REQUIRE_MLX", "1");
    }
    if has_nvrtc {
        // And NVRTC: the CUDA kernels of the whole suite must compile, not skip.
        tests.env("QUABLA_REQUIRE_NVRTC", "1");
    }
    run("run the workspace tests", &mut tests);
    run_conformance(&[]);
    if has_mlx {
        // The runner's own report for the MLX plugin (which cases are not applicable, and
        // why), as a third party would read it.
        let mut c = Command::new(debug_binary("quabla-conformance"));
        c.arg("--plugin").arg(plugin_file("debug", "quabla_mlx"));
        c.arg("--quiet");
        run("run the conformance suite on the MLX plugin", &mut c);
    }
    let mut c = Command::new(debug_binary(SMOKE_EXAMPLE));
    c.env("QUABLA_PLUGIN_PATH", plugin_file("debug", "quabla_cpu"));
    run("run the example against the plugin library", &mut c);
    python_tests(
        has_mlx.then(|| plugin_file("debug", "quabla_mlx")),
        has_mpi.then(|| plugin_file("debug", "quabla_mpi")),
    );
    plugin_wheel_tests(has_mlx, has_nvrtc);
    wasm::test();
    fuzz::fuzz(
        &["--dev".to_string(), "--no-sanitizer".to_string()],
        Some(debug_binary("quabla-conformance")),
    );
    // Last: it compiles the path crates again under this crate's own feature resolution.
    out_of_tree::build_and_run();
}

/// The plugin wheels' install tests: MLX's where MLX was fetched (the libmlx loaded must be
/// the venv's: the wheel's `$ORIGIN` rpath works), CUDA's where NVRTC was (its kernels run in
/// the host emulation, no GPU here; the NVRTC found must be the venv's wheel).
fn plugin_wheel_tests(has_mlx: bool, has_nvrtc: bool) {
    use plugin_wheels::{gradient_check, install_tests, PluginWheel};
    let mut plugins = Vec::new();
    if has_mlx {
        plugins.push(PluginWheel {
            name: "mlx",
            library: plugin_file("debug", "quabla_mlx"),
            find_links: mlx::cache_dir()
                .map(|c| c.join("wheel"))
                .into_iter()
                .collect(),
            check: gradient_check(
                "mlx",
                "libs = {l.split()[-1] for l in open('/proc/self/maps') if 'libmlx' in l}\n\
                 assert libs and all(p.startswith(sys.prefix) for p in libs), libs",
            ),
            env: vec![],
        });
    }
    if has_nvrtc {
        plugins.push(PluginWheel {
            name: "cuda",
            library: plugin_file("debug", "quabla_cuda"),
            find_links: cuda::lib_dir()
                .and_then(|l| l.ancestors().nth(3).map(|r| r.join("wheel")))
                .into_iter()
                .collect(),
            check: gradient_check(
                "cuda",
                &format!(
                    "import os\n\
                     assert os.environ['QUABLA_NVRTC_DIR'].startswith(sys.prefix), os.environ\n\
                     {CUDA_PRELOAD_CHECK}"
                ),
            ),
            env: vec![("QUABLA_CUDA_EMULATE", "1".into())],
        });
    }
    install_tests(&plugins);
}

/// The CUDA wheel's loading of NVIDIA's library wheels (`quabla_cuda._preload`), without
/// the 1 GB wheels: two stand-ins built here, the second needing the first by soname and
/// neither with a RUNPATH (as NVIDIA's), load in order, after which opening the second by
/// name (as the plugin's loader does) finds it loaded.
const CUDA_PRELOAD_CHECK: &str = "import ctypes, subprocess, tempfile, quabla_cuda\n\
d = tempfile.mkdtemp()\n\
open(os.path.join(d, 'lt.c'), 'w').write('int quabla_lt(void) { return 7; }')\n\
open(os.path.join(d, 'blas.c'), 'w').write('int quabla_lt(void); int quabla_blas(void) { return quabla_lt() + 1; }')\n\
cc = lambda *a: subprocess.run(['cc', '-shared', '-fPIC', *a], cwd=d, check=True)\n\
cc('-Wl,-soname,libcublasLt.so.13', '-o', 'libcublasLt.so.13', 'lt.c')\n\
cc('-Wl,-soname,libcublas.so.13', '-o', 'libcublas.so.13', 'blas.c', './libcublasLt.so.13')\n\
assert quabla_cuda._preload([d]) == ['libcublasLt.so.13', 'libcublas.so.13']\n\
assert ctypes.CDLL('libcublas.so.13').quabla_blas() == 8\n\
print('the CUDA wheel loads library wheels in their dependency order')";

/// The venv the Python package is installed into for its tests (reused between runs).
fn python_venv() -> PathBuf {
    target_dir().join("python-venv")
}

fn venv_python() -> PathBuf {
    let bin = if cfg!(windows) { "Scripts" } else { "bin" };
    python_venv().join(bin).join("python")
}

fn python_tests(mlx_plugin: Option<PathBuf>, mpi_plugin: Option<PathBuf>) {
    let py = venv_python();
    if !py.exists() {
        let host = std::env::var_os("PYTHON").unwrap_or_else(|| "python3".into());
        run(
            "create the Python test venv",
            Command::new(host).arg("-m").arg("venv").arg(python_venv()),
        );
    }
    let pip = |what: &str, args: &[&str]| {
        let mut c = Command::new(&py);
        c.args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
        ]);
        c.args(args);
        c.env(
            "QUABLA_CPU_PLUGIN_PREBUILT",
            plugin_file("debug", "quabla_cpu"),
        );
        // The test build's profile (dependencies optimised, ours at level 1), shipping the
        // debug plugin: maturin's own package selection still recompiles the core's small
        // dependency tree, but none of the plugin's (faer, gemm, cranelift), which a release
        // wheel would compile a second time.
        c.env("MATURIN_PEP517_ARGS", "--profile dev");
        run(what, &mut c);
    };
    pip(
        "install the Python test requirements",
        &["-r", "bindings/python/requirements-test.txt"],
    );
    // Installing the package builds the extension (maturin, in `target/debug`) and ships
    // the CPU plugin `test` built first.
    pip(
        "build and install the Python package",
        &["--force-reinstall", "--no-deps", "./bindings/python"],
    );
    let mut pytest = Command::new(&py);
    pytest.args(["-m", "pytest", "-q", "bindings/python/tests"]);
    if let Some(lib) = mlx_plugin {
        // The MLX plugin's tests (the PINN example on `device="mlx"`) run only when asked.
        pytest.env("QUABLA_TEST_MLX_PLUGIN", lib);
    }
    if let Some(lib) = mpi_plugin {
        // The data-parallel tests start `mpirun`; without the plugin they skip.
        pytest.env("QUABLA_TEST_MPI_PLUGIN", lib);
    }
    run("run the Python package's tests", &mut pytest);
}

fn goldens() {
    // The transformation goldens test the QIR Quabla's AD and vmap emit: dump it first.
    let mut dump = cargo();
    dump.args(["run", "-q", "-p", "quabla", "--example", "dump_ad_programs"]);
    run("dump the programs the transformations emit", &mut dump);
    let script = root().join("tests/conformance/tools/generate.py");
    run(
        "regenerate the conformance goldens",
        Command::new("python3").arg(script),
    );
}

/// Runs `cmd` (pinned to CPU 0 when `one_thread`) and returns its stdout lines that are JSON
/// objects.
fn bench_rows(what: &str, mut cmd: Command, one_thread: bool) -> Vec<String> {
    let mut c = if one_thread && Command::new("taskset").arg("-V").output().is_ok() {
        let mut t = Command::new("taskset");
        t.args(["-c", "0"])
            .arg(cmd.get_program())
            .args(cmd.get_args());
        for (k, v) in cmd.get_envs() {
            match v {
                Some(v) => t.env(k, v),
                None => t.env_remove(k),
            };
        }
        t
    } else {
        std::mem::replace(&mut cmd, Command::new("true"))
    };
    eprintln!("xtask: {what}");
    let out = c.current_dir(root()).output().unwrap_or_else(|e| {
        eprintln!("xtask: cannot start {what}: {e}");
        exit(2)
    });
    if !out.status.success() {
        eprintln!("{}", String::from_utf8_lossy(&out.stderr));
        eprintln!("xtask: {what} failed ({})", out.status);
        exit(out.status.code().unwrap_or(1));
    }
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(String::from)
        .collect()
}

/// A field of one of the suites' flat JSON lines.
fn field<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    let start = line.find(&format!("\"{key}\": "))? + key.len() + 4;
    let rest = &line[start..];
    let end = rest.find([',', '}'])?;
    Some(rest[..end].trim().trim_matches('"'))
}

/// Builds the plugins and the benchmark suite (release).
fn build_bench_suite() {
    build_plugins(true);
    let mut b = cargo();
    b.args([
        "build",
        "--release",
        "-p",
        "quabla-examples",
        "--bin",
        "bench_suite",
    ]);
    run("build the benchmark suite", &mut b);
}

/// The Python of the benchmark venv under `target/` (JAX, diffrax, MLX's Python API are
/// installed into it by the commands that compare against them), created when missing.
fn bench_venv_python() -> PathBuf {
    let venv = target_dir().join("bench-venv");
    let bin = venv.join("bin").join("python");
    if !bin.exists() {
        run(
            "create the benchmark venv",
            Command::new("python3").arg("-m").arg("venv").arg(&venv),
        );
    }
    bin
}

/// The benchmark venv's Python with JAX, optax and diffrax installed (pinned versions).
fn jax_venv_python() -> PathBuf {
    let bin = bench_venv_python();
    run(
        "install jax, optax and diffrax for the comparison",
        Command::new(&bin).args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "jax==0.10.2",
            "jaxlib==0.10.2",
            "optax==0.2.8",
            // diffrax 0.7.0 rejects every Kvaerno5 step under these versions; 0.7.2 does not.
            "diffrax==0.7.2",
            "equinox==0.13.8",
            "lineax==0.1.1",
            "optimistix==0.1.0",
            "numpy",
        ]),
    );
    bin
}

fn bench(extra: &[String]) {
    let compare = extra.iter().any(|a| a == "--compare-jax");
    let quick = extra.iter().any(|a| a == "--quick");
    // `--only ode` or `--only conv`: those rows alone, on both sides.
    let only = extra
        .windows(2)
        .find(|w| w[0] == "--only")
        .map(|w| w[1].clone());
    build_bench_suite();
    let py = compare.then(jax_venv_python);
    let mut rows = Vec::new();
    for one_thread in [true, false] {
        for dtype in ["f32", "f64"] {
            let mut q = Command::new(target_dir().join("release").join("bench_suite"));
            q.args(["--dtype", dtype]);
            if quick {
                q.arg("--quick");
            }
            if let Some(o) = &only {
                q.args(["--only", o]);
            }
            q.env("QUABLA_PLUGIN_PATH", plugin_file("release", "quabla_cpu"));
            let t = if one_thread {
                "1 thread"
            } else {
                "all threads"
            };
            rows.extend(bench_rows(&format!("Quabla {dtype}, {t}"), q, one_thread));
            if let Some(py) = &py {
                let mut j = Command::new(py);
                j.arg(root().join("benches/jax_suite.py"))
                    .args(["--dtype", dtype]);
                if quick {
                    j.arg("--quick");
                }
                if let Some(o) = &only {
                    j.args(["--only", o]);
                }
                rows.extend(bench_rows(&format!("JAX {dtype}, {t}"), j, one_thread));
            }
        }
    }
    let mut md = String::from(
        "| workload (`_vs_X`: the JAX side is X) | dtype | threads | Quabla compile ms | Quabla steady ms | JAX compile ms | JAX steady ms | steady ratio (Quabla / JAX) |\n|---|---|---|---|---|---|---|---|\n",
    );
    for r in rows.iter().filter(|r| field(r, "system") == Some("quabla")) {
        let (name, dtype, threads) = (field(r, "name"), field(r, "dtype"), field(r, "threads"));
        let jax = rows.iter().find(|j| {
            field(j, "system") == Some("jax")
                && field(j, "name") == name
                && field(j, "dtype") == dtype
                && field(j, "threads") == threads
        });
        let num = |l: &str, k: &str| field(l, k).and_then(|v| v.parse::<f64>().ok());
        let qs = num(r, "steady_ms").unwrap_or(f64::NAN);
        let (jc, js) = jax.map_or((f64::NAN, f64::NAN), |j| {
            (
                num(j, "compile_ms").unwrap_or(f64::NAN),
                num(j, "steady_ms").unwrap_or(f64::NAN),
            )
        });
        md.push_str(&format!(
            "| {} | {} | {} | {:.1} | {:.3} | {:.1} | {:.3} | {:.2} |\n",
            name.unwrap_or("?"),
            dtype.unwrap_or("?"),
            threads.unwrap_or("?"),
            num(r, "compile_ms").unwrap_or(f64::NAN),
            qs,
            jc,
            js,
            qs / js
        ));
    }
    let dir = target_dir().join("bench");
    let _ = std::fs::create_dir_all(&dir);
    let report = dir.join("report.md");
    if let Err(e) = std::fs::write(&report, &md) {
        eprintln!("xtask: cannot write {}: {e}", report.display());
    }
    println!("{md}");
    eprintln!("xtask: wrote {}", report.display());
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("bench") if args.iter().any(|a| a == "--mlx") => {
            mlx::bench(args.iter().any(|a| a == "--quick"))
        }
        Some("bench") if args.iter().any(|a| a == "--data-parallel") => mpi::bench(),
        Some("bench") => bench(&args[1..]),
        Some("main") => main_job(&args[1..]),
        Some("test") => test(),
        Some("out-of-tree") => out_of_tree::build_and_run(),
        Some("conformance") => conformance(&args[1..]),
        Some("goldens") => goldens(),
        Some("fuzz") => fuzz::fuzz(&args[1..], None),
        Some("wasm") => wasm::build(),
        Some("mlx") => {
            if mlx::ensure().is_none() {
                exit(1)
            }
        }
        Some("cuda") => {
            if cuda::ensure().is_none() {
                exit(1)
            }
        }
        Some("mpi") => {
            if !mpi::build() {
                exit(1)
            }
        }
        Some("wasm-test") => {
            build_for_tests(&[]);
            wasm::test()
        }
        Some("wasm-bench") => wasm::bench(&args[1..]),
        _ => {
            eprintln!(
                "usage: cargo xtask <main | test | out-of-tree | conformance [ARGS] | goldens | mlx | cuda | mpi | fuzz [--seconds N | --runs N] [--dev] [--no-sanitizer] [TARGET ..] | bench [--compare-jax | --mlx | --data-parallel] [--quick] [--only ode|conv] | wasm | wasm-test | wasm-bench>"
            );
            exit(2);
        }
    }
}
