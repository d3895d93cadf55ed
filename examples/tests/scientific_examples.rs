//! The neural-ODE and inverse-problem examples, shortened: the fit must reduce its loss, and
//! the recovered diffusion coefficient must match the one that generated the data up to the
//! spatial discretization's error (analytic: 0.08% to 0.7% for the two modes on 31 points).

use quabla_examples::{inverse_diffusion, neural_ode};

fn cpu() {
    quabla::runtime::register_static("cpu", quabla_cpu::backend_module);
}

#[test]
fn neural_ode_fit_reduces_its_loss() {
    cpu();
    let r = neural_ode::fit(100, 0.02, 1000, &mut |_, _| {}).unwrap();
    assert!(
        r.final_loss.is_finite() && r.final_loss < r.first_loss / 5.0,
        "{} -> {}",
        r.first_loss,
        r.final_loss
    );
}

#[test]
fn inverse_problem_recovers_the_diffusion_coefficient() {
    cpu();
    let r = inverse_diffusion::recover(0.5, 30, &mut |_, _, _| {}).unwrap();
    let rel = (r.d - inverse_diffusion::TRUE_D).abs() / inverse_diffusion::TRUE_D;
    assert!(
        rel < 5e-3,
        "recovered {} ({rel:.2e} from the true value)",
        r.d
    );
    assert!(r.loss < 1e-6, "loss {}", r.loss);
}
