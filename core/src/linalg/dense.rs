//! numpy.linalg / scipy.linalg compositions over the linalg primitives: solve, cho_solve,
//! solve_triangular, det, slogdet, inv, lstsq, pinv, norm, matrix_power, cond, and the
//! symmetrizing `cholesky`/`eigh` JAX's `jnp.linalg` exposes. Matrices are the last two
//! axes; leading axes batch. Singular input follows numpy/LAPACK arithmetic: `solve` and
//! `inv` of a singular matrix give inf/NaN rather than an error, `det` gives 0.

use crate::array::Array;
use crate::error::{Error, Result};
use crate::ops::linalg::{
    cholesky_lower, diag_matrix, diagonal, eigh_lower, lu, mt, permute_rows, singular_values, svd,
    triangular_solve, Svd, Triangular,
};
use crate::ops::Axes;
use quabla_abi::DType;

fn square(a: &Array, what: &str) -> Result<usize> {
    let r = a.ndim();
    if r < 2 || a.shape()[r - 1] != a.shape()[r - 2] || !a.dtype().is_float() {
        return Err(Error::Shape(format!(
            "{what} needs square float matrices in the last two axes, got {}",
            a.tensor_type()
        )));
    }
    Ok(a.shape()[r - 1])
}

/// `(a + aᵀ)/2`, so that derivatives of symmetric-input functions are symmetric (JAX's
/// `symmetrize_input`).
fn symmetrize(a: &Array) -> Result<Array> {
    &(a + &mt(a)?)? * 0.5
}

/// The lower Cholesky factor of the symmetric part of `a`, as `jnp.linalg.cholesky`: NaN
/// where `a` is not positive definite (see [`cholesky_checked`]).
///
/// ```no_run
/// # use quabla::{linalg, Array};
/// let a = Array::from_slice(&[4.0f64, 2.0, 2.0, 3.0], &[2, 2])?;
/// let l = linalg::cholesky(&a)?; // [[2, 0], [1, 1.414...]]
/// # Ok::<(), quabla::Error>(())
/// ```
pub fn cholesky(a: &Array) -> Result<Array> {
    square(a, "cholesky")?;
    cholesky_lower(&symmetrize(a)?)
}

/// [`cholesky`] that fails with an error naming the problem when `a` is not positive
/// definite. The check reads the result, so `a` must be concrete (outside `jit`/`grad`
/// traces); inside traces use [`cholesky`] and test for NaN.
///
/// ```no_run
/// # use quabla::{linalg, Array};
/// let not_pd = Array::from_slice(&[1.0f64, 2.0, 2.0, 1.0], &[2, 2])?;
/// assert!(linalg::cholesky_checked(&not_pd).is_err());
/// # Ok::<(), quabla::Error>(())
/// ```
pub fn cholesky_checked(a: &Array) -> Result<Array> {
    let l = cholesky(a)?;
    if l.is_traced() {
        return Err(Error::Value(
            "cholesky_checked needs a concrete matrix: it reads the factor to check it; inside a traced function use cholesky and test for NaN".into(),
        ));
    }
    let bad = l.is_finite()?.logical_not()?.any(Axes::All, false)?;
    if bad.item::<bool>()? {
        return Err(Error::LinAlg(
            "cholesky: the matrix is not (numerically) symmetric positive definite".into(),
        ));
    }
    Ok(l)
}

/// Eigenvalues (ascending) and eigenvectors (columns) of the symmetric part of `a`, as
/// `jnp.linalg.eigh`.
///
/// ```no_run
/// # use quabla::{linalg, Array};
/// let a = Array::from_slice(&[2.0f64, 1.0, 1.0, 2.0], &[2, 2])?;
/// let (w, v) = linalg::eigh(&a)?; // w = [1, 3]
/// # Ok::<(), quabla::Error>(())
/// ```
pub fn eigh(a: &Array) -> Result<(Array, Array)> {
    square(a, "eigh")?;
    eigh_lower(&symmetrize(a)?)
}

/// How a right-hand side `b` reads against the matrices of `a`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Rhs {
    /// numpy 2's `solve` (and JAX's): `b` of one axis is a vector, otherwise matrices.
    Numpy2,
    /// JAX's scipy functions: the same, except that `b` of one axis fewer than `a` whose
    /// last axis fits is still a stack of vectors (numpy 1's reading, deprecated in JAX).
    Scipy,
}

/// A right-hand side as matrices broadcast to the batch axes it shares with `a`.
struct Operands {
    /// The broadcast batch axes of `a` and `b`.
    batch: Vec<usize>,
    /// `b` as `batch + [m, k]`.
    b: Array,
    /// `b` was a vector (or a stack of them): the result drops its last axis.
    vector: bool,
}

fn rhs(a: &Array, b: &Array, rule: Rhs, what: &str) -> Result<Operands> {
    let m = square(a, what)?;
    let (bm, vector) = match b.ndim() {
        0 => {
            return Err(Error::Value(format!(
                "{what}: b must be a vector or a stack of matrices, got a scalar"
            )))
        }
        1 => (b.expand_dims(-1)?, true),
        n if rule == Rhs::Scipy && n + 1 == a.ndim() && b.shape()[n - 1] == m => {
            (b.expand_dims(-1)?, true)
        }
        _ => (b.clone(), false),
    };
    let rows = bm.shape()[bm.ndim() - 2];
    if rows != m {
        // numpy before 2 read a b of one axis fewer than a as a stack of vectors.
        let hint = if rule == Rhs::Numpy2 && !vector && b.ndim() + 1 == a.ndim() {
            "; if b is a stack of vectors, solve(a, b[..., None])[..., 0] (numpy 2 treats b \
             of two or more axes as matrices)"
        } else {
            ""
        };
        return Err(Error::Value(format!(
            "{what}: b {} has {rows} rows where a's matrices are {m}x{m}{hint}",
            b.tensor_type()
        )));
    }
    let batch = crate::ops::elementwise::broadcast_shapes(
        &a.shape()[..a.ndim() - 2],
        &bm.shape()[..bm.ndim() - 2],
    )
    .map_err(|_| {
        Error::Value(format!(
            "{what}: the batch axes of a {} and b {} do not broadcast",
            a.tensor_type(),
            b.tensor_type()
        ))
    })?;
    let k = bm.shape()[bm.ndim() - 1];
    let b = bm.broadcast_to(&[batch.as_slice(), &[m, k]].concat())?;
    Ok(Operands { batch, b, vector })
}

/// `x` broadcast to `batch` followed by its own last `tail` axes.
fn to_batch(x: &Array, batch: &[usize], tail: usize) -> Result<Array> {
    x.broadcast_to(&[batch, &x.shape()[x.ndim() - tail..]].concat())
}

/// `x` without the given (size-1) axes.
fn drop_axes(x: &Array, axes: &[isize]) -> Result<Array> {
    let shape: Vec<isize> = (0..x.ndim())
        .filter(|&i| !axes.contains(&(i as isize)))
        .map(|i| x.shape()[i] as isize)
        .collect();
    x.reshape(&shape)
}

fn restore(x: Array, was_vector: bool) -> Result<Array> {
    if was_vector {
        drop_axes(&x, &[x.ndim() as isize - 1])
    } else {
        Ok(x)
    }
}

/// Solves `a x = b` by LU with partial pivoting, as `numpy.linalg.solve` in numpy 2 (and
/// JAX): `b` of one axis is a vector, solved against every matrix of `a`; otherwise `b`
/// holds matrices in its last two axes, and the leading (batch) axes of `a` and `b`
/// broadcast. A stack of vectors is `solve(a, b[..., None])[..., 0]`.
///
/// ```no_run
/// # use quabla::{linalg, Array};
/// let a = Array::from_slice(&[3.0f64, 1.0, 1.0, 2.0], &[2, 2])?;
/// let b = Array::from_slice(&[9.0f64, 8.0], &[2])?;
/// let x = linalg::solve(&a, &b)?; // [2, 3]
/// # Ok::<(), quabla::Error>(())
/// ```
pub fn solve(a: &Array, b: &Array) -> Result<Array> {
    let ops = rhs(a, b, Rhs::Numpy2, "solve")?;
    // Factor each matrix of a once, then broadcast the factors.
    let (f, _, perm) = lu(a)?;
    let f = to_batch(&f, &ops.batch, 2)?;
    let perm = to_batch(&perm, &ops.batch, 1)?;
    restore(lu_solve_matrices(&f, &perm, &ops.b)?, ops.vector)
}

/// Solves `a x = b` from `lu(a)`'s factors (`lu` and `permutation`), as
/// `scipy.linalg.lu_solve`: factor once, solve many times.
///
/// ```no_run
/// # use quabla::{linalg, Array};
/// let a = Array::from_slice(&[3.0f64, 1.0, 1.0, 2.0], &[2, 2])?;
/// let (f, _, perm) = linalg::lu(&a)?;
/// let x = linalg::lu_solve(&f, &perm, &Array::from_slice(&[9.0f64, 8.0], &[2])?)?; // [2, 3]
/// # Ok::<(), quabla::Error>(())
/// ```
pub fn lu_solve(lu: &Array, permutation: &Array, b: &Array) -> Result<Array> {
    let ops = rhs(lu, b, Rhs::Scipy, "lu_solve")?;
    let f = to_batch(lu, &ops.batch, 2)?;
    let perm = to_batch(permutation, &ops.batch, 1)?;
    restore(lu_solve_matrices(&f, &perm, &ops.b)?, ops.vector)
}

/// The two triangular solves of an LU solve, on operands of one batch shape.
fn lu_solve_matrices(lu: &Array, permutation: &Array, b: &Array) -> Result<Array> {
    let unit_lower = Triangular {
        unit_diagonal: true,
        ..Default::default()
    };
    let y = triangular_solve(lu, &permute_rows(permutation, b)?, unit_lower)?;
    let upper = Triangular {
        lower: false,
        ..Default::default()
    };
    triangular_solve(lu, &y, upper)
}

/// Solves `a x = b` given the Cholesky factor `c` of `a` (`lower` as made by [`cholesky`]),
/// as `scipy.linalg.cho_solve`.
///
/// ```no_run
/// # use quabla::{linalg, Array};
/// let a = Array::from_slice(&[4.0f64, 2.0, 2.0, 3.0], &[2, 2])?;
/// let b = Array::from_slice(&[1.0f64, 2.0], &[2])?;
/// let c = linalg::cholesky(&a)?; // lower
/// let x = linalg::cho_solve(&c, true, &b)?; // a x = b
/// # Ok::<(), quabla::Error>(())
/// ```
pub fn cho_solve(c: &Array, lower: bool, b: &Array) -> Result<Array> {
    let ops = rhs(c, b, Rhs::Scipy, "cho_solve")?;
    let c = &to_batch(c, &ops.batch, 2)?;
    let (bm, vector) = (ops.b, ops.vector);
    let first = Triangular {
        lower,
        transpose_a: !lower,
        ..Default::default()
    };
    let second = Triangular {
        lower,
        transpose_a: lower,
        ..Default::default()
    };
    let y = triangular_solve(c, &bm, first)?;
    restore(triangular_solve(c, &y, second)?, vector)
}

/// `scipy.linalg.solve_triangular`: `op(a) x = b` with `a` lower or upper triangular,
/// `op` the transpose when `trans`.
///
/// ```no_run
/// # use quabla::{linalg, Array};
/// let l = Array::from_slice(&[2.0f64, 0.0, 1.0, 1.0], &[2, 2])?;
/// let b = Array::from_slice(&[2.0f64, 3.0], &[2])?;
/// let x = linalg::solve_triangular(&l, &b, true, false, false)?; // [1, 2]
/// # Ok::<(), quabla::Error>(())
/// ```
pub fn solve_triangular(
    a: &Array,
    b: &Array,
    lower: bool,
    trans: bool,
    unit_diagonal: bool,
) -> Result<Array> {
    let ops = rhs(a, b, Rhs::Scipy, "solve_triangular")?;
    let a = &to_batch(a, &ops.batch, 2)?;
    let (bm, vector) = (ops.b, ops.vector);
    let how = Triangular {
        left_side: true,
        lower,
        transpose_a: trans,
        unit_diagonal,
    };
    restore(triangular_solve(a, &bm, how)?, vector)
}

/// The sign of the permutation made by LU's row swaps: (-1)^(swaps that moved a row).
fn pivot_sign(pivots: &Array, like: &Array) -> Result<Array> {
    let idx = pivots.iota_beside(DType::I32, pivots.shape(), pivots.ndim() - 1)?;
    let swaps = pivots
        .ne(&idx)?
        .astype(DType::I32)?
        .sum(Axes::Some(&[-1]), false)?;
    let odd = swaps.bitwise_and(1)?.eq(1)?;
    let one = like.full_like(1.0)?.broadcast_to(odd.shape())?;
    odd.select(&one.neg()?, &one)
}

/// `(sign, log|det a|)`, as `numpy.linalg.slogdet`.
///
/// ```no_run
/// # use quabla::{linalg, Array};
/// let a = Array::from_slice(&[0.0f64, 2.0, 3.0, 0.0], &[2, 2])?;
/// let (sign, logabs) = linalg::slogdet(&a)?; // -1, ln 6
/// # Ok::<(), quabla::Error>(())
/// ```
pub fn slogdet(a: &Array) -> Result<(Array, Array)> {
    square(a, "slogdet")?;
    let (f, piv, _) = lu(a)?;
    let d = diagonal(&f)?;
    let scalar_like = d.sum(Axes::Some(&[-1]), false)?;
    let sign_d = d.sign()?.prod(Axes::Some(&[-1]), false)?;
    let sign = (&pivot_sign(&piv, &scalar_like)? * &sign_d)?;
    let logabs = d.abs()?.log()?.sum(Axes::Some(&[-1]), false)?;
    Ok((sign, logabs))
}

/// `det a`, as `numpy.linalg.det` (0 for singular matrices).
///
/// ```no_run
/// # use quabla::{linalg, Array};
/// let a = Array::from_slice(&[1.0f64, 2.0, 3.0, 4.0], &[2, 2])?;
/// let d = linalg::det(&a)?; // -2
/// # Ok::<(), quabla::Error>(())
/// ```
pub fn det(a: &Array) -> Result<Array> {
    square(a, "det")?;
    let (f, piv, _) = lu(a)?;
    let d = diagonal(&f)?;
    let p = d.prod(Axes::Some(&[-1]), false)?;
    &pivot_sign(&piv, &p)? * &p
}

/// Identity matrices shaped like `a`.
fn identity_like(a: &Array) -> Result<Array> {
    crate::ops::linalg::eye_mask(a)?.astype(a.dtype())
}

/// `a⁻¹`, as `numpy.linalg.inv`.
///
/// ```no_run
/// # use quabla::{linalg, Array};
/// let a = Array::from_slice(&[2.0f64, 0.0, 0.0, 4.0], &[2, 2])?;
/// let ai = linalg::inv(&a)?; // diag(0.5, 0.25)
/// # Ok::<(), quabla::Error>(())
/// ```
pub fn inv(a: &Array) -> Result<Array> {
    square(a, "inv")?;
    solve(a, &identity_like(a)?)
}

/// The default cutoff of small singular values: `10·max(m, n)·eps`, as JAX.
fn default_rcond(a: &Array) -> f64 {
    let r = a.ndim();
    let mn = a.shape()[r - 1].max(a.shape()[r - 2]) as f64;
    10.0 * mn * crate::ops::machine_eps(a.dtype())
}

/// Singular values below `rcond·max(s)` count as zero.
fn inverted_singular_values(s: &Array, rcond: f64) -> Result<Array> {
    let cutoff = (&s.max(Axes::Some(&[-1]), true)? * rcond)?;
    let keep = s.gt(&cutoff)?;
    let safe = keep.select(s, &s.ones_like()?)?;
    keep.select(&(&safe.ones_like()? / &safe)?, &s.zeros_like()?)
}

/// The Moore-Penrose pseudo-inverse by SVD, as `numpy.linalg.pinv` (`rcond` default
/// `10·max(m, n)·eps`).
///
/// ```no_run
/// # use quabla::{linalg, Array};
/// let a = Array::from_slice(&[1.0f64, 2.0, 2.0, 4.0], &[2, 2])?; // rank 1
/// let p = linalg::pinv(&a, None)?;
/// # Ok::<(), quabla::Error>(())
/// ```
pub fn pinv(a: &Array, rcond: Option<f64>) -> Result<Array> {
    if a.ndim() < 2 || !a.dtype().is_float() {
        return Err(Error::DType(format!(
            "pinv needs float matrices, got {}",
            a.tensor_type()
        )));
    }
    let Svd { u, s, vt } = svd(a, false)?;
    let sinv = inverted_singular_values(&s, rcond.unwrap_or_else(|| default_rcond(a)))?;
    mt(&vt)?.matmul(&diag_matrix(&sinv)?.matmul(&mt(&u)?)?)
}

/// A least-squares solution and its diagnostics, as `numpy.linalg.lstsq`.
#[derive(Clone)]
pub struct Lstsq {
    /// The minimum-norm solution.
    pub x: Array,
    /// Squared residual norms per column of `b` (empty when `rank < n` or `m <= n`).
    pub residuals: Array,
    /// Singular values above the cutoff (i32).
    pub rank: Array,
    pub s: Array,
}

/// `min ‖a x - b‖` by SVD (minimum norm when rank deficient), as `numpy.linalg.lstsq`.
///
/// ```no_run
/// # use quabla::{linalg, Array};
/// // The line through (0, 1), (1, 3), (2, 5): intercept 1, slope 2.
/// let a = Array::from_slice(&[1.0f64, 0.0, 1.0, 1.0, 1.0, 2.0], &[3, 2])?;
/// let y = Array::from_slice(&[1.0f64, 3.0, 5.0], &[3])?;
/// let fit = linalg::lstsq(&a, &y, None)?;
/// println!("{} (rank {})", fit.x, fit.rank);
/// # Ok::<(), quabla::Error>(())
/// ```
pub fn lstsq(a: &Array, b: &Array, rcond: Option<f64>) -> Result<Lstsq> {
    if a.ndim() != 2 || !a.dtype().is_float() {
        return Err(Error::DType(format!(
            "lstsq needs one float matrix, got {}",
            a.tensor_type()
        )));
    }
    let (bm, vector) = if b.ndim() == 1 {
        (b.expand_dims(-1)?, true)
    } else {
        (b.clone(), false)
    };
    let (m, n) = (a.shape()[0], a.shape()[1]);
    let Svd { u, s, vt } = svd(a, false)?;
    let rc = rcond.unwrap_or_else(|| default_rcond(a));
    let sinv = inverted_singular_values(&s, rc)?;
    let x = mt(&vt)?.matmul(&(&sinv.expand_dims(-1)? * &mt(&u)?.matmul(&bm)?)?)?;
    let cutoff = (&s.max(Axes::All, false)? * rc)?;
    let rank = s.gt(&cutoff)?.astype(DType::I32)?.sum(Axes::All, false)?;
    let full_rank = !rank.is_traced() && rank.item::<i32>()? as usize == n;
    let residuals = if m > n && full_rank {
        let r = (&a.matmul(&x)? - &bm)?;
        (&r * &r)?.sum(Axes::Some(&[0]), false)?
    } else {
        x.filled_beside(&[0], 0, a.dtype())?
    };
    Ok(Lstsq {
        x: restore(x, vector)?,
        residuals,
        rank,
        s,
    })
}

/// The order of a [`norm`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum NormOrd {
    /// 2-norm of vectors, Frobenius norm of matrices (numpy's `ord=None`).
    Default,
    /// `p`-norm of vectors (`0` counts non-zeros); for matrices `1`, `-1`, `2`, `-2`.
    P(f64),
    Inf,
    NegInf,
    Fro,
    Nuc,
}

/// Vector or matrix norms, as `numpy.linalg.norm`: `axis` names one axis (vector norms) or
/// two (matrix norms); without `axis`, `Default` is the 2-norm of all elements and other
/// orders treat a 1-D array as a vector and a 2-D array as a matrix.
///
/// ```no_run
/// # use quabla::{linalg::{self, NormOrd}, Array};
/// let v = Array::from_slice(&[3.0f64, -4.0], &[2])?;
/// let n = linalg::norm(&v, NormOrd::Inf, None, false)?; // 4
/// # Ok::<(), quabla::Error>(())
/// ```
pub fn norm(x: &Array, ord: NormOrd, axis: Option<&[isize]>, keepdims: bool) -> Result<Array> {
    if !x.dtype().is_float() {
        return Err(Error::DType(format!(
            "norm needs a float array, got {}",
            x.tensor_type()
        )));
    }
    let norm_axes: Vec<isize> = match axis {
        Some(a) => a.to_vec(),
        None if ord == NormOrd::Default => {
            let all = (x * x)?.sum(Axes::All, keepdims)?.sqrt()?;
            return Ok(all);
        }
        None => (0..x.ndim() as isize).collect(),
    };
    let abs = x.abs()?;
    match norm_axes.len() {
        1 => {
            let ax = Axes::Some(&norm_axes);
            match ord {
                NormOrd::Default => (x * x)?.sum(ax, keepdims)?.sqrt(),
                NormOrd::Inf => abs.max(ax, keepdims),
                NormOrd::NegInf => abs.min(ax, keepdims),
                NormOrd::P(0.0) => x.ne(0.0)?.astype(x.dtype())?.sum(ax, keepdims),
                NormOrd::P(1.0) => abs.sum(ax, keepdims),
                NormOrd::P(2.0) => (x * x)?.sum(ax, keepdims)?.sqrt(),
                NormOrd::P(p) => {
                    let s = abs.pow(&abs.full_like(p)?)?.sum(ax, keepdims)?;
                    s.pow(&s.full_like(1.0 / p)?)
                }
                NormOrd::Fro | NormOrd::Nuc => Err(Error::Value(
                    "norm: 'fro' and 'nuc' are matrix norms; pass two axes".into(),
                )),
            }
        }
        2 => {
            let r = x.ndim() as isize;
            let (mut a0, mut a1) = (norm_axes[0], norm_axes[1]);
            if a0 < 0 {
                a0 += r;
            }
            if a1 < 0 {
                a1 += r;
            }
            if a0 == a1 || a0 < 0 || a1 < 0 || a0 >= r || a1 >= r {
                return Err(Error::Shape(format!(
                    "norm: bad matrix axes {norm_axes:?} for rank {r}"
                )));
            }
            let both = [a0, a1];
            let reduce_pair =
                |v: &Array, first: isize, second: isize, take_max: bool| -> Result<Array> {
                    // Sum over `first`, then max/min over `second` (indices shift after the sum).
                    let s = v.sum(Axes::Some(&[first]), true)?;
                    let m = if take_max {
                        s.max(Axes::Some(&[second]), true)?
                    } else {
                        s.min(Axes::Some(&[second]), true)?
                    };
                    if keepdims {
                        Ok(m)
                    } else {
                        drop_axes(&m, &both)
                    }
                };
            match ord {
                NormOrd::Default | NormOrd::Fro => {
                    (x * x)?.sum(Axes::Some(&both), keepdims)?.sqrt()
                }
                NormOrd::P(1.0) => reduce_pair(&abs, a0, a1, true),
                NormOrd::P(-1.0) => reduce_pair(&abs, a0, a1, false),
                NormOrd::Inf => reduce_pair(&abs, a1, a0, true),
                NormOrd::NegInf => reduce_pair(&abs, a1, a0, false),
                NormOrd::Nuc | NormOrd::P(_) => {
                    let p = match ord {
                        NormOrd::P(p) => p,
                        _ => 0.0,
                    };
                    if !(ord == NormOrd::Nuc || p == 2.0 || p == -2.0) {
                        return Err(Error::Value(format!("norm: matrix order {p} is not supported; use 1, -1, 2, -2, inf, -inf, 'fro' or 'nuc'")));
                    }
                    // Move the two axes last, then reduce the singular values.
                    let mut perm: Vec<usize> = (0..r as usize)
                        .filter(|&i| i != a0 as usize && i != a1 as usize)
                        .collect();
                    perm.push(a0 as usize);
                    perm.push(a1 as usize);
                    let s = singular_values(&x.transpose(&perm)?)?;
                    let out = match ord {
                        NormOrd::Nuc => s.sum(Axes::Some(&[-1]), false)?,
                        _ if p > 0.0 => s.max(Axes::Some(&[-1]), false)?,
                        _ => s.min(Axes::Some(&[-1]), false)?,
                    };
                    if keepdims {
                        let mut e = out;
                        let mut sorted = both;
                        sorted.sort();
                        for ax in sorted {
                            e = e.expand_dims(ax)?;
                        }
                        Ok(e)
                    } else {
                        Ok(out)
                    }
                }
            }
        }
        k => Err(Error::Shape(format!(
            "norm: axis must name 1 or 2 axes, got {k}"
        ))),
    }
}

/// `a` raised to the integer power `n` by repeated squaring (`n < 0` inverts first), as
/// `numpy.linalg.matrix_power`.
///
/// ```no_run
/// # use quabla::{linalg, Array};
/// let shift = Array::from_slice(&[1.0f64, 1.0, 0.0, 1.0], &[2, 2])?;
/// let p = linalg::matrix_power(&shift, 5)?; // [[1, 5], [0, 1]]
/// # Ok::<(), quabla::Error>(())
/// ```
pub fn matrix_power(a: &Array, n: i64) -> Result<Array> {
    square(a, "matrix_power")?;
    let mut base = if n < 0 { inv(a)? } else { a.clone() };
    let mut e = n.unsigned_abs();
    let mut acc: Option<Array> = None;
    if e == 0 {
        return identity_like(a);
    }
    while e > 0 {
        if e & 1 == 1 {
            acc = Some(match acc {
                Some(x) => x.matmul(&base)?,
                None => base.clone(),
            });
        }
        e >>= 1;
        if e > 0 {
            base = base.matmul(&base)?;
        }
    }
    acc.ok_or_else(|| Error::Value("matrix_power: empty product".into()))
}

/// The condition number, as `numpy.linalg.cond`: `σ_max/σ_min` for the default 2-norm,
/// else `‖a‖·‖a⁻¹‖` in the given norm.
///
/// ```no_run
/// # use quabla::{linalg::{self, NormOrd}, Array};
/// let a = Array::from_slice(&[1.0f64, 0.0, 0.0, 1e-3], &[2, 2])?;
/// let k = linalg::cond(&a, NormOrd::Default)?; // 1000
/// # Ok::<(), quabla::Error>(())
/// ```
pub fn cond(a: &Array, ord: NormOrd) -> Result<Array> {
    if a.ndim() < 2 {
        return Err(Error::Shape("cond needs matrices".into()));
    }
    match ord {
        NormOrd::Default => {
            let s = singular_values(a)?;
            &s.max(Axes::Some(&[-1]), false)? / &s.min(Axes::Some(&[-1]), false)?
        }
        NormOrd::P(p) if p == 2.0 || p == -2.0 => {
            let s = singular_values(a)?;
            let r = (&s.max(Axes::Some(&[-1]), false)? / &s.min(Axes::Some(&[-1]), false)?)?;
            if p > 0.0 {
                Ok(r)
            } else {
                r.ones_like()? / &r
            }
        }
        o => {
            let axes = [-2isize, -1];
            &norm(a, o, Some(&axes), false)? * &norm(&inv(a)?, o, Some(&axes), false)?
        }
    }
}
