//! Recovers a diffusion coefficient from heat-equation observations (see
//! `quabla_examples::inverse_diffusion`).
//!
//! `cargo run --release -p quabla-examples --bin inverse_diffusion -- [--d0 0.5]`
//! (with the CPU plugin on QUABLA_PLUGIN_PATH).

use quabla_examples::inverse_diffusion::{recover, TRUE_D};

fn main() -> quabla::Result<()> {
    let d0: f64 = quabla_examples::arg("--d0", 0.5);
    let r = recover(d0, 30, &mut |k, d, l| {
        println!("lbfgs {k:>3}  D = {d:.8}  loss {l:.3e}")
    })?;
    println!(
        "recovered D = {:.6} (true {TRUE_D}; relative difference {:.2e}, from the spatial discretization) in {} iterations",
        r.d,
        (r.d - TRUE_D).abs() / TRUE_D,
        r.iterations
    );
    Ok(())
}
