//! The core's threefry random numbers (`quabla::random`) for `quabla.random`, so Rust and
//! Python draw the same bits from one implementation.

use crate::array::{dtype_from_name, RawArray};
use crate::errors::IntoPyResult;
use pyo3::prelude::*;
use quabla::random;

/// `(y0, y1)`: threefry-2x32 of the counters `(x0, x1)` under the key words `(k1, k2)`.
#[pyfunction]
fn random_threefry_2x32(
    k1: &RawArray,
    k2: &RawArray,
    x0: &RawArray,
    x1: &RawArray,
) -> PyResult<(RawArray, RawArray)> {
    let (a, b) = random::threefry_2x32(&k1.inner, &k2.inner, &x0.inner, &x1.inner).py()?;
    Ok((a.into(), b.into()))
}

/// Both threefry words for every position of `shape` under `key`.
#[pyfunction]
fn random_bits_pair(key: &RawArray, shape: Vec<usize>) -> PyResult<(RawArray, RawArray)> {
    let (a, b) = random::bits_pair(&key.inner, &shape).py()?;
    Ok((a.into(), b.into()))
}

/// Uniform floats of `dtype` in `[lo, hi)` (arrays of `dtype` broadcasting to `shape`).
#[pyfunction]
fn random_uniform(
    key: &RawArray,
    shape: Vec<usize>,
    dtype: &str,
    lo: &RawArray,
    hi: &RawArray,
) -> PyResult<RawArray> {
    let d = dtype_from_name(dtype)?;
    Ok(
        random::uniform_between(&key.inner, &shape, d, &lo.inner, &hi.inner)
            .py()?
            .into(),
    )
}

/// Standard normal samples of `dtype`.
#[pyfunction]
fn random_normal(key: &RawArray, shape: Vec<usize>, dtype: &str) -> PyResult<RawArray> {
    let d = dtype_from_name(dtype)?;
    Ok(random::normal(&key.inner, &shape, d).py()?.into())
}

/// The inverse error function of a float array.
#[pyfunction]
fn random_erfinv(x: &RawArray) -> PyResult<RawArray> {
    Ok(random::erfinv(&x.inner).py()?.into())
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(random_threefry_2x32, m)?)?;
    m.add_function(wrap_pyfunction!(random_bits_pair, m)?)?;
    m.add_function(wrap_pyfunction!(random_uniform, m)?)?;
    m.add_function(wrap_pyfunction!(random_normal, m)?)?;
    m.add_function(wrap_pyfunction!(random_erfinv, m)?)?;
    Ok(())
}
