//! Dense linear algebra with faer: each matrix of a batch is factored on its own, in
//! sequence inside faer, and the batch runs in parallel over rayon, so results do not depend
//! on the thread count. Failures of the iterative decompositions (non-convergence) and
//! Cholesky of a matrix that is not positive definite give NaN, as JAX.

use crate::tensor::{Storage, Tensor};
use faer::{Mat, MatRef, Par, Side};
use faer_traits::RealField;
use quabla_abi::qir::LinalgOp;
use quabla_abi::TensorType;
use rayon::prelude::*;

/// The float element types, with what the kernels need beyond faer's trait.
pub(crate) trait Float: RealField + Copy + Send + Sync + 'static {
    const NAN: Self;
    const ZERO: Self;
    fn slice(s: &Storage) -> &[Self];
    fn wrap(v: Vec<Self>) -> Storage;
}

impl Float for f32 {
    const NAN: f32 = f32::NAN;
    const ZERO: f32 = 0.0;
    fn slice(s: &Storage) -> &[f32] {
        match s {
            Storage::F32(v) => v,
            _ => unreachable!("validated as f32"),
        }
    }
    fn wrap(v: Vec<f32>) -> Storage {
        Storage::F32(v)
    }
}

impl Float for f64 {
    const NAN: f64 = f64::NAN;
    const ZERO: f64 = 0.0;
    fn slice(s: &Storage) -> &[f64] {
        match s {
            Storage::F64(v) => v,
            _ => unreachable!("validated as f64"),
        }
    }
    fn wrap(v: Vec<f64>) -> Storage {
        Storage::F64(v)
    }
}

/// One output of one matrix: floats or indices.
pub(crate) enum Part<T> {
    F(Vec<T>),
    I(Vec<i32>),
}

/// A batch of row-major matrices: `batch` of `rows x cols`, one after another in `data`.
#[derive(Clone, Copy)]
pub(crate) struct Matrices<'a, T> {
    pub data: &'a [T],
    pub batch: usize,
    pub rows: usize,
    pub cols: usize,
}

impl<'a, T: Float> Matrices<'a, T> {
    /// A tensor's elements as matrices in its last two axes.
    fn of(t: &'a Tensor) -> Self {
        let shape = t.shape();
        let r = shape.len();
        Matrices {
            data: T::slice(&t.data),
            batch: shape[..r - 2].iter().product(),
            rows: shape[r - 2],
            cols: shape[r - 1],
        }
    }

    fn matrix(&self, b: usize) -> MatRef<'a, T> {
        let size = self.rows * self.cols;
        MatRef::from_row_major_slice(&self.data[b * size..(b + 1) * size], self.rows, self.cols)
    }
}

/// Evaluates a linalg node on the CPU.
pub fn eval(op: &LinalgOp, a: &[&Tensor], results: &[TensorType]) -> Vec<Tensor> {
    match &*a[0].data {
        Storage::F32(_) => run::<f32>(op, a, results),
        _ => run::<f64>(op, a, results),
    }
}

fn run<T: Float>(op: &LinalgOp, a: &[&Tensor], results: &[TensorType]) -> Vec<Tensor> {
    let rhs = a.get(1).map(|b| Matrices::of(b));
    let parts = per_matrix(op, Matrices::of(a[0]), rhs);
    results
        .iter()
        .enumerate()
        .map(|(k, ty)| {
            let storage = if ty.dtype.is_float() {
                let mut v = Vec::with_capacity(ty.num_elements());
                for p in &parts {
                    if let Part::F(x) = &p[k] {
                        v.extend_from_slice(x);
                    }
                }
                T::wrap(v)
            } else {
                let mut v = Vec::with_capacity(ty.num_elements());
                for p in &parts {
                    if let Part::I(x) = &p[k] {
                        v.extend_from_slice(x);
                    }
                }
                Storage::I32(v)
            };
            Tensor::new(ty.clone(), storage)
        })
        .collect()
}

/// Every result of `op` for each matrix of `a` (and `b`, a triangular solve's right-hand
/// sides, of the same batch), in batch order: the one place both tiers compute linear
/// algebra, so compiled loops (`native::callouts::linalg`) get the interpreter's bits.
pub(crate) fn per_matrix<T: Float>(
    op: &LinalgOp,
    a: Matrices<'_, T>,
    b: Option<Matrices<'_, T>>,
) -> Vec<Vec<Part<T>>> {
    let per = |k: usize| -> Vec<Part<T>> {
        let mat = a.matrix(k);
        match op {
            LinalgOp::Cholesky => vec![Part::F(cholesky(mat))],
            LinalgOp::Lu => lu(mat),
            LinalgOp::Eigh => eigh(mat),
            LinalgOp::Qr { full_matrices } => qr(mat, *full_matrices),
            LinalgOp::Svd {
                full_matrices,
                compute_uv,
            } => svd(mat, *full_matrices, *compute_uv),
            LinalgOp::TriangularSolve {
                left_side,
                lower,
                transpose_a,
                unit_diagonal,
            } => match b {
                Some(b) => vec![Part::F(triangular_solve(
                    mat,
                    b.matrix(k),
                    *left_side,
                    *lower,
                    *transpose_a,
                    *unit_diagonal,
                ))],
                // Validation gives a triangular solve two operands.
                None => vec![Part::F(nans(a.rows * a.cols))],
            },
        }
    };
    if a.batch == 1 {
        // A loop's small solve each iteration: no trip through rayon.
        return vec![per(0)];
    }
    (0..a.batch).into_par_iter().map(per).collect()
}

/// Row-major elements of a faer matrix.
fn rows<T: Float>(m: MatRef<'_, T>) -> Vec<T> {
    let mut v = Vec::with_capacity(m.nrows() * m.ncols());
    for i in 0..m.nrows() {
        for j in 0..m.ncols() {
            v.push(m[(i, j)]);
        }
    }
    v
}

fn nans<T: Float>(n: usize) -> Vec<T> {
    vec![T::NAN; n]
}

fn cholesky<T: Float>(a: MatRef<'_, T>) -> Vec<T> {
    let n = a.nrows();
    match a.llt(Side::Lower) {
        Ok(f) => {
            let l = f.L();
            let mut v = rows(l);
            for i in 0..n {
                for j in i + 1..n {
                    v[i * n + j] = T::ZERO;
                }
            }
            v
        }
        Err(_) => nans(n * n),
    }
}

fn lu<T: Float>(a: MatRef<'_, T>) -> Vec<Part<T>> {
    let n = a.nrows();
    let f = a.partial_piv_lu();
    let (l, u) = (f.L(), f.U());
    let mut packed = rows(u);
    for i in 0..n {
        for j in 0..i {
            packed[i * n + j] = l[(i, j)];
        }
    }
    // L U = a[perm]; the pivots are the row swaps that produce perm, in order.
    let perm: Vec<i32> = f.P().arrays().0.iter().map(|&p| p as i32).collect();
    let mut current: Vec<i32> = (0..n as i32).collect();
    let mut pivots = Vec::with_capacity(n);
    for (i, &target) in perm.iter().enumerate() {
        let j = (i..n).find(|&j| current[j] == target).unwrap_or(i);
        current.swap(i, j);
        pivots.push(j as i32);
    }
    vec![Part::F(packed), Part::I(pivots), Part::I(perm)]
}

fn triangular_solve<T: Float>(
    a: MatRef<'_, T>,
    b: MatRef<'_, T>,
    left_side: bool,
    lower: bool,
    transpose_a: bool,
    unit_diagonal: bool,
) -> Vec<T> {
    use faer::linalg::triangular_solve as ts;
    // Solve M y = rhs: left, M = op(a), rhs = b; right, M = op(a)ᵀ, rhs = bᵀ (x = yᵀ).
    let use_transpose = transpose_a == left_side;
    let m = if use_transpose { a.transpose() } else { a };
    let lower_eff = lower != use_transpose;
    let mut y: Mat<T> = if left_side {
        b.to_owned()
    } else {
        b.transpose().to_owned()
    };
    match (lower_eff, unit_diagonal) {
        (true, false) => ts::solve_lower_triangular_in_place(m, y.as_mut(), Par::Seq),
        (true, true) => ts::solve_unit_lower_triangular_in_place(m, y.as_mut(), Par::Seq),
        (false, false) => ts::solve_upper_triangular_in_place(m, y.as_mut(), Par::Seq),
        (false, true) => ts::solve_unit_upper_triangular_in_place(m, y.as_mut(), Par::Seq),
    }
    if left_side {
        rows(y.as_ref())
    } else {
        rows(y.as_ref().transpose())
    }
}

fn eigh<T: Float>(a: MatRef<'_, T>) -> Vec<Part<T>> {
    let n = a.nrows();
    match a.self_adjoint_eigen(Side::Lower) {
        Ok(e) => {
            let w: Vec<T> = (0..n).map(|i| e.S().column_vector()[i]).collect();
            vec![Part::F(w), Part::F(rows(e.U()))]
        }
        Err(_) => vec![Part::F(nans(n)), Part::F(nans(n * n))],
    }
}

fn qr<T: Float>(a: MatRef<'_, T>, full: bool) -> Vec<Part<T>> {
    let (m, n) = (a.nrows(), a.ncols());
    let f = a.qr();
    let k = m.min(n);
    let r_rows = if full { m } else { k };
    let mut r = vec![T::ZERO; r_rows * n];
    let thin = f.thin_R();
    for i in 0..k {
        for j in i..n {
            r[i * n + j] = thin[(i, j)];
        }
    }
    let q = if full {
        f.compute_Q()
    } else {
        f.compute_thin_Q()
    };
    vec![Part::F(rows(q.as_ref())), Part::F(r)]
}

fn svd<T: Float>(a: MatRef<'_, T>, full: bool, compute_uv: bool) -> Vec<Part<T>> {
    let (m, n) = (a.nrows(), a.ncols());
    let k = m.min(n);
    if !compute_uv {
        return vec![Part::F(a.singular_values().unwrap_or_else(|_| nans(k)))];
    }
    let f = if full { a.svd() } else { a.thin_svd() };
    let (um, vn) = if full { (m, n) } else { (k, k) };
    match f {
        Ok(s) => {
            let sv: Vec<T> = (0..k).map(|i| s.S().column_vector()[i]).collect();
            vec![
                Part::F(rows(s.U())),
                Part::F(sv),
                Part::F(rows(s.V().transpose())),
            ]
        }
        Err(_) => vec![
            Part::F(nans(m * um)),
            Part::F(nans(k)),
            Part::F(nans(vn * n)),
        ],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lu_pivots_reproduce_the_permutation() {
        let a = [1.0f64, 2.0, 3.0, 4.0, 5.0, 6.5, 7.0, 8.0, 10.0];
        let parts = lu(MatRef::from_row_major_slice(&a, 3, 3));
        let (Part::I(piv), Part::I(perm)) = (&parts[1], &parts[2]) else {
            panic!("index parts")
        };
        let mut rows: Vec<i32> = (0..3).collect();
        for (i, &p) in piv.iter().enumerate() {
            rows.swap(i, p as usize);
        }
        assert_eq!(&rows, perm);
    }
}
