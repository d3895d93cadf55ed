//! The dense linear-algebra primitives (`cholesky`, `lu`, `triangular_solve`, `eigh`, `qr`,
//! `svd`) with their JVP, transpose and batching rules, as JAX's `lax.linalg`. Matrices are
//! the last two axes; leading axes are a batch. The JVP rules emit only matrix products,
//! elementwise ops and `triangular_solve` on the tangents, so reverse mode follows by
//! transposition.
//!
//! Derivative caveats (as JAX): `eigh`'s eigenvector derivative divides by eigenvalue gaps
//! and is inf/NaN for repeated eigenvalues; `svd`'s by gaps of squared singular values
//! (repeated or zero singular values); `qr`'s needs `m >= n` (and `m == n` when complete).

use super::apply;
use crate::ad::rules::{JvpArgs, TransposeArgs};
use crate::array::Array;
use crate::batching::BatchArgs;
use crate::error::{Error, Result};
use crate::ops::Axes;
use quabla_abi::qir::{LinalgOp, Op};
use quabla_abi::DType;

fn call(op: LinalgOp, args: &[&Array]) -> Result<Vec<Array>> {
    if let Some(bad) = args.iter().find(|a| !a.dtype().is_float() || a.ndim() < 2) {
        return Err(Error::DType(format!(
            "{}: needs float matrices (the last two axes), got {}; convert with astype",
            op.name(),
            bad.tensor_type()
        )));
    }
    apply(Op::Linalg(op), args, vec![])
}

/// How [`triangular_solve`] reads its matrix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Triangular {
    /// Solve `op(a) x = b` (true) or `x op(a) = b`.
    pub left_side: bool,
    /// `a` is lower (true) or upper triangular; the other triangle is never read.
    pub lower: bool,
    /// `op(a) = aᵀ`.
    pub transpose_a: bool,
    /// Ones are assumed on the diagonal.
    pub unit_diagonal: bool,
}

impl Default for Triangular {
    fn default() -> Self {
        Triangular {
            left_side: true,
            lower: true,
            transpose_a: false,
            unit_diagonal: false,
        }
    }
}

impl From<Triangular> for LinalgOp {
    fn from(t: Triangular) -> LinalgOp {
        LinalgOp::TriangularSolve {
            left_side: t.left_side,
            lower: t.lower,
            transpose_a: t.transpose_a,
            unit_diagonal: t.unit_diagonal,
        }
    }
}

fn triangular_of(op: &LinalgOp) -> Triangular {
    match *op {
        LinalgOp::TriangularSolve {
            left_side,
            lower,
            transpose_a,
            unit_diagonal,
        } => Triangular {
            left_side,
            lower,
            transpose_a,
            unit_diagonal,
        },
        _ => Triangular::default(),
    }
}

/// The lower Cholesky factor `L` with `a = L Lᵀ`, read from `a`'s lower triangle (the
/// primitive; [`crate::linalg::cholesky`] symmetrizes first, as JAX). NaN where `a` is not
/// positive definite.
///
/// ```no_run
/// # use quabla::{linalg, Array};
/// let a = Array::from_slice(&[4.0f64, 2.0, 2.0, 3.0], &[2, 2])?;
/// let l = linalg::cholesky_lower(&a)?;
/// # Ok::<(), quabla::Error>(())
/// ```
pub fn cholesky_lower(a: &Array) -> Result<Array> {
    Ok(call(LinalgOp::Cholesky, &[a])?.remove(0))
}

/// LU with partial pivoting: `(lu, pivots, permutation)` as `jax.lax.linalg.lu` (square
/// matrices): `a[permutation] = L U` with `L` unit lower (below `lu`'s diagonal) and `U`
/// upper.
///
/// ```no_run
/// # use quabla::{linalg, Array};
/// let a = Array::from_slice(&[1.0f64, 2.0, 3.0, 4.0], &[2, 2])?;
/// let (lu, pivots, perm) = linalg::lu(&a)?;
/// assert_eq!(perm.to_vec::<i32>()?, [1, 0]); // row 1 (the larger pivot) first
/// # Ok::<(), quabla::Error>(())
/// ```
pub fn lu(a: &Array) -> Result<(Array, Array, Array)> {
    let mut o = call(LinalgOp::Lu, &[a])?;
    let perm = o.remove(2);
    let piv = o.remove(1);
    Ok((o.remove(0), piv, perm))
}

/// Solves a triangular system as [`Triangular`] says (`jax.lax.linalg.triangular_solve`).
///
/// ```no_run
/// # use quabla::{linalg::{self, Triangular}, Array};
/// let l = Array::from_slice(&[2.0f64, 0.0, 1.0, 4.0], &[2, 2])?;
/// let b = Array::from_slice(&[2.0f64, 6.0], &[2, 1])?;
/// let x = linalg::triangular_solve(&l, &b, Triangular::default())?; // [1, 1.25]
/// # Ok::<(), quabla::Error>(())
/// ```
pub fn triangular_solve(a: &Array, b: &Array, how: Triangular) -> Result<Array> {
    Ok(call(how.into(), &[a, b])?.remove(0))
}

/// Eigenvalues (ascending) and eigenvectors (columns) of a symmetric matrix, read from its
/// lower triangle: `(w, v)` with `a v = v diag(w)`.
///
/// ```no_run
/// # use quabla::{linalg, Array};
/// let a = Array::from_slice(&[2.0f64, 1.0, 1.0, 2.0], &[2, 2])?;
/// let (w, v) = linalg::eigh_lower(&a)?;
/// // w = [1, 3]
/// # Ok::<(), quabla::Error>(())
/// ```
pub fn eigh_lower(a: &Array) -> Result<(Array, Array)> {
    let mut o = call(LinalgOp::Eigh, &[a])?;
    let v = o.remove(1);
    Ok((o.remove(0), v))
}

/// Householder QR `(q, r)`: reduced (`full_matrices = false`) or complete.
///
/// ```no_run
/// # use quabla::{linalg, Array};
/// let a = Array::from_slice(&[1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0], &[3, 2])?;
/// let (q, r) = linalg::qr(&a, false)?; // q: 3x2 with orthonormal columns, r: 2x2 upper
/// assert_eq!((q.shape(), r.shape()), (&[3usize, 2][..], &[2usize, 2][..]));
/// # Ok::<(), quabla::Error>(())
/// ```
pub fn qr(a: &Array, full_matrices: bool) -> Result<(Array, Array)> {
    let mut o = call(LinalgOp::Qr { full_matrices }, &[a])?;
    let r = o.remove(1);
    Ok((o.remove(0), r))
}

/// The singular value decomposition `a = u diag(s) vt`, singular values descending.
#[derive(Clone)]
pub struct Svd {
    pub u: Array,
    pub s: Array,
    pub vt: Array,
}

/// `svd(a)`: `(u, s, vt)`, reduced or full.
///
/// ```no_run
/// # use quabla::{linalg, Array};
/// let a = Array::from_slice(&[3.0f64, 0.0, 0.0, -2.0], &[2, 2])?;
/// let linalg::Svd { u, s, vt } = linalg::svd(&a, false)?;
/// // s = [3, 2]
/// # Ok::<(), quabla::Error>(())
/// ```
pub fn svd(a: &Array, full_matrices: bool) -> Result<Svd> {
    let mut o = call(
        LinalgOp::Svd {
            full_matrices,
            compute_uv: true,
        },
        &[a],
    )?;
    let vt = o.remove(2);
    let s = o.remove(1);
    Ok(Svd {
        u: o.remove(0),
        s,
        vt,
    })
}

/// The singular values alone (descending).
///
/// ```no_run
/// # use quabla::{linalg, Array};
/// let a = Array::from_slice(&[3.0f64, 0.0, 0.0, -2.0], &[2, 2])?;
/// let s = linalg::singular_values(&a)?; // [3, 2]
/// # Ok::<(), quabla::Error>(())
/// ```
pub fn singular_values(a: &Array) -> Result<Array> {
    Ok(call(
        LinalgOp::Svd {
            full_matrices: false,
            compute_uv: false,
        },
        &[a],
    )?
    .remove(0))
}

// ---- helpers over the last two axes -----------------------------------------------------

/// `x` with its last two axes swapped.
pub(crate) fn mt(x: &Array) -> Result<Array> {
    let r = x.ndim();
    let mut perm: Vec<usize> = (0..r).collect();
    perm.swap(r - 1, r - 2);
    x.transpose(&perm)
}

/// `i - j >= -k` over the last two axes of `x` (true on and below the k-th diagonal).
fn below(x: &Array, k: i32) -> Result<Array> {
    let r = x.ndim();
    let shape = x.shape();
    let rows = x.iota_beside(DType::I32, shape, r - 2)?;
    let cols = x.iota_beside(DType::I32, shape, r - 1)?;
    (&rows + k)?.ge(&cols)
}

/// The lower triangle from the `k`-th diagonal down (zeros elsewhere), as `jnp.tril`.
pub(crate) fn tril(x: &Array, k: i32) -> Result<Array> {
    below(x, k)?.select(x, &x.zeros_like()?)
}

/// The upper triangle from the `k`-th diagonal up, as `jnp.triu`.
pub(crate) fn triu(x: &Array, k: i32) -> Result<Array> {
    below(x, k - 1)?.select(&x.zeros_like()?, x)
}

/// Rows of `b` reordered as `perm` says (`b[perm]`), via a one-hot permutation matrix so
/// it batches and differentiates like any matrix product.
pub(crate) fn permute_rows(perm: &Array, b: &Array) -> Result<Array> {
    let n = perm.shape()[perm.ndim() - 1];
    let r = perm.ndim();
    let mut shape = perm.shape().to_vec();
    shape.push(n);
    let cols = perm.iota_beside(DType::I32, &shape, r)?;
    let p = perm
        .broadcast_in_dim(&shape, &(0..r).collect::<Vec<_>>())?
        .eq(&cols)?
        .astype(b.dtype())?;
    p.matmul(b)
}

/// True on the diagonal of the last two axes.
pub(crate) fn eye_mask(x: &Array) -> Result<Array> {
    let r = x.ndim();
    let shape = x.shape();
    x.iota_beside(DType::I32, shape, r - 2)?
        .eq(&x.iota_beside(DType::I32, shape, r - 1)?)
}

/// The diagonal of the last two axes (square).
pub(crate) fn diagonal(x: &Array) -> Result<Array> {
    let d = eye_mask(x)?.select(x, &x.zeros_like()?)?;
    d.sum(Axes::Some(&[x.ndim() as isize - 1]), false)
}

/// `v` as diagonal matrices (last axis).
pub(crate) fn diag_matrix(v: &Array) -> Result<Array> {
    let n = v.shape()[v.ndim() - 1];
    let mut shape = v.shape().to_vec();
    shape.push(n);
    let r = v.ndim();
    let full = v.broadcast_in_dim(&shape, &(0..r).collect::<Vec<_>>())?;
    eye_mask(&full)?.select(&full, &full.zeros_like()?)
}

fn sym(x: &Array) -> Result<Array> {
    &(x + &mt(x)?)? * 0.5
}

// ---- rules --------------------------------------------------------------------------------

fn op_of(node: &quabla_abi::qir::Node) -> LinalgOp {
    match &node.op {
        Op::Linalg(l) => *l,
        _ => unreachable!("dispatched for linalg"),
    }
}

fn tangent_or_zero(t: &Option<Array>, like: &Array) -> Result<Array> {
    match t {
        Some(t) => Ok(t.clone()),
        None => like.zeros_like(),
    }
}

/// Output tangents of a linalg node.
pub(crate) fn jvp(a: &JvpArgs) -> Result<Vec<Option<Array>>> {
    let op = op_of(a.node);
    let x = &a.primals[0];
    let dx = || tangent_or_zero(&a.tangents[0], x);
    match op {
        LinalgOp::Cholesky => {
            let l = &a.outs[0];
            let da = sym(&dx()?)?;
            let lower = Triangular::default();
            let linv_da = triangular_solve(l, &da, lower)?;
            let right_t = Triangular {
                left_side: false,
                transpose_a: true,
                ..lower
            };
            let tmp = triangular_solve(l, &linv_da, right_t)?;
            let phi =
                (&tril(&tmp, -1)? + &(&eye_mask(&tmp)?.select(&tmp, &tmp.zeros_like()?)? * 0.5)?)?;
            Ok(vec![Some(l.matmul(&phi)?)])
        }
        LinalgOp::Lu => {
            let (lu, perm) = (&a.outs[0], &a.outs[2]);
            let pda = permute_rows(perm, &dx()?)?;
            let l = (&tril(lu, -1)? + &eye_mask(lu)?.astype(lu.dtype())?)?;
            let u = triu(lu, 0)?;
            let la = triangular_solve(
                &l,
                &pda,
                Triangular {
                    unit_diagonal: true,
                    ..Default::default()
                },
            )?;
            let lau = triangular_solve(
                &u,
                &la,
                Triangular {
                    left_side: false,
                    lower: false,
                    ..Default::default()
                },
            )?;
            let dl = l.matmul(&tril(&lau, -1)?)?;
            let du = triu(&lau, 0)?.matmul(&u)?;
            Ok(vec![Some((&dl + &du)?), None, None])
        }
        LinalgOp::TriangularSolve { .. } => {
            let how = triangular_of(&op);
            let (am, xs) = (x, &a.outs[0]);
            let db = tangent_or_zero(&a.tangents[1], &a.primals[1])?;
            let rhs = match &a.tangents[0] {
                None => db,
                Some(da) => {
                    let mut dat = if how.lower {
                        tril(da, 0)?
                    } else {
                        triu(da, 0)?
                    };
                    if how.unit_diagonal {
                        dat = eye_mask(&dat)?.select(&dat.zeros_like()?, &dat)?;
                    }
                    let op_da = if how.transpose_a { mt(&dat)? } else { dat };
                    let prod = if how.left_side {
                        op_da.matmul(xs)?
                    } else {
                        xs.matmul(&op_da)?
                    };
                    (&db - &prod)?
                }
            };
            Ok(vec![Some(triangular_solve(am, &rhs, how)?)])
        }
        LinalgOp::Eigh => {
            let (w, v) = (&a.outs[0], &a.outs[1]);
            let vdv = mt(v)?.matmul(&sym(&dx()?)?)?.matmul(v)?;
            let dw = diagonal(&vdv)?;
            let r = w.ndim();
            let mut shape = w.shape().to_vec();
            let n = shape[r - 1];
            shape.push(n);
            let wi = w.broadcast_in_dim(&shape, &(0..r).collect::<Vec<_>>())?;
            let wj = mt(&wi)?;
            // F_ij = 1 / (w_j - w_i) off the diagonal.
            let gaps = (&wj - &wi)?;
            let eye = eye_mask(&gaps)?;
            let f = eye.select(
                &gaps.zeros_like()?,
                &(&gaps.ones_like()? / &eye.select(&gaps.ones_like()?, &gaps)?)?,
            )?;
            let dv = v.matmul(&(&f * &vdv)?)?;
            Ok(vec![Some(dw), Some(dv)])
        }
        LinalgOp::Qr { full_matrices } => {
            let (q, rm) = (&a.outs[0], &a.outs[1]);
            let sh = x.shape();
            let (m, n) = (sh[sh.len() - 2], sh[sh.len() - 1]);
            if m < n || (full_matrices && m != n) {
                return Err(Error::Value(format!(
                    "qr: derivatives need m >= n (and m == n for the complete factorization), got {m}x{n}"
                )));
            }
            let upper_right = Triangular {
                left_side: false,
                lower: false,
                ..Default::default()
            };
            let dx_rinv = triangular_solve(rm, &dx()?, upper_right)?;
            let qt_dx_rinv = mt(q)?.matmul(&dx_rinv)?;
            let low = tril(&qt_dx_rinv, -1)?;
            let domega = (&low - &mt(&low)?)?;
            let dq = (&q.matmul(&(&domega - &qt_dx_rinv)?)? + &dx_rinv)?;
            let dr = (&qt_dx_rinv - &domega)?.matmul(rm)?;
            Ok(vec![Some(dq), Some(dr)])
        }
        LinalgOp::Svd {
            full_matrices,
            compute_uv,
        } => svd_jvp(x, &dx()?, a.outs, full_matrices, compute_uv),
    }
}

fn svd_jvp(
    x: &Array,
    dx: &Array,
    outs: &[Array],
    full: bool,
    compute_uv: bool,
) -> Result<Vec<Option<Array>>> {
    let sh = x.shape();
    let (m, n) = (sh[sh.len() - 2], sh[sh.len() - 1]);
    // The tangent of s needs the vectors: recompute them when only s was asked for.
    let Svd { u, s, vt } = if compute_uv {
        Svd {
            u: outs[0].clone(),
            s: outs[1].clone(),
            vt: outs[2].clone(),
        }
    } else {
        svd(x, false)?
    };
    if full && m != n {
        return Err(Error::Shape(format!(
            "svd: derivatives of the full factorization need a square matrix, got {m}x{n}; use full_matrices=false"
        )));
    }
    let v = mt(&vt)?;
    let ds_mat = mt(&u)?.matmul(dx)?.matmul(&v)?;
    let ds = diagonal(&ds_mat)?;
    if !compute_uv {
        return Ok(vec![Some(ds)]);
    }
    let r = s.ndim();
    let k = s.shape()[r - 1];
    let mut shape = s.shape().to_vec();
    shape.push(k);
    let dims: Vec<usize> = (0..r - 1).chain([r]).collect();
    let s_row = s.broadcast_in_dim(&shape, &dims)?; // [.., i, j] = s_j
    let s_col = mt(&s_row)?; // s_i
    let diffs = (&(&s_row + &s_col)? * &(&s_row - &s_col)?)?; // s_j² - s_i²
    let eye = eye_mask(&diffs)?;
    let f = eye.select(
        &diffs.zeros_like()?,
        &(&diffs.ones_like()? / &eye.select(&diffs.ones_like()?, &diffs)?)?,
    )?;
    let dss = (&ds_mat * &s_row)?;
    let sds = (&s_col * &ds_mat)?;
    let mut du = u.matmul(&(&f * &(&dss + &mt(&dss)?)?)?)?;
    let mut dv = v.matmul(&(&f * &(&sds + &mt(&sds)?)?)?)?;
    // Columns divided by their singular value.
    let s_cols = s.expand_dims(-2)?;
    if m > n {
        let dav = dx.matmul(&v)?;
        let proj = (&dav - &u.matmul(&mt(&u)?.matmul(&dav)?)?)?;
        du = (&du + &(&proj / &s_cols)?)?;
    }
    if n > m {
        let dau = mt(dx)?.matmul(&u)?;
        let proj = (&dau - &v.matmul(&vt.matmul(&dau)?)?)?;
        dv = (&dv + &(&proj / &s_cols)?)?;
    }
    Ok(vec![Some(du), Some(ds), Some(mt(&dv)?)])
}

/// Transpose of `triangular_solve` in `b`: the same solve with `op(a)ᵀ`.
pub(crate) fn transpose(a: &TransposeArgs) -> Result<Vec<Option<Array>>> {
    let op = op_of(a.node);
    if !matches!(op, LinalgOp::TriangularSolve { .. }) || a.operands[0].is_linear() {
        return crate::ad::rules::no_rule("transpose", &a.node.op);
    }
    let am = a.operands[0].known("triangular_solve")?;
    let ct = match &a.cts[0] {
        Some(c) => c.clone(),
        None => crate::ops::zeros_typed(am, &a.node.results[0])?,
    };
    let how = triangular_of(&op);
    let flipped = Triangular {
        transpose_a: !how.transpose_a,
        ..how
    };
    Ok(vec![None, Some(triangular_solve(am, &ct, flipped)?)])
}

/// Batching: the batch axis is one more leading axis; an unbatched operand of
/// `triangular_solve` is broadcast.
pub(crate) fn batch(a: &BatchArgs) -> Result<Vec<(Array, bool)>> {
    let args: Vec<Array> = (0..a.args.len())
        .map(|i| a.batched_arg(i))
        .collect::<Result<_>>()?;
    let refs: Vec<&Array> = args.iter().collect();
    let outs = apply(a.node.op.clone(), &refs, vec![])?;
    Ok(outs.into_iter().map(|o| (o, true)).collect())
}
