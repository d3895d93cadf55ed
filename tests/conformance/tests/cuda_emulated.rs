//! The CUDA plugin's generated kernels run on the host (`QUABLA_CUDA_EMULATE=1`: the CUDA C
//! compiled by the system's C++ compiler against the plugin's emulation prelude), so CI checks
//! what they compute without a GPU: every case the emulation can run (constants and the
//! elementwise ops, so the fused elementwise kernels) passes against the goldens at the
//! profile the plugin declares. What emulation cannot check: CUDA's own math library (the C
//! library stands in) and PTX's conversion instructions (emulated to their documented rules).

use quabla_abi::host::Plugin;
use quabla_conformance::{default_cases_dir, load_cases, run_suite, Outcome};
mod common;

#[test]
fn emulated_kernels_pass_every_elementwise_case() {
    // Read by the plugin on every call; this test binary is its own process.
    std::env::set_var("QUABLA_CUDA_EMULATE", "1");
    let plugin = Plugin::load(&quabla_conformance::built_plugin("quabla_cuda")).unwrap();
    assert!(
        !plugin.info().capabilities.ops.is_empty(),
        "emulation offers the elementwise ops"
    );
    let cases = load_cases(&default_cases_dir()).unwrap();
    let report = run_suite(&plugin, &cases, None);
    let failures = common::failures(&report);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // Every unary, binary, compare, select, convert and bitcast case runs.
    for group in [
        "ops/unary/",
        "ops/binary/",
        "ops/compare/",
        "ops/select_convert_bitcast/",
    ] {
        let skipped: Vec<&str> = report
            .results
            .iter()
            .filter(|r| r.name.starts_with(group) && matches!(r.outcome, Outcome::NotApplicable(_)))
            .map(|r| r.name.as_str())
            .collect();
        assert!(skipped.is_empty(), "not run in emulation: {skipped:?}");
    }
    assert!(report.passed() >= 250, "{}", report.summary());
    println!("{}", report.summary());
}
