//! The Quabla conformance suite: cases (QIR text, inputs, goldens from an independent numpy /
//! mpmath reference, tolerances, required capabilities) and a runner that executes them on a
//! plugin through the ABI, exactly as a third-party plugin would be tested.
//!
//! ```no_run
//! use quabla_conformance::{default_cases_dir, load_cases, run_suite};
//! let plugin = quabla_abi::host::Plugin::load("target/debug/libquabla_cpu.so".as_ref()).unwrap();
//! let cases = load_cases(&default_cases_dir()).unwrap();
//! let report = run_suite(&plugin, &cases, None);
//! assert_eq!(report.failed(), 0);
//! ```

mod boundary;
mod case;
mod compare;
mod fuzz_seeds;
mod precision;
pub mod suite_callbacks;

pub use boundary::boundary_results;
pub use case::{embedded_cases, load_cases, parse_cases, ArrayRecord, Case, Requires, Tolerance};
pub use compare::{compare, Errors};
pub use fuzz_seeds::{write_fuzz_seeds, SeedCounts};
pub use precision::{FunctionTolerance, Precision};

use quabla_abi::host::{Event, Plugin};
use quabla_abi::qir::Program;
use quabla_abi::{DType, HostArray};
use std::path::PathBuf;

/// A plugin library built into the same target folder as the running test binary
/// (`target/<profile>/lib<name>.so` for `target/<profile>/deps/<test>`), for a plugin's own
/// cargo tests; `name` without prefix or suffix, e.g. `quabla_cpu`.
///
/// # Panics
/// When the library is not there (build it first); meant for tests.
pub fn built_plugin(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary knows its path");
    let dir = exe
        .parent()
        .and_then(std::path::Path::parent)
        .expect("test binaries live in target/<profile>/deps");
    let lib = dir.join(format!(
        "{}{name}{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    ));
    assert!(
        lib.is_file(),
        "{} is missing: build it first (`cargo xtask test` does)",
        lib.display()
    );
    lib
}

/// The cases shipped with this crate.
pub fn default_cases_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("cases")
}

/// What happened to one case.
#[derive(Debug)]
pub enum Outcome {
    Passed(Errors),
    Failed(String),
    /// The plugin does not declare capabilities the case needs (each named, `op `x`` or
    /// `dtype d`), so the case was not run.
    NotApplicable(Vec<String>),
}

#[derive(Debug)]
pub struct CaseResult {
    pub name: String,
    pub outcome: Outcome,
}

/// Results of a run.
#[derive(Debug, Default)]
pub struct Report {
    pub results: Vec<CaseResult>,
}

impl Report {
    pub fn passed(&self) -> usize {
        self.results
            .iter()
            .filter(|r| matches!(r.outcome, Outcome::Passed(_)))
            .count()
    }
    pub fn failed(&self) -> usize {
        self.results
            .iter()
            .filter(|r| matches!(r.outcome, Outcome::Failed(_)))
            .count()
    }
    /// One line per failed case: `name: message`.
    pub fn failure_lines(&self) -> Vec<String> {
        self.results
            .iter()
            .filter_map(|r| match &r.outcome {
                Outcome::Failed(m) => Some(format!("{}: {m}", r.name)),
                _ => None,
            })
            .collect()
    }
    pub fn not_applicable(&self) -> usize {
        self.results
            .iter()
            .filter(|r| matches!(r.outcome, Outcome::NotApplicable(_)))
            .count()
    }

    /// Per-group (first path component) pass counts, for notes and summaries.
    pub fn group_counts(&self) -> Vec<(String, usize)> {
        let mut m: std::collections::BTreeMap<String, usize> = Default::default();
        for r in &self.results {
            let g = r.name.split('/').take(2).collect::<Vec<_>>().join("/");
            *m.entry(g).or_default() += 1;
        }
        m.into_iter().collect()
    }

    /// How much of the suite applied, and the missing capabilities that blocked the rest,
    /// most-blocking first (each with the number of cases it blocks):
    /// `(applicable, total, [(capability, cases)])`.
    pub fn coverage(&self) -> (usize, usize, Vec<(String, usize)>) {
        let mut blocking: std::collections::BTreeMap<&str, usize> = Default::default();
        for r in &self.results {
            if let Outcome::NotApplicable(missing) = &r.outcome {
                for m in missing {
                    *blocking.entry(m).or_default() += 1;
                }
            }
        }
        let mut blocking: Vec<(String, usize)> = blocking
            .into_iter()
            .map(|(m, n)| (m.to_string(), n))
            .collect();
        blocking.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        let total = self.results.len();
        (total - self.not_applicable(), total, blocking)
    }

    /// [`Report::coverage`] as lines for a person.
    pub fn coverage_lines(&self) -> Vec<String> {
        let (applicable, total, blocking) = self.coverage();
        let mut lines = vec![format!(
            "coverage: {applicable} of {total} cases applicable"
        )];
        for (m, n) in blocking {
            lines.push(format!("  missing {m}: blocks {n} cases"));
        }
        lines
    }

    /// The closing line every runner prints.
    pub fn summary(&self) -> String {
        let mut s = format!("{} passed, {} failed", self.passed(), self.failed());
        if self.not_applicable() > 0 {
            s.push_str(&format!(", {} skipped", self.not_applicable()));
        }
        s
    }
}

/// Every capability `case` needs that `plugin` does not declare.
fn missing_capabilities(plugin: &Plugin, case: &Case) -> Vec<String> {
    let ops = case
        .requires
        .ops
        .iter()
        .filter(|op| !plugin.supports_op(op))
        .map(|op| format!("op `{op}`"));
    let dtypes = case
        .requires
        .dtypes
        .iter()
        .filter(|d| !d.parse().is_ok_and(|dt| plugin.supports_dtype(dt)))
        .map(|d| format!("dtype {d}"));
    ops.chain(dtypes).collect()
}

/// Runs one case against its own tolerances.
pub fn run_case(plugin: &Plugin, case: &Case) -> Outcome {
    run_case_with(plugin, case, &Precision::exact())
}

/// Runs one case, its float tolerances widened by `precision`.
pub fn run_case_with(plugin: &Plugin, case: &Case, precision: &Precision) -> Outcome {
    match start_case_with(plugin, case, precision) {
        Ok(pending) => pending.finish(),
        Err(outcome) => outcome,
    }
}

/// A case whose program has been submitted, its outputs being read back. Where a backend's
/// reads cannot block (WebGPU in a browser), poll [`PendingCase::is_ready`] between turns of
/// the event loop before [`PendingCase::finish`].
pub struct PendingCase<'a> {
    case: &'a Case,
    precision: &'a Precision,
    downloads: Vec<Event>,
}

/// Compiles and runs `case` and starts reading its outputs back; an `Err` is the case's
/// outcome already (not applicable, or a failure before any output).
pub fn start_case_with<'a>(
    plugin: &Plugin,
    case: &'a Case,
    precision: &'a Precision,
) -> Result<PendingCase<'a>, Outcome> {
    let missing = missing_capabilities(plugin, case);
    if !missing.is_empty() {
        return Err(Outcome::NotApplicable(missing));
    }
    let downloads = submit(plugin, case).map_err(Outcome::Failed)?;
    Ok(PendingCase {
        case,
        precision,
        downloads,
    })
}

/// The outputs `plugin` computes for `case`'s program and inputs, uncompared (to set two
/// backends, or two tiers of one, against each other bit for bit).
pub fn case_outputs(plugin: &Plugin, case: &Case) -> Result<Vec<HostArray>, String> {
    submit(plugin, case)?
        .into_iter()
        .map(|e| e.wait().map_err(|e| format!("download: {e}")))
        .collect()
}

fn submit(plugin: &Plugin, case: &Case) -> Result<Vec<Event>, String> {
    suite_callbacks::install();
    let program = Program::parse(&case.program).map_err(|e| e.to_string())?;
    program.validate().map_err(|e| e.to_string())?;
    let exe = plugin
        .compile(&program)
        .map_err(|e| format!("compile: {e}"))?;
    let inputs = case
        .inputs
        .iter()
        .map(|r| r.to_host())
        .collect::<Result<Vec<_>, _>>()?;
    let bufs = inputs
        .iter()
        .map(|a| plugin.upload(a.view()))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("upload: {e}"))?;
    let outs = exe
        .run(&bufs.iter().collect::<Vec<_>>())
        .map_err(|e| format!("execute: {e}"))?;
    if outs.len() != case.expected.len() {
        return Err(format!(
            "{} outputs, expected {}",
            outs.len(),
            case.expected.len()
        ));
    }
    outs.iter()
        .map(|b| b.download().map_err(|e| format!("download: {e}")))
        .collect()
}

impl PendingCase<'_> {
    /// Whether every output has arrived (polls the backend once).
    pub fn is_ready(&self) -> bool {
        self.downloads.iter().all(|e| e.is_ready().unwrap_or(true))
    }

    /// Waits for the outputs (at once when ready) and compares them with the goldens.
    pub fn finish(self) -> Outcome {
        match self.compare() {
            Ok(e) => Outcome::Passed(e),
            Err(m) => Outcome::Failed(m),
        }
    }

    fn compare(self) -> Result<Errors, String> {
        let mut worst = Errors::default();
        for (k, (ev, want)) in self
            .downloads
            .into_iter()
            .zip(&self.case.expected)
            .enumerate()
        {
            let mut got = ev.wait().map_err(|e| format!("download: {e}"))?;
            let want_host = want.to_host()?;
            if self.precision.flush_subnormals {
                let inputs = self
                    .case
                    .inputs
                    .iter()
                    .map(|r| r.to_host())
                    .collect::<Result<Vec<_>, _>>()?;
                excuse_flushed(&mut got, &want_host, &inputs);
            }
            let tol = self.precision.widen(
                self.case,
                want.tol.clone().unwrap_or(Tolerance::Ulp { ulp: 0 }),
            );
            let e = compare(&got, &want_host, &tol).map_err(|m| format!("output {k}: {m}"))?;
            worst.max_ulp = worst.max_ulp.max(e.max_ulp);
            worst.max_rel = worst.max_rel.max(e.max_rel);
        }
        Ok(worst)
    }
}

fn is_subnormal_f32(bytes: &[u8], i: usize) -> bool {
    let b = u32::from_le_bytes([
        bytes[4 * i],
        bytes[4 * i + 1],
        bytes[4 * i + 2],
        bytes[4 * i + 3],
    ]);
    b & 0x7f80_0000 == 0 && b & 0x007f_ffff != 0
}

/// Sets `got` to `want` at every f32 element a subnormal-flushing device may get wrong (see
/// [`Precision::flush_subnormals`]).
fn excuse_flushed(got: &mut HostArray, want: &HostArray, inputs: &[HostArray]) {
    if want.dtype() != DType::F32 || got.ty != want.ty {
        return;
    }
    let n = want.ty.num_elements();
    let aligned: Vec<&HostArray> = inputs
        .iter()
        .filter(|a| a.dtype() == DType::F32 && a.ty.num_elements() == n)
        .collect();
    for i in 0..n {
        if is_subnormal_f32(&want.bytes, i) || aligned.iter().any(|a| is_subnormal_f32(&a.bytes, i))
        {
            got.bytes[4 * i..4 * i + 4].copy_from_slice(&want.bytes[4 * i..4 * i + 4]);
        }
    }
}

/// Runs every case whose name matches `filter` (a glob such as `ops/unary/exp*`), and the
/// [boundary cases](boundary_results), held to the accuracy profile the plugin declares.
pub fn run_suite(plugin: &Plugin, cases: &[Case], filter: Option<&glob::Pattern>) -> Report {
    match Precision::declared_by(plugin) {
        Ok(p) => run_suite_with(plugin, cases, filter, &p),
        Err(e) => Report {
            results: vec![CaseResult {
                name: "accuracy-profile".into(),
                outcome: Outcome::Failed(e),
            }],
        },
    }
}

/// [`run_suite`] with an accuracy profile chosen by the caller (see [`Precision`]).
pub fn run_suite_with(
    plugin: &Plugin,
    cases: &[Case],
    filter: Option<&glob::Pattern>,
    precision: &Precision,
) -> Report {
    let selected = |name: &str| filter.is_none_or(|f| f.matches(name));
    let mut results: Vec<CaseResult> = cases
        .iter()
        .filter(|c| selected(&c.name))
        .map(|c| CaseResult {
            name: c.name.clone(),
            outcome: run_case_with(plugin, c, precision),
        })
        .collect();
    results.extend(
        boundary_results(plugin)
            .into_iter()
            .filter(|r| selected(&r.name)),
    );
    Report { results }
}

pub use glob::Pattern;
