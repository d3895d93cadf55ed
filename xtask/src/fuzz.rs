//! `cargo xtask fuzz [--seconds N | --runs N] [--dev] [--no-sanitizer] [TARGET ...]`: the
//! cargo-fuzz targets in `fuzz/` (all five unless named), each seeded from the conformance
//! programs and run for a bounded time (default 30 s) or number of executions, then a table
//! of executions and crashes per target. `--dev` builds unoptimised dependencies (half the build time, a
//! fraction of the executions per second); `--no-sanitizer` leaves AddressSanitizer out
//! (about ten times the executions per second here: the targets are safe Rust, whose
//! overflows and panics the debug assertions catch either way). `cargo xtask test` uses both
//! on CI's fresh machines; long runs use the default optimised ASan build. A crash stops the run with libFuzzer's report and leaves the input in
//! `target/fuzz/artifacts/<target>/`; turn it into a regression test beside the code it hit.
//!
//! cargo-fuzz needs nightly compiler flags: `RUSTC_BOOTSTRAP=1` lets the stable toolchain
//! accept them. cargo-fuzz itself is installed once into the tools folder.

use super::tools::{cargo_install, installed, tools_dir};
use super::{cargo, root, run, target_dir};
use std::path::PathBuf;
use std::process::{exit, Command};

/// The targets in `fuzz/Cargo.toml`.
pub const TARGETS: [&str; 5] = [
    "qir_text",
    "qir_decode",
    "cpu_compile",
    "cuda_plan",
    "safetensors_load",
];
const CARGO_FUZZ: &str = "0.13.2";

/// How long each target runs.
enum Budget {
    Seconds(u64),
    Runs(u64),
}

fn cargo_fuzz_bin() -> PathBuf {
    let bin = tools_dir().join("bin");
    if !installed("cargo-fuzz", CARGO_FUZZ) {
        eprintln!("xtask: installing cargo-fuzz {CARGO_FUZZ} (once; cached)");
        let mut c = cargo_install(&["cargo-fuzz", "--locked", "--version", CARGO_FUZZ]);
        run("install cargo-fuzz", &mut c);
    }
    bin
}

/// What to run, and how.
struct Plan {
    budget: Budget,
    dev: bool,
    no_sanitizer: bool,
    targets: Vec<String>,
}

/// libfuzzer-sys compiles libFuzzer (C++) with the system's C++ compiler.
fn ensure_cxx() {
    if Command::new("c++").arg("--version").output().is_err()
        && !super::apt::install("a C++ compiler, for libFuzzer", &["g++"])
    {
        eprintln!("xtask: the fuzz targets need a C++ compiler (g++)");
        exit(2);
    }
}

fn parse(extra: &[String]) -> Plan {
    let mut budget = Budget::Seconds(30);
    let mut dev = false;
    let mut no_sanitizer = false;
    let mut targets = Vec::new();
    let mut args = extra.iter();
    while let Some(a) = args.next() {
        let mut number = |what: &str| -> u64 {
            args.next().and_then(|v| v.parse().ok()).unwrap_or_else(|| {
                eprintln!("xtask: {what} takes a whole number");
                exit(2)
            })
        };
        match a.as_str() {
            "--seconds" => budget = Budget::Seconds(number("--seconds")),
            "--runs" => budget = Budget::Runs(number("--runs")),
            "--dev" => dev = true,
            "--no-sanitizer" => no_sanitizer = true,
            t if TARGETS.contains(&t) => targets.push(t.to_string()),
            other => {
                eprintln!("xtask: unknown fuzz argument `{other}`; targets: {TARGETS:?}");
                exit(2)
            }
        }
    }
    if targets.is_empty() {
        targets = TARGETS.iter().map(|t| t.to_string()).collect();
    }
    Plan {
        budget,
        dev,
        no_sanitizer,
        targets,
    }
}

/// libFuzzer's closing line: `Done 123456 runs in 30 second(s)`.
fn done_line(stderr: &str) -> Option<(u64, u64)> {
    let line = stderr.lines().rev().find(|l| l.starts_with("Done "))?;
    let mut w = line.split_whitespace();
    let runs = w.nth(1)?.parse().ok()?;
    let secs = w.nth(2)?.parse().ok()?;
    Some((runs, secs))
}

/// `conformance_cli`: the conformance CLI already built (by `test`), run as it is; `None`
/// builds it with `cargo run`.
pub fn fuzz(extra: &[String], conformance_cli: Option<PathBuf>) {
    let Plan {
        budget,
        dev,
        no_sanitizer,
        targets,
    } = parse(extra);
    let mut profile: Vec<&str> = Vec::new();
    if dev {
        profile.push("--dev");
    }
    if no_sanitizer {
        profile.extend(["--sanitizer", "none"]);
    }
    let bin = cargo_fuzz_bin();
    ensure_cxx();
    let dir = target_dir().join("fuzz");
    let seeds = dir.join("seeds");
    let mut s = match conformance_cli {
        Some(cli) => Command::new(cli),
        None => {
            let mut c = cargo();
            c.args(["run", "-q", "-p", "quabla-conformance", "--"]);
            c
        }
    };
    s.arg("--write-fuzz-seeds").arg(&seeds);
    run(
        "write the fuzz seed corpora from the conformance cases",
        &mut s,
    );
    let mut b = Command::new(bin.join("cargo-fuzz"));
    b.env("RUSTC_BOOTSTRAP", "1")
        .args(["fuzz", "build"])
        .args(&profile);
    run(
        "build the fuzz targets (sanitizer and coverage flags)",
        &mut b,
    );
    let mut rows = Vec::new();
    for t in &targets {
        let corpus = dir.join("corpus").join(t);
        let artifacts = dir.join("artifacts").join(t);
        for d in [&corpus, &artifacts] {
            if let Err(e) = std::fs::create_dir_all(d) {
                eprintln!("xtask: cannot create {}: {e}", d.display());
                exit(2);
            }
        }
        let mut c = Command::new(bin.join("cargo-fuzz"));
        c.env("RUSTC_BOOTSTRAP", "1")
            .current_dir(root())
            .args(["fuzz", "run"])
            .args(&profile)
            .arg(t)
            .arg(&corpus)
            .arg(seeds.join(t))
            .arg("--")
            .arg(format!("-artifact_prefix={}/", artifacts.display()))
            // A hostile input must fail fast; one that takes seconds is a finding too. Inputs
            // up to 4 KiB keep executions fast (larger seeds are cut to that), which finds
            // more in a short run than fewer executions of whole programs do.
            .args([
                "-timeout=10",
                "-rss_limit_mb=4096",
                "-max_len=4096",
                "-print_final_stats=1",
            ]);
        match budget {
            Budget::Seconds(n) => c.arg(format!("-max_total_time={n}")),
            Budget::Runs(n) => c.arg(format!("-runs={n}")),
        };
        eprintln!("xtask: fuzz {t}");
        let out = c.output().unwrap_or_else(|e| {
            eprintln!("xtask: cannot start cargo-fuzz: {e}");
            exit(2)
        });
        let stderr = String::from_utf8_lossy(&out.stderr);
        if !out.status.success() {
            eprintln!("{stderr}");
            eprintln!(
                "xtask: fuzz target {t} found a crash ({}); the input is in {}",
                out.status,
                artifacts.display()
            );
            exit(out.status.code().unwrap_or(1));
        }
        let (runs, secs) = done_line(&stderr).unwrap_or((0, 0));
        rows.push(format!("| {t} | {runs} | {secs} | 0 |"));
    }
    println!("| target | executions | seconds | crashes |\n|---|---|---|---|");
    for r in rows {
        println!("{r}");
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn reads_libfuzzers_closing_line() {
        let log =
            "#1024 pulse\nDone 1234567 runs in 31 second(s)\nstat::number_of_executed_units: 1";
        assert_eq!(super::done_line(log), Some((1_234_567, 31)));
        assert_eq!(super::done_line("crashed"), None);
    }
}
