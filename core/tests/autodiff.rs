//! Derivatives: every differentiable primitive against finite differences and VJP/JVP
//! consistency (up to second order), JAX's conventions at edge inputs, higher-order nesting,
//! and Jacobians/Hessians against analytic values.

mod common;

use common::cpu;
use quabla::ad::{grad, hessian, hvp, jacfwd, jacobian, jacrev, jvp, value_and_grad, vjp};
use quabla::test_util::check_grads;
use quabla::test_util::rosenbrock;
use quabla::{Array, Axes, DType, Error, Result};

fn f64s(v: &[f64], shape: &[usize]) -> Array {
    Array::from_slice_on(&cpu(), v, shape).unwrap()
}

fn vals(a: &Array) -> Vec<f64> {
    a.astype(DType::F64).unwrap().to_vec::<f64>().unwrap()
}

type F = fn(&[Array]) -> Result<Vec<Array>>;

fn check(name: &str, f: &dyn Fn(&[Array]) -> Result<Vec<Array>>, args: &[Array], order: usize) {
    if let Err(e) = check_grads(f, args, order, None) {
        panic!("{name}: {e}");
    }
}

#[test]
fn unary_primitives_match_finite_differences_to_second_order() {
    let x = f64s(&[0.3, -0.7, 0.55, 1.2], &[4]);
    let pos = f64s(&[0.3, 0.7, 1.55, 2.2], &[4]);
    let unit = f64s(&[0.3, -0.7, 0.55, -0.2], &[4]);
    let big = f64s(&[1.3, 1.7, 2.55, 3.2], &[4]);
    let cases: Vec<(&str, F, &Array)> = vec![
        ("neg", |a| Ok(vec![a[0].neg()?]), &x),
        ("abs", |a| Ok(vec![a[0].abs()?]), &x),
        ("exp", |a| Ok(vec![a[0].exp()?]), &x),
        ("exp2", |a| Ok(vec![a[0].exp2()?]), &x),
        ("expm1", |a| Ok(vec![a[0].expm1()?]), &x),
        ("log", |a| Ok(vec![a[0].log()?]), &pos),
        ("log1p", |a| Ok(vec![a[0].log1p()?]), &pos),
        ("sqrt", |a| Ok(vec![a[0].sqrt()?]), &pos),
        ("rsqrt", |a| Ok(vec![a[0].rsqrt()?]), &pos),
        ("cbrt", |a| Ok(vec![a[0].cbrt()?]), &x),
        ("sin", |a| Ok(vec![a[0].sin()?]), &x),
        ("cos", |a| Ok(vec![a[0].cos()?]), &x),
        ("tan", |a| Ok(vec![a[0].tan()?]), &x),
        ("asin", |a| Ok(vec![a[0].asin()?]), &unit),
        ("acos", |a| Ok(vec![a[0].acos()?]), &unit),
        ("atan", |a| Ok(vec![a[0].atan()?]), &x),
        ("sinh", |a| Ok(vec![a[0].sinh()?]), &x),
        ("cosh", |a| Ok(vec![a[0].cosh()?]), &x),
        ("tanh", |a| Ok(vec![a[0].tanh()?]), &x),
        ("asinh", |a| Ok(vec![a[0].asinh()?]), &x),
        ("acosh", |a| Ok(vec![a[0].acosh()?]), &big),
        ("atanh", |a| Ok(vec![a[0].atanh()?]), &unit),
        ("erf", |a| Ok(vec![a[0].erf()?]), &x),
        ("erfc", |a| Ok(vec![a[0].erfc()?]), &x),
        ("logistic", |a| Ok(vec![a[0].logistic()?]), &x),
        ("floor", |a| Ok(vec![(a[0].floor()? + &a[0])?]), &x),
        ("sign", |a| Ok(vec![(a[0].sign()? * &a[0])?]), &x),
    ];
    for (name, f, arg) in cases {
        check(name, &f, std::slice::from_ref(arg), 2);
    }
}

#[test]
fn binary_primitives_match_finite_differences_to_second_order() {
    let a = f64s(&[0.3, -0.7, 1.55, 2.2, -1.1, 0.9], &[2, 3]);
    let b = f64s(&[1.1, 0.4, -0.8, 0.5, 2.0, -1.3], &[2, 3]);
    let pos = f64s(&[0.3, 0.7, 1.55, 2.2, 1.1, 0.9], &[2, 3]);
    let cases: Vec<(&str, F, Vec<Array>)> = vec![
        (
            "add",
            |x| Ok(vec![(&x[0] + &x[1])?]),
            vec![a.clone(), b.clone()],
        ),
        (
            "sub",
            |x| Ok(vec![(&x[0] - &x[1])?]),
            vec![a.clone(), b.clone()],
        ),
        (
            "mul",
            |x| Ok(vec![(&x[0] * &x[1])?]),
            vec![a.clone(), b.clone()],
        ),
        (
            "div",
            |x| Ok(vec![(&x[0] / &x[1])?]),
            vec![a.clone(), b.clone()],
        ),
        (
            "rem",
            |x| Ok(vec![x[0].rem(&x[1])?]),
            vec![a.clone(), b.clone()],
        ),
        (
            "pow",
            |x| Ok(vec![x[0].pow(&x[1])?]),
            vec![pos.clone(), b.clone()],
        ),
        (
            "maximum",
            |x| Ok(vec![x[0].maximum(&x[1])?]),
            vec![a.clone(), b.clone()],
        ),
        (
            "minimum",
            |x| Ok(vec![x[0].minimum(&x[1])?]),
            vec![a.clone(), b.clone()],
        ),
        (
            "atan2",
            |x| Ok(vec![x[0].atan2(&x[1])?]),
            vec![a.clone(), b.clone()],
        ),
        (
            "broadcast scalar",
            |x| Ok(vec![(&x[0] * 3.0)?.sin()?]),
            vec![a.clone()],
        ),
        (
            "where",
            |x| Ok(vec![x[0].gt(0.0)?.select(&x[0].exp()?, &x[1])?]),
            vec![a.clone(), b.clone()],
        ),
    ];
    for (name, f, args) in cases {
        check(name, &f, &args, 2);
    }
}

#[test]
fn structural_primitives_match_finite_differences() {
    let x = f64s(
        &(0..24)
            .map(|i| (i as f64 * 0.37).sin() + 0.1 * i as f64)
            .collect::<Vec<_>>(),
        &[2, 3, 4],
    );
    let m = f64s(&[0.5, -1.0, 2.0, 0.25, 1.5, -0.75], &[3, 2]);
    let idx = Array::from_slice_on(&cpu(), &[2i32, 0, 0, 9, -1], &[5]).unwrap();
    let cases: Vec<(&str, F, Vec<Array>)> = vec![
        (
            "reshape+transpose",
            |a| Ok(vec![a[0].reshape(&[4, 6])?.t()?.sin()?]),
            vec![x.clone()],
        ),
        (
            "broadcast",
            |a| Ok(vec![(&a[0] * &a[0].sum(Axes::Some(&[2]), true)?)?]),
            vec![x.clone()],
        ),
        (
            "strided slice",
            |a| {
                Ok(vec![a[0]
                    .slice(&[0, 1, 0], &[2, 3, 4], &[1, 1, 3])?
                    .exp()?])
            },
            vec![x.clone()],
        ),
        (
            "pad",
            |a| {
                Ok(vec![a[0]
                    .pad(0.5, &[1, -1, 0], &[0, 2, -1], &[0, 1, 1])?
                    .sin()?])
            },
            vec![x.clone()],
        ),
        (
            "concatenate",
            |a| Ok(vec![Array::concatenate(&[&a[0], &a[0].sin()?], 1)?]),
            vec![x.clone()],
        ),
        (
            "flip",
            |a| Ok(vec![(a[0].flip(&[0, 2])? * &a[0])?]),
            vec![x.clone()],
        ),
        (
            "sum",
            |a| Ok(vec![a[0].sin()?.sum(Axes::Some(&[0, 2]), false)?]),
            vec![x.clone()],
        ),
        (
            "prod",
            |a| Ok(vec![a[0].prod(Axes::Some(&[1]), false)?]),
            vec![x.clone()],
        ),
        (
            "max",
            |a| Ok(vec![a[0].max(Axes::Some(&[2]), false)?]),
            vec![x.clone()],
        ),
        (
            "min",
            |a| Ok(vec![a[0].min(Axes::All, false)?]),
            vec![x.clone()],
        ),
        (
            "mean",
            |a| Ok(vec![a[0].mean(Axes::Some(&[1]), true)?]),
            vec![x.clone()],
        ),
        (
            "cumsum",
            |a| Ok(vec![a[0].cumsum(1, false)?, a[0].cumsum(2, true)?]),
            vec![x.clone()],
        ),
        (
            "cumprod",
            |a| Ok(vec![a[0].cumprod(2, false)?, a[0].cumprod(1, true)?]),
            vec![x.clone()],
        ),
        (
            "cummax",
            |a| Ok(vec![a[0].cummax(2, false)?]),
            vec![x.clone()],
        ),
        (
            "cummin",
            |a| Ok(vec![a[0].cummin(0, true)?]),
            vec![x.clone()],
        ),
        (
            "matmul",
            |a| {
                Ok(vec![a[0]
                    .reshape(&[6, 4])?
                    .t()?
                    .matmul(&a[0].reshape(&[6, 4])?)?])
            },
            vec![x.clone()],
        ),
        (
            "batched matmul",
            |a| Ok(vec![a[0].matmul(&a[0].transpose(&[0, 2, 1])?)?]),
            vec![x.clone()],
        ),
        (
            "matvec both sides",
            |a| {
                Ok(vec![a[1].matmul(&a[0].reshape(&[2, 12])?.slice(
                    &[0, 0],
                    &[2, 2],
                    &[1, 1],
                )?)?])
            },
            vec![x.clone(), m.clone()],
        ),
        (
            "dynamic_slice",
            |a| {
                let i = Array::from_slice_on(a[0].device(), &[1i32], &[])?;
                let j = Array::from_slice_on(a[0].device(), &[3i32], &[])?;
                Ok(vec![a[0]
                    .dynamic_slice(&[&i, &j, &i], &[1, 2, 2])?
                    .exp()?])
            },
            vec![x.clone()],
        ),
        (
            "dynamic_update_slice",
            |a| {
                let i = Array::from_slice_on(a[0].device(), &[1i32], &[])?;
                let u = a[0].slice(&[0, 0, 0], &[1, 2, 2], &[1, 1, 1])?.sin()?;
                Ok(vec![
                    (a[0].dynamic_update_slice(&u, &[&i, &i, &i])? * &a[0])?,
                ])
            },
            vec![x.clone()],
        ),
    ];
    for (name, f, args) in cases {
        check(name, &f, &args, 2);
    }
    // Gather (clamped, repeated indices) and scatter-add (dropped out-of-bounds rows).
    let take = move |a: &[Array]| Ok(vec![a[0].take(&idx, 1)?.sin()?]);
    check("take", &take, std::slice::from_ref(&x), 2);
    let rows = Array::from_slice_on(&cpu(), &[0i32, 2, 0, 7], &[4, 1]).unwrap();
    let upd = f64s(
        &(0..16).map(|i| i as f64 * 0.1).collect::<Vec<_>>(),
        &[4, 4],
    );
    let scatter = move |a: &[Array]| {
        let dims = quabla::qir::ScatterDims {
            update_window_dims: vec![1],
            inserted_window_dims: vec![0],
            scatter_dims_to_operand_dims: vec![0],
        };
        Ok(vec![a[0].scatter_add(&rows, &(&a[1] * &a[1])?, dims)?])
    };
    check(
        "scatter_add",
        &scatter,
        &[f64s(&[0.5; 12], &[3, 4]), upd],
        2,
    );
}

#[test]
fn derivative_conventions_follow_jax_at_edge_inputs() {
    let g = |f: F, x: &[f64]| {
        vals(
            &grad(
                move |a: &[Array]| Ok(vec![f(a)?[0].sum(Axes::All, false)?]),
                &[0],
            )(&[f64s(x, &[x.len()])])
            .unwrap()[0],
        )
    };
    // d|x|/dx = +1 at 0 and at -0.
    assert_eq!(
        g(|a| Ok(vec![a[0].abs()?]), &[0.0, -0.0, -2.0]),
        vec![1.0, 1.0, -1.0]
    );
    // maximum/minimum ties share: relu as maximum(x, 0) has slope 0.5 at 0.
    assert_eq!(
        g(|a| Ok(vec![a[0].maximum(0.0)?]), &[0.0, 1.0, -1.0]),
        vec![0.5, 1.0, 0.0]
    );
    assert_eq!(
        g(|a| Ok(vec![a[0].minimum(1.0)?]), &[1.0, 3.0]),
        vec![0.5, 0.0]
    );
    // max reduction ties: 1/k each.
    assert_eq!(
        g(
            |a| Ok(vec![a[0].max(Axes::All, false)?]),
            &[3.0, 1.0, 3.0, 3.0]
        ),
        vec![1.0 / 3.0, 0.0, 1.0 / 3.0, 1.0 / 3.0]
    );
    // sqrt'(0) = inf; sign, floor, round have zero derivative.
    assert_eq!(g(|a| Ok(vec![a[0].sqrt()?]), &[0.0]), vec![f64::INFINITY]);
    assert_eq!(
        g(|a| Ok(vec![(a[0].sign()? + &a[0].round()?)?]), &[0.3, -2.5]),
        vec![0.0, 0.0]
    );
    // The product's gradient is exact with zeros.
    assert_eq!(
        g(|a| Ok(vec![a[0].prod(Axes::All, false)?]), &[0.0, 2.0, 3.0]),
        vec![6.0, 0.0, 0.0]
    );
    assert_eq!(
        g(|a| Ok(vec![a[0].prod(Axes::All, false)?]), &[0.0, 0.0, 3.0]),
        vec![0.0, 0.0, 0.0]
    );
    // where(x > 0, sqrt(x), 0) has a NaN gradient at x <= 0 (0 * inf through the select).
    let w = g(
        |a| Ok(vec![a[0].gt(0.0)?.select(&a[0].sqrt()?, 0.0)?]),
        &[4.0, 0.0, -1.0],
    );
    assert_eq!(w[0], 0.25);
    assert!(w[1].is_nan() && w[2].is_nan());
    // power(x, 0) at x = 0: NaN; d/dy 0^y = 0.
    let p = grad(|a: &[Array]| Ok(vec![a[0].pow(&a[1])?]), &[0, 1])(&[
        f64s(&[0.0], &[]),
        f64s(&[0.0], &[]),
    ])
    .unwrap();
    assert!(vals(&p[0])[0].is_nan());
    assert_eq!(vals(&p[1]), vec![0.0]);
}

#[test]
fn nested_derivatives_compose() {
    let x = f64s(&[0.7], &[]);
    let f = |a: &[Array]| Ok(vec![a[0].sin()?]);
    let d3 = grad(grad(grad(f, &[0]), &[0]), &[0]);
    assert!((vals(&d3(std::slice::from_ref(&x)).unwrap()[0])[0] + 0.7f64.cos()).abs() < 1e-15);
    // jvp of vjp: d/dx [x^3 pullback of 1] = 6x.
    let pull = |a: &[Array]| {
        let (_, pb) = vjp(|b: &[Array]| Ok(vec![(&(&b[0] * &b[0])? * &b[0])?]), a)?;
        pb.call(&[a[0].ones_like()?])
    };
    let (g, dg) = jvp(pull, std::slice::from_ref(&x), &[f64s(&[1.0], &[])]).unwrap();
    assert!((vals(&g[0])[0] - 3.0 * 0.49).abs() < 1e-15);
    assert!((vals(&dg[0])[0] - 6.0 * 0.7).abs() < 1e-14);
}

/// The analytic Hessian of the Rosenbrock function.
fn rosenbrock_hessian(x: &[f64]) -> Vec<f64> {
    let n = x.len();
    let mut h = vec![0.0; n * n];
    for i in 0..n {
        if i + 1 < n {
            h[i * n + i] += 1200.0 * x[i] * x[i] - 400.0 * x[i + 1] + 2.0;
            h[i * n + i + 1] = -400.0 * x[i];
            h[(i + 1) * n + i] = -400.0 * x[i];
        }
        if i > 0 {
            h[i * n + i] += 200.0;
        }
    }
    h
}

#[test]
fn hessian_of_rosenbrock_in_1000_dims_matches_the_analytic_hessian() {
    let n = 1000;
    let xs: Vec<f64> = (0..n)
        .map(|i| 1.0 + 0.5 * ((i as f64) * 0.7).sin())
        .collect();
    let h = hessian(rosenbrock, &[0])(&[f64s(&xs, &[n])]).unwrap();
    assert_eq!(h[0].shape(), &[n, n]);
    let got = vals(&h[0]);
    let want = rosenbrock_hessian(&xs);
    let scale = want.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert!(
            (g - w).abs() <= 1e-12 * scale.max(w.abs()),
            "H[{}, {}] = {g}, expected {w}",
            i / n,
            i % n
        );
    }
    // The Hessian-vector product agrees with H v.
    let v: Vec<f64> = (0..n).map(|i| (i as f64 * 0.3).cos()).collect();
    let hv = vals(&hvp(rosenbrock, &[f64s(&xs, &[n])], &[f64s(&v, &[n])]).unwrap()[0]);
    for i in 0..n {
        let w: f64 = (0..n).map(|j| want[i * n + j] * v[j]).sum();
        assert!(
            (hv[i] - w).abs() <= 1e-12 * scale,
            "Hv[{i}] = {}, expected {w}",
            hv[i]
        );
    }
}

#[test]
fn jacobians_forward_and_reverse_agree_with_the_analytic_one() {
    // f(x, y) = (x0 * y, sin(x) * y^2): Jacobians w.r.t. x (shape [2]) and y (scalar).
    let f = |a: &[Array]| {
        let x0 = a[0].slice(&[0], &[1], &[1])?.reshape(&[])?;
        Ok(vec![(&x0 * &a[1])?, (a[0].sin()? * &(&a[1] * &a[1])?)?])
    };
    let (x, y) = ([0.3, -1.1], 1.7);
    let args = [f64s(&x, &[2]), f64s(&[y], &[])];
    let want = [
        vec![y, 0.0],
        vec![x[0]],
        vec![x[0].cos() * y * y, 0.0, 0.0, x[1].cos() * y * y],
        vec![2.0 * y * x[0].sin(), 2.0 * y * x[1].sin()],
    ];
    for jac in [
        jacfwd(f, &[0, 1])(&args).unwrap(),
        jacrev(f, &[0, 1])(&args).unwrap(),
        jacobian(f, &[0, 1])(&args).unwrap(),
    ] {
        assert_eq!(jac.len(), 4);
        assert_eq!(jac[2].shape(), &[2, 2]);
        assert_eq!(jac[3].shape(), &[2]);
        for (j, w) in jac.iter().zip(&want) {
            for (g, w) in vals(j).iter().zip(w) {
                assert!((g - w).abs() < 1e-14, "{g} vs {w}");
            }
        }
    }
}

#[test]
fn value_and_grad_returns_aux_and_gradients_keep_the_primal_dtype() {
    let f = |a: &[Array]| {
        let loss = (&a[0] * &a[0])?.sum(Axes::All, false)?;
        Ok(vec![loss, a[0].sin()?])
    };
    let x = Array::from_slice_on(&cpu(), &[1.0f32, -2.0], &[2]).unwrap();
    let r = value_and_grad(f, &[0], true)(&[x]).unwrap();
    assert_eq!(r.len(), 3);
    assert_eq!(r[0].item::<f32>().unwrap(), 5.0);
    assert_eq!(
        r[1].to_vec::<f32>().unwrap(),
        vec![1f32.sin(), (-2f32).sin()]
    );
    assert_eq!(r[2].dtype(), DType::F32);
    assert_eq!(r[2].to_vec::<f32>().unwrap(), vec![2.0, -4.0]);
}

#[test]
fn integer_inputs_and_non_scalar_outputs_give_clear_errors() {
    let i = Array::from_slice_on(&cpu(), &[1i32, 2], &[2]).unwrap();
    let e = grad(
        |a: &[Array]| Ok(vec![a[0].sum(Axes::All, false)?.astype(DType::F32)?]),
        &[0],
    )(&[i])
    .unwrap_err();
    assert!(
        matches!(&e, Error::DType(m) if m.contains("requires float inputs")),
        "{e}"
    );
    let x = f64s(&[1.0, 2.0], &[2]);
    let e = grad(|a: &[Array]| Ok(vec![a[0].sin()?]), &[0])(&[x]).unwrap_err();
    assert!(
        matches!(&e, Error::DType(m) if m.contains("float scalar output")),
        "{e}"
    );
}

#[test]
fn f32_gradients_check_against_finite_differences() {
    let x = Array::from_slice_on(&cpu(), &[0.3f32, -0.7, 1.1], &[3]).unwrap();
    let f = |a: &[Array]| Ok(vec![(a[0].tanh()? * &a[0].exp()?)?.sum(Axes::All, false)?]);
    check("f32 tanh*exp", &f, &[x], 1);
}

#[test]
fn derivatives_hold_at_special_points_and_near_domain_edges() {
    let special = f64s(&[0.0, 1.0, -1.0, 1e-3, -1e-3], &[5]);
    let smooth: Vec<(&str, F)> = vec![
        ("sin", |a| Ok(vec![a[0].sin()?])),
        ("exp", |a| Ok(vec![a[0].exp()?])),
        ("expm1", |a| Ok(vec![a[0].expm1()?])),
        ("tanh", |a| Ok(vec![a[0].tanh()?])),
        ("atan", |a| Ok(vec![a[0].atan()?])),
        ("sinh", |a| Ok(vec![a[0].sinh()?])),
        ("asinh", |a| Ok(vec![a[0].asinh()?])),
        ("erf", |a| Ok(vec![a[0].erf()?])),
        ("logistic", |a| Ok(vec![a[0].logistic()?])),
        ("square", |a| Ok(vec![(&a[0] * &a[0])?])),
    ];
    for (name, f) in smooth {
        check(name, &f, std::slice::from_ref(&special), 2);
    }
    let edges: Vec<(&str, F, Vec<f64>)> = vec![
        ("log near 0", |a| Ok(vec![a[0].log()?]), vec![1e-3, 1.0]),
        ("sqrt near 0", |a| Ok(vec![a[0].sqrt()?]), vec![1e-3, 1.0]),
        (
            "log1p near -1",
            |a| Ok(vec![a[0].log1p()?]),
            vec![-0.999, 0.0],
        ),
        (
            "asin near 1",
            |a| Ok(vec![a[0].asin()?]),
            vec![0.999, -0.999, 0.0],
        ),
        (
            "acos near 1",
            |a| Ok(vec![a[0].acos()?]),
            vec![0.999, -0.999],
        ),
        (
            "atanh near 1",
            |a| Ok(vec![a[0].atanh()?]),
            vec![0.999, -0.999, 0.0],
        ),
        (
            "acosh near 1",
            |a| Ok(vec![a[0].acosh()?]),
            vec![1.001, 2.0],
        ),
        (
            "pow at base 1",
            |a| Ok(vec![a[0].pow(2.5)?]),
            vec![1.0, 1e-2],
        ),
    ];
    for (name, f, xs) in edges {
        // Central differences need the step well inside the domain: 1e-6 here.
        check(name, &f, &[f64s(&xs, &[xs.len()])], 1);
    }
}

#[test]
fn transforms_close_over_traced_values_of_enclosing_transforms() {
    // Per-point second derivatives of u(x) = sum(tanh(w x)) inside a gradient w.r.t. w: the
    // inner hessian closes over the outer traced w (a PINN's pattern).
    let loss = |a: &[Array]| {
        let (w, xs) = (&a[0], &a[1]);
        let u = |q: &[Array]| Ok(vec![(w * &q[0])?.tanh()?.sum(Axes::All, false)?]);
        let h = quabla::vmap(hessian(u, &[0]), &[Some(0)], &[])(std::slice::from_ref(xs))?;
        Ok(vec![h[0].sum(Axes::All, false)?])
    };
    let (w, xs) = (f64s(&[0.7, -1.3], &[2]), f64s(&[0.2, 0.9, -0.4], &[3]));
    // d2/dx2 tanh(w x) = -2 w^2 t (1 - t^2), t = tanh(w x); d/dw of its sum, by hand.
    let g = grad(loss, &[0])(&[w.clone(), xs.clone()]).unwrap();
    let mut want = [0.0; 2];
    for (j, wj) in [0.7f64, -1.3].iter().enumerate() {
        for x in [0.2f64, 0.9, -0.4] {
            let t = (wj * x).tanh();
            let dt = x * (1.0 - t * t);
            // d/dw [-2 w^2 t (1 - t^2)] = -4 w t (1 - t^2) - 2 w^2 (1 - 3 t^2) dt
            want[j] += -4.0 * wj * t * (1.0 - t * t) - 2.0 * wj * wj * (1.0 - 3.0 * t * t) * dt;
        }
    }
    for (a, b) in vals(&g[0]).iter().zip(want) {
        assert!((a - b).abs() < 1e-12, "{a} vs {b}");
    }
}
