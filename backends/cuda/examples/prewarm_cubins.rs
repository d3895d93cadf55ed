//! Compiles the cubins of every program under a folder of conformance cases for one SM into
//! the on-disk cache the GPU runtime reads (`QUABLA_CUDA_CACHE` or the user's cache folder),
//! on every core, without a GPU: a GPU run then loads kernels instead of compiling them one
//! program at a time.
//!
//! `cargo run --release -p quabla-cuda --example prewarm_cubins -- --sm 90 [--cases DIR]`

use quabla_abi::qir::Program;
use quabla_cuda::{cubin_cache, nvrtc, plan, runtime};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

fn case_files(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let (mut stack, mut out) = (vec![dir.to_path_buf()], Vec::new());
    while let Some(d) = stack.pop() {
        let entries = std::fs::read_dir(&d).map_err(|e| format!("{}: {e}", d.display()))?;
        for p in entries.flatten().map(|e| e.path()) {
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "json") {
                out.push(p);
            }
        }
    }
    out.sort();
    Ok(out)
}

/// Each case's program source, as the plugin will compile it.
fn sources(dir: &Path) -> Result<Vec<(String, String)>, String> {
    let mut out = Vec::new();
    for f in case_files(dir)? {
        let text = std::fs::read_to_string(&f).map_err(|e| format!("{}: {e}", f.display()))?;
        let doc: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| format!("{}: {e}", f.display()))?;
        let cases = doc["cases"].as_array().cloned().unwrap_or_default();
        for c in cases {
            let (Some(name), Some(src)) = (c["name"].as_str(), c["program"].as_str()) else {
                continue;
            };
            let p = Program::parse(src).map_err(|e| format!("{name}: {e}"))?;
            // Programs the plugin declines (factorizations) have nothing to compile.
            if let Some(source) = plan::plan(&p, "k")
                .ok()
                .and_then(|q| runtime::program_source(&q))
            {
                out.push((name.to_string(), source));
            }
        }
    }
    out.sort_by(|a, b| a.1.cmp(&b.1));
    out.dedup_by(|a, b| a.1 == b.1);
    Ok(out)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let value = |flag: &str| args.windows(2).find(|w| w[0] == flag).map(|w| w[1].clone());
    let Some(sm) = value("--sm").and_then(|s| s.parse::<u32>().ok()) else {
        eprintln!("usage: prewarm_cubins --sm 90 [--cases DIR]");
        return ExitCode::from(2);
    };
    let dir = value("--cases").map(PathBuf::from).unwrap_or_else(|| {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/conformance/cases")
    });
    if let Err(why) = nvrtc::load() {
        eprintln!("{why}");
        return ExitCode::FAILURE;
    }
    let jobs = match sources(&dir) {
        Ok(j) => j,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::FAILURE;
        }
    };
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get());
    let t = std::time::Instant::now();
    let results: Vec<(usize, Vec<String>)> = std::thread::scope(|s| {
        jobs.chunks(jobs.len().div_ceil(workers).max(1))
            .map(|chunk| {
                s.spawn(move || {
                    let (mut cached, mut errors) = (0, Vec::new());
                    for (name, source) in chunk {
                        match cubin_cache::cubin(source, runtime::PROGRAM_NAME, sm) {
                            Ok((_, hit)) => cached += hit as usize,
                            Err(e) => errors.push(format!("{name}: {e}")),
                        }
                    }
                    (cached, errors)
                })
            })
            .collect::<Vec<_>>()
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or((0, vec!["a compile thread panicked".into()]))
            })
            .collect()
    });
    let cached: usize = results.iter().map(|r| r.0).sum();
    let errors: Vec<&String> = results.iter().flat_map(|r| &r.1).collect();
    println!(
        "{} distinct programs for sm_{sm}: {} already cached, {} compiled, {} failed, in {:.1} s",
        jobs.len(),
        cached,
        jobs.len() - cached - errors.len(),
        errors.len(),
        t.elapsed().as_secs_f64()
    );
    for e in &errors {
        eprintln!("{e}");
    }
    if errors.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
