//! The conformance suite against the CPU plugin loaded from its shared library, as any
//! third-party plugin would be tested.

use quabla_abi::host::Plugin;
use quabla_conformance::{default_cases_dir, load_cases, run_suite};
mod common;

use std::path::Path;

/// The CPU plugin's shared library from this build's target folder.
fn cpu_plugin() -> Plugin {
    let lib = common::plugin_library("quabla_cpu");
    Plugin::load(&lib).unwrap()
}

#[test]
fn cpu_plugin_passes_every_case() {
    let plugin = cpu_plugin();
    let cases = load_cases(&default_cases_dir()).unwrap();
    assert!(cases.len() >= 300, "only {} cases", cases.len());
    let report = run_suite(&plugin, &cases, None);
    let failures = report.failure_lines();
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert_eq!(
        report.not_applicable(),
        0,
        "the CPU plugin supports every op and dtype"
    );
    println!("{}", report.summary());
}

#[test]
fn the_filter_selects_cases_by_glob() {
    let cases = load_cases(&default_cases_dir()).unwrap();
    let pat = quabla_conformance::Pattern::new("regions/while/*").unwrap();
    let n = cases.iter().filter(|c| pat.matches(&c.name)).count();
    assert!(n >= 10, "{n}");
}

/// The CPU plugin's own outputs for the Adam training goldens on the quadratic, recorded bit
/// for bit: a change to the CPU kernels that moves any bit of a training trajectory shows up
/// here even when it stays inside the goldens' tolerances. Re-record with `QUABLA_BLESS=1`
/// after checking that the change is intended. The MLP case is left out: `gemm` picks its
/// kernels by the CPU's features (AVX2 / AVX-512), so programs with `dot_general` are
/// bit-reproducible per machine, not across machines.
#[test]
fn cpu_plugin_reproduces_its_recorded_adam_bits() {
    use quabla_abi::qir::Program;
    let plugin = cpu_plugin();
    let cases = load_cases(&default_cases_dir()).unwrap();
    let mut lines = Vec::new();
    for case in cases
        .iter()
        .filter(|c| c.name.starts_with("adam/") && !c.program.contains("dot_general"))
    {
        let program = Program::parse(&case.program).unwrap();
        let exe = plugin.compile(&program).unwrap();
        let inputs: Vec<_> = case.inputs.iter().map(|r| r.to_host().unwrap()).collect();
        let bufs: Vec<_> = inputs
            .iter()
            .map(|a| plugin.upload(a.view()).unwrap())
            .collect();
        let outs = exe.run(&bufs.iter().collect::<Vec<_>>()).unwrap();
        for (k, b) in outs.iter().enumerate() {
            let bytes = b.to_host().unwrap().bytes;
            let hex: String = bytes.iter().map(|x| format!("{x:02x}")).collect();
            lines.push(format!("{} {k} {hex}", case.name));
        }
    }
    assert!(lines.len() >= 2, "the Adam goldens are missing");
    let text = lines.join("\n") + "\n";
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("cpu-bits/adam.txt");
    if std::env::var_os("QUABLA_BLESS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &text).unwrap();
        return;
    }
    let recorded = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e}; record it with QUABLA_BLESS=1", path.display()));
    for (got, want) in text.lines().zip(recorded.lines()) {
        let name = want.split(' ').take(2).collect::<Vec<_>>().join(" ");
        assert_eq!(got, want, "{name}: the CPU plugin's bits changed");
    }
    assert_eq!(
        text.lines().count(),
        recorded.lines().count(),
        "cases added or removed"
    );
}
