//! Conjugate gradients for symmetric positive definite operators.

use super::vector::{axpy, sub, vdot};
use super::{info_from, LinearFn, SolveOptions};
use crate::array::Array;
use crate::error::Result;
use crate::ops::control_flow::while_loop;
use crate::ops::linear_solve::linear_solve;

/// Solves `A x = b` by conjugate gradients, as `jax.scipy.sparse.linalg.cg`: `A` must be
/// symmetric positive definite, given as a function `v -> A v` over a list of arrays (use
/// [`dense`](super::dense) for a matrix). Stops when `‖r‖ <= max(tol·‖b‖, atol)` or after
/// `maxiter` iterations (default `10·size(b)`). `m` is a preconditioner approximating `A⁻¹`.
///
/// Returns `(x, info)` with `info` an i32 scalar: 0 when converged, else the number of
/// iterations run (scipy's convention). Derivatives with respect to `b` and to the values
/// `a` closes over come from the implicit function theorem (one more solve), never from
/// the iterations; they compose to any order and batch under `vmap` (each element stops at
/// its own tolerance).
///
/// ```no_run
/// # use quabla::{linalg, Array};
/// let a = Array::from_slice(&[4.0f64, 1.0, 1.0, 3.0], &[2, 2])?;
/// let b = Array::from_slice(&[1.0f64, 2.0], &[2])?;
/// let (x, info) = linalg::cg(&linalg::dense(&a), &[b], None, None, &Default::default())?;
/// # Ok::<(), quabla::Error>(())
/// ```
pub fn cg(
    a: LinearFn,
    b: &[Array],
    x0: Option<&[Array]>,
    m: Option<LinearFn>,
    opts: &SolveOptions,
) -> Result<(Vec<Array>, Array)> {
    let solve = |a: LinearFn, b: &[Array]| -> Result<(Vec<Array>, Array)> {
        let n = b.len();
        let size: usize = b.iter().map(Array::size).sum();
        let maxiter = opts.maxiter.unwrap_or(10 * size.max(1)) as i32;
        let precondition = |r: &[Array]| -> Result<Vec<Array>> {
            match m {
                Some(m) => m(r),
                None => Ok(r.to_vec()),
            }
        };
        let atol = super::tolerance(b, opts)?;
        let atol2 = (&atol * &atol)?;
        let x0: Vec<Array> = match x0 {
            Some(x) => super::check_guess(x, b)?,
            None => b.iter().map(Array::zeros_like).collect::<Result<_>>()?,
        };
        let r0 = sub(b, &a(&x0)?)?;
        let z0 = precondition(&r0)?;
        let gamma0 = vdot(&r0, &z0)?;
        let k0 = gamma0.filled_beside(&[], 0, quabla_abi::DType::I32)?;
        // carry: x, r, p, gamma, k
        let init = [x0, r0, z0, vec![gamma0, k0]].concat();
        // `‖r‖²`: without a preconditioner `z = r`, so it is the carried `gamma = r·z`, the
        // same operations on the same values (as JAX's `cg` does); recomputing it cost one
        // more pass over `r` and one more reduction per iteration (a third of each
        // iteration's reductions).
        let residual_sq = |r: &[Array], gamma: &Array| -> Result<Array> {
            match m {
                Some(_) => vdot(r, r),
                None => Ok(gamma.clone()),
            }
        };
        let keep_going = |c: &[Array]| {
            let rs = residual_sq(&c[n..2 * n], &c[3 * n])?;
            Ok(vec![rs
                .gt(&atol2)?
                .bitwise_and(&c[3 * n + 1].lt(maxiter)?)?])
        };
        let step = |c: &[Array]| {
            let (x, r, p) = (&c[..n], &c[n..2 * n], &c[2 * n..3 * n]);
            let (gamma, k) = (&c[3 * n], &c[3 * n + 1]);
            let ap = a(p)?;
            let alpha = (gamma / &vdot(p, &ap)?)?;
            let x = axpy(x, &alpha, p)?;
            let r = axpy(r, &alpha.neg()?, &ap)?;
            let z = precondition(&r)?;
            let gamma_next = vdot(&r, &z)?;
            let beta = (&gamma_next / gamma)?;
            let p = axpy(&z, &beta, p)?;
            Ok([x, r, p, vec![gamma_next, (k + 1)?]].concat())
        };
        let out = while_loop(&keep_going, &step, &init)?;
        let rs = residual_sq(&out[n..2 * n], &out[3 * n])?;
        let info = info_from(&rs.le(&atol2)?, &out[3 * n + 1])?;
        Ok((out[..n].to_vec(), info))
    };
    linear_solve(a, b, &solve, None)
}
