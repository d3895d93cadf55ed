//! Generators for the factorizations. Each case maps its raw arguments into the op's
//! domain inside the function (a symmetric positive definite matrix for Cholesky, a
//! diagonally dominant one where pivoting must not switch under a small step), and reads
//! the results through quantities that do not depend on sign choices (`v diag(w) vᵀ`,
//! `u vᵀ`), so finite differences see a smooth function.

use super::draw::*;
use quabla::qir::{LinalgKind, LinalgOp, Op};
use quabla::{call_program, Array, DType, Result, TensorType};
use std::rc::Rc;

/// `a` with its last two axes swapped.
fn mt(a: &Array) -> Result<Array> {
    let r = a.ndim();
    let mut perm: Vec<usize> = (0..r).collect();
    perm.swap(r - 1, r - 2);
    a.transpose(&perm)
}

/// `a + c·I` over the last two axes.
pub(super) fn shift_diag(a: &Array, c: f64) -> Result<Array> {
    let n = a.shape()[a.ndim() - 1];
    let eye: Vec<f64> = (0..n * n)
        .map(|k| if k / n == k % n { c } else { 0.0 })
        .collect();
    let eye = Array::from_slice_on(a.device(), &eye, &[n, n])?.astype(a.dtype())?;
    a + &eye
}

/// `a` plus `diag(k, k-1, ..., 1)·step` on its leading square block: singular values and
/// eigenvalues well apart and away from zero, so that a small step cannot reorder them.
fn spread_diag(a: &Array, step: f64) -> Result<Array> {
    let (m, n) = (a.shape()[a.ndim() - 2], a.shape()[a.ndim() - 1]);
    let k = m.min(n);
    let d: Vec<f64> = (0..m * n)
        .map(|i| {
            let (r, c) = (i / n, i % n);
            if r == c {
                (k - r) as f64 * step
            } else {
                0.0
            }
        })
        .collect();
    a + &Array::from_slice_on(a.device(), &d, &[m, n])?.astype(a.dtype())?
}

fn batch(rng: &mut Rng) -> Vec<usize> {
    rng.dims(0, 1, 1, 2)
}

fn with(b: &[usize], tail: &[usize]) -> Vec<usize> {
    [b, tail].concat()
}

pub fn draw(kind: LinalgKind, rng: &mut Rng, dt: DType) -> Option<Case> {
    let b = batch(rng);
    let n = rng.size(2, 4);
    let square = TensorType::new(dt, with(&b, &[n, n]));
    // Eigenvectors' finite differences in f32 carry errors of order step² / gap².
    let scale = if dt == DType::F32 { 12.0 } else { 4.0 };
    let case = |name: String, f: Func, args: Vec<Arg>| {
        Some(Case::new(name, dt, f, args).tol(scale).inexact())
    };
    match kind {
        LinalgKind::Cholesky => {
            let p = single(Op::Linalg(LinalgOp::Cholesky), vec![square], vec![])?;
            let f: Func = Rc::new(move |a: &[Array]| {
                let spd = shift_diag(&a[0].matmul(&mt(&a[0])?)?, n as f64)?;
                call_program(&p, &[spd])
            });
            case(
                format!("cholesky {b:?} {n}x{n}"),
                f,
                vec![real(&with(&b, &[n, n]), -1.0, 1.0)],
            )
        }
        LinalgKind::Lu => {
            let p = single(Op::Linalg(LinalgOp::Lu), vec![square], vec![])?;
            let f: Func = Rc::new(move |a: &[Array]| call_program(&p, &[shift_diag(&a[0], 4.0)?]));
            case(
                format!("lu {b:?} {n}x{n}"),
                f,
                vec![real(&with(&b, &[n, n]), -1.0, 1.0)],
            )
        }
        LinalgKind::TriangularSolve => {
            let k = rng.size(1, 3);
            let op = LinalgOp::TriangularSolve {
                left_side: rng.coin(),
                lower: rng.coin(),
                transpose_a: rng.coin(),
                unit_diagonal: rng.coin(),
            };
            let LinalgOp::TriangularSolve { left_side, .. } = op else {
                return None;
            };
            let rhs = if left_side { [n, k] } else { [k, n] };
            let rhs_ty = TensorType::new(dt, with(&b, &rhs));
            let p = single(Op::Linalg(op), vec![square, rhs_ty], vec![])?;
            let f: Func = Rc::new(move |a: &[Array]| {
                call_program(&p, &[shift_diag(&a[0], 4.0)?, a[1].clone()])
            });
            case(
                format!("{op:?} {b:?} {n}x{n}"),
                f,
                vec![
                    real(&with(&b, &[n, n]), -1.0, 1.0),
                    real(&with(&b, &rhs), -2.0, 2.0),
                ],
            )
        }
        LinalgKind::Eigh => {
            let p = single(Op::Linalg(LinalgOp::Eigh), vec![square], vec![])?;
            let f: Func = Rc::new(move |a: &[Array]| {
                let sym = spread_diag(&(&a[0] + &mt(&a[0])?)?, 2.0)?;
                let wv = call_program(&p, &[sym])?;
                let (w, v) = (&wv[0], &wv[1]);
                let vw = (v * &w.expand_dims(-2)?)?;
                Ok(vec![w.clone(), vw.matmul(&mt(v)?)?, (v * v)?])
            });
            case(
                format!("eigh {b:?} {n}x{n}"),
                f,
                vec![real(&with(&b, &[n, n]), -0.3, 0.3)],
            )
        }
        LinalgKind::Qr => {
            // Derivatives need m >= n, and m == n for the complete factorization (as JAX).
            let m = rng.size(n, 4);
            let full_matrices = m == n && rng.coin();
            let ty = TensorType::new(dt, with(&b, &[m, n]));
            let p = single(Op::Linalg(LinalgOp::Qr { full_matrices }), vec![ty], vec![])?;
            let f: Func = Rc::new(move |a: &[Array]| call_program(&p, &[spread_diag(&a[0], 1.0)?]));
            case(
                format!("qr {b:?} {m}x{n} full {full_matrices}"),
                f,
                vec![real(&with(&b, &[m, n]), -0.3, 0.3)],
            )
        }
        LinalgKind::Svd => {
            let m = rng.size(2, 4);
            let compute_uv = rng.coin();
            let ty = TensorType::new(dt, with(&b, &[m, n]));
            let op = LinalgOp::Svd {
                full_matrices: false,
                compute_uv,
            };
            let p = single(Op::Linalg(op), vec![ty], vec![])?;
            let f: Func = Rc::new(move |a: &[Array]| {
                let out = call_program(&p, &[spread_diag(&a[0], 1.0)?])?;
                if !compute_uv {
                    return Ok(out);
                }
                let (u, s, vt) = (&out[0], &out[1], &out[2]);
                let us = (u * &s.expand_dims(-2)?)?;
                Ok(vec![s.clone(), us.matmul(&mt(u)?)?, u.matmul(vt)?])
            });
            case(
                format!("svd {b:?} {m}x{n} uv {compute_uv}"),
                f,
                vec![real(&with(&b, &[m, n]), -0.3, 0.3)],
            )
        }
    }
}
