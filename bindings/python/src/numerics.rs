//! The solvers over flat lists of arrays: `cg`/`gmres`, `newton`, `custom_linear_solve`,
//! `custom_root` and `odeint`. The Python side (`quabla/_src/numerics.py`,
//! `lax_implicit.py`) flattens pytrees and turns matrices into operators.

use crate::array::RawArray;
use crate::errors::{from_py, IntoPyResult};
use crate::transforms::{arrays_of, call_flat, inners, raw_list, raws};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use quabla::linalg::{self, SolveOptions};
use quabla::ode::{self, Gradient, Method, OdeOptions};
use quabla::root_finding::{FixedResidual, NewtonOptions, RootSolver};
use quabla::Array;

/// `(x, info)` of `A x = b` by `method` ("cg" or "gmres"); `a` and `m` are flat operators.
#[pyfunction]
#[pyo3(signature = (method, a, b, x0, m, tol, atol, maxiter, restart))]
#[allow(clippy::too_many_arguments)] // one flat entry point mirroring the Python keywords
fn linear_solve(
    method: &str,
    a: Py<PyAny>,
    b: Vec<RawArray>,
    x0: Option<Vec<RawArray>>,
    m: Option<Py<PyAny>>,
    tol: f64,
    atol: f64,
    maxiter: Option<usize>,
    restart: usize,
) -> PyResult<(Vec<RawArray>, RawArray)> {
    let op = |v: &[Array]| call_flat(&a, v);
    let pre = m.map(|m| move |v: &[Array]| call_flat(&m, v));
    let pre_ref: Option<linalg::LinearFn> = pre.as_ref().map(|p| p as linalg::LinearFn);
    let guess = x0.map(|x| inners(&x));
    let opts = SolveOptions {
        tol,
        atol,
        maxiter,
        restart,
    };
    let b = inners(&b);
    let solve = match method {
        "cg" => linalg::cg,
        "gmres" => linalg::gmres,
        other => return Err(PyValueError::new_err(format!("unknown solver {other:?}"))),
    };
    let (x, info) = solve(&op, &b, guess.as_deref(), pre_ref, &opts).py()?;
    Ok((raws(x), info.into()))
}

/// `(x, info)` with `f(x..., args...)` zero; `f` takes one flat list.
#[pyfunction]
#[pyo3(signature = (f, x0, args, tol, maxiter))]
fn newton(
    f: Py<PyAny>,
    x0: Vec<RawArray>,
    args: Vec<RawArray>,
    tol: Option<f64>,
    maxiter: Option<usize>,
) -> PyResult<(Vec<RawArray>, RawArray)> {
    let residual = |x: &[Array], a: &[Array]| call_flat(&f, &[x, a].concat());
    let opts = NewtonOptions { tol, maxiter };
    let (x, info) = quabla::newton(&residual, &inners(&x0), &inners(&args), &opts).py()?;
    Ok((raws(x), info.into()))
}

/// `x` of `A x = b` found by the caller's `solve(b) -> x` (which applies its own operator),
/// differentiated implicitly (`lax.custom_linear_solve`): `matvec` applies `A`;
/// `transpose_solve(b)` solves with `Aᵀ`, or None where `A` is symmetric. Each callable
/// takes and returns one flat list.
#[pyfunction]
#[pyo3(signature = (matvec, b, solve, transpose_solve))]
fn custom_linear_solve(
    matvec: Py<PyAny>,
    b: Vec<RawArray>,
    solve: Py<PyAny>,
    transpose_solve: Option<Py<PyAny>>,
) -> PyResult<Vec<RawArray>> {
    let op = |v: &[Array]| call_flat(&matvec, v);
    // The solvers carry their own operator (the caller's matvec, or its transpose), so the
    // one the core hands them is not used; `info` is 0, as JAX's solvers return none.
    let solver = |f: &Py<PyAny>, v: &[Array]| -> quabla::Result<(Vec<Array>, Array)> {
        let x = call_flat(f, v)?;
        let like = v.first().ok_or_else(|| {
            quabla::Error::Value("custom_linear_solve needs a right-hand side".into())
        })?;
        Ok((x, like.filled_beside(&[], 0, quabla::DType::I32)?))
    };
    let forward = |_: linalg::LinearFn, v: &[Array]| solver(&solve, v);
    let backward = transpose_solve
        .as_ref()
        .map(|t| move |_: linalg::LinearFn, v: &[Array]| solver(t, v));
    let backward_ref: Option<linalg::SolverFn> = backward.as_ref().map(|t| t as linalg::SolverFn);
    let (x, _info) = linalg::linear_solve(&op, &inners(&b), &forward, backward_ref).py()?;
    Ok(raws(x))
}

/// The residual a `custom_root` solver is given (`f` with what it captures fixed), callable
/// from Python on a flat list of arrays.
#[pyclass(unsendable, module = "quabla._quabla")]
struct Residual(FixedResidual);

#[pymethods]
impl Residual {
    fn __call__(&self, x: Vec<RawArray>) -> PyResult<Vec<RawArray>> {
        Ok(raws((self.0)(&inners(&x)).py()?))
    }
}

/// A root of `f` (one flat list to one of the same types) found by the caller's
/// `solve(g, x0) -> x`, where `g` is the core's `Residual` (`f` over the values it captures,
/// made inputs of the solve's trace), differentiated implicitly with respect to what `f`
/// captures (`lax.custom_root`).
#[pyfunction]
fn custom_root(f: Py<PyAny>, x0: Vec<RawArray>, solve: Py<PyAny>) -> PyResult<Vec<RawArray>> {
    let residual = |x: &[Array], _: &[Array]| call_flat(&f, x);
    let solver: RootSolver = std::sync::Arc::new(move |g: FixedResidual, x0: &[Array]| {
        Python::attach(|py| {
            let out = solve.call1(py, (Residual(g), raw_list(py, x0)?))?;
            arrays_of(out.bind(py), "custom_root's solve result")
        })
        .map_err(from_py)
    });
    Ok(raws(
        quabla::root_finding::custom_root(&residual, &inners(&x0), &[], solver).py()?,
    ))
}

/// `(ys, steps, accepted, rejected, reached)`; `func` takes the flat list `(y..., t,
/// args...)`.
#[pyfunction]
#[pyo3(signature = (func, y0, t, args, method, rtol, atol, max_steps, dt0, gradient, throw, checkpoints=None))]
#[allow(clippy::too_many_arguments)] // one flat entry point mirroring the Python keywords
fn odeint(
    func: Py<PyAny>,
    y0: Vec<RawArray>,
    t: &RawArray,
    args: Vec<RawArray>,
    method: &str,
    rtol: f64,
    atol: f64,
    max_steps: usize,
    dt0: Option<f64>,
    gradient: &str,
    throw: bool,
    checkpoints: Option<usize>,
) -> PyResult<(Vec<RawArray>, RawArray, RawArray, RawArray, RawArray)> {
    let method = match method {
        "dopri5" => Method::Dopri5,
        "tsit5" => Method::Tsit5,
        "rk4" => Method::Rk4,
        "rosenbrock23" => Method::Rosenbrock23,
        other => {
            return Err(PyValueError::new_err(format!(
                "unknown method {other:?}; use 'dopri5', 'tsit5', 'rk4' or 'rosenbrock23'"
            )))
        }
    };
    let gradient = match gradient {
        "direct" => Gradient::Direct,
        "adjoint" => Gradient::Adjoint,
        "forward" => Gradient::ForwardOnly,
        other => {
            return Err(PyValueError::new_err(format!(
                "unknown gradient mode {other:?}; use 'direct', 'adjoint' or 'forward'"
            )))
        }
    };
    let field = |y: &[Array], tt: &Array, a: &[Array]| {
        call_flat(&func, &[y, std::slice::from_ref(tt), a].concat())
    };
    let opts = OdeOptions {
        method,
        rtol,
        atol,
        max_steps,
        checkpoints,
        dt0,
        gradient,
        save_step_times: false,
        throw,
    };
    let sol = ode::odeint(&field, &inners(&y0), &t.inner, &inners(&args), &opts).py()?;
    Ok((
        raws(sol.ys),
        sol.stats.steps.into(),
        sol.stats.accepted.into(),
        sol.stats.rejected.into(),
        sol.stats.reached.into(),
    ))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(linear_solve, m)?)?;
    m.add_function(wrap_pyfunction!(newton, m)?)?;
    m.add_function(wrap_pyfunction!(custom_linear_solve, m)?)?;
    m.add_function(wrap_pyfunction!(custom_root, m)?)?;
    m.add_class::<Residual>()?;
    m.add_function(wrap_pyfunction!(odeint, m)?)?;
    Ok(())
}
