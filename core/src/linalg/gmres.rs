//! Restarted GMRES for general (non-symmetric) operators.

use super::vector::{flatten, unflatten};
use super::{info_from, LinearFn, SolveOptions};
use crate::array::Array;
use crate::error::Result;
use crate::ops::control_flow::{fori_loop, while_loop};
use crate::ops::linear_solve::linear_solve;
use crate::ops::Axes;
use quabla_abi::DType;

/// Solves `A x = b` by restarted GMRES, as `jax.scipy.sparse.linalg.gmres` with
/// `solve_method="incremental"`: Arnoldi with classical Gram-Schmidt applied twice and
/// Givens rotations, so the residual is known at every inner step and a cycle stops as soon
/// as it meets the tolerance. `restart` is the Krylov dimension of one cycle (default 20,
/// capped at `size(b)`); `maxiter` counts cycles (default `10·size(b)`); `m` is a left
/// preconditioner approximating `A⁻¹`. All parts of `b` must share one dtype.
///
/// Returns `(x, info)`: `info` is 0 when `‖b - A x‖ <= max(tol·‖b‖, atol)`, else the number
/// of cycles run. Derivatives solve the transposed system by GMRES on `Aᵀ` (implicit
/// function theorem); they compose and batch as for [`cg`](super::cg).
///
/// ```no_run
/// # use quabla::{linalg, Array};
/// let a = Array::from_slice(&[4.0f64, 1.0, -2.0, 3.0], &[2, 2])?;
/// let b = Array::from_slice(&[1.0f64, 2.0], &[2])?;
/// let (x, info) = linalg::gmres(&linalg::dense(&a), &[b], None, None, &Default::default())?;
/// # Ok::<(), quabla::Error>(())
/// ```
pub fn gmres(
    a: LinearFn,
    b: &[Array],
    x0: Option<&[Array]>,
    m: Option<LinearFn>,
    opts: &SolveOptions,
) -> Result<(Vec<Array>, Array)> {
    let solve =
        |a: LinearFn, b: &[Array], guess: Option<&[Array]>| -> Result<(Vec<Array>, Array)> {
            let x0 = match guess {
                Some(x) => flatten(&super::check_guess(x, b)?)?,
                None => flatten(b)?.zeros_like()?,
            };
            let flat_a = |v: &Array| flatten(&a(&unflatten(v, b)?)?);
            let flat_m = |v: &Array| match m {
                Some(m) => flatten(&m(&unflatten(v, b)?)?),
                None => Ok(v.clone()),
            };
            let (x, info) = cycles(&flat_a, &flat_m, &flatten(b)?, &x0, opts)?;
            Ok((unflatten(&x, b)?, info))
        };
    linear_solve(
        a,
        b,
        &|a: LinearFn, b: &[Array]| solve(a, b, x0),
        // The transposed system gets no guess: x0 approximates the primal solution only.
        Some(&|a: LinearFn, b: &[Array]| solve(a, b, None)),
    )
}

type FlatFn<'a> = &'a dyn Fn(&Array) -> Result<Array>;

fn norm(v: &Array) -> Result<Array> {
    (v * v)?.sum(Axes::All, false)?.sqrt()
}

/// Restart cycles until the true residual meets the tolerance.
fn cycles(
    a: FlatFn,
    m: FlatFn,
    b: &Array,
    x0: &Array,
    opts: &SolveOptions,
) -> Result<(Array, Array)> {
    let size = b.size();
    let restart = opts.restart.clamp(1, size.max(1));
    let maxiter = opts.maxiter.unwrap_or(10 * size.max(1)) as i32;
    let atol = super::tolerance(std::slice::from_ref(b), opts)?;
    let residual = |x: &Array| norm(&(b - &a(x)?)?);
    let k0 = b.filled_beside(&[], 0, DType::I32)?;
    let init = vec![x0.clone(), residual(x0)?, k0];
    let keep_going = |c: &[Array]| Ok(vec![c[1].gt(&atol)?.bitwise_and(&c[2].lt(maxiter)?)?]);
    let step = |c: &[Array]| {
        let x = cycle(a, m, b, &c[0], restart, &atol)?;
        let r = residual(&x)?;
        Ok(vec![x, r, (&c[2] + 1)?])
    };
    let out = while_loop(&keep_going, &step, &init)?;
    let info = info_from(&out[1].le(&atol)?, &out[2])?;
    Ok((out[0].clone(), info))
}

/// Entry `i` of a 1-D array, as a scalar.
fn at(v: &Array, i: &Array) -> Result<Array> {
    v.dynamic_slice(&[i], &[1])?.reshape(&[])
}

/// `v` with entry `i` set to the scalar `value`.
fn set(v: &Array, i: &Array, value: &Array) -> Result<Array> {
    v.dynamic_update_slice(&value.reshape(&[1])?, &[i])
}

/// One GMRES cycle of at most `restart` Arnoldi steps from `x`; returns the new `x`.
fn cycle(
    a: FlatFn,
    m: FlatFn,
    b: &Array,
    x: &Array,
    restart: usize,
    atol: &Array,
) -> Result<Array> {
    let n = b.size();
    let dtype = b.dtype();
    let r = m(&(b - &a(x)?)?)?;
    let beta = norm(&r)?;
    let safe = |d: &Array| -> Result<Array> { d.eq(0.0)?.select(&d.full_like(1.0)?, d) };
    let basis = b
        .filled_beside(&[restart + 1, n], 0, dtype)?
        .dynamic_update_slice(
            &(&r / &safe(&beta)?)?.reshape(&[1, n as isize])?,
            &[
                &b.filled_beside(&[], 0, DType::I32)?,
                &b.filled_beside(&[], 0, DType::I32)?,
            ],
        )?;
    let zero_i = b.filled_beside(&[], 0, DType::I32)?;
    // carry: j, V [restart+1, n], R [restart+1, restart], cs [restart], sn [restart], g [restart+1]
    let g0 = set(&b.filled_beside(&[restart + 1], 0, dtype)?, &zero_i, &beta)?;
    let init = vec![
        zero_i.clone(),
        basis,
        b.filled_beside(&[restart + 1, restart], 0, dtype)?,
        b.filled_beside(&[restart], 0, dtype)?,
        b.filled_beside(&[restart], 0, dtype)?,
        g0,
    ];
    let keep_going = |c: &[Array]| {
        let more = c[0].lt(restart as i32)?;
        let resid = at(&c[5], &c[0])?.abs()?;
        Ok(vec![more.bitwise_and(&resid.gt(atol)?)?])
    };
    let arnoldi = |c: &[Array]| {
        let (j, v, rmat, cs, sn, g) = (&c[0], &c[1], &c[2], &c[3], &c[4], &c[5]);
        let vj = v
            .dynamic_slice(&[j, &zero_i], &[1, n])?
            .reshape(&[n as isize])?;
        let mut w = m(&a(&vj)?)?;
        // Rows of V past j are zero, so V w projects on the basis built so far.
        let mut h = b.filled_beside(&[restart + 1], 0, dtype)?;
        for _ in 0..2 {
            let hk = v.matmul(&w)?;
            w = (&w - &hk.matmul(v)?)?;
            h = (&h + &hk)?;
        }
        let next = (j + 1)?;
        let wn = norm(&w)?;
        let v = v.dynamic_update_slice(
            &(&w / &safe(&wn)?)?.reshape(&[1, n as isize])?,
            &[&next, &zero_i],
        )?;
        let col = set(&h, &next, &wn)?;
        // Earlier rotations, in order, then a new one that zeroes entry j+1.
        let rotate = |i: &Array, c: &[Array]| -> Result<Vec<Array>> {
            let col = &c[0];
            let (ci, si) = (at(cs, i)?, at(sn, i)?);
            let i1 = (i + 1)?;
            let (u, w) = (at(col, i)?, at(col, &i1)?);
            let top = (&(&ci * &u)? + &(&si * &w)?)?;
            let bottom = (&(&ci * &w)? - &(&si * &u)?)?;
            Ok(vec![set(&set(col, i, &top)?, &i1, &bottom)?])
        };
        let col = fori_loop(&zero_i, j, &rotate, &[col])?.remove(0);
        let (u, w) = (at(&col, j)?, at(&col, &next)?);
        let rho = (&(&u * &u)? + &(&w * &w)?)?.sqrt()?;
        let (c, s) = ((&u / &safe(&rho)?)?, (&w / &safe(&rho)?)?);
        let c = rho.eq(0.0)?.select(&c.full_like(1.0)?, &c)?;
        let col = set(&set(&col, j, &rho)?, &next, &rho.zeros_like()?)?;
        let gj = at(g, j)?;
        let g = set(&set(g, j, &(&c * &gj)?)?, &next, &(&s * &gj)?.neg()?)?;
        let rmat =
            rmat.dynamic_update_slice(&col.reshape(&[(restart + 1) as isize, 1])?, &[&zero_i, j])?;
        Ok(vec![next, v, rmat, set(cs, j, &c)?, set(sn, j, &s)?, g])
    };
    let out = while_loop(&keep_going, &arnoldi, &init)?;
    let (steps, v, rmat, g) = (&out[0], &out[1], &out[2], &out[5]);
    // Back substitution on the steps taken; rows past them get a unit diagonal and a zero
    // right-hand side, so their unknowns come out zero.
    let rows = b.iota_beside(DType::I32, &[restart], 0)?;
    let used = rows.lt(steps)?;
    let eye = b
        .iota_beside(DType::I32, &[restart, restart], 0)?
        .eq(&b.iota_beside(DType::I32, &[restart, restart], 1)?)?;
    let square = rmat.slice(&[0, 0], &[restart, restart], &[1, 1])?;
    let unused_diag = eye.bitwise_and(
        &used
            .logical_not()?
            .broadcast_in_dim(&[restart, restart], &[0])?,
    )?;
    let square = unused_diag.select(&square.full_like(1.0)?, &square)?;
    let rhs = used.select(
        &g.slice(&[0], &[restart], &[1])?,
        &rows.astype(dtype)?.zeros_like()?,
    )?;
    let back = |k: &Array, c: &[Array]| -> Result<Vec<Array>> {
        let i = (&(-k)? + (restart as i32 - 1))?;
        let row = square
            .dynamic_slice(&[&i, &zero_i], &[1, restart])?
            .reshape(&[restart as isize])?;
        let yi = (&(&at(&rhs, &i)? - &(&row * &c[0])?.sum(Axes::All, false)?)? / &at(&row, &i)?)?;
        Ok(vec![set(&c[0], &i, &yi)?])
    };
    let y = fori_loop(0, restart as i32, &back, &[rhs.zeros_like()?])?.remove(0);
    let vm = v.slice(&[0, 0], &[restart, n], &[1, 1])?;
    x + &y.matmul(&vm)?
}
