//! Conjugate gradients on a 100x100 symmetric positive definite system under `tree::jit`,
//! checked against the dense solve.
//!
//! ```no_run
//! let (x, info, dense) = quabla_examples::rust_api::cg_spd::solve(100)?;
//! # Ok::<(), quabla::Error>(())
//! ```

use quabla::linalg::{self, SolveOptions};
use quabla::{random, tree, Array, DType, Result};

/// CG's solution and status (0: converged) under `jit`, and the dense solve's solution, for
/// `A = M Mᵀ / n + I` and `b` drawn from a fixed key.
pub fn solve(n: usize) -> Result<(Array, Array, Array)> {
    let [km, kb] = random::split2(&random::key(7)?)?;
    let m = random::normal(&km, &[n, n], DType::F64)?;
    let a = (m.ex().matmul(m.t()) / n as f64 + Array::eye(n, DType::F64)).get()?;
    let b = random::normal(&kb, &[n], DType::F64)?;
    let opts = SolveOptions::default().tol(1e-10);
    let cg = tree::jit(move |(a, b): &(Array, Array)| tree::cg(|v| a.matmul(v), b, &opts));
    let (x, info) = cg.call(&(a.clone(), b.clone()))?;
    Ok((x, info, linalg::solve(&a, &b)?))
}
