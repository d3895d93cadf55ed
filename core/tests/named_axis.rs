//! Collectives over a named `vmap` axis (`psum`, `pmax`, `pmin`, `axis_index`) against the
//! values JAX 0.10.2 gives for the same programs, their derivatives against the analytic
//! ones, nesting, and the errors outside a `vmap` of that name.

mod common;

use common::cpu;
use quabla::ad::{grad, jvp};
use quabla::batching::vmap_named;
use quabla::lax::{axis_index, pmax, pmin, psum, scan};
use quabla::{jit, vmap, Array, Axes, Result};

fn f64s(v: &[f64], shape: &[usize]) -> Array {
    Array::from_slice_on(&cpu(), v, shape).unwrap()
}

fn vals(a: &Array) -> Vec<f64> {
    a.to_vec::<f64>().unwrap()
}

#[test]
fn reductions_and_index_over_the_named_axis() {
    let x = f64s(&[1.0, 3.0, 2.0], &[3]);
    let all = vmap_named(
        |a: &[Array]| {
            let v = &a[0];
            Ok(vec![
                psum(v, "i")?,
                pmax(v, "i")?,
                pmin(v, "i")?,
                axis_index("i")?,
                // A value the same on every element counts them.
                psum(&Array::from_slice(&[2.0f64], &[])?, "i")?,
            ])
        },
        &[Some(0)],
        &[Some(0); 5],
        "i",
    );
    let out = all(&[x]).unwrap();
    assert_eq!(vals(&out[0]), vec![6.0; 3]);
    assert_eq!(vals(&out[1]), vec![3.0; 3]);
    assert_eq!(vals(&out[2]), vec![1.0; 3]);
    assert_eq!(out[3].to_vec::<i32>().unwrap(), vec![0, 1, 2]);
    assert_eq!(vals(&out[4]), vec![6.0; 3]);
}

#[test]
fn nested_axes_reduce_over_their_own_vmap() {
    // JAX: vmap(vmap(lambda v: psum(v, 'i') + 10 psum(v, 'j'), 'j'), 'i')(arange(6).reshape(2, 3))
    let inner = |a: &[Array]| {
        let v = &a[0];
        Ok(vec![(&psum(v, "i")? + &(&psum(v, "j")? * 10.0)?)?])
    };
    let both = vmap_named(
        move |a: &[Array]| vmap_named(inner, &[Some(0)], &[Some(0)], "j")(a),
        &[Some(0)],
        &[Some(0)],
        "i",
    );
    let x = f64s(&[0.0, 1.0, 2.0, 3.0, 4.0, 5.0], &[2, 3]);
    let out = both(&[x]).unwrap();
    assert_eq!(vals(&out[0]), vec![33.0, 35.0, 37.0, 123.0, 125.0, 127.0]);
}

#[test]
fn the_sum_differentiates_in_both_orders_and_both_modes() {
    // sum_j psum(v^2) v_j = (sum v^2)(sum v): the gradient is 2 v_k (sum v) + sum v^2.
    let per = |a: &[Array]| Ok(vec![(&psum(&(&a[0] * &a[0])?, "i")? * &a[0])?]);
    let total = move |a: &[Array]| {
        let ys = vmap_named(per, &[Some(0)], &[Some(0)], "i")(a)?;
        Ok(vec![ys[0].sum(Axes::All, false)?])
    };
    let x = f64s(&[1.0, 3.0, 2.0], &[3]);
    let g = grad(total, &[0])(std::slice::from_ref(&x)).unwrap();
    assert_eq!(vals(&g[0]), vec![26.0, 50.0, 38.0]);
    let t = f64s(&[1.0, 0.0, 0.0], &[3]);
    let (_, dt) = jvp(total, std::slice::from_ref(&x), std::slice::from_ref(&t)).unwrap();
    assert_eq!(vals(&dt[0]), vec![26.0]);
    // The gradient taken inside the vmap (per element, through psum's transpose):
    // d/dv_k of psum(v^2) v_k summed over the axis is 2 v_k (sum v) + sum v^2 as well.
    let per_grad = vmap_named(
        |a: &[Array]| {
            let f = |b: &[Array]| Ok(vec![psum(&(&(&b[0] * &b[0])? * &psum(&b[0], "i")?)?, "i")?]);
            grad(f, &[0])(a)
        },
        &[Some(0)],
        &[Some(0)],
        "i",
    );
    // Each element's loss is the whole sum, so its gradient counts every element's share:
    // d/dv_k [n (sum v^2)(sum v)] with n = 3 elements.
    assert_eq!(
        vals(&per_grad(std::slice::from_ref(&x)).unwrap()[0]),
        vec![78.0, 150.0, 114.0]
    );
}

#[test]
fn collectives_inside_loops_and_under_an_outer_plain_vmap() {
    // A scan whose body sums across the axis each step.
    let f = vmap_named(
        |a: &[Array]| {
            let step = |c: &[Array], _: &[Array]| -> Result<(Vec<Array>, Vec<Array>)> {
                Ok((vec![(&psum(&c[0], "i")? * 0.5)?], vec![]))
            };
            Ok(scan(&step, a, &[], Some(2), false, 1)?.0)
        },
        &[Some(0)],
        &[Some(0)],
        "i",
    );
    let x = f64s(&[1.0, 3.0], &[2]);
    // Step 1: (1 + 3) / 2 = 2 on both; step 2: (2 + 2) / 2 = 2.
    assert_eq!(
        vals(&f(std::slice::from_ref(&x)).unwrap()[0]),
        vec![2.0, 2.0]
    );
    // An unnamed vmap around it batches the named one row by row.
    let rows = vmap(
        |a: &[Array]| {
            vmap_named(
                |b: &[Array]| Ok(vec![psum(&b[0], "i")?]),
                &[Some(0)],
                &[Some(0)],
                "i",
            )(a)
        },
        &[Some(0)],
        &[Some(0)],
    );
    let m = f64s(&[1.0, 2.0, 3.0, 4.0], &[2, 2]);
    assert_eq!(vals(&rows(&[m]).unwrap()[0]), vec![3.0, 3.0, 7.0, 7.0]);
}

#[test]
fn errors_name_the_unbound_axis_and_the_missing_derivative() {
    let x = f64s(&[1.0, 2.0], &[2]);
    let eager = psum(&x, "i").unwrap_err().to_string();
    assert!(
        eager.contains("unbound axis name 'i'") && eager.contains("axis_name='i'"),
        "{eager}"
    );
    let jitted = jit(|a: &[Array]| Ok(vec![psum(&a[0], "k")?]));
    let err = jitted
        .call(std::slice::from_ref(&x))
        .unwrap_err()
        .to_string();
    assert!(err.contains("unbound axis name 'k'"), "{err}");
    // A vmap of another name leaves the axis unbound.
    let other = vmap_named(
        |a: &[Array]| Ok(vec![psum(&a[0], "k")?]),
        &[Some(0)],
        &[Some(0)],
        "i",
    );
    let err = other(std::slice::from_ref(&x)).unwrap_err().to_string();
    assert!(err.contains("unbound axis name 'k'"), "{err}");
    let max_grad = grad(
        |a: &[Array]| {
            let m = vmap_named(
                |b: &[Array]| Ok(vec![pmax(&b[0], "i")?]),
                &[Some(0)],
                &[Some(0)],
                "i",
            )(a)?;
            Ok(vec![m[0].sum(Axes::All, false)?])
        },
        &[0],
    );
    // Quabla batches first, so outside the vmap pmax is a plain max over the axis, whose
    // derivative exists (JAX differentiates first and refuses).
    assert_eq!(
        vals(&max_grad(std::slice::from_ref(&x)).unwrap()[0]),
        vec![0.0, 2.0]
    );
    let inside = vmap_named(
        |a: &[Array]| grad(|b: &[Array]| Ok(vec![pmax(&b[0], "i")?]), &[0])(a),
        &[Some(0)],
        &[Some(0)],
        "i",
    );
    let err = inside(std::slice::from_ref(&x)).unwrap_err().to_string();
    assert!(err.contains("pmax has no derivative"), "{err}");
}
