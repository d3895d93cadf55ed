//! `odeint`'s "direct" gradients where an error estimate, or a quantity of Hairer's starting
//! step, is exactly zero: finite and right (analytic values, the adjoint method, finite
//! differences). The controller's norm took `sqrt`'s derivative at zero there, which a zero
//! cotangent turned into `0 * inf = NaN`; the same program written in JAX is NaN too, JAX's
//! own `odeint` never differentiates its controller (it is adjoint-only).

mod common;

use common::cpu;
use quabla::ad::grad;
use quabla::ode::{odeint, Gradient, Method, OdeOptions, VectorField};
use quabla::{vmap, Array, Axes, DType, Result};

fn constant(y: &[Array], _t: &Array, a: &[Array]) -> Result<Vec<Array>> {
    Ok(vec![(&y[0].zeros_like()? + &a[0])?])
}

fn growth(y: &[Array], _t: &Array, a: &[Array]) -> Result<Vec<Array>> {
    Ok(vec![(&y[0] * &a[0])?])
}

fn saturating(y: &[Array], _t: &Array, a: &[Array]) -> Result<Vec<Array>> {
    Ok(vec![(&y[0] * &a[0])?.tanh()?])
}

fn array(v: &[f64], shape: &[usize], dtype: DType) -> Array {
    Array::from_slice_on(&cpu(), v, shape)
        .unwrap()
        .astype(dtype)
        .unwrap()
}

fn options(method: Method, gradient: Gradient) -> OdeOptions {
    OdeOptions {
        method,
        gradient,
        ..Default::default()
    }
}

/// Row 1 of a `[2, n]` trajectory: the state at `t = 1`.
fn end_state(ys: &Array) -> Result<Array> {
    let n = ys.shape()[1];
    ys.slice(&[1, 0], &[2, n], &[1, 1])?.reshape(&[n as isize])
}

/// `d/d(y0, a)` of the sum of `y(1)` for `y' = field(y, a)` from `y(0) = y0`.
fn end_gradient(field: VectorField, y0: &Array, a: &Array, o: &OdeOptions) -> [Vec<f64>; 2] {
    let t = array(&[0.0, 1.0], &[2], y0.dtype());
    let g = grad(
        |p: &[Array]| {
            let s = odeint(field, &p[..1], &t, &p[1..], o)?;
            Ok(vec![end_state(&s.ys[0])?.sum(Axes::All, false)?])
        },
        &[0, 1],
    )(&[y0.clone(), a.clone()])
    .unwrap();
    let f = |x: &Array| x.astype(DType::F64).unwrap().to_vec::<f64>().unwrap();
    [f(&g[0]), f(&g[1])]
}

const DIRECT: [Method; 2] = [Method::Dopri5, Method::Tsit5];

#[test]
fn a_constant_field_has_exact_gradients() {
    // Every stage agrees, so every error estimate is 0, and so is Hairer's second
    // derivative estimate: y(1) = y0 + a. What is left is rounding: the step sizes depend
    // on y0 through the first-step estimate, and their derivatives cancel in exact
    // arithmetic only (measured: 3 ulps in f32 with the field's value computed once
    // outside the stepper, 10 with it computed inside, 1 in f64).
    for dtype in [DType::F32, DType::F64] {
        let tol = if dtype == DType::F32 {
            16.0 * f32::EPSILON as f64
        } else {
            16.0 * f64::EPSILON
        };
        for m in DIRECT {
            let (y0, a) = (array(&[0.5, -2.0], &[2], dtype), array(&[0.7], &[], dtype));
            let [gy, ga] = end_gradient(&constant, &y0, &a, &options(m, Gradient::Direct));
            assert!(
                gy.iter().all(|g| (g - 1.0).abs() < tol),
                "{m:?} {dtype:?}: {gy:?}"
            );
            assert!((ga[0] - 2.0).abs() < 1e-5, "{m:?} {dtype:?}: {ga:?}");
        }
    }
}

#[test]
fn a_solve_from_an_equilibrium_has_finite_gradients() {
    // y0 = 0 and y' = a y: the state, its derivative and every error are zero, and Hairer's
    // starting step takes its `tiny` branch. y stays 0, so d/da = 0; d/dy0 is the discrete
    // solution's growth factor over the steps taken, near e^a.
    for m in DIRECT {
        let (y0, a) = (
            array(&[0.0], &[1], DType::F64),
            array(&[0.7], &[], DType::F64),
        );
        let [gy, ga] = end_gradient(&growth, &y0, &a, &options(m, Gradient::Direct));
        assert_eq!(ga, [0.0], "{m:?}");
        assert!(
            gy[0].is_finite() && (gy[0] / 0.7f64.exp() - 1.0).abs() < 0.05,
            "{m:?}: {gy:?}"
        );
    }
}

#[test]
fn f32_at_jax_default_tolerances_matches_the_adjoint_and_finite_differences() {
    // 1.4e-8 is below f32's resolution: the controller shortens steps until their stages
    // agree to the last bit, and some error estimates come out exactly 0.
    let (y0, a) = (
        array(&[0.5], &[1], DType::F32),
        array(&[0.7], &[], DType::F32),
    );
    let adjoint = end_gradient(
        &saturating,
        &y0,
        &a,
        &options(Method::Dopri5, Gradient::Adjoint),
    );
    // Central differences of a tight f64 solve.
    let t = array(&[0.0, 1.0], &[2], DType::F64);
    let tight = OdeOptions {
        rtol: 1e-12,
        atol: 1e-12,
        ..Default::default()
    };
    let end = |a: f64| -> f64 {
        let s = odeint(
            &saturating,
            &[array(&[0.5], &[1], DType::F64)],
            &t,
            &[array(&[a], &[], DType::F64)],
            &tight,
        )
        .unwrap();
        s.ys[0].to_vec::<f64>().unwrap()[1]
    };
    let fd = (end(0.7 + 1e-6) - end(0.7 - 1e-6)) / 2e-6;
    for m in DIRECT {
        let [gy, ga] = end_gradient(&saturating, &y0, &a, &options(m, Gradient::Direct));
        assert!(
            ga[0].is_finite() && gy[0].is_finite(),
            "{m:?}: {gy:?} {ga:?}"
        );
        assert!((ga[0] / fd - 1.0).abs() < 1e-3, "{m:?}: {} vs {fd}", ga[0]);
        assert!((ga[0] / adjoint[1][0] - 1.0).abs() < 1e-3, "{m:?}");
        assert!((gy[0] / adjoint[0][0] - 1.0).abs() < 1e-3, "{m:?}");
    }
}

#[test]
fn batched_f32_gradients_are_finite() {
    // The ODE-Net's shape: one solve per input under vmap, a parameter shared by all.
    let t = array(&[0.0, 1.0], &[2], DType::F32);
    let inputs = array(&[-2.0, -1.0, 0.0, 0.5, 2.0], &[5, 1], DType::F32);
    let a = array(&[0.7], &[], DType::F32);
    let loss = |p: &[Array]| -> Result<Vec<Array>> {
        let solve = |x: &[Array]| -> Result<Vec<Array>> {
            let s = odeint(&saturating, &x[..1], &t, &x[1..], &OdeOptions::default())?;
            Ok(vec![end_state(&s.ys[0])?])
        };
        let ends = vmap(solve, &[Some(0), None], &[Some(0)])(&[inputs.clone(), p[0].clone()])?;
        Ok(vec![(&ends[0] * &ends[0])?.sum(Axes::All, false)?])
    };
    let g = grad(loss, &[0])(std::slice::from_ref(&a)).unwrap();
    let v = g[0].to_vec::<f32>().unwrap();
    assert!(v[0].is_finite() && v[0] != 0.0, "{v:?}");
}
