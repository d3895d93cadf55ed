//! `lax` control flow over flat lists of arrays; the Python side checks tree structures.

use crate::array::RawArray;
use crate::errors::{from_py, IntoPyResult};
use crate::transforms::{arrays_of, call_flat, call_flat_pair, inners, raw_list, raws};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use quabla::lax::{self, Bound as LoopBound};
use quabla::Array;

#[pyfunction]
fn cond(
    pred: &RawArray,
    true_fn: Py<PyAny>,
    false_fn: Py<PyAny>,
    operands: Vec<RawArray>,
) -> PyResult<Vec<RawArray>> {
    let t = |a: &[Array]| call_flat(&true_fn, a);
    let f = |a: &[Array]| call_flat(&false_fn, a);
    Ok(raws(
        lax::cond(&pred.inner, &t, &f, &inners(&operands)).py()?,
    ))
}

type BranchFn = Box<dyn Fn(&[Array]) -> quabla::Result<Vec<Array>>>;

#[pyfunction]
fn switch(
    index: &RawArray,
    branches: Vec<Py<PyAny>>,
    operands: Vec<RawArray>,
) -> PyResult<Vec<RawArray>> {
    let fns: Vec<BranchFn> = branches
        .into_iter()
        .map(|b| Box::new(move |a: &[Array]| call_flat(&b, a)) as BranchFn)
        .collect();
    let refs: Vec<lax::RegionFn> = fns.iter().map(|b| b.as_ref() as lax::RegionFn).collect();
    Ok(raws(
        lax::switch(&index.inner, &refs, &inners(&operands)).py()?,
    ))
}

/// A `while` loop; with `max_steps`, bounded and reverse-differentiable
/// (`lax::bounded_while_loop_with`, keeping `checkpoints` carries for reverse mode).
#[pyfunction]
#[pyo3(signature = (cond_fn, body_fn, init, max_steps=None, checkpoints=None))]
fn while_loop(
    cond_fn: Py<PyAny>,
    body_fn: Py<PyAny>,
    init: Vec<RawArray>,
    max_steps: Option<usize>,
    checkpoints: Option<usize>,
) -> PyResult<Vec<RawArray>> {
    let c = |a: &[Array]| call_flat(&cond_fn, a);
    let b = |a: &[Array]| call_flat(&body_fn, a);
    let init = inners(&init);
    Ok(raws(match (max_steps, checkpoints) {
        (Some(n), k) => {
            let opts = lax::BoundedWhileOptions {
                max_steps: n,
                checkpoints: k,
            };
            lax::bounded_while_loop_with(&c, &b, &init, &opts).py()?
        }
        (None, None) => lax::while_loop(&c, &b, &init).py()?,
        (None, Some(_)) => {
            return Err(PyValueError::new_err(
                "while_loop: checkpoints sets the reverse-mode schedule of a bounded loop; \
                 pass max_steps too",
            ))
        }
    }))
}

/// A loop bound: a Python int (static) or an array (traced).
enum PyBound {
    Static(i64),
    Traced(RawArray),
}

impl<'py> FromPyObject<'_, 'py> for PyBound {
    type Error = PyErr;

    fn extract(ob: pyo3::Borrowed<'_, 'py, PyAny>) -> PyResult<Self> {
        if let Ok(a) = ob.cast::<RawArray>() {
            return Ok(PyBound::Traced(a.get().clone()));
        }
        Ok(PyBound::Static(ob.extract()?))
    }
}

impl PyBound {
    fn core(self) -> LoopBound {
        match self {
            PyBound::Static(v) => LoopBound::Static(v),
            PyBound::Traced(a) => LoopBound::Traced(a.inner),
        }
    }
}

#[pyfunction]
fn fori_loop(
    lower: PyBound,
    upper: PyBound,
    body: Py<PyAny>,
    init: Vec<RawArray>,
) -> PyResult<Vec<RawArray>> {
    let b = |i: &Array, c: &[Array]| {
        Python::attach(|py| {
            let out = body.call1(py, (RawArray::from(i.clone()), raw_list(py, c)?))?;
            arrays_of(out.bind(py), "fori_loop's body result")
        })
        .map_err(from_py)
    };
    Ok(raws(
        lax::fori_loop(lower.core(), upper.core(), &b, &inners(&init)).py()?,
    ))
}

#[pyfunction]
#[pyo3(signature = (f, init, xs, length = None, reverse = false, unroll = 1))]
fn scan(
    f: Py<PyAny>,
    init: Vec<RawArray>,
    xs: Vec<RawArray>,
    length: Option<usize>,
    reverse: bool,
    unroll: usize,
) -> PyResult<(Vec<RawArray>, Vec<RawArray>)> {
    let step = |c: &[Array], x: &[Array]| call_flat_pair(&f, &[c, x]);
    let (c, ys) = lax::scan(&step, &inners(&init), &inners(&xs), length, reverse, unroll).py()?;
    Ok((raws(c), raws(ys)))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(cond, m)?)?;
    m.add_function(wrap_pyfunction!(switch, m)?)?;
    m.add_function(wrap_pyfunction!(while_loop, m)?)?;
    m.add_function(wrap_pyfunction!(fori_loop, m)?)?;
    m.add_function(wrap_pyfunction!(scan, m)?)?;
    Ok(())
}
