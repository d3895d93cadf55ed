//! Helpers shared by the plugin test files.

#![allow(dead_code)] // each test file uses its own subset

use quabla_conformance::{Outcome, Report};
use std::path::PathBuf;

/// A plugin's shared library in this build's target folder (`name` without prefix/suffix).
pub fn plugin_library(name: &str) -> PathBuf {
    quabla_conformance::built_plugin(name)
}

/// `name: message` of every failed case.
pub fn failures(report: &Report) -> Vec<String> {
    report
        .results
        .iter()
        .filter_map(|r| match &r.outcome {
            Outcome::Failed(m) => Some(format!("{}: {m}", r.name)),
            _ => None,
        })
        .collect()
}

/// Asserts that every case of `report` passed (none failed, none not applicable), then
/// prints its summary.
pub fn assert_every_case_passed(report: &Report) {
    let failed = failures(report);
    assert!(failed.is_empty(), "{}", failed.join("\n"));
    let not_run = not_applicable(report);
    assert!(not_run.is_empty(), "{}", not_run.join("\n"));
    assert_eq!(
        report.passed(),
        report.results.len(),
        "{}",
        report.summary()
    );
    println!("{}", report.summary());
}

/// `name: missing capabilities` of every case the plugin cannot run.
pub fn not_applicable(report: &Report) -> Vec<String> {
    report
        .results
        .iter()
        .filter_map(|r| match &r.outcome {
            Outcome::NotApplicable(m) => Some(format!("{}: {}", r.name, m.join(", "))),
            _ => None,
        })
        .collect()
}
