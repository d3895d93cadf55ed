//! The suite's loops decided on the host, in the CUDA plugin's host emulation
//! (`QUABLA_CUDA_DEVICE_LOOPS=0`): with device loops on (`cuda_emulated.rs`) all but one of
//! them run as one block, so this is where CI runs the in-place path a GPU's loop graphs take
//! (`in_place.rs`: the freeze kernel, kept carries, a scan's `ys` written a window at a
//! time) on every case with a `while`, against the goldens.
//!
//! The plugin reads both variables on every compile; this test binary is its own process,
//! with one test.

use quabla_abi::host::Plugin;
use quabla_conformance::{default_cases_dir, load_cases, run_suite};
mod common;

#[test]
fn every_loop_of_the_suite_passes_decided_on_the_host() {
    std::env::set_var("QUABLA_CUDA_EMULATE", "1");
    std::env::set_var("QUABLA_CUDA_DEVICE_LOOPS", "0");
    let plugin = Plugin::load(&quabla_conformance::built_plugin("quabla_cuda")).unwrap();
    let cases: Vec<_> = load_cases(&default_cases_dir())
        .unwrap()
        .into_iter()
        .filter(|c| c.program.contains("= while("))
        .collect();
    let report = run_suite(&plugin, &cases, None);
    common::assert_every_case_passed(&report);
}
