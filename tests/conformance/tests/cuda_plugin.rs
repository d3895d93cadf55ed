//! The CUDA plugin through the host as a user's process loads it. On a machine without a
//! driver (CI): `info` works with no devices, `compile` and `upload` return a typed error that
//! says why, nothing panics or aborts, and the suite runs with every golden case not
//! applicable (no device, no capabilities) and the hostile boundary programs refused by the
//! kit.

use quabla_abi::abi::ErrorCode;
use quabla_abi::host::Plugin;
use quabla_conformance::{default_cases_dir, load_cases, run_suite};
mod common;

fn cuda_plugin() -> Plugin {
    Plugin::load(&quabla_conformance::built_plugin("quabla_cuda")).unwrap()
}

#[test]
fn without_a_driver_the_plugin_loads_and_says_why_it_cannot_run() {
    let plugin = cuda_plugin();
    let info = plugin.info();
    assert_eq!(plugin.name(), "cuda");
    let p = quabla_abi::qir::Program::parse("program(%0: f32[2]) {\n  return %0\n}\n").unwrap();
    let err = plugin
        .compile(&p)
        .err()
        .expect("nothing runs on the CUDA plugin yet");
    if info.devices.is_empty() {
        assert_eq!(err.code(), ErrorCode::FailedPrecondition, "{err}");
        assert!(format!("{err}").contains("CUDA"), "{err}");
        let x = quabla_abi::HostArray::from_f32(vec![2], &[1.0, 2.0]);
        // The kit refuses a device that is not there before the plugin sees the call.
        let up = plugin
            .upload(x.view())
            .err()
            .expect("no device to upload to");
        assert_eq!(up.code(), ErrorCode::InvalidArgument, "{up}");
        assert!(format!("{up}").contains("0 devices"), "{up}");
    } else {
        // A machine with a GPU compiles (the suite then runs on it: see the GPU script).
        plugin.compile(&p).unwrap();
    }
}

#[test]
fn the_suite_runs_with_nothing_applicable_and_nothing_failing() {
    let plugin = cuda_plugin();
    if !plugin.info().devices.is_empty() {
        eprintln!("skipping: this machine has a GPU (the GPU script runs the suite there)");
        return;
    }
    let cases = load_cases(&default_cases_dir()).unwrap();
    let report = run_suite(&plugin, &cases, None);
    let failures = common::failures(&report);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert_eq!(report.not_applicable(), cases.len(), "{}", report.summary());
}
