//! Structured control flow: lazy cond/switch, while_loop, fori_loop (static and traced
//! bounds), scan, with AD and vmap through them and closures over traced values.

mod common;

use common::cpu;
use quabla::ad::{grad, hessian, jvp};
use quabla::lax::{cond, fori_loop, scan, switch, while_loop};
use quabla::test_util::check_grads;
use quabla::{checkpoint, custom_jvp, jit, vmap, Array, Axes, Error, Result};

fn f64s(v: &[f64], shape: &[usize]) -> Array {
    Array::from_slice_on(&cpu(), v, shape).unwrap()
}

fn vals(a: &Array) -> Vec<f64> {
    a.to_vec::<f64>().unwrap()
}

fn i32s(v: i32) -> Array {
    Array::from_slice_on(&cpu(), &[v], &[]).unwrap()
}

#[test]
fn cond_is_lazy_and_checks_branch_types() {
    // The unselected log of a negative number leaks no NaN into values or gradients.
    let f = |a: &[Array]| {
        let p = a[0].gt(0.0)?;
        let y = cond(
            &p,
            &|b: &[Array]| Ok(vec![b[0].log()?]),
            &|b: &[Array]| Ok(vec![(&b[0] * &b[0])?]),
            a,
        )?;
        Ok(vec![y[0].clone()])
    };
    let x = f64s(&[-3.0], &[]);
    assert_eq!(vals(&f(std::slice::from_ref(&x)).unwrap()[0]), vec![9.0]);
    assert_eq!(
        vals(&grad(f, &[0])(std::slice::from_ref(&x)).unwrap()[0]),
        vec![-6.0]
    );
    assert_eq!(
        vals(&grad(f, &[0])(&[f64s(&[2.0], &[])]).unwrap()[0]),
        vec![0.5]
    );
    let bad = cond(
        &i32s(1),
        &|b: &[Array]| Ok(vec![b[0].clone()]),
        &|b: &[Array]| Ok(vec![b[0].reshape(&[1])?]),
        &[x],
    );
    match bad {
        Err(Error::Shape(m)) => assert!(
            m.contains("branch 1 returns") && m.contains("f64[1]"),
            "{m}"
        ),
        other => panic!("expected a type error, got {other:?}"),
    }
}

#[test]
fn closures_over_traced_values_become_operands_and_get_gradients() {
    // d/dw of cond(x > 0, w * x, w) at x = 2 is x = 2; at x = -1 it is 1.
    let f = |a: &[Array]| {
        let (w, x) = (&a[0], &a[1]);
        let t = |b: &[Array]| Ok(vec![(w * &b[0])?]);
        let e = |_: &[Array]| Ok(vec![w.clone()]);
        Ok(vec![
            cond(&x.gt(0.0)?, &t, &e, std::slice::from_ref(x))?.remove(0)
        ])
    };
    let g = grad(f, &[0]);
    assert_eq!(
        vals(&g(&[f64s(&[3.0], &[]), f64s(&[2.0], &[])]).unwrap()[0]),
        vec![2.0]
    );
    assert_eq!(
        vals(&g(&[f64s(&[3.0], &[]), f64s(&[-1.0], &[])]).unwrap()[0]),
        vec![1.0]
    );
}

#[test]
fn work_on_closed_over_values_stays_in_its_branch() {
    // Branches that take no operands and compute on what they close over: the log runs
    // only when its branch is taken, so at x = 0 its infinite derivative never meets the
    // zero cotangent of the branch not taken (JAX: d/dx cond(x > 0, log x, x) at 0 is 1).
    let f = |a: &[Array]| {
        let x = a[0].clone();
        let (xl, xi) = (x.clone(), x.clone());
        let log = move |_: &[Array]| Ok(vec![xl.log()?]);
        let same = move |_: &[Array]| Ok(vec![(&xi * 1.0)?]);
        cond(&x.gt(0.0)?, &log, &same, &[])
    };
    for (x, value, slope) in [(0.0, 0.0, 1.0), (-2.0, -2.0, 1.0), (4.0, 4f64.ln(), 0.25)] {
        let args = [f64s(&[x], &[])];
        assert_eq!(vals(&f(&args).unwrap()[0]), vec![value], "x {x}");
        assert_eq!(
            vals(&grad(f, &[0])(&args).unwrap()[0]),
            vec![slope],
            "x {x}"
        );
        assert_eq!(
            vals(&jit(grad(f, &[0])).call(&args).unwrap()[0]),
            vec![slope],
            "x {x}"
        );
    }
    // The program holds the log inside the branch, not before the cond.
    let p = quabla::make_program(f, &[f64s(&[1.0], &[])]).unwrap();
    assert!(
        p.nodes.iter().all(|n| !matches!(
            n.op,
            quabla_abi::qir::Op::Unary(quabla_abi::qir::UnaryOp::Log)
        )),
        "{}",
        p.to_text()
    );
    // A loop body closing over a value computes with it on each trip, as a carry.
    let g = |a: &[Array]| {
        let rate = a[1].clone();
        let body = move |c: &[Array]| Ok(vec![(&c[0] * &rate.exp()?)?]);
        let keep = |c: &[Array]| Ok(vec![c[0].lt(10.0)?]);
        quabla::lax::bounded_while_loop(&keep, &body, &a[..1], 50)
    };
    let args = [f64s(&[1.0], &[]), f64s(&[0.5], &[])];
    // c = e^(0.5 n) passes 10 after n = 5 trips: d/drate of e^(n rate) is 5 e^2.5.
    let d = vals(&grad(g, &[1])(&args).unwrap()[0])[0];
    let want = 5.0 * 2.5f64.exp();
    assert!((d - want).abs() <= 1e-12 * want, "{d} vs {want}");
}

#[test]
fn switch_clamps_its_index() {
    let branches: [quabla::lax::RegionFn; 3] = [
        &|a| Ok(vec![(&a[0] + 1.0)?]),
        &|a| Ok(vec![(&a[0] * 10.0)?]),
        &|a| Ok(vec![a[0].neg()?]),
    ];
    let x = f64s(&[2.0], &[]);
    for (i, want) in [(-5, 3.0), (0, 3.0), (1, 20.0), (2, -2.0), (9, -2.0)] {
        assert_eq!(
            vals(&switch(&i32s(i), &branches, std::slice::from_ref(&x)).unwrap()[0]),
            vec![want],
            "index {i}"
        );
    }
}

#[test]
fn while_loop_runs_data_dependent_trips_and_differentiates_forward_only() {
    // Halve until below 1: 20 -> 10 -> 5 -> 2.5 -> 1.25 -> 0.625.
    let f = |a: &[Array]| {
        while_loop(
            &|c: &[Array]| Ok(vec![c[0].ge(1.0)?]),
            &|c: &[Array]| Ok(vec![(&c[0] * 0.5)?]),
            a,
        )
    };
    let x = f64s(&[20.0], &[]);
    assert_eq!(vals(&f(std::slice::from_ref(&x)).unwrap()[0]), vec![0.625]);
    let (_, t) = jvp(f, std::slice::from_ref(&x), &[f64s(&[1.0], &[])]).unwrap();
    assert_eq!(vals(&t[0]), vec![1.0 / 32.0]);
    let e = grad(move |a: &[Array]| f(a), &[0])(&[x]).err().unwrap();
    assert!(e.to_string().contains("scan"), "{e}");
    let e = while_loop(
        &|c: &[Array]| Ok(vec![c[0].clone()]),
        &|c: &[Array]| Ok(vec![c[0].clone()]),
        &[f64s(&[1.0], &[])],
    )
    .err()
    .unwrap();
    assert!(e.to_string().contains("bool scalar"), "{e}");
}

#[test]
fn fori_loop_with_static_bounds_is_reverse_differentiable() {
    // sum_{i=2}^{5} i * x = 14 x.
    let body = |i: &Array, c: &[Array]| {
        Ok(vec![
            (&c[0] + &(&c[1] * &i.astype(quabla::DType::F64)?)?)?,
            c[1].clone(),
        ])
    };
    let f = move |a: &[Array]| {
        Ok(vec![fori_loop(
            2,
            6,
            &body,
            &[a[0].zeros_like()?, a[0].clone()],
        )?
        .remove(0)])
    };
    let x = f64s(&[1.5], &[]);
    assert_eq!(vals(&f(std::slice::from_ref(&x)).unwrap()[0]), vec![21.0]);
    assert_eq!(
        vals(&grad(f, &[0])(std::slice::from_ref(&x)).unwrap()[0]),
        vec![14.0]
    );
    // Traced bounds: a while loop (forward mode only).
    let g = move |a: &[Array]| {
        let hi = (a[1].astype(quabla::DType::I32)?).reshape(&[])?;
        Ok(vec![fori_loop(
            2,
            &hi,
            &body,
            &[a[0].zeros_like()?, a[0].clone()],
        )?
        .remove(0)])
    };
    assert_eq!(
        vals(&g(&[x.clone(), f64s(&[6.0], &[])]).unwrap()[0]),
        vec![21.0]
    );
    let (_, t) = jvp(
        g,
        &[x.clone(), f64s(&[6.0], &[])],
        &[f64s(&[1.0], &[]), f64s(&[0.0], &[])],
    )
    .unwrap();
    assert_eq!(vals(&t[0]), vec![14.0]);
}

fn rnn_step(w: &Array, u: &Array, h: &Array, x: &Array) -> Result<Array> {
    (w.matmul(h)? + &u.matmul(x)?)?.tanh()
}

#[test]
fn scan_equals_the_unrolled_steps_bit_for_bit() {
    let dev = cpu();
    let w = Array::from_slice_on(
        &dev,
        &(0..16)
            .map(|i| ((i as f32) * 0.37).sin() * 0.5)
            .collect::<Vec<_>>(),
        &[4, 4],
    )
    .unwrap();
    let u = Array::from_slice_on(
        &dev,
        &(0..12)
            .map(|i| ((i as f32) * 0.11).cos() * 0.5)
            .collect::<Vec<_>>(),
        &[4, 3],
    )
    .unwrap();
    let xs = Array::from_slice_on(
        &dev,
        &(0..18).map(|i| (i as f32 * 0.2).sin()).collect::<Vec<_>>(),
        &[6, 3],
    )
    .unwrap();
    let h0 = Array::zeros(&[4], quabla::DType::F32).unwrap();
    let step = |c: &[Array], x: &[Array]| -> Result<(Vec<Array>, Vec<Array>)> {
        let h = rnn_step(&w, &u, &c[0], &x[0])?;
        Ok((vec![h.clone()], vec![h.sum(Axes::All, false)?]))
    };
    for reverse in [false, true] {
        let (carry, ys) = scan(
            &step,
            std::slice::from_ref(&h0),
            std::slice::from_ref(&xs),
            None,
            reverse,
            1,
        )
        .unwrap();
        let mut h = h0.clone();
        let mut want_ys = vec![0.0f32; 6];
        for t in 0..6 {
            let k = if reverse { 5 - t } else { t };
            let x = xs
                .slice(&[k, 0], &[k + 1, 3], &[1, 1])
                .unwrap()
                .reshape(&[3])
                .unwrap();
            h = rnn_step(&w, &u, &h, &x).unwrap();
            want_ys[k] = h.sum(Axes::All, false).unwrap().item::<f32>().unwrap();
        }
        let bits = |v: Vec<f32>| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(
            bits(carry[0].to_vec().unwrap()),
            bits(h.to_vec().unwrap()),
            "reverse={reverse}"
        );
        assert_eq!(
            bits(ys[0].to_vec().unwrap()),
            bits(want_ys),
            "reverse={reverse}"
        );
    }
}

/// c_{t+1} = c_t + 0.01 sin(a c_t + x_t), 1000 steps.
fn long_scan(a: &[Array]) -> Result<Vec<Array>> {
    let (c0, k) = (&a[0], &a[1]);
    let xs = (crate::Array::iota_on(c0.device(), quabla::DType::F64, &[1000], 0)? * 0.001)?;
    let step = |c: &[Array], x: &[Array]| -> Result<(Vec<Array>, Vec<Array>)> {
        let next = (&c[0] + &((&(k * &c[0])? + &x[0])?.sin()? * 0.01)?)?;
        Ok((vec![next], vec![]))
    };
    Ok(scan(&step, std::slice::from_ref(c0), &[xs], None, false, 1)?.0)
}

#[test]
fn grad_through_a_1000_step_scan_matches_finite_differences() {
    let args = [f64s(&[0.3], &[]), f64s(&[1.7], &[])];
    let g = grad(long_scan, &[0, 1])(&args).unwrap();
    let eps = 1e-6;
    for (i, gi) in g.iter().enumerate() {
        let mut plus = args.to_vec();
        let mut minus = args.to_vec();
        plus[i] = (&args[i] + eps).unwrap();
        minus[i] = (&args[i] - eps).unwrap();
        let fd = (vals(&long_scan(&plus).unwrap()[0])[0] - vals(&long_scan(&minus).unwrap()[0])[0])
            / (2.0 * eps);
        let got = vals(gi)[0];
        assert!(
            (got - fd).abs() <= 1e-7 * fd.abs().max(1.0),
            "d/d{i}: {got} vs finite differences {fd}"
        );
    }
    check_grads(&long_scan, &args, 1, None).unwrap();
}

#[test]
fn scan_composes_with_vmap_hessians_and_custom_rules() {
    // Per-row cumulative products by scan, vmapped over rows, against cumprod.
    let rows = f64s(&[0.5, 2.0, -1.0, 3.0, 1.5, 0.25], &[2, 3]);
    let cp = |a: &[Array]| {
        let step = |c: &[Array], x: &[Array]| -> Result<(Vec<Array>, Vec<Array>)> {
            let n = (&c[0] * &x[0])?;
            Ok((vec![n.clone()], vec![n]))
        };
        Ok(scan(
            &step,
            &[a[0].slice(&[0], &[1], &[1])?.reshape(&[])?.ones_like()?],
            std::slice::from_ref(&a[0]),
            None,
            false,
            1,
        )?
        .1)
    };
    let v = vmap(cp, &[Some(0)], &[])(std::slice::from_ref(&rows)).unwrap();
    assert_eq!(vals(&v[0]), vals(&rows.cumprod(1, false).unwrap()));
    // Per-row gradients of the product through the scan.
    let loss = move |a: &[Array]| Ok(vec![cp(a)?[0].slice(&[2], &[3], &[1])?.reshape(&[])?]);
    let g = vmap(grad(loss, &[0]), &[Some(0)], &[])(std::slice::from_ref(&rows)).unwrap();
    assert_eq!(vals(&g[0]), vec![-2.0, -0.5, 1.0, 0.375, 0.75, 4.5]);
    // Hessian (forward over reverse) through a scan: f = sum_t x^2 * t over 3 steps.
    let f = |a: &[Array]| {
        let step = |c: &[Array], _: &[Array]| -> Result<(Vec<Array>, Vec<Array>)> {
            Ok((vec![(&c[0] + &(&a[0] * &a[0])?)?], vec![]))
        };
        Ok(vec![scan(
            &step,
            &[a[0].zeros_like()?],
            &[],
            Some(3),
            false,
            1,
        )?
        .0
        .remove(0)
        .sum(Axes::All, false)?])
    };
    let h = hessian(f, &[0])(&[f64s(&[0.5, -1.0], &[2])]).unwrap();
    assert_eq!(vals(&h[0]), vec![6.0, 0.0, 0.0, 6.0]);
    // checkpoint and custom_jvp inside the body.
    let soft = custom_jvp(
        |a: &[Array]| Ok(vec![a[0].exp()?.log1p()?]),
        |p: &[Array], t: &[Array]| {
            Ok((
                vec![p[0].exp()?.log1p()?],
                vec![(&t[0] * &p[0].logistic()?)?],
            ))
        },
    );
    let body = checkpoint(|a: &[Array]| Ok(vec![a[0].sin()?]));
    let f2 = |a: &[Array]| {
        let step = |c: &[Array], _: &[Array]| -> Result<(Vec<Array>, Vec<Array>)> {
            let s = soft(&body(std::slice::from_ref(&c[0]))?)?;
            Ok((s, vec![]))
        };
        Ok(scan(&step, std::slice::from_ref(&a[0]), &[], Some(4), false, 1)?.0)
    };
    check_grads(&f2, &[f64s(&[0.3, -0.8], &[2])], 2, None).unwrap();
}

#[test]
fn nested_loops_conds_and_custom_vjp_compose_under_grad_and_vmap() {
    use quabla::custom_vjp;
    // A fori_loop whose body holds a cond and a custom_vjp (a doubled-gradient identity),
    // inside a scan, differentiated through vmap.
    let doubled = custom_vjp(
        |a: &[Array]| Ok(vec![a[0].clone()]),
        |a: &[Array]| Ok((vec![a[0].clone()], vec![])),
        |_: &[Array], ct: &[Array]| Ok(vec![(&ct[0] * 2.0)?]),
    );
    let f = move |a: &[Array]| {
        let step = |c: &[Array], x: &[Array]| -> Result<(Vec<Array>, Vec<Array>)> {
            let body = |_: &Array, s: &[Array]| {
                let pos = s[0].gt(0.0)?;
                let branch = cond(
                    &pos,
                    &|b: &[Array]| Ok(vec![(&b[0] * 0.5)?]),
                    &|b: &[Array]| Ok(vec![b[0].neg()?]),
                    &s[..1],
                )?;
                Ok(vec![(&doubled(&branch)?[0] + &x[0])?])
            };
            Ok((fori_loop(0, 2, &body, &c[..1])?, vec![]))
        };
        let xs = a[0].expand_dims(0)?;
        Ok(vec![scan(
            &step,
            &a[..1],
            std::slice::from_ref(&xs),
            None,
            false,
            1,
        )?
        .0
        .remove(0)])
    };
    let loss = move |a: &[Array]| Ok(vec![vmap(&f, &[Some(0)], &[])(a)?[0].sum(Axes::All, false)?]);
    let x = f64s(&[1.0, -2.0], &[2]);
    let g = grad(loss, &[0])(std::slice::from_ref(&x)).unwrap();
    // Per element, two iterations of c -> h(c) + x with h = 0.5c (c > 0) or -c, each scaled
    // by 2 in reverse mode. x = 1: c1 = 1.5, c2 = 1.75; d/dx = (2*0.5) * (2*0.5 + 1) + 1 = 3.
    // x = -2: c1 = 2 - 2 = 0, c2 = -0 - 2 (c1 = 0 is not > 0, so -c): d/dx = 2*(-1)*(2*(-1) + 1) + 1 = 3.
    assert_eq!(vals(&g[0]), vec![3.0, 3.0]);
}

#[test]
fn unrolled_scans_give_identical_bits() {
    let xs = f64s(
        &(0..14).map(|i| (i as f64 * 0.3).sin()).collect::<Vec<_>>(),
        &[7, 2],
    );
    let step = |c: &[Array], x: &[Array]| -> Result<(Vec<Array>, Vec<Array>)> {
        let n = (&c[0] * &x[0])?.cos()?;
        Ok((vec![n.clone()], vec![n.sum(Axes::All, false)?]))
    };
    let init = [f64s(&[0.5, -0.25], &[2])];
    for reverse in [false, true] {
        let base = scan(&step, &init, std::slice::from_ref(&xs), None, reverse, 1).unwrap();
        for unroll in [2, 3, 7, 10] {
            let got = scan(
                &step,
                &init,
                std::slice::from_ref(&xs),
                None,
                reverse,
                unroll,
            )
            .unwrap();
            assert_eq!(vals(&got.0[0]), vals(&base.0[0]), "unroll {unroll}");
            assert_eq!(vals(&got.1[0]), vals(&base.1[0]), "unroll {unroll}");
        }
    }
    assert!(scan(&step, &init, &[xs], None, false, 0).is_err());
}
