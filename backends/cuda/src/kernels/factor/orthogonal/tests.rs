//! eigh, QR and SVD on the host emulation at block sizes of 1 to 64 threads (identical bits
//! at each), checked against what the factors must satisfy (`a v = v diag(w)`, `q r = a`,
//! `u diag(s) vt = a`, orthonormal columns, the orders), closed forms (a tridiagonal
//! matrix's eigenvalues, a rank-one matrix's singular values) and LAPACK's signs.

use crate::emulate::testing::{at_block_sizes, elements, storage};
use crate::plan::{plan_with, Step};
use quabla_abi::qir::Program;

const THREADS: [u32; 5] = [1, 2, 3, 8, 64];

/// `text`'s outputs (as f64) on the f64 `inputs`, after checking that its plan is one
/// block-per-matrix kernel.
fn run(text: &str, inputs: &[&[f64]]) -> Vec<Vec<f64>> {
    let p = Program::parse(text).unwrap();
    let plan = plan_with(&p, "t", 0).unwrap();
    assert!(
        matches!(&plan.steps[..], [Step::Kernel(k)] if k.block_per_element && k.shared_scratch > 0),
        "{:#?}",
        plan.steps
    );
    let values: Vec<_> = inputs
        .iter()
        .map(|x| storage(x, f64::to_le_bytes))
        .collect();
    at_block_sizes(plan, &values, &THREADS)
        .iter()
        .map(|s| elements(s, f64::from_le_bytes))
        .collect()
}

/// `text`'s outputs (as f64) on the f32 `input`, at every block size of [`THREADS`].
fn run_f32(text: &str, input: &[f32]) -> Vec<Vec<f64>> {
    let plan = plan_with(&Program::parse(text).unwrap(), "t", 0).unwrap();
    at_block_sizes(plan, &[storage(input, f32::to_le_bytes)], &THREADS)
        .iter()
        .map(|s| {
            elements(s, f32::from_le_bytes)
                .into_iter()
                .map(f64::from)
                .collect()
        })
        .collect()
}

/// tridiag(-1, 2, -1) of order `n` and its eigenvalues ascending, `2 - 2 cos(k π / (n + 1))`.
pub(crate) fn tridiagonal(n: usize) -> (Vec<f64>, Vec<f64>) {
    let mut t = vec![0.0; n * n];
    for i in 0..n {
        t[i * n + i] = 2.0;
        if i > 0 {
            t[i * n + i - 1] = -1.0;
            t[(i - 1) * n + i] = -1.0;
        }
    }
    let w = (1..=n)
        .map(|k| 2.0 - 2.0 * (k as f64 * std::f64::consts::PI / (n as f64 + 1.0)).cos())
        .collect();
    (t, w)
}

/// A deterministic `r x c` matrix of values in [-1, 1).
fn matrix(r: usize, c: usize, seed: usize) -> Vec<f64> {
    (0..r * c)
        .map(|k| ((k * 7919 + seed * 104_729) % 2003) as f64 / 1001.5 - 1.0)
        .collect()
}

/// `a (r x k) b (k x c)`, or with `a` or `b` read transposed.
fn product(a: &[f64], b: &[f64], (r, k, c): (usize, usize, usize), ta: bool, tb: bool) -> Vec<f64> {
    let at = |i: usize, l: usize| if ta { a[l * r + i] } else { a[i * k + l] };
    let bt = |l: usize, j: usize| if tb { b[j * k + l] } else { b[l * c + j] };
    (0..r * c)
        .map(|e| (0..k).map(|l| at(e / c, l) * bt(l, e % c)).sum())
        .collect()
}

fn assert_close(got: &[f64], want: &[f64], tol: f64, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!((g - w).abs() <= tol, "{what}[{i}]: {g} vs {w}");
    }
}

/// The columns of `q` (r x c) are orthonormal, within `tol`.
fn assert_orthonormal_columns(q: &[f64], r: usize, c: usize, tol: f64, what: &str) {
    let qtq = product(q, q, (c, r, c), true, false);
    let eye: Vec<f64> = (0..c * c).map(|e| (e / c == e % c) as u8 as f64).collect();
    assert_close(&qtq, &eye, tol, what);
}

/// `w` ascends and `a v = v diag(w)` within `tol`, for `n x n` matrices.
fn assert_eigenpairs(a: &[f64], w: &[f64], v: &[f64], n: usize, tol: f64, what: &str) {
    assert!(w.windows(2).all(|p| p[0] <= p[1]), "{what}: {w:?}");
    let av = product(a, v, (n, n, n), false, false);
    let vw: Vec<f64> = (0..n * n).map(|e| v[e] * w[e % n]).collect();
    assert_close(&av, &vw, tol, &format!("{what}: A V = V diag(w)"));
}

/// The rows of `q` (r x c) are orthonormal.
fn assert_orthonormal_rows(q: &[f64], r: usize, c: usize, what: &str) {
    let qqt = product(q, q, (r, c, r), false, true);
    let eye: Vec<f64> = (0..r * r).map(|e| (e / r == e % r) as u8 as f64).collect();
    assert_close(&qqt, &eye, 1e-13, what);
}

#[test]
fn eigh_diagonalizes_the_lower_triangle_in_ascending_order() {
    let n = 7;
    // A random symmetric matrix; the same with its upper triangle NaN (never read); one with
    // a thrice repeated eigenvalue (an orthonormal basis of its space is still returned).
    let b = matrix(n, n, 1);
    let sym: Vec<f64> = (0..n * n).map(|e| b[e] + b[(e % n) * n + e / n]).collect();
    let mut lower_only = sym.clone();
    (0..n * n)
        .filter(|e| e % n > e / n)
        .for_each(|e| lower_only[e] = f64::NAN);
    let mut repeated = vec![0.0; n * n];
    (0..n).for_each(|i| repeated[i * n + i] = [2.0, -1.0, 2.0, 0.5, 2.0, 3.0, -4.0][i]);
    let a = [sym.clone(), lower_only, repeated.clone()].concat();
    let outs = run(
        "program(%0: f64[3, 7, 7]) {
  %1, %2 = eigh(%0) : f64[3, 7], f64[3, 7, 7]
  return %1, %2
}",
        &[&a],
    );
    let (w, v) = (&outs[0], &outs[1]);
    for (b, m) in [&sym, &sym, &repeated].into_iter().enumerate() {
        let (wb, vb) = (&w[b * n..(b + 1) * n], &v[b * n * n..(b + 1) * n * n]);
        assert_orthonormal_columns(vb, n, n, 1e-13, "VᵀV");
        assert_eigenpairs(m, wb, vb, n, 1e-13, &format!("matrix {b}"));
    }
    // The mirrored lower triangle is the same matrix: the same bits.
    assert_eq!(w[..n], w[n..2 * n]);
    assert_eq!(v[..n * n], v[n * n..2 * n * n]);
    assert_close(
        &w[2 * n..],
        &[-4.0, -1.0, 0.5, 2.0, 2.0, 2.0, 3.0],
        0.0,
        "diagonal",
    );
}

#[test]
fn eigh_matches_the_closed_form_of_a_tridiagonal_matrix_and_is_nan_for_nan() {
    let n = 12;
    let (t, want) = tridiagonal(n);
    let mut bad = t.clone();
    bad[5 * n + 2] = f64::NAN;
    let outs = run(
        "program(%0: f64[2, 12, 12]) {
  %1, %2 = eigh(%0) : f64[2, 12], f64[2, 12, 12]
  return %1, %2
}",
        &[&[t, bad].concat()],
    );
    assert_close(&outs[0][..n], &want, 1e-14, "eigenvalues");
    assert!(outs[0][n..].iter().all(|x| x.is_nan()));
    assert!(outs[1][n * n..].iter().all(|x| x.is_nan()));
}

/// `qr` of a batch of two `m x n` matrices, reduced or complete, checked: `q r = a`, `q`'s
/// columns orthonormal, `r` upper triangular.
fn check_qr(m: usize, n: usize, full: bool) {
    let k = m.min(n);
    let (qc, rr) = if full { (m, m) } else { (k, k) };
    let a = [matrix(m, n, 3), matrix(m, n, 4)].concat();
    let outs = run(
        &format!(
            "program(%0: f64[2, {m}, {n}]) {{
  %1, %2 = qr[full_matrices={full}](%0) : f64[2, {m}, {qc}], f64[2, {rr}, {n}]
  return %1, %2
}}"
        ),
        &[&a],
    );
    for b in 0..2 {
        let q = &outs[0][b * m * qc..(b + 1) * m * qc];
        let r = &outs[1][b * rr * n..(b + 1) * rr * n];
        let what = format!("{m}x{n} full={full}, matrix {b}");
        assert_orthonormal_columns(q, m, qc, 1e-13, &what);
        assert!(
            (0..rr * n).all(|e| e / n <= e % n || r[e] == 0.0),
            "{what}: r is not upper triangular"
        );
        let qr = product(q, r, (m, qc, n), false, false);
        assert_close(&qr, &a[b * m * n..(b + 1) * m * n], 1e-14, &what);
    }
}

#[test]
fn qr_reconstructs_tall_wide_and_square_matrices_reduced_and_complete() {
    for (m, n) in [(7, 4), (4, 7), (5, 5), (1, 3), (3, 1)] {
        check_qr(m, n, false);
        check_qr(m, n, true);
    }
}

#[test]
fn qr_takes_lapacks_signs() {
    // [[3], [4]]: LAPACK's reflector makes r = -5 (beta = -sign(alpha) |x|), q = [-0.6, -0.8],
    // as numpy.linalg.qr gives; a column zero below its diagonal is left as it is (tau 0),
    // so [[-2, 1], [0, 3]] is its own r with q the identity.
    let outs = run(
        "program(%0: f64[2, 1]) {
  %1, %2 = qr[full_matrices=false](%0) : f64[2, 1], f64[1, 1]
  return %1, %2
}",
        &[&[3.0, 4.0]],
    );
    assert_close(&outs[0], &[-0.6, -0.8], 1e-15, "q");
    assert_close(&outs[1], &[-5.0], 1e-15, "r");
    let outs = run(
        "program(%0: f64[2, 2]) {
  %1, %2 = qr[full_matrices=true](%0) : f64[2, 2], f64[2, 2]
  return %1, %2
}",
        &[&[-2.0, 1.0, 0.0, 3.0]],
    );
    assert_eq!(outs[0], vec![1.0, 0.0, 0.0, 1.0]);
    assert_eq!(outs[1], vec![-2.0, 1.0, 0.0, 3.0]);
}

#[test]
fn qr_of_no_columns_completes_to_the_identity() {
    let outs = run(
        "program(%0: f64[3, 0]) {
  %1, %2 = qr[full_matrices=true](%0) : f64[3, 3], f64[3, 0]
  return %1, %2
}",
        &[&[]],
    );
    assert_eq!(outs[0], vec![1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]);
}

/// `svd` of `a` (a batch of `m x n` matrices), checked: `u diag(s) vt = a`, `u`'s columns
/// and `vt`'s rows orthonormal (full ones too), `s` descending and non-negative, and the
/// values-only program's `s` the same bits. Returns `s`.
fn check_svd(a: &[f64], m: usize, n: usize, full: bool) -> Vec<f64> {
    let k = m.min(n);
    let batch = a.len() / (m * n);
    let (uc, vr) = if full { (m, n) } else { (k, k) };
    let outs = run(
        &format!(
            "program(%0: f64[{batch}, {m}, {n}]) {{
  %1, %2, %3 = svd[full_matrices={full}, compute_uv=true](%0) : f64[{batch}, {m}, {uc}], f64[{batch}, {k}], f64[{batch}, {vr}, {n}]
  return %1, %2, %3
}}"
        ),
        &[a],
    );
    let values = run(
        &format!(
            "program(%0: f64[{batch}, {m}, {n}]) {{
  %1 = svd[full_matrices=false, compute_uv=false](%0) : f64[{batch}, {k}]
  return %1
}}"
        ),
        &[a],
    );
    assert_eq!(values[0], outs[1], "the values alone are the same bits");
    for b in 0..batch {
        let u = &outs[0][b * m * uc..(b + 1) * m * uc];
        let s = &outs[1][b * k..(b + 1) * k];
        let vt = &outs[2][b * vr * n..(b + 1) * vr * n];
        let what = format!("{m}x{n} full={full}, matrix {b}");
        assert!(s.windows(2).all(|p| p[0] >= p[1]), "{what}: {s:?}");
        assert!(s.iter().all(|x| *x >= 0.0), "{what}: {s:?}");
        assert_orthonormal_columns(u, m, uc, 1e-13, &format!("{what}: UᵀU"));
        assert_orthonormal_rows(vt, vr, n, &format!("{what}: vt vtᵀ"));
        // u[:, :k] diag(s) vt[:k, :]
        let us: Vec<f64> = (0..m * k)
            .map(|e| u[(e / k) * uc + e % k] * s[e % k])
            .collect();
        let usv = product(&us, &vt[..k * n], (m, k, n), false, false);
        assert_close(&usv, &a[b * m * n..(b + 1) * m * n], 1e-13, &what);
    }
    outs[1].clone()
}

#[test]
fn svd_reconstructs_tall_wide_and_square_matrices_reduced_and_full() {
    for (m, n) in [(7, 4), (4, 7), (6, 6), (1, 5), (5, 1)] {
        let a = [matrix(m, n, 5), matrix(m, n, 6)].concat();
        check_svd(&a, m, n, false);
        check_svd(&a, m, n, true);
    }
}

#[test]
fn svd_of_rank_deficient_matrices_completes_orthonormal_vectors() {
    // x yᵀ: one singular value |x| |y|, the rest zero; the zero matrix; a matrix with a zero
    // column. Full u and vt stay orthonormal where W's columns vanish.
    let (m, n) = (6, 4);
    let (x, y) = (matrix(m, 1, 7), matrix(1, n, 8));
    let outer: Vec<f64> = (0..m * n).map(|e| x[e / n] * y[e % n]).collect();
    let mut zero_column = matrix(m, n, 9);
    (0..m).for_each(|i| zero_column[i * n + 2] = 0.0);
    let a = [outer, vec![0.0; m * n], zero_column].concat();
    for full in [false, true] {
        let s = check_svd(&a, m, n, full);
        let norm = |v: &[f64]| v.iter().map(|t| t * t).sum::<f64>().sqrt();
        assert!((s[0] - norm(&x) * norm(&y)).abs() <= 1e-14, "{s:?}");
        assert!(s[1..n].iter().all(|t| t.abs() <= 1e-15), "{s:?}");
        assert!(s[n..2 * n].iter().all(|t| *t == 0.0));
        assert_eq!(s[3 * n - 1], 0.0, "the zero column's value");
    }
    // Transposed (wide), the same values.
    let at: Vec<f64> = (0..3)
        .flat_map(|b| {
            let a = &a;
            (0..n * m).map(move |e| a[b * m * n + (e % m) * n + e / m])
        })
        .collect();
    let s = check_svd(&at, n, m, true);
    assert!((s[0] - check_svd(&a, m, n, true)[0]).abs() <= 1e-15);
}

#[test]
fn svd_is_nan_for_nan_and_f32_reconstructs() {
    let mut a = matrix(3, 3, 10);
    a[4] = f64::INFINITY;
    let outs = run(
        "program(%0: f64[3, 3]) {
  %1, %2, %3 = svd[full_matrices=false, compute_uv=true](%0) : f64[3, 3], f64[3], f64[3, 3]
  return %1, %2, %3
}",
        &[&a],
    );
    assert!(outs.iter().flatten().all(|x| x.is_nan()));
    // f32, its inner products summed in f64: u diag(s) vt within f32 rounding of a.
    let (m, n) = (9, 5);
    let a32: Vec<f32> = matrix(m, n, 11).iter().map(|x| *x as f32).collect();
    let outs = run_f32(
        &format!(
            "program(%0: f32[{m}, {n}]) {{
  %1, %2, %3 = svd[full_matrices=false, compute_uv=true](%0) : f32[{m}, {n}], f32[{n}], f32[{n}, {n}]
  return %1, %2, %3
}}"
        ),
        &a32,
    );
    let us: Vec<f64> = (0..m * n).map(|e| outs[0][e] * outs[1][e % n]).collect();
    let usv = product(&us, &outs[2], (m, n, n), false, false);
    let want: Vec<f64> = a32.iter().map(|x| f64::from(*x)).collect();
    assert_close(&usv, &want, 2e-6, "f32 u diag(s) vt");
}

#[test]
fn the_largest_sizes_a_gpu_takes_converge() {
    // 64 rows and columns, the bound on a GPU: eigh (f64 and f32), a full SVD of a tall
    // matrix, a complete QR; each within its type's rounding of the identities.
    let n = 64;
    let b = matrix(n, n, 12);
    let sym: Vec<f64> = (0..n * n).map(|e| b[e] + b[(e % n) * n + e / n]).collect();
    let outs = run(
        "program(%0: f64[64, 64]) {
  %1, %2 = eigh(%0) : f64[64], f64[64, 64]
  return %1, %2
}",
        &[&sym],
    );
    assert_orthonormal_columns(&outs[1], n, n, 1e-13, "64x64 VᵀV");
    assert_eigenpairs(&sym, &outs[0], &outs[1], n, 1e-12, "64x64");

    let sym32: Vec<f32> = sym.iter().map(|x| *x as f32).collect();
    let outs = run_f32(
        "program(%0: f32[64, 64]) {
  %1, %2 = eigh(%0) : f32[64], f32[64, 64]
  return %1, %2
}",
        &sym32,
    );
    let wide: Vec<f64> = sym32.iter().map(|x| f64::from(*x)).collect();
    // |A| is about 8 here: a few f32 roundings of it.
    assert_eigenpairs(&wide, &outs[0], &outs[1], n, 2e-5, "f32 64x64");
    // About 8 f32 roundings (with rotations rounded to f32 it was 6e-6).
    assert_orthonormal_columns(&outs[1], n, n, 5e-7, "f32 64x64 VᵀV");

    check_svd(&matrix(n, 40, 13), n, 40, true);
    check_qr(n, n, true);
}
