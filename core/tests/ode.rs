//! `ode::odeint` against closed-form solutions (decay, harmonic oscillator), tight-tolerance
//! self-convergence (Lotka-Volterra, Van der Pol), published reference values (Robertson),
//! gradients in every mode against analytic derivatives and finite differences, vmap, jit
//! and input checks.

mod common;

use common::cpu;
use quabla::ad::{grad, jvp};
use quabla::ode::{odeint, Gradient, Method, OdeOptions};
use quabla::test_util::{check_grads, robertson};
use quabla::{jit, vmap, Array, Axes, Result};

fn f64s(v: &[f64], shape: &[usize]) -> Array {
    Array::from_slice_on(&cpu(), v, shape).unwrap()
}

fn vals(a: &Array) -> Vec<f64> {
    a.to_vec::<f64>().unwrap()
}

fn decay(y: &[Array], _t: &Array, a: &[Array]) -> Result<Vec<Array>> {
    Ok(vec![(&y[0] * &a[0])?.neg()?])
}

/// x'' = -ω² x as (x, v).
fn oscillator(y: &[Array], _t: &Array, a: &[Array]) -> Result<Vec<Array>> {
    let x = y[0].slice(&[0], &[1], &[1])?;
    let v = y[0].slice(&[1], &[2], &[1])?;
    let w2 = (&a[0] * &a[0])?;
    Ok(vec![Array::concatenate(&[&v, &(&x * &w2)?.neg()?], 0)?])
}

fn opts(method: Method, tol: f64) -> OdeOptions {
    OdeOptions {
        method,
        rtol: tol,
        atol: tol,
        ..Default::default()
    }
}

#[test]
fn exponential_decay_matches_the_closed_form_for_every_method() {
    let ts = [0.0, 0.3, 1.0, 2.5];
    let k = 1.3;
    let cases = [
        (Method::Dopri5, opts(Method::Dopri5, 1e-10), 1e-8),
        (Method::Tsit5, opts(Method::Tsit5, 1e-10), 1e-8),
        (Method::Rosenbrock23, opts(Method::Rosenbrock23, 1e-7), 2e-5),
        (
            Method::Rk4,
            OdeOptions {
                method: Method::Rk4,
                dt0: Some(0.01),
                ..Default::default()
            },
            1e-9,
        ),
    ];
    for (m, o, tol) in cases {
        for g in [Gradient::Direct, Gradient::Adjoint, Gradient::ForwardOnly] {
            let o = OdeOptions {
                gradient: g,
                ..o.clone()
            };
            let sol = odeint(
                &decay,
                &[f64s(&[2.0], &[1])],
                &f64s(&ts, &[4]),
                &[f64s(&[k], &[])],
                &o,
            )
            .unwrap();
            let got = vals(&sol.ys[0]);
            for (i, t) in ts.iter().enumerate() {
                let want = 2.0 * (-k * t).exp();
                assert!(
                    (got[i] - want).abs() < tol,
                    "{m:?} {g:?} t={t}: {} vs {want}",
                    got[i]
                );
            }
        }
    }
}

#[test]
fn dense_output_does_not_force_steps() {
    let w = 2.0;
    let few = f64s(&[0.0, 10.0], &[2]);
    let many_t: Vec<f64> = (0..=100).map(|i| i as f64 * 0.1).collect();
    let many = f64s(&many_t, &[101]);
    let o = opts(Method::Dopri5, 1e-9);
    let y0 = f64s(&[1.0, 0.0], &[2]);
    let a = odeint(
        &oscillator,
        std::slice::from_ref(&y0),
        &few,
        &[f64s(&[w], &[])],
        &o,
    )
    .unwrap();
    let b = odeint(&oscillator, &[y0], &many, &[f64s(&[w], &[])], &o).unwrap();
    assert_eq!(
        a.stats.accepted.item::<i32>().unwrap(),
        b.stats.accepted.item::<i32>().unwrap()
    );
    let ys = vals(&b.ys[0]);
    for (i, t) in many_t.iter().enumerate() {
        // DOPRI5's fourth-order continuous extension keeps the steps' accuracy.
        assert!(
            (ys[2 * i] - (w * t).cos()).abs() < 5e-8,
            "x({t}): {}",
            ys[2 * i] - (w * t).cos()
        );
        assert!((ys[2 * i + 1] + w * (w * t).sin()).abs() < 1e-7, "v({t})");
    }
    let end = vals(&a.ys[0]);
    assert!((end[2] - (w * 10.0f64).cos()).abs() < 1e-7);
    let (s, acc, rej) = (
        a.stats.steps.item::<i32>().unwrap(),
        a.stats.accepted.item::<i32>().unwrap(),
        a.stats.rejected.item::<i32>().unwrap(),
    );
    assert_eq!(s, acc + rej);
    assert!(acc > 10 && acc < 1000, "{acc} steps");
}

fn lotka_volterra(y: &[Array], _t: &Array, _a: &[Array]) -> Result<Vec<Array>> {
    let (u, v) = (y[0].slice(&[0], &[1], &[1])?, y[0].slice(&[1], &[2], &[1])?);
    let du = (&(&u * 1.5)? - &(&u * &v)?)?;
    let dv = (&(&u * &v)? - &(&v * 3.0)?)?;
    Ok(vec![Array::concatenate(&[&du, &dv], 0)?])
}

#[test]
fn lotka_volterra_converges_under_tightening_tolerances() {
    let t = f64s(&[0.0, 5.0, 10.0], &[3]);
    let y0 = f64s(&[1.0, 1.0], &[2]);
    let solve = |m, tol| {
        vals(
            &odeint(
                &lotka_volterra,
                std::slice::from_ref(&y0),
                &t,
                &[],
                &opts(m, tol),
            )
            .unwrap()
            .ys[0],
        )
    };
    let reference = solve(Method::Dopri5, 1e-13);
    let other = solve(Method::Tsit5, 1e-13);
    for (a, b) in reference.iter().zip(&other) {
        assert!((a - b).abs() < 1e-9, "dopri5 {a} vs tsit5 {b}");
    }
    let mut last_err = f64::INFINITY;
    for tol in [1e-5, 1e-7, 1e-9] {
        let y = solve(Method::Dopri5, tol);
        let err = y
            .iter()
            .zip(&reference)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        assert!(
            err < last_err && err < 300.0 * tol,
            "tol {tol}: error {err}"
        );
        last_err = err;
    }
}

#[test]
fn robertson_is_solved_by_rosenbrock23_where_dopri5_cannot_keep_up() {
    let t = f64s(&[0.0, 40.0], &[2]);
    let y0 = f64s(&[1.0, 0.0, 0.0], &[3]);
    let o = OdeOptions {
        method: Method::Rosenbrock23,
        rtol: 1e-6,
        atol: 1e-10,
        gradient: Gradient::ForwardOnly,
        ..Default::default()
    };
    let sol = odeint(&robertson, std::slice::from_ref(&y0), &t, &[], &o).unwrap();
    let y = vals(&sol.ys[0]);
    // Hairer & Wanner's reference solution at t = 40.
    let want = [0.7158270687, 9.185534764e-6, 0.2841637457];
    for i in 0..3 {
        assert!(
            (y[3 + i] - want[i]).abs() < 2e-4 * want[i],
            "y{} = {} vs {}",
            i + 1,
            y[3 + i],
            want[i]
        );
    }
    let steps = sol.stats.steps.item::<i32>().unwrap() as usize;
    assert!(steps < 500, "rosenbrock23 took {steps} steps");
    // Over [0, 1000], dopri5 does not finish within 100 times rosenbrock23's steps.
    let long = f64s(&[0.0, 1000.0], &[2]);
    let sol = odeint(&robertson, std::slice::from_ref(&y0), &long, &[], &o).unwrap();
    let steps = sol.stats.steps.item::<i32>().unwrap() as usize;
    assert!(!vals(&sol.ys[0])[3].is_nan());
    let d = OdeOptions {
        method: Method::Dopri5,
        max_steps: 100 * steps,
        ..o
    };
    let sol = odeint(&robertson, &[y0], &long, &[], &d).unwrap();
    assert_eq!(sol.stats.steps.item::<i32>().unwrap() as usize, 100 * steps);
    assert!(vals(&sol.ys[0])[3].is_nan(), "unreached times are NaN");
}

fn van_der_pol(y: &[Array], _t: &Array, a: &[Array]) -> Result<Vec<Array>> {
    let (x, v) = (y[0].slice(&[0], &[1], &[1])?, y[0].slice(&[1], &[2], &[1])?);
    let dv = (&(&(&(&(&x * &x)?.neg()? + 1.0)? * &v)? * &a[0])? - &x)?;
    Ok(vec![Array::concatenate(&[&v, &dv], 0)?])
}

#[test]
fn stiff_van_der_pol_converges_with_rosenbrock23() {
    let t = f64s(&[0.0, 1000.0, 3000.0], &[3]);
    let y0 = f64s(&[2.0, 0.0], &[2]);
    let mu = f64s(&[1000.0], &[]);
    let solve = |tol: f64| {
        let o = OdeOptions {
            method: Method::Rosenbrock23,
            rtol: tol,
            atol: tol,
            max_steps: 100_000,
            gradient: Gradient::ForwardOnly,
            ..Default::default()
        };
        odeint(
            &van_der_pol,
            std::slice::from_ref(&y0),
            &t,
            std::slice::from_ref(&mu),
            &o,
        )
        .unwrap()
    };
    let coarse = solve(1e-6);
    let fine = solve(1e-7);
    let (a, b) = (vals(&coarse.ys[0]), vals(&fine.ys[0]));
    // Positions are O(1) away from the fast transitions at these times.
    for i in [2, 4] {
        assert!((a[i] - b[i]).abs() < 1e-3, "x: {} vs {}", a[i], b[i]);
    }
    // x has jumped from the right branch to the left one (a half period is about 0.8·mu,
    // so at t = 3000 it is on the left branch again, after three jumps).
    assert!(b[2] < -1.0 && b[4] < -1.0, "{b:?}");
    let steps = coarse.stats.steps.item::<i32>().unwrap();
    assert!(steps < 5000, "{steps} steps");
}

#[test]
fn decay_gradients_match_the_closed_form_in_every_mode() {
    // y(t) = y0·exp(-k t): ∂y(T)/∂y0 = e^{-kT}, ∂/∂k = -T y(T), ∂/∂T = -k y(T).
    let (y0, k, tend) = (1.5, 0.7, 2.0);
    for g in [Gradient::Direct, Gradient::Adjoint] {
        for m in [Method::Dopri5, Method::Tsit5, Method::Rosenbrock23] {
            let tol = if m == Method::Rosenbrock23 {
                1e-9
            } else {
                1e-11
            };
            let o = OdeOptions {
                gradient: g,
                ..opts(m, tol)
            };
            let loss = |a: &[Array]| -> Result<Vec<Array>> {
                let sol = odeint(&decay, &[a[0].clone()], &a[2], &[a[1].clone()], &o)?;
                Ok(vec![sol.ys[0]
                    .slice(&[1, 0], &[2, 1], &[1, 1])?
                    .sum(Axes::All, false)?])
            };
            let args = [f64s(&[y0], &[1]), f64s(&[k], &[]), f64s(&[0.0, tend], &[2])];
            let gr = grad(loss, &[0, 1, 2])(&args).unwrap();
            let yt = y0 * (-k * tend).exp();
            let check = |got: f64, want: f64, what: &str| {
                let tol = if m == Method::Rosenbrock23 {
                    1e-4
                } else {
                    1e-7
                };
                assert!(
                    (got - want).abs() < tol * (1.0 + want.abs()),
                    "{g:?} {m:?} {what}: {got} vs {want}"
                );
            };
            check(vals(&gr[0])[0], (-k * tend).exp(), "dy0");
            check(gr[1].item::<f64>().unwrap(), -tend * yt, "dk");
            let dt = vals(&gr[2]);
            check(dt[1], -k * yt, "dT");
            check(dt[0], k * yt, "dt0");
        }
    }
    // Forward mode through the while loop.
    let o = OdeOptions {
        gradient: Gradient::ForwardOnly,
        ..opts(Method::Dopri5, 1e-11)
    };
    let f = |a: &[Array]| -> Result<Vec<Array>> {
        let t = f64s(&[0.0, tend], &[2]);
        Ok(odeint(&decay, &[f64s(&[y0], &[1])], &t, &[a[0].clone()], &o)?.ys)
    };
    let (_, tan) = jvp(f, &[f64s(&[k], &[])], &[f64s(&[1.0], &[])]).unwrap();
    let yt = y0 * (-k * tend).exp();
    assert!((vals(&tan[0])[1] + tend * yt).abs() < 1e-8);
}

#[test]
fn oscillator_derivatives_match_finite_differences() {
    // Direct mode to second order; the adjoint's first-order VJP against the direct one.
    let t = f64s(&[0.0, 0.7, 1.9], &[3]);
    let direct = |a: &[Array]| -> Result<Vec<Array>> {
        let o = OdeOptions {
            max_steps: 200,
            ..opts(Method::Tsit5, 1e-10)
        };
        Ok(odeint(&oscillator, &[a[0].clone()], &t, &[a[1].clone()], &o)?.ys)
    };
    let args = [f64s(&[0.8, -0.3], &[2]), f64s(&[1.7], &[])];
    if let Err(e) = check_grads(&direct, &args, 2, None) {
        panic!("{e}");
    }
    let sum_sq = |adjoint: bool| {
        let t = t.clone();
        move |a: &[Array]| -> Result<Vec<Array>> {
            let g = if adjoint {
                Gradient::Adjoint
            } else {
                Gradient::Direct
            };
            let o = OdeOptions {
                gradient: g,
                max_steps: 300,
                ..opts(Method::Dopri5, 1e-11)
            };
            let ys = odeint(&oscillator, &[a[0].clone()], &t, &[a[1].clone()], &o)?.ys;
            Ok(vec![(&ys[0] * &ys[0])?.sum(Axes::All, false)?])
        }
    };
    let a = grad(sum_sq(true), &[0, 1])(&args).unwrap();
    let d = grad(sum_sq(false), &[0, 1])(&args).unwrap();
    for (x, y) in a.iter().zip(&d) {
        for (p, q) in vals(x).iter().zip(vals(y)) {
            assert!(
                (p - q).abs() < 1e-7 * (1.0 + q.abs()),
                "adjoint {p} vs direct {q}"
            );
        }
    }
}

#[test]
fn vmap_over_initial_states_and_parameters_and_jit() {
    let t = f64s(&[0.0, 1.0], &[2]);
    let o = opts(Method::Dopri5, 1e-10);
    let solve = |a: &[Array]| -> Result<Vec<Array>> {
        let sol = odeint(&decay, &[a[0].clone()], &t, &[a[1].clone()], &o)?;
        Ok(vec![sol.ys[0].clone(), sol.stats.accepted])
    };
    let y0s = f64s(&[1.0, 2.0, 3.0], &[3, 1]);
    let ks = f64s(&[0.1, 1.0, 10.0], &[3]);
    let out = vmap(solve, &[Some(0), Some(0)], &[Some(0), Some(0)])(&[y0s, ks]).unwrap();
    let ys = vals(&out[0]);
    let acc = out[1].to_vec::<i32>().unwrap();
    for (i, (y0, k)) in [(1.0f64, 0.1f64), (2.0, 1.0), (3.0, 10.0)]
        .iter()
        .enumerate()
    {
        assert!((ys[2 * i + 1] - y0 * (-k).exp()).abs() < 1e-8);
        let single = odeint(&decay, &[f64s(&[*y0], &[1])], &t, &[f64s(&[*k], &[])], &o).unwrap();
        assert_eq!(
            acc[i],
            single.stats.accepted.item::<i32>().unwrap(),
            "element {i} stops on its own"
        );
    }
    assert!(acc[0] < acc[2]);
    let compiled =
        jit(move |a: &[Array]| Ok(odeint(&decay, &[a[0].clone()], &a[1], &[a[2].clone()], &o)?.ys));
    let y = compiled
        .call(&[
            f64s(&[1.0], &[1]),
            f64s(&[0.0, 1.0], &[2]),
            f64s(&[2.0], &[]),
        ])
        .unwrap();
    assert!((vals(&y[0])[1] - (-2.0f64).exp()).abs() < 1e-8);
}

#[test]
fn bad_input_is_refused_with_a_message() {
    let y0 = f64s(&[1.0], &[1]);
    let k = [f64s(&[1.0], &[])];
    let o = OdeOptions::default();
    let e = odeint(
        &decay,
        std::slice::from_ref(&y0),
        &f64s(&[0.0, 1.0, 1.0], &[3]),
        &k,
        &o,
    )
    .err()
    .unwrap();
    assert!(e.to_string().contains("strictly increasing"), "{e}");
    let t32 = Array::from_slice_on(&cpu(), &[0.0f32, 1.0], &[2]).unwrap();
    let e = odeint(&decay, std::slice::from_ref(&y0), &t32, &k, &o)
        .err()
        .unwrap();
    assert!(e.to_string().contains("dtype"), "{e}");
    let wrong = |y: &[Array], _: &Array, _: &[Array]| Ok(vec![y[0].sum(Axes::All, false)?]);
    let e = odeint(
        &wrong,
        std::slice::from_ref(&y0),
        &f64s(&[0.0, 1.0], &[2]),
        &[],
        &o,
    )
    .err()
    .unwrap();
    assert!(e.to_string().contains("shaped like y"), "{e}");
    let bad = OdeOptions {
        rtol: 0.0,
        atol: 0.0,
        ..o
    };
    let e = odeint(&decay, &[y0], &f64s(&[0.0, 1.0], &[2]), &k, &bad)
        .err()
        .unwrap();
    assert!(e.to_string().contains("rtol"), "{e}");
}

/// Two leaves of different shapes: a damped oscillator and a decaying 2x3 block driven by
/// it, so the stages' sums, dense output and error run leaf by leaf over unequal sizes.
fn two_leaves(y: &[Array], _t: &Array, a: &[Array]) -> Result<Vec<Array>> {
    let x = y[0].slice(&[0], &[1], &[1])?;
    let v = y[0].slice(&[1], &[2], &[1])?;
    let dv = (&(&x * &a[0])?.neg()? - &(&v * 0.1)?)?;
    let osc = Array::concatenate(&[&v, &dv], 0)?;
    let block = (&(&y[1] * -0.5)? + &x.reshape(&[1, 1])?)?;
    Ok(vec![osc, block])
}

/// Forward-only and adjoint solves run a plain loop that steps and then fills the outputs
/// the step reached; the direct mode runs a bounded loop that does one or the other per
/// trip. Both take the same steps and interpolate the same way, so the states agree bit for
/// bit, for every method, with several outputs inside one step and eagerly or under `jit`.
#[test]
fn every_gradient_mode_gives_the_same_bits() {
    let t: Vec<f64> = (0..=40).map(|i| i as f64 * 0.125).collect();
    let t = f64s(&t, &[41]);
    let y0 = [
        f64s(&[1.0, 0.0], &[2]),
        f64s(&[0.5, -1.0, 2.0, 0.0, 1.0, -0.25], &[2, 3]),
    ];
    let w = f64s(&[4.0], &[]);
    for method in [
        Method::Dopri5,
        Method::Tsit5,
        Method::Rk4,
        Method::Rosenbrock23,
    ] {
        let solve = |gradient: Gradient, jitted: bool| -> Vec<Vec<f64>> {
            let o = OdeOptions {
                gradient,
                ..opts(method, 1e-7)
            };
            let f = |a: &[Array]| -> Result<Vec<Array>> {
                let s = odeint(&two_leaves, &a[..2], &t, &a[2..], &o)?;
                Ok([s.ys, vec![s.stats.steps, s.stats.accepted]].concat())
            };
            let args = [y0[0].clone(), y0[1].clone(), w.clone()];
            let out = if jitted { jit(f).call(&args) } else { f(&args) }.unwrap();
            out.iter()
                .map(|a| match a.dtype() {
                    quabla::DType::I32 => vec![a.item::<i32>().unwrap() as f64],
                    _ => vals(a),
                })
                .collect()
        };
        let direct = solve(Gradient::Direct, false);
        assert!(direct[2][0] > 4.0, "{method:?}: a few outputs per step");
        for gradient in [Gradient::Direct, Gradient::ForwardOnly, Gradient::Adjoint] {
            for jitted in [false, true] {
                let got = solve(gradient, jitted);
                for (g, d) in got.iter().zip(&direct) {
                    let same = g.iter().zip(d).all(|(a, b)| a.to_bits() == b.to_bits());
                    assert!(same, "{method:?} {gradient:?} jit={jitted}: {g:?} vs {d:?}");
                }
            }
        }
    }
}
