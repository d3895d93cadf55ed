//! The CPU plugin's two tiers: the conformance suite on the interpreter (`QUABLA_CPU_JIT=0`;
//! `cpu_plugin.rs` runs it on the compiled tier, the default), and every conformance program
//! run through both tiers with identical bits required.
//!
//! The plugin reads `QUABLA_CPU_JIT` at each compile, and this file is its own test process
//! with one test, so switching the variable here races with nothing.

use quabla_abi::host::Plugin;
use quabla_conformance::{case_outputs, default_cases_dir, load_cases, run_suite};
mod common;

fn set_tier(jit: bool) {
    // SAFETY (edition 2024's rule, kept here): this process runs one test, on one thread.
    std::env::set_var("QUABLA_CPU_JIT", if jit { "1" } else { "0" });
}

#[test]
fn both_tiers_pass_the_suite_and_agree_bit_for_bit() {
    let plugin = Plugin::load(&common::plugin_library("quabla_cpu")).unwrap();
    let cases = load_cases(&default_cases_dir()).unwrap();

    set_tier(false);
    let report = run_suite(&plugin, &cases, None);
    let failures = report.failure_lines();
    assert!(
        failures.is_empty(),
        "interpreter tier: {} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );

    let mut differ = Vec::new();
    for case in &cases {
        set_tier(true);
        let compiled = case_outputs(&plugin, case);
        set_tier(false);
        let interpreted = case_outputs(&plugin, case);
        let same = match (&compiled, &interpreted) {
            (Ok(a), Ok(b)) => a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y),
            (Err(a), Err(b)) => a == b,
            _ => false,
        };
        if !same {
            differ.push(case.name.clone());
        }
    }
    assert!(
        differ.is_empty(),
        "{} cases differ between the tiers: {differ:?}",
        differ.len()
    );
    println!("{} cases, both tiers, identical bits", cases.len());
}
