//! Dense linear algebra: the primitives and the numpy/scipy compositions of
//! `quabla::linalg`, one function each over `RawArray`s.

use crate::array::RawArray;
use crate::errors::IntoPyResult;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use quabla::linalg::{self, NormOrd, Svd, Triangular};

fn raw(a: quabla::Array) -> RawArray {
    a.into()
}

#[pyfunction]
fn cholesky(a: &RawArray, symmetrize: bool, checked: bool) -> PyResult<RawArray> {
    let l = match (checked, symmetrize) {
        (true, _) => linalg::cholesky_checked(&a.inner),
        (false, true) => linalg::cholesky(&a.inner),
        (false, false) => linalg::cholesky_lower(&a.inner),
    };
    Ok(raw(l.py()?))
}

#[pyfunction]
fn lu(a: &RawArray) -> PyResult<(RawArray, RawArray, RawArray)> {
    let (f, p, q) = linalg::lu(&a.inner).py()?;
    Ok((raw(f), raw(p), raw(q)))
}

#[pyfunction]
fn triangular_solve(
    a: &RawArray,
    b: &RawArray,
    left_side: bool,
    lower: bool,
    transpose_a: bool,
    unit_diagonal: bool,
) -> PyResult<RawArray> {
    let how = Triangular {
        left_side,
        lower,
        transpose_a,
        unit_diagonal,
    };
    Ok(raw(linalg::triangular_solve(&a.inner, &b.inner, how).py()?))
}

#[pyfunction]
fn eigh(a: &RawArray, symmetrize: bool) -> PyResult<(RawArray, RawArray)> {
    let (w, v) = if symmetrize {
        linalg::eigh(&a.inner)
    } else {
        linalg::eigh_lower(&a.inner)
    }
    .py()?;
    Ok((raw(w), raw(v)))
}

#[pyfunction]
fn qr(a: &RawArray, full_matrices: bool) -> PyResult<(RawArray, RawArray)> {
    let (q, r) = linalg::qr(&a.inner, full_matrices).py()?;
    Ok((raw(q), raw(r)))
}

#[pyfunction]
fn svd(a: &RawArray, full_matrices: bool) -> PyResult<(RawArray, RawArray, RawArray)> {
    let Svd { u, s, vt } = linalg::svd(&a.inner, full_matrices).py()?;
    Ok((raw(u), raw(s), raw(vt)))
}

#[pyfunction]
fn singular_values(a: &RawArray) -> PyResult<RawArray> {
    Ok(raw(linalg::singular_values(&a.inner).py()?))
}

#[pyfunction]
fn solve(a: &RawArray, b: &RawArray) -> PyResult<RawArray> {
    Ok(raw(linalg::solve(&a.inner, &b.inner).py()?))
}

#[pyfunction]
fn cho_solve(c: &RawArray, lower: bool, b: &RawArray) -> PyResult<RawArray> {
    Ok(raw(linalg::cho_solve(&c.inner, lower, &b.inner).py()?))
}

#[pyfunction]
fn solve_triangular(
    a: &RawArray,
    b: &RawArray,
    lower: bool,
    trans: bool,
    unit_diagonal: bool,
) -> PyResult<RawArray> {
    Ok(raw(linalg::solve_triangular(
        &a.inner,
        &b.inner,
        lower,
        trans,
        unit_diagonal,
    )
    .py()?))
}

#[pyfunction]
fn det(a: &RawArray) -> PyResult<RawArray> {
    Ok(raw(linalg::det(&a.inner).py()?))
}

#[pyfunction]
fn slogdet(a: &RawArray) -> PyResult<(RawArray, RawArray)> {
    let (s, l) = linalg::slogdet(&a.inner).py()?;
    Ok((raw(s), raw(l)))
}

#[pyfunction]
fn inv(a: &RawArray) -> PyResult<RawArray> {
    Ok(raw(linalg::inv(&a.inner).py()?))
}

#[pyfunction]
#[pyo3(signature = (a, rcond=None))]
fn pinv(a: &RawArray, rcond: Option<f64>) -> PyResult<RawArray> {
    Ok(raw(linalg::pinv(&a.inner, rcond).py()?))
}

#[pyfunction]
#[pyo3(signature = (a, b, rcond=None))]
fn lstsq(
    a: &RawArray,
    b: &RawArray,
    rcond: Option<f64>,
) -> PyResult<(RawArray, RawArray, RawArray, RawArray)> {
    let r = linalg::lstsq(&a.inner, &b.inner, rcond).py()?;
    Ok((raw(r.x), raw(r.residuals), raw(r.rank), raw(r.s)))
}

/// numpy's `ord`: None, "fro", "nuc", or a number (±inf included).
fn norm_ord(ord: Option<&Bound<'_, PyAny>>) -> PyResult<NormOrd> {
    let Some(o) = ord else {
        return Ok(NormOrd::Default);
    };
    if o.is_none() {
        return Ok(NormOrd::Default);
    }
    if let Ok(s) = o.extract::<String>() {
        return match s.as_str() {
            "fro" => Ok(NormOrd::Fro),
            "nuc" => Ok(NormOrd::Nuc),
            other => Err(PyValueError::new_err(format!(
                "norm: ord {other:?} is not 'fro', 'nuc' or a number"
            ))),
        };
    }
    let p: f64 = o.extract()?;
    Ok(if p == f64::INFINITY {
        NormOrd::Inf
    } else if p == f64::NEG_INFINITY {
        NormOrd::NegInf
    } else {
        NormOrd::P(p)
    })
}

#[pyfunction]
#[pyo3(signature = (x, ord=None, axis=None, keepdims=false))]
fn norm(
    x: &RawArray,
    ord: Option<&Bound<'_, PyAny>>,
    axis: Option<Vec<isize>>,
    keepdims: bool,
) -> PyResult<RawArray> {
    let o = norm_ord(ord)?;
    Ok(raw(
        linalg::norm(&x.inner, o, axis.as_deref(), keepdims).py()?
    ))
}

#[pyfunction]
fn matrix_power(a: &RawArray, n: i64) -> PyResult<RawArray> {
    Ok(raw(linalg::matrix_power(&a.inner, n).py()?))
}

#[pyfunction]
#[pyo3(signature = (a, p=None))]
fn cond(a: &RawArray, p: Option<&Bound<'_, PyAny>>) -> PyResult<RawArray> {
    Ok(raw(linalg::cond(&a.inner, norm_ord(p)?).py()?))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let sub = PyModule::new(m.py(), "linalg")?;
    sub.add_function(wrap_pyfunction!(cholesky, &sub)?)?;
    sub.add_function(wrap_pyfunction!(lu, &sub)?)?;
    sub.add_function(wrap_pyfunction!(triangular_solve, &sub)?)?;
    sub.add_function(wrap_pyfunction!(eigh, &sub)?)?;
    sub.add_function(wrap_pyfunction!(qr, &sub)?)?;
    sub.add_function(wrap_pyfunction!(svd, &sub)?)?;
    sub.add_function(wrap_pyfunction!(singular_values, &sub)?)?;
    sub.add_function(wrap_pyfunction!(solve, &sub)?)?;
    sub.add_function(wrap_pyfunction!(cho_solve, &sub)?)?;
    sub.add_function(wrap_pyfunction!(solve_triangular, &sub)?)?;
    sub.add_function(wrap_pyfunction!(det, &sub)?)?;
    sub.add_function(wrap_pyfunction!(slogdet, &sub)?)?;
    sub.add_function(wrap_pyfunction!(inv, &sub)?)?;
    sub.add_function(wrap_pyfunction!(pinv, &sub)?)?;
    sub.add_function(wrap_pyfunction!(lstsq, &sub)?)?;
    sub.add_function(wrap_pyfunction!(norm, &sub)?)?;
    sub.add_function(wrap_pyfunction!(matrix_power, &sub)?)?;
    sub.add_function(wrap_pyfunction!(cond, &sub)?)?;
    m.add_submodule(&sub)?;
    Ok(())
}
