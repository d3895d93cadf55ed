//! stop_gradient, custom_jvp, custom_vjp, checkpoint, and reverse mode through cond.

mod common;

use common::cpu;
use quabla::ad::{grad, jvp, value_and_grad};
use quabla::qir::Program;
use quabla::test_util::check_grads;
use quabla::{
    call_program, checkpoint, closure_convert, custom_jvp, custom_vjp, jit, make_program, passes,
    vmap, Array, Axes, Result,
};

fn f64s(v: &[f64], shape: &[usize]) -> Array {
    Array::from_slice_on(&cpu(), v, shape).unwrap()
}

fn vals(a: &Array) -> Vec<f64> {
    a.to_vec::<f64>().unwrap()
}

#[test]
fn stop_gradient_has_zero_derivative_at_every_order() {
    let f = |a: &[Array]| Ok(vec![(&(&a[0] * &a[0])? * &a[0].stop_gradient()?)?]);
    let x = f64s(&[3.0], &[]);
    // d/dx x^2 * sg(x) = 2 x sg(x) = 18; second derivative 2 sg(x) = 6.
    assert_eq!(
        vals(&grad(f, &[0])(std::slice::from_ref(&x)).unwrap()[0]),
        vec![18.0]
    );
    assert_eq!(
        vals(&grad(grad(f, &[0]), &[0])(std::slice::from_ref(&x)).unwrap()[0]),
        vec![6.0]
    );
    let v = vmap(
        |a: &[Array]| Ok(vec![a[0].stop_gradient()?.sin()?]),
        &[Some(0)],
        &[],
    )(&[f64s(&[0.5, 1.0], &[2])])
    .unwrap();
    assert_eq!(vals(&v[0]), vec![0.5f64.sin(), 1f64.sin()]);
}

fn naive_softplus(a: &[Array]) -> Result<Vec<Array>> {
    Ok(vec![a[0].exp()?.log1p()?])
}

#[test]
fn custom_jvp_rules_replace_the_derivative_and_compose() {
    let softplus = custom_jvp(naive_softplus, |p: &[Array], t: &[Array]| {
        Ok((
            vec![p[0].exp()?.log1p()?],
            vec![(&t[0] * &p[0].logistic()?)?],
        ))
    });
    let big = f64s(&[1000.0], &[]);
    // The naive derivative overflows to NaN; the rule gives logistic(1000) = 1.
    assert!(vals(&grad(naive_softplus, &[0])(std::slice::from_ref(&big)).unwrap()[0])[0].is_nan());
    assert_eq!(
        vals(&grad(&softplus, &[0])(std::slice::from_ref(&big)).unwrap()[0]),
        vec![1.0]
    );
    // Values come from the function; second derivatives differentiate the rule.
    let x = f64s(&[0.3], &[]);
    let (y, dy) = jvp(&softplus, std::slice::from_ref(&x), &[f64s(&[2.0], &[])]).unwrap();
    assert_eq!(vals(&y[0]), vec![0.3f64.exp().ln_1p()]);
    let s = 1.0 / (1.0 + (-0.3f64).exp());
    assert!((vals(&dy[0])[0] - 2.0 * s).abs() < 1e-15);
    let d2 = vals(&grad(grad(&softplus, &[0]), &[0])(std::slice::from_ref(&x)).unwrap()[0])[0];
    assert!((d2 - s * (1.0 - s)).abs() < 1e-15);
    check_grads(
        &|a: &[Array]| softplus(a),
        &[f64s(&[0.3, -1.2, 2.0], &[3])],
        2,
        None,
    )
    .unwrap();
    // Under vmap the rule is batched too.
    let per = vmap(grad(&softplus, &[0]), &[Some(0)], &[])(&[f64s(&[1000.0, 0.0], &[2])]).unwrap();
    assert_eq!(vals(&per[0]), vec![1.0, 0.5]);
}

/// `x` for `x > 0`, computed with a branch the `select` masks: `log(0 * x)` is `log(0)`,
/// whose derivative is 0 / 0. Differentiated directly, the masked branch's NaN reaches the
/// gradient through the zero cotangent (0 * NaN).
fn masked_identity(a: &[Array]) -> Result<Vec<Array>> {
    let hidden = (&a[0] * 0.0)?.log()?;
    Ok(vec![a[0].gt(0.0)?.select(&a[0], &hidden)?])
}

#[test]
fn the_primal_of_a_custom_jvp_keeps_its_rule_under_further_derivatives() {
    let f = custom_jvp(masked_identity, |p: &[Array], t: &[Array]| {
        Ok((masked_identity(p)?, vec![t[0].clone()]))
    });
    let x = f64s(&[3.0], &[]);
    let plain = grad(masked_identity, &[0])(std::slice::from_ref(&x)).unwrap();
    assert!(
        vals(&plain[0])[0].is_nan(),
        "the plain function's gradient leaks the NaN"
    );
    // Reverse mode through the JVP, with cotangents on both the primal and the tangent
    // output: the primal part is differentiated again, and must use the rule (d = 1) rather
    // than the plain function the rule called.
    let both = |a: &[Array]| -> Result<Vec<Array>> {
        let one = a[0].ones_like()?;
        let (y, dy) = jvp(&f, a, &[one])?;
        Ok(vec![(&y[0] + &dy[0])?])
    };
    let g = grad(both, &[0])(std::slice::from_ref(&x)).unwrap();
    assert_eq!(vals(&g[0]), vec![1.0]);
    // The values are unchanged: the function's for the primal, the rule's for the tangent.
    let (y, dy) = jvp(&f, std::slice::from_ref(&x), &[f64s(&[2.0], &[])]).unwrap();
    assert_eq!((vals(&y[0]), vals(&dy[0])), (vec![3.0], vec![2.0]));
}

#[test]
fn custom_vjp_rules_are_used_in_reverse_mode_and_refused_in_forward_mode() {
    // sin with a deliberately doubled backward rule: the gradient must be 2 cos(x).
    let f = custom_vjp(
        |a: &[Array]| Ok(vec![a[0].sin()?]),
        |a: &[Array]| Ok((vec![a[0].sin()?], vec![a[0].cos()?])),
        |res: &[Array], ct: &[Array]| Ok(vec![(&(&ct[0] * &res[0])? * 2.0)?]),
    );
    let x = f64s(&[0.4, -1.0], &[2]);
    let loss = |a: &[Array]| Ok(vec![f(a)?[0].sum(Axes::All, false)?]);
    let r = value_and_grad(loss, &[0], false)(std::slice::from_ref(&x)).unwrap();
    assert_eq!(vals(&r[0]), vec![0.4f64.sin() + (-1.0f64).sin()]);
    assert_eq!(vals(&r[1]), vec![2.0 * 0.4f64.cos(), 2.0 * (-1.0f64).cos()]);
    let per = vmap(grad(loss, &[0]), &[Some(0)], &[])(&[f64s(&[0.4, -1.0], &[2, 1])]).unwrap();
    assert_eq!(
        vals(&per[0]),
        vec![2.0 * 0.4f64.cos(), 2.0 * (-1.0f64).cos()]
    );
    match jvp(&f, std::slice::from_ref(&x), std::slice::from_ref(&x)) {
        Err(e) => assert!(e.to_string().contains("custom_vjp"), "{e}"),
        Ok(_) => panic!("forward mode through custom_vjp must be refused"),
    }
}

fn count(p: &Program, op: &str) -> usize {
    p.to_text().matches(&format!(" = {op}(")).count()
}

#[test]
fn checkpoint_recomputes_residuals_in_the_backward_pass() {
    let f = |a: &[Array]| Ok(vec![a[0].exp()?.exp()?.sum(Axes::All, false)?]);
    let x = f64s(&[0.1, 0.2], &[2]);
    let plain = grad(f, &[0])(std::slice::from_ref(&x)).unwrap();
    let remat = grad(checkpoint(f), &[0])(std::slice::from_ref(&x)).unwrap();
    assert_eq!(vals(&plain[0]), vals(&remat[0]));
    let want: Vec<f64> = [0.1f64, 0.2]
        .iter()
        .map(|v| v.exp().exp() * v.exp())
        .collect();
    assert_eq!(vals(&plain[0]), want);
    // With the value computed too, the plain gradient stores exp(x) and exp(exp(x)); the
    // checkpointed one recomputes both in the backward pass (no CSE runs after lowering, so
    // the recomputation is not merged back).
    let p_plain = passes::lower(
        &make_program(value_and_grad(f, &[0], false), std::slice::from_ref(&x)).unwrap(),
        &cpu(),
    )
    .unwrap();
    let p_remat = passes::lower(
        &make_program(
            value_and_grad(checkpoint(f), &[0], false),
            std::slice::from_ref(&x),
        )
        .unwrap(),
        &cpu(),
    )
    .unwrap();
    assert_eq!(count(&p_plain, "exp"), 2, "{p_plain}");
    assert_eq!(count(&p_remat, "exp"), 4, "{p_remat}");
    check_grads(
        &|a: &[Array]| checkpoint(f)(a),
        std::slice::from_ref(&x),
        2,
        None,
    )
    .unwrap();
}

const COND: &str = "program(%0: i32[], %1: f64[3]) {
  %2 = cond(%0, %1) : f64[3] {
    branch(%0: f64[3]) {
      %1 = exp(%0) : f64[3]
      return %1
    }
    branch(%0: f64[3]) {
      %1 = log(%0) : f64[3]
      %2 = mul(%1, %0) : f64[3]
      return %2
    }
  }
  return %2
}
";

#[test]
fn reverse_mode_runs_only_the_selected_branch() {
    let f = |a: &[Array]| {
        Ok(vec![
            call_program(&Program::parse(COND)?, a)?[0].sum(Axes::All, false)?
        ])
    };
    let idx = |i: i32| Array::from_slice_on(&cpu(), &[i], &[]).unwrap();
    // log of a negative number in the unselected branch leaks no NaN.
    let neg = f64s(&[-1.0, -2.0, 0.5], &[3]);
    let g = grad(f, &[1])(&[idx(0), neg.clone()]).unwrap();
    assert_eq!(
        vals(&g[0]),
        vec![(-1f64).exp(), (-2f64).exp(), 0.5f64.exp()]
    );
    let pos = f64s(&[1.5, 2.0, 0.5], &[3]);
    let g = grad(f, &[1])(&[idx(1), pos.clone()]).unwrap();
    assert_eq!(
        vals(&g[0]),
        [1.5f64, 2.0, 0.5]
            .iter()
            .map(|v| v.ln() + 1.0)
            .collect::<Vec<_>>()
    );
    for i in [0, 1, 5] {
        check_grads(
            &|a: &[Array]| call_program(&Program::parse(COND)?, a),
            &[idx(i), pos.clone()],
            2,
            None,
        )
        .unwrap();
    }
}

/// `closure_convert` hoists the traced values a function captures (a `grad`'s, a `jit`'s)
/// into explicit inputs, never concrete ones; the converted program computes the same, and a
/// `custom_vjp` given the consts as arguments differentiates with respect to them.
#[test]
fn closure_convert_hoists_traced_captures_only() {
    let w = f64s(&[2.0, -1.0], &[2]);
    // Outside any transformation the captured array is concrete: a constant, no consts.
    let f = |x: &[Array]| Ok(vec![(&x[0] * &w)?.sum(Axes::All, false)?]);
    let (p, consts) = closure_convert(f, &[f64s(&[1.0, 1.0], &[2])]).unwrap();
    assert!(consts.is_empty());
    let y = call_program(&p, &[f64s(&[3.0, 4.0], &[2])]).unwrap();
    assert_eq!(vals(&y[0]), vec![2.0]);

    // Under grad, theta is traced: hoisted, and the gradient flows through the consts of a
    // custom_vjp whose backward rule differentiates them explicitly.
    let loss = |a: &[Array]| -> Result<Vec<Array>> {
        let theta = &a[0];
        let g = |x: &[Array]| Ok(vec![(&x[0] * theta)?.sin()?]);
        let x = f64s(&[0.5], &[1]);
        let (p, consts) = closure_convert(g, std::slice::from_ref(&x))?;
        assert_eq!(consts.len(), 1, "theta is a traced capture");
        let p2 = p.clone();
        let run = custom_vjp(
            move |a: &[Array]| call_program(&p, a),
            move |a: &[Array]| Ok((call_program(&p2, a)?, a.to_vec())),
            |res: &[Array], ct: &[Array]| {
                // d sin(x t) = cos(x t) (t dx + x dt)
                let c = (&res[0] * &res[1])?.cos()?;
                Ok(vec![
                    (&(&ct[0] * &c)? * &res[1])?,
                    (&(&ct[0] * &c)? * &res[0])?,
                ])
            },
        );
        let out = run(&[vec![x], consts].concat())?;
        Ok(vec![out[0].sum(Axes::All, false)?])
    };
    let t = f64s(&[1.2], &[1]);
    let want = 0.5 * (0.5f64 * 1.2).cos();
    for g in [
        grad(loss, &[0])(std::slice::from_ref(&t)).unwrap(),
        jit(grad(loss, &[0]))
            .call(std::slice::from_ref(&t))
            .unwrap(),
    ] {
        let got = vals(&g[0]);
        assert!((got[0] - want).abs() < 1e-14, "{got:?} vs {want}");
    }
}
