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

#[test]
fn the_pinn_losses_agree_whichever_way_the_laplacian_is_taken() {
    // vmap(hessian)'s diagonal and jvp of grad are two routes to the same second derivatives.
    use quabla::{Array, DType};
    use quabla_examples::pinn;
    cpu();
    let n = 16;
    let (inner, bnd) = pinn::points(n);
    let mut a = pinn::init(3, DType::F64).unwrap();
    a.push(
        Array::from_slice(&inner, &[n, 2])
            .unwrap()
            .astype(DType::F64)
            .unwrap(),
    );
    a.push(
        Array::from_slice(&bnd, &[256, 2])
            .unwrap()
            .astype(DType::F64)
            .unwrap(),
    );
    let by_hessian = pinn::loss(&a).unwrap()[0].item::<f64>().unwrap();
    let by_jvp = pinn::loss_jvp_of_grad(&a).unwrap()[0]
        .item::<f64>()
        .unwrap();
    assert!(by_hessian.is_finite() && by_hessian > 0.0, "{by_hessian}");
    assert!(
        (by_hessian - by_jvp).abs() <= 1e-12 * by_hessian,
        "{by_hessian} vs {by_jvp}"
    );
}
