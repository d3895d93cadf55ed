//! Transformations called outside `jit` see their primal values, as JAX's tracers do: the
//! traced function may read them (`item`) to branch or loop in Rust, and the program holds
//! the path taken. Under `jit` reading a value stays an error.

mod common;

use common::cpu;
use quabla::ad::{grad, hessian, jvp};
use quabla::{jit, Array, Error, Result};

fn scalar(x: f64) -> Array {
    Array::from_slice_on(&cpu(), &[x], &[]).unwrap()
}

/// `2 sin x` for x > 0, `x³` otherwise, chosen by reading x.
fn piecewise(a: &[Array]) -> Result<Vec<Array>> {
    let x = &a[0];
    Ok(vec![if x.item::<f64>()? > 0.0 {
        (&x.sin()? * 2.0)?
    } else {
        (&(x * x)? * x)?
    }])
}

/// √a by Newton's method, iterating until the residual (read each trip) is small.
fn newton_sqrt(a: &[Array]) -> Result<Vec<Array>> {
    let mut x = a[0].clone();
    let mut trips = 0;
    while (&(&x * &x)? - &a[0])?.abs()?.item::<f64>()? > 1e-12 {
        x = (&(&x + &(&a[0] / &x)?)? * 0.5)?;
        trips += 1;
        assert!(trips < 50, "Newton did not converge");
    }
    Ok(vec![x])
}

fn value(a: &Array) -> f64 {
    a.item::<f64>().unwrap()
}

#[test]
fn branches_and_loops_on_primal_values_differentiate_the_path_taken() {
    let g = grad(piecewise, &[0]);
    assert!((value(&g(&[scalar(0.5)]).unwrap()[0]) - 2.0 * 0.5f64.cos()).abs() < 1e-15);
    assert!((value(&g(&[scalar(-0.5)]).unwrap()[0]) - 0.75).abs() < 1e-15);
    // Forward mode, and a transformation nested in another (forward over reverse).
    let (_, t) = jvp(piecewise, &[scalar(-1.0)], &[scalar(2.0)]).unwrap();
    assert!((value(&t[0]) - 6.0).abs() < 1e-15);
    let h = hessian(piecewise, &[0])(&[scalar(0.5)]).unwrap();
    assert!((value(&h[0]) + 2.0 * 0.5f64.sin()).abs() < 1e-14);
    // d√a/da = 1/(2√a), through the iterations the loop took.
    let d = grad(newton_sqrt, &[0])(&[scalar(2.0)]).unwrap();
    assert!((value(&d[0]) - 0.5 / 2f64.sqrt()).abs() < 1e-12);
}

#[test]
fn under_jit_a_primal_value_is_still_unknown() {
    let g = grad(piecewise, &[0]);
    let err = jit(g).call(&[scalar(0.5)]).unwrap_err();
    assert!(matches!(err, Error::TracedValue), "{err}");
    let err = jit(piecewise).call(&[scalar(0.5)]).unwrap_err();
    assert!(matches!(err, Error::TracedValue), "{err}");
    // A program made for reuse does not depend on the values it was made at.
    let err = quabla::make_program(piecewise, &[scalar(0.5)]).unwrap_err();
    assert!(matches!(err, Error::TracedValue), "{err}");
}

#[test]
fn an_inner_transformation_reads_values_it_computes_from_an_outer_trace() {
    // d/dx of [d/dy of (y x if y + x > 0 else -y x)] at y = x: the inner function's
    // branch reads a value built from x, which it closes over from the outer trace.
    let outer = |a: &[Array]| -> Result<Vec<Array>> {
        let x = a[0].clone();
        let inner = move |b: &[Array]| -> Result<Vec<Array>> {
            let yx = (&b[0] * &x)?;
            Ok(vec![if (&b[0] + &x)?.item::<f64>()? > 0.0 {
                yx
            } else {
                yx.neg()?
            }])
        };
        grad(inner, &[0])(&[a[0].clone()])
    };
    // d/dy = x (or -x), so the outer derivative is 1 (or -1).
    assert_eq!(value(&grad(outer, &[0])(&[scalar(0.5)]).unwrap()[0]), 1.0);
    assert_eq!(value(&grad(outer, &[0])(&[scalar(-0.5)]).unwrap()[0]), -1.0);
}
