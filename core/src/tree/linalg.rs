//! The iterative solvers [`cg`] and [`gmres`] with the unknown a [`Tree`].

use super::Tree;
use crate::array::Array;
use crate::error::Result;
use crate::linalg::SolveOptions;

/// Solves `A x = b` by conjugate gradients as [`crate::linalg::cg`] does, with `x` and `b`
/// trees of one structure and `A` a function of such a tree (`A` symmetric positive
/// definite). Returns `(x, info)`: `info` is 0 when converged, else the iterations run.
/// Derivatives come from the implicit function theorem, as there.
///
/// ```no_run
/// # use quabla::{linalg::SolveOptions, tree, Array, DType};
/// let a = (Array::eye(3, DType::F64)? * 4.0)?;
/// let b = Array::linspace(1.0, 3.0, 3, DType::F64)?;
/// let (x, info) = tree::cg(|v: &Array| a.matmul(v), &b, &SolveOptions::default().tol(1e-10))?;
/// # Ok::<(), quabla::Error>(())
/// ```
pub fn cg<T: Tree>(a: impl Fn(&T) -> Result<T>, b: &T, opts: &SolveOptions) -> Result<(T, Array)> {
    cg_with(a, b, None, None::<fn(&T) -> Result<T>>, opts)
}

/// [`cg`] from the guess `x0` (default zero) with the preconditioner `m`, a function
/// approximating `A⁻¹` (default none).
///
/// ```no_run
/// # use quabla::{linalg::SolveOptions, tree, Array, DType};
/// let d = Array::linspace(1.0, 100.0, 50, DType::F64)?;
/// let b = Array::ones(&[50], DType::F64)?;
/// let jacobi = |v: &Array| v / &d; // the diagonal's inverse
/// let opts = SolveOptions::default();
/// let (x, info) = tree::cg_with(|v: &Array| &d * v, &b, None, Some(jacobi), &opts)?;
/// # Ok::<(), quabla::Error>(())
/// ```
pub fn cg_with<T: Tree>(
    a: impl Fn(&T) -> Result<T>,
    b: &T,
    x0: Option<&T>,
    m: Option<impl Fn(&T) -> Result<T>>,
    opts: &SolveOptions,
) -> Result<(T, Array)> {
    solve_with(crate::linalg::cg, a, b, x0, m, opts)
}

/// Solves `A x = b` by restarted GMRES as [`crate::linalg::gmres`] does (any invertible
/// `A`), with `x` and `b` trees of one structure and `A` a function of such a tree.
///
/// ```no_run
/// # use quabla::{linalg::SolveOptions, tree, Array};
/// let a = Array::from_slice(&[4.0f64, 1.0, -2.0, 3.0], &[2, 2])?;
/// let b = Array::from_slice(&[1.0f64, 2.0], &[2])?;
/// let (x, info) = tree::gmres(|v: &Array| a.matmul(v), &b, &SolveOptions::default())?;
/// # Ok::<(), quabla::Error>(())
/// ```
pub fn gmres<T: Tree>(
    a: impl Fn(&T) -> Result<T>,
    b: &T,
    opts: &SolveOptions,
) -> Result<(T, Array)> {
    gmres_with(a, b, None, None::<fn(&T) -> Result<T>>, opts)
}

/// [`gmres`] from the guess `x0` (default zero) with the preconditioner `m` (default none).
///
/// ```no_run
/// # use quabla::{linalg::SolveOptions, tree, Array};
/// let a = Array::from_slice(&[4.0f64, 1.0, -2.0, 3.0], &[2, 2])?;
/// let b = Array::from_slice(&[1.0f64, 2.0], &[2])?;
/// let guess = Array::from_slice(&[0.3f64, 0.3], &[2])?;
/// let none = None::<fn(&Array) -> quabla::Result<Array>>;
/// let opts = SolveOptions::default();
/// let (x, info) = tree::gmres_with(|v: &Array| a.matmul(v), &b, Some(&guess), none, &opts)?;
/// # Ok::<(), quabla::Error>(())
/// ```
pub fn gmres_with<T: Tree>(
    a: impl Fn(&T) -> Result<T>,
    b: &T,
    x0: Option<&T>,
    m: Option<impl Fn(&T) -> Result<T>>,
    opts: &SolveOptions,
) -> Result<(T, Array)> {
    solve_with(crate::linalg::gmres, a, b, x0, m, opts)
}

type FlatSolver = fn(
    crate::linalg::LinearFn,
    &[Array],
    Option<&[Array]>,
    Option<crate::linalg::LinearFn>,
    &SolveOptions,
) -> Result<(Vec<Array>, Array)>;

/// Runs a solver of leaf lists on trees shaped like `b`.
fn solve_with<T: Tree>(
    solver: FlatSolver,
    a: impl Fn(&T) -> Result<T>,
    b: &T,
    x0: Option<&T>,
    m: Option<impl Fn(&T) -> Result<T>>,
    opts: &SolveOptions,
) -> Result<(T, Array)> {
    let flat_a = |v: &[Array]| Ok(a(&b.with_leaves(v.to_vec())?)?.leaves());
    let flat_m = m.map(|m| move |v: &[Array]| Ok(m(&b.with_leaves(v.to_vec())?)?.leaves()));
    let guess = x0.map(Tree::leaves);
    let (x, info) = solver(
        &flat_a,
        &b.leaves(),
        guess.as_deref(),
        flat_m.as_ref().map(|m| m as crate::linalg::LinearFn),
        opts,
    )?;
    Ok((b.with_leaves(x)?, info))
}
