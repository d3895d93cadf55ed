//! Fits a neural ODE to a Lotka-Volterra trajectory (see `quabla_examples::neural_ode`).
//!
//! `cargo run --release -p quabla-examples --bin neural_ode -- [--steps 600] [--lr 0.02]`
//! (with the CPU plugin on QUABLA_PLUGIN_PATH).

use quabla_examples::arg;
use quabla_examples::neural_ode::fit;
use std::time::Instant;

fn main() -> quabla::Result<()> {
    let (steps, lr) = (arg("--steps", 600usize), arg("--lr", 0.02f64));
    let start = Instant::now();
    let r = fit(steps, lr, 25, &mut |k, l| {
        let rate = k as f64 / start.elapsed().as_secs_f64();
        println!("step {k:>5}  loss (current window) {l:.6e}  {rate:.1} steps/s");
    })?;
    println!(
        "loss over [0, 4]: {:.3e} -> {:.3e}",
        r.first_loss, r.final_loss
    );
    println!(
        "max |error| on the fitted window [0, 4]: {:.3e}",
        r.fit_error
    );
    println!(
        "max |error| extrapolating to [4, 6]:    {:.3e}",
        r.extrapolation_error
    );
    Ok(())
}
