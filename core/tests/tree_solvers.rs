//! `tree::cg` and `tree::gmres` (and their `_with` forms) on a two-leaf unknown, against
//! the dense solve of the same system; the gradient in `b` against the transposed solve;
//! the option setters.

mod common;

use common::cpu;
use quabla::linalg::{self, SolveOptions};
use quabla::tree::{self, Tree};
use quabla::{Array, Axes, Result};

fn arr(v: &[f64], shape: &[usize]) -> Array {
    Array::from_slice_on(&cpu(), v, shape).unwrap()
}

fn vals(a: &Array) -> Vec<f64> {
    a.to_vec::<f64>().unwrap()
}

/// An unknown of two leaves: a 3-vector and a 2-vector.
#[derive(Clone, Debug, Tree)]
struct Pair {
    u: Array,
    v: Array,
}

impl Pair {
    fn joined(&self) -> Result<Array> {
        Array::concatenate(&[&self.u, &self.v], 0)
    }

    fn split(w: &Array) -> Result<Pair> {
        Ok(Pair {
            u: w.slice(&[0], &[3], &[1])?,
            v: w.slice(&[3], &[5], &[1])?,
        })
    }
}

/// A 5x5 matrix: `M Mᵀ + I` (symmetric positive definite) or, `symmetric` false, `M + 3I`.
fn matrix(symmetric: bool) -> Array {
    let m: Vec<f64> = (0..25).map(|i| ((i * 7 % 11) as f64 - 5.0) / 5.0).collect();
    let mut a = vec![0.0; 25];
    for i in 0..5 {
        for j in 0..5 {
            a[i * 5 + j] = match symmetric {
                true => (0..5).map(|k| m[i * 5 + k] * m[j * 5 + k]).sum::<f64>(),
                false => m[i * 5 + j],
            };
        }
        a[i * 5 + i] += if symmetric { 1.0 } else { 3.0 };
    }
    arr(&a, &[5, 5])
}

fn b() -> Pair {
    Pair {
        u: arr(&[1.0, -2.0, 0.5], &[3]),
        v: arr(&[0.25, 3.0], &[2]),
    }
}

fn close(got: &Pair, want: &Array, tol: f64) {
    let (g, w) = (vals(&got.joined().unwrap()), vals(want));
    for (x, y) in g.iter().zip(&w) {
        assert!((x - y).abs() <= tol * (1.0 + y.abs()), "{g:?} vs {w:?}");
    }
}

#[test]
fn cg_and_gmres_on_a_tree_agree_with_the_dense_solve() {
    let opts = SolveOptions::default().tol(1e-12);
    for symmetric in [true, false] {
        let a = matrix(symmetric);
        let apply = |x: &Pair| Pair::split(&a.matmul(&x.joined()?)?);
        let dense = linalg::solve(&a, &b().joined().unwrap()).unwrap();
        let (x, info) = tree::gmres(apply, &b(), &opts).unwrap();
        assert_eq!(info.item::<i32>().unwrap(), 0);
        close(&x, &dense, 1e-9);
        if symmetric {
            let (x, info) = tree::cg(apply, &b(), &opts).unwrap();
            assert_eq!(info.item::<i32>().unwrap(), 0);
            close(&x, &dense, 1e-9);
        }
    }
}

#[test]
fn a_guess_and_a_preconditioner_reach_the_same_solution() {
    let a = matrix(true);
    let apply = |x: &Pair| Pair::split(&a.matmul(&x.joined()?)?);
    // Jacobi: divide by the diagonal.
    let diag: Vec<f64> = vals(&a).iter().step_by(6).copied().collect();
    let d = Pair::split(&arr(&diag, &[5])).unwrap();
    let jacobi = |x: &Pair| x.zip_map(&d, |x, d| x / d);
    let guess = Pair {
        u: arr(&[0.1, 0.1, 0.1], &[3]),
        v: arr(&[0.1, 0.1], &[2]),
    };
    let dense = linalg::solve(&a, &b().joined().unwrap()).unwrap();
    let opts = SolveOptions::default().tol(1e-12);
    let (x, info) = tree::cg_with(apply, &b(), Some(&guess), Some(jacobi), &opts).unwrap();
    assert_eq!(info.item::<i32>().unwrap(), 0);
    close(&x, &dense, 1e-9);
    let (x, info) = tree::gmres_with(apply, &b(), Some(&guess), Some(jacobi), &opts).unwrap();
    assert_eq!(info.item::<i32>().unwrap(), 0);
    close(&x, &dense, 1e-9);
    // Few iterations: the status is the count run, as scipy's.
    let (_, info) = tree::cg(apply, &b(), &SolveOptions::default().tol(1e-14).maxiter(2)).unwrap();
    assert_eq!(info.item::<i32>().unwrap(), 2);
    // A guess of another structure is refused, naming the mismatch.
    let short = Pair {
        u: arr(&[0.0, 0.0], &[2]),
        v: arr(&[0.0, 0.0], &[2]),
    };
    let none = None::<fn(&Pair) -> Result<Pair>>;
    let err = tree::cg_with(apply, &b(), Some(&short), none, &opts).unwrap_err();
    assert!(err.to_string().contains("guess"), "{err}");
}

#[test]
fn the_gradient_in_b_is_the_transposed_solve() {
    // d/db Σ w·x(b) with A x = b is A⁻ᵀ w.
    let a = matrix(false);
    let w = arr(&[0.5, -1.0, 2.0, 0.25, 1.5], &[5]);
    let loss = |b: &Pair, w: &Array| -> Result<Array> {
        let apply = |x: &Pair| Pair::split(&a.matmul(&x.joined()?)?);
        let (x, _) = tree::gmres(apply, b, &SolveOptions::default().tol(1e-12))?;
        (&x.joined()? * w)?.sum(Axes::All, false)
    };
    let g = tree::grad(loss)(&b(), &w).unwrap();
    let want = linalg::solve(&a.transpose(&[1, 0]).unwrap(), &w).unwrap();
    close(&g, &want, 1e-8);
}
