//! The whole suite in the CUDA plugin's host emulation with no kernels merged into one
//! block (`QUABLA_CUDA_ONE_BLOCK=0`). The suite's values are small, so with the default
//! bound (`cuda_emulated.rs`) most kernels are merged, and merged kernels neither stand
//! alone nor write into a read's memory. This run checks every kernel as a launch of its
//! own, and the fused kernels that compute an output into a dying intermediate's memory
//! (`fusion::Kernel::reuses`; about 40 such writes in the suite), against the goldens.
//!
//! The plugin reads the variable on every compile; this test binary is its own process,
//! with one test.

use quabla_abi::host::Plugin;
use quabla_conformance::{default_cases_dir, load_cases, run_suite};
mod common;

#[test]
fn every_case_passes_with_no_kernels_merged() {
    std::env::set_var("QUABLA_CUDA_EMULATE", "1");
    std::env::set_var("QUABLA_CUDA_ONE_BLOCK", "0");
    let plugin = Plugin::load(&quabla_conformance::built_plugin("quabla_cuda")).unwrap();
    let cases = load_cases(&default_cases_dir()).unwrap();
    let report = run_suite(&plugin, &cases, None);
    common::assert_every_case_passed(&report);
}
