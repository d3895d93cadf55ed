//! Newton root finding: roots against closed forms, implicit derivatives against analytic
//! values and finite differences (to second order, forward and reverse), `vmap`, captured
//! parameters, and use inside a differentiated loop.

mod common;

use common::cpu;
use quabla::ad::{grad, jvp};
use quabla::lax::fori_loop;
use quabla::root_finding::NewtonOptions;
use quabla::test_util::check_grads;
use quabla::{newton, vmap, Array, Axes, Result};

fn f64s(v: &[f64], shape: &[usize]) -> Array {
    Array::from_slice_on(&cpu(), v, shape).unwrap()
}

fn cube_root(a: &Array) -> Result<Array> {
    let cube = |x: &[Array], p: &[Array]| Ok(vec![(&(&(&x[0] * &x[0])? * &x[0])? - &p[0])?]);
    let x0 = a.full_like(1.0)?;
    let (x, _) = newton(
        &cube,
        &[x0],
        std::slice::from_ref(a),
        &NewtonOptions::default(),
    )?;
    Ok(x[0].clone())
}

#[test]
fn cube_root_and_its_derivatives_to_third_order() {
    let a = 5.0f64;
    let x = cube_root(&f64s(&[a], &[])).unwrap().item::<f64>().unwrap();
    assert!((x - a.cbrt()).abs() < 1e-14, "{x}");
    let f = |p: &[Array]| Ok(vec![cube_root(&p[0])?]);
    let d1 = grad(f, &[0])(&[f64s(&[a], &[])]).unwrap()[0]
        .item::<f64>()
        .unwrap();
    assert!((d1 - a.powf(-2.0 / 3.0) / 3.0).abs() < 1e-13, "{d1}");
    let g = grad(f, &[0]);
    let d2 = grad(&g, &[0])(&[f64s(&[a], &[])]).unwrap()[0]
        .item::<f64>()
        .unwrap();
    assert!((d2 + 2.0 / 9.0 * a.powf(-5.0 / 3.0)).abs() < 1e-13, "{d2}");
    // Forward over reverse over reverse.
    let gg = grad(&g, &[0]);
    let (_, d3) = jvp(&gg, &[f64s(&[a], &[])], &[f64s(&[1.0], &[])]).unwrap();
    let want = 10.0 / 27.0 * a.powf(-8.0 / 3.0);
    assert!((d3[0].item::<f64>().unwrap() - want).abs() < 1e-12);
}

/// f(x, θ) = M x + 0.3 tanh(x) - θ, a coupled nonlinear system.
fn coupled(x: &[Array], p: &[Array]) -> Result<Vec<Array>> {
    let m = f64s(&[2.0, 0.5, 0.0, -0.4, 3.0, 0.2, 0.1, 0.3, 1.5], &[3, 3]);
    Ok(vec![
        (&(&m.matmul(&x[0])? + &(&x[0].tanh()? * 0.3)?)? - &p[0])?,
    ])
}

#[test]
fn coupled_system_root_and_derivatives_match_finite_differences() {
    let solve = |p: &[Array]| -> Result<Vec<Array>> {
        let x0 = f64s(&[0.0, 0.0, 0.0], &[3]);
        let (x, _) = newton(&coupled, &[x0], &[p[0].clone()], &NewtonOptions::default())?;
        Ok(vec![x[0].clone()])
    };
    let theta = f64s(&[1.0, -0.5, 2.0], &[3]);
    let x = solve(std::slice::from_ref(&theta)).unwrap();
    let r = coupled(&x, std::slice::from_ref(&theta)).unwrap()[0]
        .to_vec::<f64>()
        .unwrap();
    assert!(r.iter().all(|v| v.abs() < 1e-13), "{r:?}");
    if let Err(e) = check_grads(&solve, &[theta], 2, None) {
        panic!("{e}");
    }
}

#[test]
fn captured_parameters_get_gradients_and_vmap_stops_per_element() {
    // x² = c·θ with c captured from the enclosing trace: x = sqrt(cθ), dx/dc = θ / (2x).
    let loss = |p: &[Array]| -> Result<Vec<Array>> {
        let (c, theta) = (&p[0], &p[1]);
        let f = |x: &[Array], a: &[Array]| Ok(vec![(&(&x[0] * &x[0])? - &(c * &a[0])?)?]);
        let (x, _) = newton(
            &f,
            &[theta.full_like(1.0)?],
            std::slice::from_ref(theta),
            &Default::default(),
        )?;
        Ok(vec![x[0].sum(Axes::All, false)?])
    };
    let (c, th) = (2.0, [1.0, 4.0, 9.0]);
    let g = grad(loss, &[0, 1])(&[f64s(&[c], &[]), f64s(&th, &[3])]).unwrap();
    let want_c: f64 = th.iter().map(|t| t / (2.0 * (c * t).sqrt())).sum();
    assert!((g[0].item::<f64>().unwrap() - want_c).abs() < 1e-12);
    let gt = g[1].to_vec::<f64>().unwrap();
    for (k, t) in th.iter().enumerate() {
        assert!((gt[k] - c / (2.0 * (c * t).sqrt())).abs() < 1e-12);
    }
    // vmap: the first element starts at its root (x0 = 1 = sqrt(1·1)).
    let per = |p: &[Array]| -> Result<Vec<Array>> {
        let f = |x: &[Array], a: &[Array]| Ok(vec![(&(&x[0] * &x[0])? - &a[0])?]);
        let (x, info) = newton(
            &f,
            &[p[0].full_like(1.0)?],
            &[p[0].clone()],
            &Default::default(),
        )?;
        Ok(vec![x[0].clone(), info])
    };
    let out = vmap(per, &[Some(0)], &[Some(0), Some(0)])(&[f64s(&th, &[3])]).unwrap();
    assert_eq!(out[0].to_vec::<f64>().unwrap(), vec![1.0, 2.0, 3.0]);
    assert_eq!(out[1].to_vec::<i32>().unwrap(), vec![0, 0, 0]);
}

#[test]
fn implicit_euler_steps_inside_a_loop_differentiate_in_reverse() {
    // y' = -y³ by backward Euler: each step solves z + h z³ = y with newton.
    let h = 0.1;
    let integrate = move |p: &[Array]| -> Result<Vec<Array>> {
        let step = |_: &Array, c: &[Array]| -> Result<Vec<Array>> {
            let f = |z: &[Array], y: &[Array]| {
                Ok(vec![
                    (&(&z[0] + &(&(&(&z[0] * &z[0])? * &z[0])? * h)?)? - &y[0])?,
                ])
            };
            Ok(newton(&f, &[c[0].clone()], &[c[0].clone()], &Default::default())?.0)
        };
        fori_loop(0, 5, &step, &[p[0].clone()])
    };
    let y0 = f64s(&[0.8], &[]);
    // The host reference: the same scheme with scalar Newton, and its derivative by the
    // chain rule dz/dy = 1 / (1 + 3 h z²).
    let (mut y, mut dy) = (0.8f64, 1.0f64);
    for _ in 0..5 {
        let mut z = y;
        for _ in 0..50 {
            z -= (z + h * z * z * z - y) / (1.0 + 3.0 * h * z * z);
        }
        dy /= 1.0 + 3.0 * h * z * z;
        y = z;
    }
    let got = integrate(std::slice::from_ref(&y0)).unwrap()[0]
        .item::<f64>()
        .unwrap();
    assert!((got - y).abs() < 1e-14);
    let g = grad(integrate, &[0])(std::slice::from_ref(&y0)).unwrap()[0]
        .item::<f64>()
        .unwrap();
    assert!((g - dy).abs() < 1e-12, "{g} vs {dy}");
    if let Err(e) = check_grads(&integrate, &[y0], 2, None) {
        panic!("{e}");
    }
}

#[test]
fn bad_input_is_refused_with_a_message() {
    let x0 = f64s(&[1.0, 2.0], &[2]);
    let wrong = |x: &[Array], _: &[Array]| Ok(vec![x[0].sum(Axes::All, false)?]);
    let e = newton(&wrong, std::slice::from_ref(&x0), &[], &Default::default()).unwrap_err();
    assert!(e.to_string().contains("shaped like x"), "{e}");
    let ix = Array::from_slice_on(&cpu(), &[1i32], &[1]).unwrap();
    let id = |x: &[Array], _: &[Array]| Ok(vec![x[0].clone()]);
    let e = newton(&id, &[ix], &[], &Default::default()).unwrap_err();
    assert!(e.to_string().contains("floating point"), "{e}");
    // No root: info reports the iterations run. Not from x = 1: its Newton step lands on
    // exactly 0, where the derivative vanishes, and the next step is not finite (the loop
    // then stops after 2 iterations, which a product rounded one way or the other decided).
    let none = |x: &[Array], _: &[Array]| Ok(vec![(&(&x[0] * &x[0])? + 1.0)?]);
    let opts = NewtonOptions {
        maxiter: Some(7),
        ..Default::default()
    };
    let wandering = f64s(&[0.3, 2.0], &[2]);
    let (_, info) = newton(&none, &[wandering], &[], &opts).unwrap();
    assert_eq!(info.item::<i32>().unwrap(), 7);
    // From x = 1 (exactly or nearly onto x = 0): a step that is not finite is never
    // reported as converged.
    let (_, info) = newton(&none, &[x0], &[], &opts).unwrap();
    let info = info.item::<i32>().unwrap();
    assert!((1..=7).contains(&info), "info {info}");
}

#[test]
fn custom_root_differentiates_a_fixed_point_iteration_implicitly() {
    use quabla::root_finding::{custom_root, FixedResidual, RootSolver};
    use std::sync::Arc;
    // x = cos(a x), found by 200 fixed-point iterations the derivative never sees.
    let solve: RootSolver = Arc::new(|g: FixedResidual, x0: &[Array]| {
        let body =
            |_: &Array, c: &[Array]| -> Result<Vec<Array>> { Ok(vec![(&c[0] - &g(c)?[0])?]) };
        fori_loop(0, 200, &body, x0)
    });
    let root = move |p: &[Array]| -> Result<Vec<Array>> {
        let f = |x: &[Array], a: &[Array]| Ok(vec![(&x[0] - &(&x[0] * &a[0])?.cos()?)?]);
        custom_root(
            &f,
            &[p[0].zeros_like()?],
            std::slice::from_ref(&p[0]),
            solve.clone(),
        )
    };
    let a = 0.7f64;
    let x = root(&[f64s(&[a], &[])]).unwrap()[0].item::<f64>().unwrap();
    assert!((x - (a * x).cos()).abs() < 1e-14);
    let g = grad(&root, &[0])(&[f64s(&[a], &[])]).unwrap()[0]
        .item::<f64>()
        .unwrap();
    let s = (a * x).sin();
    assert!((g + x * s / (1.0 + a * s)).abs() < 1e-12, "{g}");
    if let Err(e) = check_grads(&root, &[f64s(&[a], &[])], 2, None) {
        panic!("{e}");
    }
    // A solver returning the wrong shape is refused.
    let bad: RootSolver = Arc::new(|_: FixedResidual, _: &[Array]| Ok(vec![]));
    let f = |x: &[Array], _: &[Array]| Ok(vec![x[0].clone()]);
    let e = custom_root(&f, &[f64s(&[1.0], &[])], &[], bad).unwrap_err();
    assert!(e.to_string().contains("shaped like x0"), "{e}");
}
