//! The factorization kernels on the host emulation, one block of 1 to 64 threads, checked
//! against what the factors must satisfy (`L Lᵀ = a`, `L U = a[perm]`, `op(a) x = b`,
//! computed here in Rust), LAPACK's pivot choices on ties and zero columns, and identical
//! bits at every block size.

use crate::emulate::testing::{at_block_sizes, elements, storage};
use crate::emulate::Storage;
use crate::plan::{plan_with, Step};
use quabla_abi::qir::Program;
use std::sync::Arc;

const THREADS: [u32; 5] = [1, 2, 3, 8, 64];

fn f64s(s: &Storage) -> Vec<f64> {
    elements(s, f64::from_le_bytes)
}

fn i32s(s: &Storage) -> Vec<i32> {
    elements(s, i32::from_le_bytes)
}

/// `text`'s outputs on `inputs` at every block size of [`THREADS`], after checking that its
/// plan is one block-per-matrix kernel; the bytes of every output must not depend on the
/// block size.
fn run(text: &str, inputs: &[&[f64]]) -> Vec<Arc<Storage>> {
    let p = Program::parse(text).unwrap();
    let plan = plan_with(&p, "t", 0).unwrap();
    assert!(
        matches!(&plan.steps[..], [Step::Kernel(k)] if k.block_per_element && !k.body.contains("__shared__")),
        "{:#?}",
        plan.steps
    );
    let values: Vec<Arc<Storage>> = inputs
        .iter()
        .map(|x| storage(x, f64::to_le_bytes))
        .collect();
    at_block_sizes(plan, &values, &THREADS)
}

/// A deterministic matrix of values in [-1, 1).
fn matrix(n: usize, seed: usize) -> Vec<f64> {
    (0..n * n)
        .map(|k| ((k * 7919 + seed * 104_729) % 2003) as f64 / 1001.5 - 1.0)
        .collect()
}

fn close(a: f64, b: f64, scale: f64) -> bool {
    (a - b).abs() <= 1e-12 * scale.max(1.0)
}

#[test]
fn lu_reconstructs_the_permuted_matrix_with_lapacks_pivots() {
    let n = 7;
    // A general matrix, one with a zero column (a zero pivot: its column is left unscaled)
    // and one whose first column ties in magnitude (the first row of largest magnitude
    // wins, as LAPACK's idamax).
    let mut singular = matrix(n, 2);
    (0..n).for_each(|i| singular[i * n + 3] = 0.0);
    let mut ties = matrix(n, 3);
    (0..n).for_each(|i| ties[i * n] = if i % 2 == 0 { -0.5 } else { 0.5 });
    let a: Vec<f64> = [matrix(n, 1), singular, ties].concat();
    let outs = run(
        "program(%0: f64[3, 7, 7]) {
  %1, %2, %3 = lu(%0) : f64[3, 7, 7], i32[3, 7], i32[3, 7]
  return %1, %2, %3
}",
        &[&a],
    );
    let (lu, pivots, perm) = (f64s(&outs[0]), i32s(&outs[1]), i32s(&outs[2]));
    for b in 0..3 {
        let m = &a[b * n * n..(b + 1) * n * n];
        let f = &lu[b * n * n..(b + 1) * n * n];
        let (piv, per) = (&pivots[b * n..(b + 1) * n], &perm[b * n..(b + 1) * n]);
        // The permutation is the pivots' swaps, in order.
        let mut want: Vec<i32> = (0..n as i32).collect();
        for (k, &p) in piv.iter().enumerate() {
            assert!((k..n).contains(&(p as usize)), "pivot {p} at step {k}");
            want.swap(k, p as usize);
        }
        assert_eq!(per, &want[..]);
        for i in 0..n {
            for j in 0..n {
                // (L U)[i][j], L unit lower, U upper.
                let mut s = 0.0;
                for k in 0..=i.min(j) {
                    let l = if k == i { 1.0 } else { f[i * n + k] };
                    s += l * f[k * n + j];
                }
                let got = m[per[i] as usize * n + j];
                assert!(
                    close(s, got, 1.0),
                    "matrix {b}: (LU)[{i}][{j}] = {s}, a = {got}"
                );
                // Partial pivoting bounds the multipliers.
                if j < i {
                    assert!(f[i * n + j].abs() <= 1.0, "matrix {b}: |L[{i}][{j}]| > 1");
                }
            }
        }
    }
    // Ties: rows 0 and 1 have |a| = 0.5 in column 0, and row 0 comes first.
    assert_eq!(pivots[2 * n], 0);
    // The zero column: U's diagonal there is zero and no multiplier is NaN.
    assert!(lu[n * n..2 * n * n].iter().all(|x| x.is_finite()));
}

#[test]
fn a_two_by_two_lu_gives_lapacks_factors_exactly() {
    // [[1, 2], [-1, 3]]: a tie kept in place, l = -1, u = [[1, 2], [0, 5]];
    // [[0, 1], [0, 2]]: a zero column, nothing scaled.
    let outs = run(
        "program(%0: f64[2, 2, 2]) {
  %1, %2, %3 = lu(%0) : f64[2, 2, 2], i32[2, 2], i32[2, 2]
  return %1, %2, %3
}",
        &[&[1.0, 2.0, -1.0, 3.0, 0.0, 1.0, 0.0, 2.0]],
    );
    assert_eq!(
        f64s(&outs[0]),
        vec![1.0, 2.0, -1.0, 5.0, 0.0, 1.0, 0.0, 2.0]
    );
    assert_eq!(i32s(&outs[1]), vec![0, 1, 0, 1]);
    assert_eq!(i32s(&outs[2]), vec![0, 1, 0, 1]);
}

#[test]
fn cholesky_reads_the_lower_triangle_and_is_nan_where_not_positive_definite() {
    let n = 6;
    // a = B Bᵀ + n I, its upper triangle overwritten with NaN (never read).
    let bm = matrix(n, 5);
    let mut spd = vec![0.0; n * n];
    for i in 0..n {
        for j in 0..n {
            spd[i * n + j] = (0..n).map(|k| bm[i * n + k] * bm[j * n + k]).sum::<f64>()
                + if i == j { n as f64 } else { 0.0 };
        }
    }
    let mut a = spd.clone();
    for i in 0..n {
        for j in i + 1..n {
            a[i * n + j] = f64::NAN;
        }
    }
    // The second matrix has a negative pivot at step 3.
    let mut bad = spd.clone();
    bad[3 * n + 3] = -100.0;
    let outs = run(
        "program(%0: f64[2, 6, 6]) {
  %1 = cholesky(%0) : f64[2, 6, 6]
  return %1
}",
        &[&[a, bad].concat()],
    );
    let l = f64s(&outs[0]);
    for i in 0..n {
        for j in 0..n {
            let s: f64 = (0..n).map(|k| l[i * n + k] * l[j * n + k]).sum();
            assert!(close(s, spd[i * n + j], 10.0), "(L Lᵀ)[{i}][{j}] = {s}");
            if j > i {
                assert_eq!(l[i * n + j], 0.0);
            }
        }
    }
    assert!(l[n * n..].iter().all(|x| x.is_nan()));
}

#[test]
fn triangular_solves_satisfy_their_equation_in_all_sixteen_forms() {
    let (n, m) = (5, 3);
    for code in 0..16u32 {
        let [left, lower, transpose, unit] = [0, 1, 2, 3].map(|b| code >> b & 1 == 1);
        // A well-conditioned triangle; the other triangle NaN, and the diagonal too where
        // it is taken as ones: none of it may be read.
        let mut a = matrix(n, code as usize);
        for i in 0..n {
            for j in 0..n {
                let other = if lower { j > i } else { j < i };
                if other || (unit && i == j) {
                    a[i * n + j] = f64::NAN;
                } else if i == j {
                    a[i * n + j] += 3.0_f64.copysign(a[i * n + j]);
                }
            }
        }
        let b = &matrix(n, 40 + code as usize)[..n * m];
        let (br, bc) = if left { (n, m) } else { (m, n) };
        let text = format!(
            "program(%0: f64[{n}, {n}], %1: f64[{br}, {bc}]) {{
  %2 = triangular_solve[left_side={left}, lower={lower}, transpose_a={transpose}, unit_diagonal={unit}](%0, %1) : f64[{br}, {bc}]
  return %2
}}"
        );
        let x = f64s(&run(&text, &[&a, b])[0]);
        // op(a)[i][j], reading only the triangle the op says.
        let opa = |i: usize, j: usize| -> f64 {
            let (r, c) = if transpose { (j, i) } else { (i, j) };
            if unit && r == c {
                1.0
            } else if (lower && c > r) || (!lower && c < r) {
                0.0
            } else {
                a[r * n + c]
            }
        };
        for r in 0..br {
            for c in 0..bc {
                let s: f64 = if left {
                    (0..n).map(|k| opa(r, k) * x[k * m + c]).sum()
                } else {
                    (0..n).map(|k| x[r * n + k] * opa(k, c)).sum()
                };
                assert!(
                    close(s, b[r * bc + c], 1e3),
                    "form {code} (left {left}, lower {lower}, transpose {transpose}, unit {unit}): [{r}][{c}] = {s}, b = {}",
                    b[r * bc + c]
                );
            }
        }
    }
}

#[test]
fn larger_matrices_go_to_cusolver_and_the_bound_is_in_rows() {
    let text = |n: usize| {
        format!(
            "program(%0: f32[{n}, {n}]) {{\n  %1 = cholesky(%0) : f32[{n}, {n}]\n  return %1\n}}"
        )
    };
    let steps = |n: usize, max: usize| {
        let p = Program::parse(&text(n)).unwrap();
        let types = p.value_types();
        super::kernel(
            "k",
            &quabla_abi::qir::LinalgOp::Cholesky,
            &[0],
            &[1],
            &types,
            max,
        )
        .is_some()
    };
    assert!(steps(64, super::MAX_ORDER));
    assert!(!steps(65, super::MAX_ORDER));
    assert!(!steps(4, 0));
}
