//! The conformance suite against the CPU plugin loaded from its shared library, as any
//! third-party plugin would be tested.

use quabla_abi::host::Plugin;
use quabla_conformance::{default_cases_dir, load_cases, run_suite, Outcome};
use std::path::Path;

#[test]
fn cpu_plugin_passes_every_case() {
    let exe = std::env::current_exe().unwrap();
    let dir = exe.parent().and_then(Path::parent).unwrap();
    let lib = dir.join(format!(
        "{}quabla_cpu{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    ));
    assert!(
        lib.is_file(),
        "{} is missing: build it first (`cargo xtask test` does)",
        lib.display()
    );
    let plugin = Plugin::load(&lib).unwrap();
    let cases = load_cases(&default_cases_dir()).unwrap();
    assert!(cases.len() >= 300, "only {} cases", cases.len());
    let report = run_suite(&plugin, &cases, None);
    let failures: Vec<String> = report
        .results
        .iter()
        .filter_map(|r| match &r.outcome {
            Outcome::Failed(m) => Some(format!("{}: {m}", r.name)),
            _ => None,
        })
        .collect();
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
