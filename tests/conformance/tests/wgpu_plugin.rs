//! The conformance suite against the wgpu plugin loaded from its shared library, on whatever
//! adapter wgpu finds (lavapipe, Mesa's Vulkan driver on the CPU, in CI: `cargo xtask test`
//! installs it). Float results are held to the per-function bounds of `Precision::wgsl`, the
//! profile the plugin declares.
//!
//! Without an adapter the test says so and passes, unless `QUABLA_REQUIRE_WGPU` is set (as
//! `cargo xtask test` does once it has installed the driver).

use quabla_abi::host::Plugin;
use quabla_conformance::{default_cases_dir, load_cases, run_suite};
mod common;

fn wgpu_plugin() -> Option<Plugin> {
    let lib = common::plugin_library("quabla_wgpu");
    let plugin = Plugin::load(&lib).unwrap();
    if plugin.info().devices.is_empty() {
        let msg = "the wgpu plugin found no adapter (install a Vulkan driver, e.g. Debian's \
                   mesa-vulkan-drivers)";
        assert!(
            std::env::var_os("QUABLA_REQUIRE_WGPU").is_none(),
            "{msg}, and QUABLA_REQUIRE_WGPU is set"
        );
        eprintln!("skipping: {msg}");
        return None;
    }
    Some(plugin)
}

#[test]
fn wgpu_plugin_passes_every_applicable_case() {
    let Some(plugin) = wgpu_plugin() else { return };
    println!("adapter: {}", plugin.info().devices[0].name);
    let cases = load_cases(&default_cases_dir()).unwrap();
    assert_eq!(
        plugin.accuracy(),
        "wgsl",
        "the plugin declares its accuracy profile"
    );
    // As a third party runs it: the declared profile, no flag.
    let report = run_suite(&plugin, &cases, None);
    let failures = common::failures(&report);
    let not_applicable = common::not_applicable(&report);
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
    // What is declared unsupported is exactly f64, host calls and the dense factorizations.
    for n in &not_applicable {
        assert!(
            n.contains("dtype f64")
                || n.contains("op `host_callback`")
                || quabla_abi::qir::LinalgKind::ALL
                    .iter()
                    .any(|k| n.contains(&format!(
                        "op `{}`",
                        quabla_abi::qir::OpKind::Linalg(*k).name()
                    ))),
            "unexpectedly not applicable: {n}"
        );
    }
    assert!(report.passed() >= 350, "only {} cases ran", report.passed());
    println!(
        "{} ({} not applicable: f64, host calls or linalg)",
        report.summary(),
        not_applicable.len()
    );
}

/// An f64 program is refused at compile time with a message that says what to do.
#[test]
fn wgpu_plugin_refuses_f64_with_a_hint() {
    let Some(plugin) = wgpu_plugin() else { return };
    let p = quabla_abi::qir::Program::parse(
        "program(%0: f64[3]) {\n  %1 = exp(%0) : f64[3]\n  return %1\n}\n",
    )
    .unwrap();
    let err = plugin.compile(&p).err().expect("f64 must be refused");
    let msg = err.to_string();
    assert!(
        msg.contains("f64") && msg.contains("f32") && msg.contains("CPU backend"),
        "{msg}"
    );
}
