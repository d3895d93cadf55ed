//! The CUDA plugin's generated kernels run on the host (`QUABLA_CUDA_EMULATE=1`: the CUDA C
//! compiled by the system's C++ compiler against the plugin's emulation prelude), so CI checks
//! what they compute without a GPU: every case passes against the goldens at the profile the
//! plugin declares, host callbacks included (operands read back, the host's function called,
//! results uploaded, as on a GPU), and the dense factorizations on the plugin's own kernels
//! (`kernels/factor.rs`: Cholesky, LU, triangular solves, eigh, QR and SVD), none not
//! applicable. What emulation cannot check: CUDA's own math library (the C library stands
//! in), PTX's conversion instructions (emulated to their documented rules) and cuSOLVER.

use quabla_abi::host::Plugin;
use quabla_conformance::{default_cases_dir, load_cases, run_suite};
mod common;

#[test]
fn emulated_kernels_pass_every_case() {
    // Read by the plugin on every call; this test binary is its own process.
    std::env::set_var("QUABLA_CUDA_EMULATE", "1");
    let plugin = Plugin::load(&quabla_conformance::built_plugin("quabla_cuda")).unwrap();
    assert!(
        !plugin.info().capabilities.ops.is_empty(),
        "emulation offers the elementwise ops"
    );
    let cases = load_cases(&default_cases_dir()).unwrap();
    let report = run_suite(&plugin, &cases, None);
    common::assert_every_case_passed(&report);
}
