//! The conformance suite against the MLX plugin loaded from its shared library (MLX's CPU
//! stream). Float results are held to the profile the plugin declares.
//!
//! The plugin builds empty when its build found no MLX (`cargo xtask mlx` fetches it); then
//! this test says so and passes, unless `QUABLA_REQUIRE_MLX` is set (as `cargo xtask test`
//! does once it has MLX).

use quabla_abi::host::Plugin;
use quabla_conformance::{default_cases_dir, load_cases, run_suite};
mod common;

fn mlx_plugin() -> Option<Plugin> {
    let lib = quabla_conformance::built_plugin("quabla_mlx");
    match Plugin::load(&lib) {
        Ok(p) => Some(p),
        Err(e) => {
            let msg = format!(
                "the MLX plugin was built without MLX ({e}); run `cargo xtask mlx`, then build it \
                 again"
            );
            assert!(
                std::env::var_os("QUABLA_REQUIRE_MLX").is_none(),
                "{msg}, and QUABLA_REQUIRE_MLX is set"
            );
            eprintln!("skipping: {msg}");
            None
        }
    }
}

#[test]
fn mlx_plugin_passes_every_applicable_case() {
    let Some(plugin) = mlx_plugin() else { return };
    println!("device: {}", plugin.info().devices[0].name);
    let cases = load_cases(&default_cases_dir()).unwrap();
    assert_eq!(plugin.accuracy(), "wgsl", "the plugin declares its profile");
    let report = run_suite(&plugin, &cases, None);
    let failures = common::failures(&report);
    let not_applicable = common::not_applicable(&report);
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
    // Every op a backend sees is implemented, float64 included: the whole suite applies.
    assert!(
        not_applicable.is_empty(),
        "not applicable on MLX:\n{}",
        not_applicable.join("\n")
    );
    assert_eq!(report.passed(), report.results.len());
    assert!(
        report.passed() > cases.len(),
        "the golden cases and the boundary cases ran"
    );
    println!("{}", report.summary());
}

/// The plugin kit may call from any thread: programs run from several threads at once (a
/// loop and a matrix product each) give each thread the single-threaded bits.
#[test]
fn concurrent_executions_agree() {
    let Some(mlx) = mlx_plugin() else { return };
    let p = quabla_abi::qir::Program::parse(
        "program(%0: f32[16,16], %1: i32[]) {
  %2, %3 = while(%0, %1) : f32[16,16], i32[] {
    cond(%0: f32[16,16], %1: i32[]) {
      %2 = constant[value=[0]]() : i32[]
      %3 = compare[dir=gt](%1, %2) : bool[]
      return %3
    }
    body(%0: f32[16,16], %1: i32[]) {
      %2 = dot_general[lhs_batch=[], rhs_batch=[], lhs_contract=[1], rhs_contract=[0]](%0, %0) : f32[16,16]
      %3 = tanh(%2) : f32[16,16]
      %4 = constant[value=[1]]() : i32[]
      %5 = sub(%1, %4) : i32[]
      return %3, %5
    }
    }
  return %2
}
",
    )
    .unwrap();
    let x: Vec<f32> = (0..256)
        .map(|i| ((i * 37 % 101) as f32 - 50.0) / 400.0)
        .collect();
    let run = || -> Vec<u8> {
        let exe = mlx.compile(&p).unwrap();
        let a = mlx
            .upload(quabla_abi::HostArray::from_f32(vec![16, 16], &x).view())
            .unwrap();
        let n = mlx
            .upload(
                quabla_abi::HostArray::from_slice(vec![], &[7i32])
                    .unwrap()
                    .view(),
            )
            .unwrap();
        exe.run(&[&a, &n]).unwrap()[0].to_host().unwrap().bytes
    };
    let alone = run();
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..4)
            .map(|_| s.spawn(|| (0..5).map(|_| run()).collect::<Vec<_>>()))
            .collect();
        for h in handles {
            for bytes in h.join().unwrap() {
                assert_eq!(bytes, alone);
            }
        }
    });
}
