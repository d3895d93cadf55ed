//! The toy plugin's shared library passes every conformance case its capabilities cover,
//! loaded and selected as any host would: by its own name.

use quabla_abi::host::Plugin;
use quabla_conformance::{built_plugin, default_cases_dir, load_cases, run_suite, Outcome};

#[test]
fn the_toy_plugin_passes_its_applicable_cases() {
    let plugin = Plugin::load(&built_plugin("quabla_toy_backend")).unwrap();
    assert_eq!(plugin.name(), "toy");
    let cases = load_cases(&default_cases_dir()).unwrap();
    let report = run_suite(&plugin, &cases, None);
    let failures: Vec<String> = report
        .results
        .iter()
        .filter_map(|r| match &r.outcome {
            Outcome::Failed(m) => Some(format!("{}: {m}", r.name)),
            _ => None,
        })
        .collect();
    assert!(failures.is_empty(), "{failures:#?}");
    let (applicable, total, blocking) = report.coverage();
    // The four ops' cases and the boundary cases, of a suite of hundreds.
    assert!(applicable >= 10 && total > 500, "{applicable} of {total}");
    assert!(
        blocking.iter().any(|(m, _)| m == "op `constant`"),
        "{blocking:?}"
    );
    for line in report.coverage_lines().iter().take(6) {
        println!("{line}");
    }
    println!("{}", report.summary());
}
