//! L-BFGS: convergence on Rosenbrock and on an ill-conditioned quadratic (analytic minima),
//! the strong Wolfe conditions at every accepted step (checked from values and gradients
//! recomputed outside the optimizer), and jit equal to eager.

mod common;

use common::cpu;
use quabla::ad::value_and_grad;
use quabla::optim::Lbfgs;
use quabla::{jit, Array, Axes, Result};

fn f64s(v: &[f64]) -> Array {
    Array::from_slice_on(&cpu(), v, &[v.len()]).unwrap()
}

fn vals(a: &Array) -> Vec<f64> {
    a.to_vec::<f64>().unwrap()
}

/// Rosenbrock in n dims (minimum at all ones), as a scalar loss.
fn rosenbrock(p: &[Array]) -> Result<Array> {
    Ok(quabla::test_util::rosenbrock(p)?.remove(0))
}

fn value_grad(f: fn(&[Array]) -> Result<Array>, x: &[f64]) -> (f64, Vec<f64>) {
    let vg = value_and_grad(|a: &[Array]| Ok(vec![f(a)?]), &[0], false);
    let r = vg(&[f64s(x)]).unwrap();
    (r[0].item::<f64>().unwrap(), vals(&r[1]))
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Runs L-BFGS until the gradient norm is below `gtol`, checking strong Wolfe at each step;
/// returns the final point and the steps taken.
fn minimize(
    f: fn(&[Array]) -> Result<Array>,
    x0: &[f64],
    gtol: f64,
    max: usize,
) -> (Vec<f64>, usize) {
    let opt = Lbfgs::default();
    let mut params = vec![f64s(x0)];
    let mut state = opt.init(&params).unwrap();
    for k in 0..max {
        let x = vals(&params[0]);
        let (f_x, g_x) = value_grad(f, &x);
        if dot(&g_x, &g_x).sqrt() < gtol {
            return (x, k);
        }
        let s = opt.step(&f, &params, &state).unwrap();
        let alpha = s.step_size.item::<f64>().unwrap();
        if std::env::var("LBFGS_TRACE").is_ok() {
            eprintln!(
                "k {k} f {f_x:.6e} |g| {:.3e} alpha {alpha:.3e} evals {} count {}",
                dot(&g_x, &g_x).sqrt(),
                s.evaluations.item::<i32>().unwrap(),
                s.state[3].item::<i32>().unwrap()
            );
        }
        let x1 = vals(&s.params[0]);
        let (f_1, g_1) = value_grad(f, &x1);
        assert_eq!(
            f_1,
            s.value.item::<f64>().unwrap(),
            "reported value at step {k}"
        );
        assert!(alpha > 0.0, "line search failed at step {k} (x = {x:?})");
        let d: Vec<f64> = x1.iter().zip(&x).map(|(a, b)| (a - b) / alpha).collect();
        let (dphi0, dphi1) = (dot(&g_x, &d), dot(&g_1, &d));
        assert!(dphi0 < 0.0, "not a descent direction at step {k}");
        assert!(
            f_1 <= f_x + opt.c1 * alpha * dphi0 + 1e-15 * f_x.abs(),
            "Armijo at step {k}"
        );
        assert!(
            dphi1.abs() <= opt.c2 * dphi0.abs() * (1.0 + 1e-12),
            "curvature at step {k}"
        );
        (params, state) = (s.params, s.state);
    }
    (vals(&params[0]), max)
}

#[test]
fn rosenbrock_converges_with_strong_wolfe_steps() {
    // scipy's L-BFGS-B takes 38 iterations (2-D, gtol 1e-9) and 70 (8-D, 1e-8) on these.
    let (x, steps) = minimize(rosenbrock, &[-1.2, 1.0], 1e-10, 200);
    for v in &x {
        assert!((v - 1.0).abs() < 1e-8, "{x:?} after {steps} steps");
    }
    assert!(steps < 80, "{steps} steps");
    eprintln!("rosenbrock 2-D: {steps} steps");
    let (x, steps) = minimize(
        rosenbrock,
        &[-1.0, 1.5, 0.3, -0.4, 1.1, 2.0, 0.0, 0.5],
        1e-8,
        400,
    );
    for v in &x {
        assert!((v - 1.0).abs() < 1e-7, "{x:?} after {steps} steps");
    }
    assert!(steps < 150, "{steps} steps");
    eprintln!("rosenbrock 8-D: {steps} steps");
}

/// sum_i 10^(i / 3) (x_i - i)^2 over 16 dims: condition number 10^5.
fn ill_quadratic(p: &[Array]) -> Result<Array> {
    let w: Vec<f64> = (0..16).map(|i| 10f64.powf(i as f64 / 3.0)).collect();
    let t: Vec<f64> = (0..16).map(|i| i as f64).collect();
    let w = Array::from_slice_on(p[0].device(), &w, &[16])?;
    let t = Array::from_slice_on(p[0].device(), &t, &[16])?;
    let d = (&p[0] - &t)?;
    (&(&d * &d)? * &w)?.sum(Axes::All, false)
}

#[test]
fn ill_conditioned_quadratic_converges() {
    // |g| from 3.3e6 down by 1e8. scipy's L-BFGS-B (memory 10) needs 598 iterations for the
    // same reduction (measured side by side with this test's setup); allow 1000.
    let gtol = 3.3e-2;
    let (x, steps) = minimize(ill_quadratic, &[0.0; 16], gtol, 1000);
    assert!(steps < 1000, "no convergence in {steps} steps");
    // The stop |g| < gtol with g_i = 2 w_i (x_i - i) bounds each error by gtol / (2 w_i): the
    // exact promise of convergence (a flat 1e-3 held on one machine's gemm kernels only).
    for (i, v) in x.iter().enumerate() {
        let w = 10f64.powf(i as f64 / 3.0);
        assert!(
            (v - i as f64).abs() < gtol / (2.0 * w),
            "x[{i}] = {v} after {steps} steps"
        );
    }
    eprintln!("ill-conditioned quadratic: {steps} steps");
}

#[test]
fn jitted_steps_equal_eager_steps() {
    let opt = Lbfgs::default();
    let params = vec![f64s(&[-1.2, 1.0, 0.7])];
    let state = opt.init(&params).unwrap();
    let o2 = opt.clone();
    let step = jit(move |a: &[Array]| {
        let s = o2.step(&rosenbrock, &a[..1], &a[1..])?;
        let mut out = s.params;
        out.extend(s.state);
        out.push(s.value);
        Ok(out)
    });
    let (mut pe, mut se) = (params.clone(), state.clone());
    let mut args: Vec<Array> = params.into_iter().chain(state).collect();
    for _ in 0..5 {
        let s = opt.step(&rosenbrock, &pe, &se).unwrap();
        (pe, se) = (s.params, s.state);
        let out = step.call(&args).unwrap();
        assert_eq!(vals(&out[0]), vals(&pe[0]));
        args = out[..5].to_vec();
    }
}

#[test]
fn bad_inputs_are_errors() {
    let opt = Lbfgs::default();
    let p = vec![Array::from_slice_on(&cpu(), &[1i32, 2], &[2]).unwrap()];
    assert!(opt.init(&p).is_err());
    let p = vec![f64s(&[1.0, 2.0])];
    let e = opt.step(&rosenbrock, &p, &[]).err().unwrap();
    assert!(e.to_string().contains("Lbfgs::init"));
}
