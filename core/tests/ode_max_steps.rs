//! What `odeint` says when `max_steps` runs out before the last requested time: the times
//! not reached are NaN, `OdeStats::reached` is false (batched under vmap, in every gradient
//! mode), and `OdeOptions::throw` turns it into an error on a concrete solve and refuses a
//! traced one.

mod common;

use common::cpu;
use quabla::ad::grad;
use quabla::ode::{odeint, Gradient, OdeOptions};
use quabla::{jit, vmap, Array, Axes, Result};

fn f64s(v: &[f64], shape: &[usize]) -> Array {
    Array::from_slice_on(&cpu(), v, shape).unwrap()
}

/// `y' = -k y`: a stiff rate makes an explicit method take many steps.
fn decay(y: &[Array], _t: &Array, a: &[Array]) -> Result<Vec<Array>> {
    Ok(vec![(&y[0] * &a[0])?.neg()?])
}

fn short(max_steps: usize, gradient: Gradient, throw: bool) -> OdeOptions {
    OdeOptions {
        max_steps,
        gradient,
        throw,
        ..Default::default()
    }
}

fn times() -> Array {
    f64s(&[0.0, 0.1, 5.0], &[3])
}

#[test]
fn a_solve_that_runs_out_of_steps_says_so() {
    let (y0, k) = (f64s(&[1.0], &[1]), f64s(&[50.0], &[]));
    for gradient in [Gradient::Direct, Gradient::ForwardOnly, Gradient::Adjoint] {
        let s = odeint(
            &decay,
            std::slice::from_ref(&y0),
            &times(),
            std::slice::from_ref(&k),
            &short(20, gradient, false),
        )
        .unwrap();
        assert!(!s.stats.reached.item::<bool>().unwrap(), "{gradient:?}");
        let ys = s.ys[0].to_vec::<f64>().unwrap();
        assert!(ys[2].is_nan(), "{gradient:?}: {ys:?}");
        let s = odeint(
            &decay,
            std::slice::from_ref(&y0),
            &times(),
            std::slice::from_ref(&k),
            &short(4096, gradient, true),
        )
        .unwrap();
        assert!(s.stats.reached.item::<bool>().unwrap(), "{gradient:?}");
        // e^-250 is 0 to the absolute tolerance.
        let end = s.ys[0].to_vec::<f64>().unwrap()[2];
        assert!(end.abs() < 1e-7, "{gradient:?}: {end}");
    }
}

#[test]
fn throw_fails_a_concrete_solve_that_stops_short() {
    let (y0, k) = (f64s(&[1.0], &[1]), f64s(&[50.0], &[]));
    let err = odeint(
        &decay,
        std::slice::from_ref(&y0),
        &times(),
        std::slice::from_ref(&k),
        &short(20, Gradient::Direct, true),
    )
    .err()
    .expect("throw: an error")
    .to_string();
    assert!(
        err.contains("max_steps = 20") && err.contains("t = 5"),
        "{err}"
    );
}

#[test]
fn throw_is_refused_where_the_solve_is_traced() {
    let (y0, k) = (f64s(&[1.0], &[1]), f64s(&[50.0], &[]));
    let solve = |a: &[Array]| -> Result<Vec<Array>> {
        let s = odeint(
            &decay,
            &a[..1],
            &times(),
            &a[1..],
            &short(4096, Gradient::Direct, true),
        )?;
        Ok(vec![s.ys[0].sum(Axes::All, false)?])
    };
    let args = [y0.clone(), k.clone()];
    for (name, got) in [
        ("jit", jit(solve).call(&args).map(|_| ())),
        ("grad", grad(solve, &[1])(&args).map(|_| ())),
    ] {
        let err = got
            .err()
            .unwrap_or_else(|| panic!("{name}: an error"))
            .to_string();
        assert!(
            err.contains("traced") && err.contains("reached"),
            "{name}: {err}"
        );
    }
}

#[test]
fn reached_is_batched_under_vmap() {
    // Two rates: the mild one finishes within 40 steps, the stiff one does not.
    let y0 = f64s(&[1.0], &[1]);
    let solve = |a: &[Array]| -> Result<Vec<Array>> {
        let s = odeint(
            &decay,
            std::slice::from_ref(&y0),
            &times(),
            a,
            &short(40, Gradient::Direct, false),
        )?;
        Ok(vec![s.stats.reached])
    };
    let r = vmap(solve, &[Some(0)], &[Some(0)])(&[f64s(&[0.5, 500.0], &[2])]).unwrap();
    assert_eq!(r[0].to_vec::<bool>().unwrap(), [true, false]);
}

/// The requested times the last allowed step reached are filled from its dense output, in
/// every mode: running out of steps loses only the times beyond it.
#[test]
fn times_the_last_step_reached_are_filled() {
    let (y0, k) = (f64s(&[1.0], &[1]), f64s(&[1.0], &[]));
    let t = f64s(&[0.0, 1e-6, 2e-6, 5.0], &[4]);
    for gradient in [Gradient::Direct, Gradient::ForwardOnly, Gradient::Adjoint] {
        let s = odeint(
            &decay,
            std::slice::from_ref(&y0),
            &t,
            std::slice::from_ref(&k),
            &short(1, gradient, false),
        )
        .unwrap();
        assert_eq!(s.stats.accepted.item::<i32>().unwrap(), 1, "{gradient:?}");
        assert!(!s.stats.reached.item::<bool>().unwrap(), "{gradient:?}");
        let ys = s.ys[0].to_vec::<f64>().unwrap();
        for (i, at) in [(1, 1e-6f64), (2, 2e-6)] {
            assert!((ys[i] - (-at).exp()).abs() < 1e-12, "{gradient:?}: {ys:?}");
        }
        assert!(ys[3].is_nan(), "{gradient:?}: {ys:?}");
    }
}
