//! Generators for the ops with regions (cond, while, bounded_while, scan, the custom-rule calls,
//! checkpoint, linear_solve) and stop_gradient, built through the public API that emits
//! them, with bodies that use every operand.

use super::draw::*;
use super::linalg::shift_diag;
use quabla::batching::vmap_named;
use quabla::lax::{
    bounded_while_loop_with, psum, scan as lax_scan, switch, while_loop as lax_while,
    BoundedWhileOptions, RegionFn,
};
use quabla::linalg::{cg, dense, gmres, SolveOptions};
use quabla::{checkpoint as remat, custom_jvp as with_jvp, custom_vjp as with_vjp};
use quabla::{host_callback as call_host, HostCallbackOptions, VmapMethod};
use quabla::{Array, DType, Result};
use std::rc::Rc;

pub fn cond(rng: &mut Rng, dt: DType) -> Option<Case> {
    let s = rng.dims(0, 2, 1, 3);
    let f: Func = Rc::new(|a: &[Array]| {
        let b0 = |v: &[Array]| Ok(vec![(&v[0].sin()? * &v[1])?]);
        let b1 = |v: &[Array]| Ok(vec![(&(&v[0] * &v[1])? + &v[1])?]);
        let b2 = |v: &[Array]| Ok(vec![(&v[0].exp()? - &(&v[1] * &v[1])?)?]);
        switch(&a[0], &[&b0, &b1, &b2], &a[1..])
    });
    let args = vec![index(&[], -1, 3), real(&s, -2.0, 2.0), real(&s, -2.0, 2.0)];
    Some(Case::new(format!("cond {s:?}"), dt, f, args))
}

/// `(count, x) -> (count + 1, sin(x) w + x / 2)` while `count < n`, from `(0, x0)`, for
/// arguments `(w, x0, n)`, by `run(cond, body, init)`; returns the final `x`.
fn counted_loop(
    a: &[Array],
    run: impl Fn(RegionFn, RegionFn, &[Array]) -> Result<Vec<Array>>,
) -> Result<Vec<Array>> {
    let (w, n) = (a[0].clone(), a[2].clone());
    let keep_going = move |c: &[Array]| Ok(vec![c[0].lt(&n)?]);
    let body = move |c: &[Array]| {
        let x = (&(&c[1].sin()? * &w)? + &(&c[1] * 0.5)?)?;
        Ok(vec![(&c[0] + 1)?, x])
    };
    let zero = a[2].zeros_like()?;
    Ok(vec![
        run(&keep_going, &body, &[zero, a[1].clone()])?.remove(1)
    ])
}

/// A counted loop whose trip count is an argument (so under `vmap` each element stops at
/// its own count). Forward mode only: reverse mode needs a bound (`bounded_while`).
pub fn while_loop(rng: &mut Rng, dt: DType) -> Option<Case> {
    let d = rng.size(1, 3);
    let f: Func = Rc::new(|a: &[Array]| counted_loop(a, lax_while));
    let args = vec![
        real(&[d], -1.5, 1.5),
        real(&[d], -2.0, 2.0),
        index(&[], 0, 4),
    ];
    Some(Case::new(format!("while [{d}]"), dt, f, args).grads(Grads::JvpOnly))
}

/// The same counted loop with a bound of 1 to 6 trips (the count, up to 7, sometimes
/// exceeds it) and a budget of 1 to 6 checkpoints: every carry kept, two levels, or more.
/// Both modes.
pub fn bounded_while(rng: &mut Rng, dt: DType) -> Option<Case> {
    let d = rng.size(1, 3);
    let opts = BoundedWhileOptions {
        max_steps: rng.size(1, 6),
        checkpoints: Some(rng.size(1, 6)),
    };
    let name = format!("bounded_while [{d}] {opts:?}");
    let f: Func = Rc::new(move |a: &[Array]| {
        counted_loop(a, |c, b, init| bounded_while_loop_with(c, b, init, &opts))
    });
    let args = vec![
        real(&[d], -1.5, 1.5),
        real(&[d], -2.0, 2.0),
        index(&[], 0, 8),
    ];
    Some(Case::new(name, dt, f, args))
}

pub fn stop_gradient(rng: &mut Rng, dt: DType) -> Option<Case> {
    let s = rng.dims(0, 2, 1, 3);
    let f: Func = Rc::new(|a: &[Array]| {
        let y = (&(&a[0] * &a[1])?.stop_gradient()? + &a[0].stop_gradient()?)?;
        Ok(vec![y])
    });
    let args = vec![real(&s, -2.0, 2.0), real(&s, -2.0, 2.0)];
    Some(Case::new("stop_gradient", dt, f, args).grads(Grads::Zero))
}

/// `psum` over a named `vmap` of the leading axis (shape `[n, ...]`): each row gets
/// `psum(x^2) * y`, so its value, derivatives and batching cover the collective's batching
/// rule and, through the gradients, its JVP and transpose.
pub fn named_axis(rng: &mut Rng, dt: DType) -> Option<Case> {
    let s = rng.dims(1, 2, 1, 3);
    let f: Func = Rc::new(|a: &[Array]| {
        let row = |b: &[Array]| Ok(vec![(&psum(&(&b[0] * &b[0])?, "rows")? * &b[1])?]);
        vmap_named(row, &[Some(0), Some(0)], &[Some(0)], "rows")(a)
    });
    let args = vec![real(&s, -2.0, 2.0), real(&s, -2.0, 2.0)];
    Some(Case::new(format!("named_axis {s:?}"), dt, f, args))
}

/// An effectful host call (as `debug.callback`) that reads a value the output is made of: the
/// call changes no value or derivative, and under `vmap` runs once per element.
pub fn host_callback(rng: &mut Rng, dt: DType) -> Option<Case> {
    let s = rng.dims(0, 2, 1, 3);
    let f: Func = Rc::new(|a: &[Array]| {
        let y = (&a[0] * &a[1])?;
        let seen =
            std::sync::Arc::new(|_: &[quabla_abi::HostView<'_>], _: &[quabla::TensorType]| {
                Ok(vec![])
            });
        let options = HostCallbackOptions {
            effectful: true,
            vmap: VmapMethod::Sequential,
            name: "debug.callback".into(),
        };
        call_host(seen, std::slice::from_ref(&y), &[], options)?;
        Ok(vec![(&y + &a[0])?])
    });
    let args = vec![real(&s, -2.0, 2.0), real(&s, -2.0, 2.0)];
    Some(Case::new("host_callback", dt, f, args))
}

pub fn custom_jvp(rng: &mut Rng, dt: DType) -> Option<Case> {
    let s = rng.dims(0, 2, 1, 3);
    let f: Func = Rc::new(with_jvp(
        |a: &[Array]| Ok(vec![(&a[0].sin()? * &a[1])?]),
        |p: &[Array], t: &[Array]| {
            let y = (&p[0].sin()? * &p[1])?;
            let dy = (&(&(&p[0].cos()? * &p[1])? * &t[0])? + &(&p[0].sin()? * &t[1])?)?;
            Ok((vec![y], vec![dy]))
        },
    ));
    let args = vec![real(&s, -2.0, 2.0), real(&s, -2.0, 2.0)];
    Some(Case::new("custom_jvp_call", dt, f, args))
}

pub fn custom_vjp(rng: &mut Rng, dt: DType) -> Option<Case> {
    let s = rng.dims(0, 2, 1, 3);
    let f: Func = Rc::new(with_vjp(
        |a: &[Array]| Ok(vec![(&a[0].exp()? * &a[1])?]),
        |a: &[Array]| {
            let e = a[0].exp()?;
            Ok((vec![(&e * &a[1])?], vec![e, a[1].clone()]))
        },
        |res: &[Array], ct: &[Array]| {
            Ok(vec![(&(&ct[0] * &res[0])? * &res[1])?, (&ct[0] * &res[0])?])
        },
    ));
    let args = vec![real(&s, -1.5, 1.5), real(&s, -2.0, 2.0)];
    Some(Case::new("custom_vjp_call", dt, f, args).grads(Grads::VjpOnly))
}

pub fn checkpoint(rng: &mut Rng, dt: DType) -> Option<Case> {
    let s = rng.dims(0, 2, 1, 3);
    let f: Func = Rc::new(remat(|a: &[Array]| {
        Ok(vec![(&(&a[0] * &a[1])?.tanh()? * &a[0])?])
    }));
    let args = vec![real(&s, -2.0, 2.0), real(&s, -2.0, 2.0)];
    Some(Case::new("checkpoint", dt, f, args))
}

/// Scans in every structural combination: forward and reverse, short (a stored tape) and
/// at least 64 steps (the sqrt(T) checkpointed tape, with a length that does not divide into
/// whole segments), one or two carries, zero to two `xs`, unrolled 1 to 3 steps. Draw `k`
/// takes variant `k mod 12` of (length, direction, number of xs), so twelve draws cover all.
pub fn scan(k: usize, rng: &mut Rng, dt: DType) -> Option<Case> {
    let variant = k % 12;
    let long = variant & 1 == 1;
    let length = if long {
        rng.size(64, 70)
    } else {
        rng.size(1, 6)
    };
    let reverse = variant & 2 == 2;
    let unroll = rng.size(1, 3);
    let ncar = rng.size(1, 2);
    let nxs = variant / 4;
    let d = rng.size(1, 3);
    let f: Func = Rc::new(move |a: &[Array]| {
        let w = a[0].clone();
        let body = move |c: &[Array], x: &[Array]| -> Result<(Vec<Array>, Vec<Array>)> {
            let mut drive = (&c[0] * &w)?;
            for xi in x {
                drive = (&drive + xi)?;
            }
            let head = drive.tanh()?;
            let mut carry = vec![head.clone()];
            if c.len() > 1 {
                carry.push((&(&c[1] * 0.9)? + &head.sin()?)?);
            }
            let y = (&head * &c[c.len() - 1])?;
            Ok((carry, vec![y]))
        };
        let (carry, ys) = lax_scan(
            &body,
            &a[1..1 + ncar],
            &a[1 + ncar..],
            Some(length),
            reverse,
            unroll,
        )?;
        Ok([carry, ys].concat())
    });
    let mut args = vec![real(&[d], -1.2, 1.2)];
    args.extend((0..ncar).map(|_| real(&[d], -1.0, 1.0)));
    args.extend((0..nxs).map(|_| real(&[length, d], -1.0, 1.0)));
    let name = format!(
        "scan length {length} reverse {reverse} unroll {unroll} carries {ncar} xs {nxs} [{d}]"
    );
    let case = Case::new(name, dt, f, args);
    if long && dt == DType::F32 {
        // Through 64+ nonlinear steps, f32's default step (1e-2) leaves a truncation error
        // of several percent; a smaller one trades it for rounding.
        Some(case.eps(2e-3).tol(5.0))
    } else {
        Some(case)
    }
}

/// `A x = b` through cg (symmetric positive definite `A`) or gmres, differentiated by the
/// implicit function theorem in `A` and `b`.
pub fn linear_solve(rng: &mut Rng, dt: DType) -> Option<Case> {
    let n = rng.size(2, 4);
    let use_cg = rng.coin();
    let tol = if dt == DType::F64 { 1e-13 } else { 1e-7 };
    let f: Func = Rc::new(move |a: &[Array]| {
        let m = if use_cg {
            shift_diag(&a[0].matmul(&a[0].t()?)?, n as f64)?
        } else {
            shift_diag(&a[0], n as f64)?
        };
        let op = dense(&m);
        let opts = SolveOptions {
            tol,
            restart: n,
            ..Default::default()
        };
        let (x, _info) = if use_cg {
            cg(&op, &a[1..], None, None, &opts)?
        } else {
            gmres(&op, &a[1..], None, None, &opts)?
        };
        Ok(x)
    });
    let args = vec![real(&[n, n], -1.0, 1.0), real(&[n], -2.0, 2.0)];
    let name = format!(
        "linear_solve by {} {n}x{n}",
        if use_cg { "cg" } else { "gmres" }
    );
    Some(Case::new(name, dt, f, args).tol(4.0).inexact())
}
