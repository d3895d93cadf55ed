//! Linear algebra: the dense primitives (`cholesky_lower`, `lu`, `triangular_solve`,
//! `eigh_lower`, `qr`, `svd`; rules in `ops/linalg.rs`), numpy/scipy compositions over them
//! (`dense.rs`), and iterative solvers with implicit derivatives (`cg`, `gmres`, and the
//! `linear_solve` primitive they rest on).

mod cg;
mod dense;
mod gmres;
pub(crate) mod vector;

pub use crate::ops::linalg::{
    cholesky_lower, eigh_lower, lu, qr, singular_values, svd, triangular_solve, Svd, Triangular,
};
pub use dense::{
    cho_solve, cholesky, cholesky_checked, cond, det, eigh, inv, lstsq, lu_solve, matrix_power,
    norm, pinv, slogdet, solve, solve_triangular, Lstsq, NormOrd,
};

pub use crate::ops::linear_solve::{linear_solve, LinearFn, SolverFn};
pub use cg::cg;
pub use gmres::gmres;

use crate::array::Array;
use crate::error::{Error, Result};

/// Stopping rules of the iterative solvers, with scipy's / JAX's defaults.
#[derive(Clone, Debug)]
pub struct SolveOptions {
    /// Relative tolerance: stop when `‖r‖ <= max(tol·‖b‖, atol)` (default 1e-5).
    pub tol: f64,
    /// Absolute tolerance (default 0).
    pub atol: f64,
    /// Iteration limit (cg: iterations, gmres: restart cycles); default `10·size(b)`.
    pub maxiter: Option<usize>,
    /// GMRES: Krylov dimension of one cycle (default 20).
    pub restart: usize,
}

impl Default for SolveOptions {
    fn default() -> Self {
        SolveOptions {
            tol: 1e-5,
            atol: 0.0,
            maxiter: None,
            restart: 20,
        }
    }
}

/// Setters, so options read as one expression: `SolveOptions::default().tol(1e-10)`.
///
/// ```
/// let opts = quabla::linalg::SolveOptions::default().tol(1e-10).maxiter(500);
/// assert_eq!((opts.tol, opts.atol, opts.maxiter), (1e-10, 0.0, Some(500)));
/// ```
impl SolveOptions {
    /// Sets [`SolveOptions::tol`].
    ///
    /// ```
    /// let opts = quabla::linalg::SolveOptions::default().tol(1e-10);
    /// ```
    pub fn tol(mut self, tol: f64) -> Self {
        self.tol = tol;
        self
    }

    /// Sets [`SolveOptions::atol`].
    ///
    /// ```
    /// let opts = quabla::linalg::SolveOptions::default().atol(1e-12);
    /// ```
    pub fn atol(mut self, atol: f64) -> Self {
        self.atol = atol;
        self
    }

    /// Sets [`SolveOptions::maxiter`].
    ///
    /// ```
    /// let opts = quabla::linalg::SolveOptions::default().maxiter(200);
    /// ```
    pub fn maxiter(mut self, maxiter: usize) -> Self {
        self.maxiter = Some(maxiter);
        self
    }

    /// Sets [`SolveOptions::restart`].
    ///
    /// ```
    /// let opts = quabla::linalg::SolveOptions::default().restart(40);
    /// ```
    pub fn restart(mut self, restart: usize) -> Self {
        self.restart = restart;
        self
    }
}

/// The operator `v -> a @ v` of a square matrix, for the solvers.
///
/// ```no_run
/// # use quabla::{linalg, Array};
/// let a = Array::from_slice(&[2.0f32, 0.0, 0.0, 3.0], &[2, 2])?;
/// let av = linalg::dense(&a)(&[Array::from_slice(&[1.0f32, 1.0], &[2])?])?;
/// # Ok::<(), quabla::Error>(())
/// ```
pub fn dense(a: &Array) -> impl Fn(&[Array]) -> Result<Vec<Array>> + '_ {
    move |v: &[Array]| {
        if v.len() != 1 || a.ndim() != 2 || v[0].ndim() != 1 || a.shape()[1] != v[0].shape()[0] {
            return Err(Error::Shape(format!(
                "dense operator: a matrix of shape {:?} applies to one vector of length {}",
                a.shape(),
                a.shape().get(1).copied().unwrap_or(0)
            )));
        }
        Ok(vec![a.matmul(&v[0])?])
    }
}

/// `max(tol·‖b‖, atol)` as a scalar of b's dtype.
fn tolerance(b: &[Array], opts: &SolveOptions) -> Result<Array> {
    if !(opts.tol >= 0.0 && opts.atol >= 0.0) {
        return Err(Error::Value(format!(
            "solver tolerances must be non-negative numbers, got tol={} atol={}",
            opts.tol, opts.atol
        )));
    }
    let bnorm = vector::vdot(b, b)?.sqrt()?;
    (&bnorm * opts.tol)?.maximum(opts.atol)
}

fn check_guess(x0: &[Array], b: &[Array]) -> Result<Vec<Array>> {
    let same = x0.len() == b.len()
        && x0
            .iter()
            .zip(b)
            .all(|(x, y)| x.tensor_type() == y.tensor_type());
    if !same {
        return Err(Error::Shape(
            "the initial guess x0 must have the shapes and dtypes of b".into(),
        ));
    }
    Ok(x0.to_vec())
}

/// scipy's info: 0 when converged, else the iteration count.
fn info_from(converged: &Array, iterations: &Array) -> Result<Array> {
    converged.select(&iterations.zeros_like()?, iterations)
}
