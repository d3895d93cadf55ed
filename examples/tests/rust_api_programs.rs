//! The three programs of `quabla_examples::rust_api`, run against independent references:
//! the MLP fit's loss falls twentyfold, Lotka-Volterra's end-state gradient agrees with
//! central differences (and the trajectory stays on the conserved quantity), and CG agrees
//! with the dense solve.

use quabla::tree;
use quabla::Array;
use quabla_examples::rust_api::{cg_spd, lotka_volterra, mlp_fit};

fn cpu() {
    quabla::runtime::register_static("cpu", quabla_cpu::backend_module);
}

#[test]
fn the_mlp_fit_converges() {
    cpu();
    let (first, last, _) = mlp_fit::fit(500).unwrap();
    assert!(last < first / 20.0, "loss {first} -> {last}");
}

#[test]
fn lotka_volterras_gradient_matches_central_differences() {
    use lotka_volterra::{classic_rates, end_prey, trajectory};
    cpu();
    let r = classic_rates().unwrap();
    // V = delta x - gamma ln x + beta z - alpha ln z is conserved along the exact solution.
    let (prey, predators) = trajectory(&r).unwrap();
    let (xs, zs) = (
        prey.to_vec::<f64>().unwrap(),
        predators.to_vec::<f64>().unwrap(),
    );
    let v = |x: f64, z: f64| x - 3.0 * x.ln() + z - 1.5 * z.ln();
    for (x, z) in xs.iter().zip(&zs) {
        assert!((v(*x, *z) - v(xs[0], zs[0])).abs() < 1e-7, "V drifted");
    }
    let g = tree::grad(end_prey)(&r, &()).unwrap();
    let h = 1e-6;
    for (k, gk) in g.iter().enumerate() {
        let shifted = |d: f64| {
            let mut rk = r.clone();
            rk[k] = (&r[k] + d).unwrap();
            end_prey(&rk, &()).unwrap().item::<f64>().unwrap()
        };
        let fd = (shifted(h) - shifted(-h)) / (2.0 * h);
        let got = gk.item::<f64>().unwrap();
        assert!(
            (got - fd).abs() <= 1e-5 * (1.0 + fd.abs()),
            "rate {k}: {got} against central differences {fd}"
        );
    }
}

#[test]
fn cg_agrees_with_the_dense_solve() {
    cpu();
    let (x, info, dense) = cg_spd::solve(100).unwrap();
    assert_eq!(info.item::<i32>().unwrap(), 0, "CG converged");
    let diff: Array = (&x - &dense).unwrap();
    let err = diff.abs().unwrap().to_vec::<f64>().unwrap();
    let scale = dense.abs().unwrap().to_vec::<f64>().unwrap();
    let worst = err.iter().cloned().fold(0.0, f64::max);
    let norm = scale.iter().cloned().fold(0.0, f64::max);
    assert!(
        worst <= 1e-8 * norm,
        "max |x - x_dense| = {worst} (max |x| {norm})"
    );
}
