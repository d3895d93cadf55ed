//! QIR's dense linear algebra on MLX's LAPACK-backed CPU ops, with QIR's conventions made
//! explicit where MLX's differ: Cholesky reads one triangle and is NaN where the matrix is
//! not positive definite (MLX returns LAPACK's partial factor without a word), triangular
//! solves in all sixteen forms through MLX's one (left side, no transpose, non-unit), the
//! complete QR's extra columns, and SVD's reduced factors.

use crate::elementwise::scalar;
use crate::movement::iota;
use crate::shim::{Binary, Fold, MlxArray};
use quabla_abi::abi::AbiError;
use quabla_abi::qir::LinalgOp;
use quabla_abi::{DType, TensorType};

type R = Result<MlxArray, AbiError>;

/// `a` with its last two axes swapped.
fn swap_last(a: &MlxArray, rank: usize) -> R {
    let mut perm: Vec<usize> = (0..rank).collect();
    perm.swap(rank - 2, rank - 1);
    a.transpose(&perm)
}

/// A `rows x cols` bool mask: `row >= col` (lower, diagonal included), `row <= col`
/// (upper) or `row == col`.
fn mask(rows: usize, cols: usize, cmp: Binary) -> R {
    let ty = TensorType::new(DType::I32, vec![rows, cols]);
    iota(0, &ty)?.binary(cmp, &iota(1, &ty)?)
}

fn zeros(ty: &TensorType) -> R {
    scalar(ty.dtype, 0.0)?.broadcast_to(&ty.shape)
}

/// Square identity matrices of `ty` (batched).
fn identity(ty: &TensorType) -> R {
    let n = ty.shape[ty.shape.len() - 1];
    mask(n, n, Binary::Eq)?
        .select(&scalar(ty.dtype, 1.0)?, &scalar(ty.dtype, 0.0)?)?
        .broadcast_to(&ty.shape)
}

pub fn linalg(
    op: LinalgOp,
    x: &[&MlxArray],
    ty: &[&TensorType],
    out: &[TensorType],
) -> Result<Vec<MlxArray>, AbiError> {
    let a_ty = ty[0];
    let rank = a_ty.shape.len();
    let (m, n) = (a_ty.shape[rank - 2], a_ty.shape[rank - 1]);
    if a_ty.num_elements() == 0 || out.iter().any(|t| t.num_elements() == 0) {
        return empty(op, out);
    }
    match op {
        LinalgOp::Cholesky => Ok(vec![cholesky(x[0], a_ty)?]),
        LinalgOp::Lu => x[0].lu(),
        LinalgOp::TriangularSolve {
            left_side,
            lower,
            transpose_a,
            unit_diagonal,
        } => {
            let a = triangle(x[0], n, lower, unit_diagonal, a_ty.dtype)?;
            let (a, lower) = if transpose_a {
                (swap_last(&a, rank)?, !lower)
            } else {
                (a, lower)
            };
            if left_side {
                Ok(vec![a.solve_triangular(x[1], !lower)?])
            } else {
                // x op(a) = b  <=>  op(a)^T x^T = b^T.
                let at = swap_last(&a, rank)?;
                let xt = at.solve_triangular(&swap_last(x[1], rank)?, lower)?;
                Ok(vec![swap_last(&xt, rank)?])
            }
        }
        LinalgOp::Eigh => x[0].eigh(),
        LinalgOp::Qr { full_matrices } => {
            let mut qr = x[0].qr()?;
            if full_matrices && m > n {
                let r = qr.pop().ok_or_else(|| AbiError::internal("qr without r"))?;
                let q = qr.pop().ok_or_else(|| AbiError::internal("qr without q"))?;
                return complete_qr(q, r, &out[0], rank, m, n);
            }
            Ok(qr)
        }
        LinalgOp::Svd {
            full_matrices,
            compute_uv,
        } => {
            let parts = x[0].svd(compute_uv)?;
            if !compute_uv || full_matrices || m == n {
                return Ok(parts);
            }
            // MLX's factors are full: keep the first k = min(m, n) singular vectors.
            let k = m.min(n);
            let mut it = parts.into_iter();
            let (u, s, vt) = match (it.next(), it.next(), it.next()) {
                (Some(u), Some(s), Some(vt)) => (u, s, vt),
                _ => return Err(AbiError::internal("svd gave fewer than three factors")),
            };
            let cut = |a: &MlxArray, rows: usize, cols: usize| {
                let mut stop = a_ty.shape.clone();
                stop[rank - 2] = rows;
                stop[rank - 1] = cols;
                a.slice(&vec![0; rank], &stop, &vec![1; rank])
            };
            Ok(vec![cut(&u, m, k)?, s, cut(&vt, k, n)?])
        }
    }
}

/// The named triangle of `a` (the other zeroed), with ones on the diagonal when `unit`.
fn triangle(a: &MlxArray, n: usize, lower: bool, unit: bool, dtype: DType) -> R {
    let keep = mask(n, n, if lower { Binary::Ge } else { Binary::Le })?;
    let t = keep.select(a, &scalar(dtype, 0.0)?)?;
    if unit {
        mask(n, n, Binary::Eq)?.select(&scalar(dtype, 1.0)?, &t)
    } else {
        Ok(t)
    }
}

/// The lower factor of the matrix the lower triangle describes; NaN throughout a matrix that
/// is not numerically positive definite. LAPACK leaves a non-positive (or NaN) pivot on the
/// diagonal where it stops, and every pivot it takes is a positive square root, so a matrix
/// failed exactly when some diagonal entry is not positive.
fn cholesky(a: &MlxArray, ty: &TensorType) -> R {
    let rank = ty.shape.len();
    let n = ty.shape[rank - 1];
    let symmetric = mask(n, n, Binary::Ge)?.select(a, &swap_last(a, rank)?)?;
    let l = symmetric.cholesky()?;
    let zero = scalar(ty.dtype, 0.0)?;
    let diagonal = mask(n, n, Binary::Eq)?
        .select(&l, &zero)?
        .reduce(Fold::Sum, &[rank - 1])?;
    let ok = diagonal
        .binary(Binary::Gt, &zero)?
        .reduce(Fold::All, &[rank - 2])?;
    let mut lifted = ty.shape[..rank - 2].to_vec();
    lifted.extend([1, 1]);
    ok.reshape(&lifted)?
        .select(&l, &scalar(ty.dtype, f64::NAN)?)
}

/// The complete QR of a tall matrix from its reduced one: the QR of `[q | I]` has `q`'s
/// columns (up to sign) first and an orthonormal basis of their complement after them.
fn complete_qr(
    q: MlxArray,
    r: MlxArray,
    q_ty: &TensorType,
    rank: usize,
    m: usize,
    n: usize,
) -> Result<Vec<MlxArray>, AbiError> {
    let mut eye_shape = q_ty.shape.clone();
    eye_shape[rank - 1] = m;
    let eye = identity(&TensorType::new(q_ty.dtype, eye_shape))?;
    let wide = MlxArray::concatenate(&[&q, &eye], rank - 1)?;
    let basis = wide.qr()?.remove(0);
    let mut start = vec![0; rank];
    start[rank - 1] = n;
    let complement = basis.slice(&start, &q_ty.shape, &vec![1; rank])?;
    let q_full = MlxArray::concatenate(&[&q, &complement], rank - 1)?;
    let mut high = vec![0; rank];
    high[rank - 2] = m - n;
    let r_full = r.pad(&vec![0; rank], &high, &scalar(q_ty.dtype, 0.0)?)?;
    Ok(vec![q_full, r_full])
}

/// Results of a factorization of no matrices, or of empty ones: zeros, except the square
/// orthogonal factors of complete QR/SVD, which are identities.
fn empty(op: LinalgOp, out: &[TensorType]) -> Result<Vec<MlxArray>, AbiError> {
    out.iter()
        .enumerate()
        .map(|(i, t)| {
            let orthogonal = match op {
                LinalgOp::Qr { full_matrices } => full_matrices && i == 0,
                LinalgOp::Svd {
                    full_matrices,
                    compute_uv,
                } => full_matrices && compute_uv && i != 1,
                _ => false,
            };
            if orthogonal && t.num_elements() > 0 {
                identity(t)
            } else {
                zeros(t)
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use crate::MlxBackend;
    use quabla_abi::plugin::{Arg, Backend};
    use quabla_abi::qir::Program;
    use quabla_abi::HostArray;

    fn run(src: &str, inputs: &[HostArray]) -> Vec<Vec<f64>> {
        let b = MlxBackend;
        let p = Program::parse(src).unwrap();
        p.validate().unwrap();
        let exe = b.compile(p).unwrap();
        let args = inputs
            .iter()
            .map(|h| Arg {
                buffer: b.upload(0, h.view()).unwrap(),
                donated: false,
            })
            .collect();
        exe.execute(args)
            .unwrap()
            .iter()
            .map(|o| {
                let bytes = o.download().unwrap().wait().unwrap();
                let h = HostArray::new(o.ty().clone(), bytes).unwrap();
                h.to_vec::<f64>().unwrap()
            })
            .collect()
    }

    fn noise(n: usize) -> Vec<f64> {
        let mut s = 12345u32;
        (0..n)
            .map(|_| {
                s = s.wrapping_mul(1664525).wrapping_add(1013904223);
                (s >> 8) as f64 / (1 << 24) as f64 - 0.5
            })
            .collect()
    }

    /// Complete QR of tall matrices (not in the conformance suite, whose complete cases are
    /// square or wide): Q is orthogonal, R upper triangular with zero rows past n, Q R = A,
    /// and Q's first n columns are the reduced Q's up to sign.
    #[test]
    fn complete_qr_of_a_tall_matrix() {
        let (b, m, n) = (2, 6, 4);
        let a = noise(b * m * n);
        let src = "program(%0: f64[2,6,4]) {
  %1, %2 = qr[full_matrices=true](%0) : f64[2,6,6], f64[2,6,4]
  %3, %4 = qr[full_matrices=false](%0) : f64[2,6,4], f64[2,4,4]
  return %1, %2, %3
}
";
        let out = run(src, &[HostArray::from_slice(vec![b, m, n], &a).unwrap()]);
        let (q, r, q_reduced) = (&out[0], &out[1], &out[2]);
        for k in 0..b {
            let q = |i: usize, j: usize| q[k * m * m + i * m + j];
            let r = |i: usize, j: usize| r[k * m * n + i * n + j];
            for i in 0..m {
                for j in 0..m {
                    let dot: f64 = (0..m).map(|t| q(t, i) * q(t, j)).sum();
                    let want = if i == j { 1.0 } else { 0.0 };
                    assert!((dot - want).abs() < 1e-12, "Q^T Q at ({i}, {j}): {dot}");
                }
                for j in 0..n {
                    let qr: f64 = (0..m).map(|t| q(i, t) * r(t, j)).sum();
                    assert!((qr - a[k * m * n + i * n + j]).abs() < 1e-12);
                    if i > j {
                        assert_eq!(r(i, j), 0.0, "R below the diagonal at ({i}, {j})");
                    }
                }
            }
            for j in 0..n {
                let sign = q(0, j).signum() * q_reduced[k * m * n + j].signum();
                for i in 0..m {
                    let reduced = q_reduced[k * m * n + i * n + j];
                    assert!((q(i, j) - sign * reduced).abs() < 1e-12);
                }
            }
        }
    }

    /// A batch with one positive definite matrix and one that is not: only the second is NaN.
    #[test]
    fn cholesky_fails_matrix_by_matrix() {
        let src = "program(%0: f64[2,2,2]) {
  %1 = cholesky(%0) : f64[2,2,2]
  return %1
}
";
        let a = [4.0, 2.0, 2.0, 3.0, 1.0, 2.0, 2.0, 1.0];
        let l = &run(src, &[HostArray::from_slice(vec![2, 2, 2], &a).unwrap()])[0];
        assert_eq!(&l[..3], &[2.0, 0.0, 1.0]);
        assert!((l[3] - 2f64.sqrt()).abs() < 1e-15);
        assert!(l[4..].iter().all(|v| v.is_nan()), "{l:?}");
    }

    /// Empty operands: zeros, and identities for the square factors of complete QR.
    #[test]
    fn empty_matrices() {
        let src = "program(%0: f64[2,3,0], %1: f64[0,3,3]) {
  %2, %3 = qr[full_matrices=true](%0) : f64[2,3,3], f64[2,3,0]
  %4 = cholesky(%1) : f64[0,3,3]
  return %2, %3, %4
}
";
        let out = run(
            src,
            &[
                HostArray::from_slice::<f64>(vec![2, 3, 0], &[]).unwrap(),
                HostArray::from_slice::<f64>(vec![0, 3, 3], &[]).unwrap(),
            ],
        );
        let eye = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0];
        assert_eq!(&out[0][..9], &eye);
        assert_eq!(&out[0][9..], &eye);
        assert!(out[1].is_empty() && out[2].is_empty());
    }
}
