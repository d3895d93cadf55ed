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
