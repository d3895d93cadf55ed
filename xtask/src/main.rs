//! `cargo xtask <command>`: the project's automation, in Rust so it runs wherever cargo does.
//!
//! - `main`: builds the CPU plugin and runs the main job, the PINN example (release), loading
//!   the plugin at run time through `QUABLA_PLUGIN_PATH`; extra arguments (`--steps 500`) go
//!   to the example.
//! - `test`: builds the plugins, runs every test of the workspace (the conformance suite
//!   against the CPU plugin's shared library included), the conformance CLI, the example,
//!   and the Python package's tests (`pip install ./bindings/python` into a venv under
//!   `target/`, then pytest).
//! - `conformance [ARGS]`: runs the conformance CLI against the CPU plugin (extra ARGS such as
//!   `--filter 'ops/unary/*'` are passed on).
//! - `goldens`: dumps the QIR the transformations emit, then regenerates every conformance
//!   golden with the numpy/mpmath reference.

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
    eprintln!("xtask: {what}");
    let status = cmd.current_dir(root()).status().unwrap_or_else(|e| {
        eprintln!("xtask: cannot start {what}: {e}");
        exit(2)
    });
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
        "quabla-fixture-abi-major-mismatch",
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
    let mut c = cargo();
    c.args(["run", "-q", "-p", "quabla-conformance", "--"]);
    c.arg("--plugin").arg(plugin_file("debug", "quabla_cpu"));
    if extra.is_empty() {
        c.arg("--quiet");
    }
    c.args(extra);
    run("run the conformance suite on the CPU plugin", &mut c);
}

fn test() {
    build_plugins(false);
    run(
        "run the workspace tests",
        cargo().args(["test", "--workspace", "--no-fail-fast"]),
    );
    conformance(&[]);
    let mut c = cargo();
    c.args(["run", "-q", "-p", "quabla-examples", "--bin", SMOKE_EXAMPLE]);
    c.env("QUABLA_PLUGIN_PATH", plugin_file("debug", "quabla_cpu"));
    run("run the example against the plugin library", &mut c);
    python_tests();
}

/// The venv the Python package is installed into for its tests (reused between runs).
fn python_venv() -> PathBuf {
    target_dir().join("python-venv")
}

fn venv_python() -> PathBuf {
    let bin = if cfg!(windows) { "Scripts" } else { "bin" };
    python_venv().join(bin).join("python")
}

fn python_tests() {
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
        run(what, &mut c);
    };
    pip(
        "install the Python test requirements",
        &["-r", "bindings/python/requirements-test.txt"],
    );
    // Installing the package builds the extension and the CPU plugin it ships (maturin).
    pip(
        "build and install the Python package",
        &["--force-reinstall", "--no-deps", "./bindings/python"],
    );
    run(
        "run the Python package's tests",
        Command::new(&py).args(["-m", "pytest", "-q", "bindings/python/tests"]),
    );
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

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("main") => main_job(&args[1..]),
        Some("test") => test(),
        Some("conformance") => conformance(&args[1..]),
        Some("goldens") => goldens(),
        _ => {
            eprintln!("usage: cargo xtask <main | test | conformance [ARGS] | goldens>");
            exit(2);
        }
    }
}
