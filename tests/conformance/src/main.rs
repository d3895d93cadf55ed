//! `quabla-conformance --plugin PATH [--filter GLOB] [--cases DIR] [--precision exact|wgsl|webgpu] [--quiet]`
//! `quabla-conformance --write-fuzz-seeds DIR [--cases DIR]`
//!
//! Loads a backend plugin through the ABI, runs the suite, prints one line per case (with the
//! max ulp / relative error seen) and a final `N passed, M failed` line; exits 1 on failure.
//! Float results are held to the accuracy profile the plugin declares (`exact`: the goldens'
//! own tolerances; `wgsl`, `webgpu`: per-function bounds); `--precision` overrides it. Before
//! the closing line comes a coverage summary: applicable cases of the total and the missing
//! capabilities that blocked the rest, most-blocking first.
//!
//! `--write-fuzz-seeds DIR` writes the fuzz targets' seed corpora from the cases instead
//! (`DIR/<target>/`, see `fuzz/`) and runs nothing.

use quabla_abi::host::Plugin;
use quabla_conformance::{
    default_cases_dir, load_cases, run_suite_with, write_fuzz_seeds, Outcome, Pattern, Precision,
};
use std::path::PathBuf;
use std::process::ExitCode;

const USAGE: &str = "usage: quabla-conformance --plugin PATH [--filter GLOB] [--cases DIR] [--precision exact|wgsl|webgpu] [--quiet]
       quabla-conformance --write-fuzz-seeds DIR [--cases DIR]";

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let (mut plugin, mut filter, mut cases, mut quiet) = (None, None, default_cases_dir(), false);
    let (mut precision, mut seeds) = (None, None);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--plugin" => plugin = args.next().map(PathBuf::from),
            "--filter" => filter = args.next(),
            "--cases" => cases = args.next().map(PathBuf::from).unwrap_or(cases),
            "--quiet" => quiet = true,
            "--write-fuzz-seeds" => seeds = args.next().map(PathBuf::from),
            "--precision" => match args.next().as_deref() {
                Some(name @ ("exact" | "wgsl" | "webgpu")) => {
                    precision = Precision::named(name).ok()
                }
                other => {
                    eprintln!(
                        "--precision takes `exact`, `wgsl` or `webgpu`, not {other:?}\n{USAGE}"
                    );
                    return ExitCode::from(2);
                }
            },
            "-h" | "--help" => {
                println!("{USAGE}");
                return ExitCode::SUCCESS;
            }
            other => {
                eprintln!("unknown argument `{other}`\n{USAGE}");
                return ExitCode::from(2);
            }
        }
    }
    if let Some(dir) = seeds {
        return write_seeds(&cases, &dir);
    }
    let Some(path) = plugin else {
        eprintln!("--plugin is required\n{USAGE}");
        return ExitCode::from(2);
    };
    let pattern = match filter.as_deref().map(Pattern::new).transpose() {
        Ok(p) => p,
        Err(e) => {
            eprintln!("bad --filter glob: {e}");
            return ExitCode::from(2);
        }
    };
    let plugin = match Plugin::load(&path) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let cases = match load_cases(&cases) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let precision = match precision
        .map(Ok)
        .unwrap_or_else(|| Precision::declared_by(&plugin))
    {
        Ok(p) => p,
        Err(e) => {
            eprintln!("error: {e}; pass --precision exact|wgsl|webgpu");
            return ExitCode::from(2);
        }
    };
    println!(
        "plugin `{}` {} from {} (accuracy profile `{}`)",
        plugin.name(),
        plugin.info().version,
        path.display(),
        precision.name
    );
    let report = run_suite_with(&plugin, &cases, pattern.as_ref(), &precision);
    for r in &report.results {
        match &r.outcome {
            Outcome::Passed(e) if !quiet => println!(
                "ok    {}  (max ulp {}, max rel {:.2e})",
                r.name, e.max_ulp, e.max_rel
            ),
            Outcome::Passed(_) => {}
            Outcome::Failed(m) => println!("FAIL  {}: {m}", r.name),
            Outcome::NotApplicable(m) if !quiet => println!("n/a   {}: {}", r.name, m.join(", ")),
            Outcome::NotApplicable(_) => {}
        }
    }
    for (g, n) in report.group_counts() {
        println!("group {g}: {n} cases");
    }
    for line in report.coverage_lines() {
        println!("{line}");
    }
    println!("{}", report.summary());
    if report.failed() > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

fn write_seeds(cases_dir: &std::path::Path, dir: &std::path::Path) -> ExitCode {
    match load_cases(cases_dir).and_then(|cases| write_fuzz_seeds(&cases, dir)) {
        Ok(n) => {
            println!(
                "wrote fuzz seeds under {}: {} text, {} binary, {} safetensors",
                dir.display(),
                n.text,
                n.binary,
                n.safetensors
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}
