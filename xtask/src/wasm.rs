//! The browser build (`bindings/wasm`): toolchain, build, tests and benchmarks.
//!
//! rustup here has only the host's std, so wasm32 is built with Debian's rustc-web, which
//! ships the std sources (`-Z build-std`), linked by Debian's wasm-ld; wasm-bindgen-cli must
//! match the wasm-bindgen crate exactly and is installed once into a cache folder.

use super::tools::{cargo_install, installed, tools_dir};
use super::{debug_binary, plugin_file, root, run, target_dir};
use std::path::{Path, PathBuf};
use std::process::{exit, Command};

/// Must equal the `wasm-bindgen` version pinned in `bindings/wasm/Cargo.toml`.
const WASM_BINDGEN: &str = "0.2.130";
const WASM_LINKER: &str = "wasm-ld-22";
/// Collocation points of the native PINN gradients the wasm build is compared with.
const PINN_REFERENCE_POINTS: &str = "32";

fn wasm_dir() -> PathBuf {
    target_dir().join("wasm")
}

/// Debian's packages for the build and the browser tests.
fn ensure_toolchain() {
    let have = |p: &str| Path::new(p).exists();
    let has_all = || {
        have("/usr/bin/rustc")
            && have("/usr/bin/cargo")
            && have("/usr/lib/rustlib/src/rust/library")
            && have(&format!("/usr/bin/{WASM_LINKER}"))
            && have("/usr/bin/chromium")
            && have("/usr/bin/chromedriver")
    };
    if !has_all() {
        super::apt::install(
            "the wasm32 toolchain and headless Chromium for the browser build",
            &[
                "rustc-web",
                "cargo-web",
                "rust-web-src",
                "lld-22",
                "chromium",
                "chromium-driver",
            ],
        );
    }
    if !has_all() {
        eprintln!(
            "xtask: the wasm toolchain is incomplete: need /usr/bin/rustc and cargo (rustc-web), \
             the std sources (rust-web-src), {WASM_LINKER} (lld-22), chromium and chromedriver"
        );
        exit(2);
    }
}

/// The folder holding `wasm-bindgen` and `wasm-bindgen-test-runner` of the pinned version.
fn wasm_bindgen_bin() -> PathBuf {
    let bin = tools_dir().join("bin");
    if !installed("wasm-bindgen", WASM_BINDGEN) {
        let install = |locked: bool| {
            let mut c = cargo_install(&["wasm-bindgen-cli", "--version", WASM_BINDGEN]);
            if locked {
                c.arg("--locked");
            }
            eprintln!("xtask: installing wasm-bindgen-cli {WASM_BINDGEN} (once; cached)");
            c.status().is_ok_and(|s| s.success())
        };
        // Its lockfile has pinned a crate version the registry lacked; unlocked works then.
        if !install(true) && !install(false) {
            eprintln!("xtask: cannot install wasm-bindgen-cli {WASM_BINDGEN}");
            exit(2);
        }
    }
    bin
}

/// Debian's cargo for wasm32, with the std built from source.
fn wasm_cargo(args: &[&str]) -> Command {
    let mut c = Command::new("/usr/bin/cargo");
    c.args(args)
        .args([
            "--release",
            "--target",
            "wasm32-unknown-unknown",
            "-Z",
            "build-std=std,panic_abort",
            "-p",
            "quabla-wasm",
        ])
        .arg("--target-dir")
        .arg(wasm_dir())
        .env("RUSTC", "/usr/bin/rustc")
        .env("RUSTDOC", "/usr/bin/rustdoc")
        .env("RUSTC_BOOTSTRAP", "1")
        .env("CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_LINKER", WASM_LINKER)
        // 128-bit SIMD (Chrome 91+, Firefox 89+, Safari 16.4+, Node 16.4+): gemm's micro-kernels
        // and the vectorised elementwise loops need it.
        .env(
            "CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUSTFLAGS",
            "-C target-feature=+simd128",
        )
        // rustup's cargo sets these for the xtask; Debian's toolchain must not inherit them
        .env_remove("RUSTUP_TOOLCHAIN")
        .env_remove("CARGO");
    c
}

fn with_path(c: &mut Command, dir: &Path) {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut dirs = vec![dir.to_path_buf()];
    dirs.extend(std::env::split_paths(&path));
    c.env(
        "PATH",
        std::env::join_paths(dirs).expect("paths without separators"),
    );
}

/// Builds the package for the web and for Node; prints the size of the shipped `.wasm`.
pub fn build() {
    ensure_toolchain();
    let bin = wasm_bindgen_bin();
    run(
        "build quabla-wasm for wasm32",
        &mut wasm_cargo(&["build", "--lib"]),
    );
    let wasm = wasm_dir().join("wasm32-unknown-unknown/release/quabla_wasm.wasm");
    for (target, out) in [
        ("web", root().join("bindings/wasm/www/pkg")),
        ("nodejs", wasm_dir().join("pkg-node")),
    ] {
        let mut c = Command::new(bin.join("wasm-bindgen"));
        c.args(["--target", target, "--out-dir"])
            .arg(&out)
            .arg(&wasm);
        run(&format!("wasm-bindgen --target {target}"), &mut c);
    }
    let shipped = root().join("bindings/wasm/www/pkg/quabla_wasm_bg.wasm");
    if let Ok(m) = std::fs::metadata(&shipped) {
        eprintln!(
            "xtask: {} is {:.2} MB",
            shipped.display(),
            m.len() as f64 / 1e6
        );
    }
}

/// Node tests, the native PINN reference, browser tests (wasm-bindgen-test) and the page test.
pub fn test() {
    build();
    let bin = wasm_bindgen_bin();
    // The native side of the gradient comparison.
    let reference = wasm_dir().join("pinn_reference.json");
    let out = Command::new(debug_binary("pinn_gradients"))
        .arg(PINN_REFERENCE_POINTS)
        .env("QUABLA_PLUGIN_PATH", plugin_file("debug", "quabla_cpu"))
        .current_dir(root())
        .output()
        .unwrap_or_else(|e| {
            eprintln!("xtask: cannot run pinn_gradients: {e}");
            exit(2)
        });
    if !out.status.success() {
        eprintln!(
            "xtask: pinn_gradients failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        exit(1);
    }
    std::fs::write(&reference, &out.stdout).unwrap_or_else(|e| {
        eprintln!("xtask: cannot write {}: {e}", reference.display());
        exit(2)
    });
    let mut node = Command::new("node");
    node.args(["--test", "bindings/wasm/tests/node/"]);
    run("run the Node tests of the JS API", &mut node);

    let mut browser = wasm_cargo(&["test", "--test", "browser"]);
    with_path(&mut browser, &bin);
    browser
        .current_dir(root().join("bindings/wasm"))
        .env(
            "CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER",
            "wasm-bindgen-test-runner",
        )
        .env("CHROMEDRIVER", "/usr/bin/chromedriver")
        .env("WASM_BINDGEN_TEST_TIMEOUT", "1200");
    eprintln!("xtask: run the conformance suite and API tests in headless Chromium");
    let status = browser.status().unwrap_or_else(|e| {
        eprintln!("xtask: cannot start the browser tests: {e}");
        exit(2)
    });
    if !status.success() {
        eprintln!("xtask: the browser tests failed ({status})");
        exit(status.code().unwrap_or(1));
    }

    let mut page = Command::new("node");
    page.args(["--test", "bindings/wasm/tests/page/"]);
    run("run the demo page test in headless Chromium", &mut page);
}

/// The benchmark tables against jax-js and TensorFlow.js (npm), in Node and in headless
/// Chromium (`target/wasm/bench/report-{node,chromium}.md`).
pub fn bench(extra: &[String]) {
    build();
    let dir = wasm_dir().join("bench");
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| {
        eprintln!("xtask: cannot create {}: {e}", dir.display());
        exit(2)
    });
    let manifest = root().join("bindings/wasm/bench/package.json");
    std::fs::copy(&manifest, dir.join("package.json")).unwrap_or_else(|e| {
        eprintln!("xtask: cannot copy {}: {e}", manifest.display());
        exit(2)
    });
    let mut npm = Command::new("npm");
    npm.args(["install", "--no-audit", "--no-fund", "--prefix"])
        .arg(&dir);
    run("install jax-js and TensorFlow.js from npm", &mut npm);
    let mut node = Command::new("node");
    node.arg("bindings/wasm/bench/bench.mjs")
        .args(extra)
        .env("QUABLA_BENCH_DIR", &dir)
        .env(
            "QUABLA_WASM_NODE_PKG",
            wasm_dir().join("pkg-node/quabla_wasm.js"),
        );
    run("run the benchmarks in Node", &mut node);
    let mut chromium = Command::new("node");
    chromium
        .arg("bindings/wasm/bench/chromium.mjs")
        .env("QUABLA_BENCH_DIR", &dir)
        .env("CHROMEDRIVER", "/usr/bin/chromedriver");
    run("run the benchmarks in headless Chromium", &mut chromium);
}
