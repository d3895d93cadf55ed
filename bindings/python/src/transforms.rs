//! The core's transformations over flat lists of arrays, each taking a Python callable
//! `f(list[RawArray]) -> list[RawArray]`. Pytrees are the Python side's business
//! (`quabla/_src/api.py` flattens before and unflattens after).

use crate::array::{dtype_from_name, RawArray};
use crate::errors::{from_py, IntoPyResult};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::PyList;
use quabla::{Array, Jit};

/// Arrays from a Python sequence of `RawArray`s, naming the offender otherwise.
pub fn arrays_of(ob: &Bound<'_, PyAny>, what: &str) -> PyResult<Vec<Array>> {
    let mut out = Vec::new();
    for (i, item) in ob.try_iter()?.enumerate() {
        let item = item?;
        match item.cast::<RawArray>() {
            Ok(a) => out.push(a.get().inner.clone()),
            Err(_) => {
                return Err(PyTypeError::new_err(format!(
                    "{what}: item {i} is a {}, not an array",
                    item.get_type().name()?
                )))
            }
        }
    }
    Ok(out)
}

pub fn raw_list<'py>(py: Python<'py>, arrays: &[Array]) -> PyResult<Bound<'py, PyList>> {
    PyList::new(py, arrays.iter().map(|a| RawArray::from(a.clone())))
}

pub fn raws(v: Vec<Array>) -> Vec<RawArray> {
    v.into_iter().map(RawArray::from).collect()
}

pub fn inners(v: &[RawArray]) -> Vec<Array> {
    v.iter().map(|a| a.inner.clone()).collect()
}

/// Calls a flat Python function on arrays; its exception travels back as `Error::Callback`.
pub fn call_flat(f: &Py<PyAny>, args: &[Array]) -> quabla::Result<Vec<Array>> {
    Python::attach(|py| {
        let out = f.call1(py, (raw_list(py, args)?,))?;
        arrays_of(out.bind(py), "a traced function's result")
    })
    .map_err(from_py)
}

/// Calls a flat Python function returning two lists of arrays.
pub fn call_flat_pair(
    f: &Py<PyAny>,
    args: &[&[Array]],
) -> quabla::Result<(Vec<Array>, Vec<Array>)> {
    Python::attach(|py| {
        let lists = args
            .iter()
            .map(|a| raw_list(py, a))
            .collect::<PyResult<Vec<_>>>()?;
        let out = f.call1(py, pyo3::types::PyTuple::new(py, lists)?)?;
        let (a, b): (Bound<'_, PyAny>, Bound<'_, PyAny>) = out.bind(py).extract()?;
        Ok((
            arrays_of(&a, "a rule's first result")?,
            arrays_of(&b, "a rule's second result")?,
        ))
    })
    .map_err(from_py)
}

type FlatFn = Box<dyn Fn(&[Array]) -> quabla::Result<Vec<Array>> + Send + Sync>;

fn flat(f: Py<PyAny>) -> FlatFn {
    Box::new(move |a: &[Array]| call_flat(&f, a))
}

/// `(outputs, output tangents)` of `f` at `primals` along `tangents`.
#[pyfunction]
fn jvp(
    f: Py<PyAny>,
    primals: Vec<RawArray>,
    tangents: Vec<RawArray>,
) -> PyResult<(Vec<RawArray>, Vec<RawArray>)> {
    let (o, t) = quabla::ad::jvp(flat(f), &inners(&primals), &inners(&tangents)).py()?;
    Ok((raws(o), raws(t)))
}

/// The pullback returned by `vjp`: cotangents of the outputs to cotangents of the inputs.
#[pyclass(frozen, module = "quabla._quabla")]
struct Pullback(quabla::ad::Pullback);

#[pymethods]
impl Pullback {
    fn __call__(&self, cotangents: Vec<RawArray>) -> PyResult<Vec<RawArray>> {
        Ok(raws(self.0.call(&inners(&cotangents)).py()?))
    }
}

/// `(outputs, pullback)` of `f` at `primals`.
#[pyfunction]
fn vjp(f: Py<PyAny>, primals: Vec<RawArray>) -> PyResult<(Vec<RawArray>, Pullback)> {
    let (o, pb) = quabla::ad::vjp(flat(f), &inners(&primals)).py()?;
    Ok((raws(o), Pullback(pb)))
}

/// The outputs of `f` followed by the gradients of its first output w.r.t. `argnums`.
#[pyfunction]
fn value_and_grad(
    f: Py<PyAny>,
    args: Vec<RawArray>,
    argnums: Vec<usize>,
    has_aux: bool,
) -> PyResult<Vec<RawArray>> {
    let vg = quabla::ad::value_and_grad(flat(f), &argnums, has_aux);
    Ok(raws(vg(&inners(&args)).py()?))
}

/// Jacobians (`mode` = "fwd" or "rev") or the Hessian ("hessian"), output-major.
#[pyfunction]
fn jacobian(
    f: Py<PyAny>,
    args: Vec<RawArray>,
    argnums: Vec<usize>,
    mode: &str,
) -> PyResult<Vec<RawArray>> {
    let a = inners(&args);
    let r = match mode {
        "fwd" => quabla::ad::jacfwd(flat(f), &argnums)(&a),
        "rev" => quabla::ad::jacrev(flat(f), &argnums)(&a),
        "hessian" => quabla::ad::hessian(flat(f), &argnums)(&a),
        other => {
            return Err(PyTypeError::new_err(format!(
                "unknown jacobian mode `{other}`"
            )))
        }
    };
    Ok(raws(r.py()?))
}

/// `f` vectorised over `in_axes`; `out_axes(n)` gives the output axes once `f` has been
/// traced and its `n` outputs are known; `axis_name` names the batch axis for `psum` & co.
#[pyfunction]
#[pyo3(signature = (f, args, in_axes, out_axes, axis_name = None))]
fn vmap(
    f: Py<PyAny>,
    args: Vec<RawArray>,
    in_axes: Vec<Option<usize>>,
    out_axes: Py<PyAny>,
    axis_name: Option<String>,
) -> PyResult<Vec<RawArray>> {
    let axes_of = move |n: usize| -> quabla::Result<Vec<Option<usize>>> {
        Python::attach(|py| out_axes.call1(py, (n,))?.extract::<Vec<Option<usize>>>(py))
            .map_err(from_py)
    };
    let g = quabla::batching::vmap_with_axis_name(flat(f), &in_axes, axes_of, axis_name.as_deref());
    Ok(raws(g(&inners(&args)).py()?))
}

/// A collective over a named `vmap` axis: `kind` is `sum`, `max` or `min`.
#[pyfunction]
fn named_axis_reduce(x: RawArray, axis_name: &str, kind: &str) -> PyResult<RawArray> {
    let r = match kind {
        "sum" => quabla::lax::psum(&x.inner, axis_name),
        "max" => quabla::lax::pmax(&x.inner, axis_name),
        "min" => quabla::lax::pmin(&x.inner, axis_name),
        other => {
            return Err(PyTypeError::new_err(format!(
                "unknown collective `{other}`"
            )))
        }
    };
    Ok(r.py()?.into())
}

/// Each element's position along a named `vmap` axis (an int32 scalar).
#[pyfunction]
fn axis_index(axis_name: &str) -> PyResult<RawArray> {
    Ok(quabla::lax::axis_index(axis_name).py()?.into())
}

/// The `(shape, dtype)` of each output of `f` at inputs of these shapes and dtypes, traced
/// without values (`jax.eval_shape`).
#[pyfunction]
fn eval_shape(
    f: Py<PyAny>,
    shapes: Vec<Vec<usize>>,
    dtypes: Vec<String>,
) -> PyResult<Vec<(Vec<usize>, &'static str)>> {
    let types = shapes
        .into_iter()
        .zip(&dtypes)
        .map(|(shape, d)| Ok(quabla::TensorType::new(dtype_from_name(d)?, shape)))
        .collect::<PyResult<Vec<_>>>()?;
    let device = quabla::default_device().py()?;
    let outs = quabla::eval_shape(flat(f), &types, &device).py()?;
    Ok(outs
        .into_iter()
        .map(|t| (t.shape, t.dtype.numpy_name()))
        .collect())
}

/// `custom_jvp`: `f`'s value with `rule(primals, tangents) -> (outputs, tangents)`.
#[pyfunction]
fn custom_jvp(f: Py<PyAny>, rule: Py<PyAny>, args: Vec<RawArray>) -> PyResult<Vec<RawArray>> {
    let r = move |p: &[Array], t: &[Array]| call_flat_pair(&rule, &[p, t]);
    Ok(raws(quabla::custom_jvp(flat(f), r)(&inners(&args)).py()?))
}

/// `custom_vjp`: `fwd(args) -> (outputs, residuals)`, `bwd(residuals, cts) -> cotangents`.
#[pyfunction]
fn custom_vjp(
    f: Py<PyAny>,
    fwd: Py<PyAny>,
    bwd: Py<PyAny>,
    args: Vec<RawArray>,
) -> PyResult<Vec<RawArray>> {
    let fw = move |a: &[Array]| call_flat_pair(&fwd, &[a]);
    let bw = move |res: &[Array], ct: &[Array]| {
        Python::attach(|py| {
            let out = bwd.call1(py, (raw_list(py, res)?, raw_list(py, ct)?))?;
            arrays_of(out.bind(py), "custom_vjp's bwd result")
        })
        .map_err(from_py)
    };
    Ok(raws(
        quabla::custom_vjp(flat(f), fw, bw)(&inners(&args)).py()?,
    ))
}

/// `checkpoint`: `f`, recomputed in the backward pass instead of storing its intermediates.
#[pyfunction]
fn checkpoint(f: Py<PyAny>, args: Vec<RawArray>) -> PyResult<Vec<RawArray>> {
    Ok(raws(quabla::checkpoint(flat(f))(&inners(&args)).py()?))
}

/// A function converted by `closure_convert`: its program over `(args..., consts...)`.
#[pyclass(frozen, module = "quabla._quabla")]
struct ConvertedFn(quabla::qir::Program);

#[pymethods]
impl ConvertedFn {
    fn __call__(&self, args: Vec<RawArray>) -> PyResult<Vec<RawArray>> {
        Ok(raws(quabla::call_program(&self.0, &inners(&args)).py()?))
    }
}

/// `f` traced at arguments like `args`, and the traced values it captures from enclosing
/// traces, which its program takes after its own arguments (`jax.closure_convert`).
#[pyfunction]
fn closure_convert(f: Py<PyAny>, args: Vec<RawArray>) -> PyResult<(ConvertedFn, Vec<RawArray>)> {
    let (p, consts) = quabla::closure_convert(flat(f), &inners(&args)).py()?;
    Ok((ConvertedFn(p), raws(consts)))
}

/// A compiled function: traced and compiled once per input signature.
#[pyclass(frozen, module = "quabla._quabla", name = "Jit")]
struct PyJit(Jit<FlatFn>);

#[pymethods]
impl PyJit {
    #[new]
    #[pyo3(signature = (f, platform = None))]
    fn new(f: Py<PyAny>, platform: Option<&str>) -> PyResult<Self> {
        let mut j = quabla::jit(flat(f));
        if let Some(p) = platform {
            j = j.on(quabla::device(p).py()?);
        }
        Ok(PyJit(j))
    }

    fn __call__(&self, args: Vec<RawArray>) -> PyResult<Vec<RawArray>> {
        Ok(raws(self.0.call(&inners(&args)).py()?))
    }

    /// Runs with the arguments flagged in `donate` given to the backend to reuse.
    fn call_donating(&self, args: Vec<RawArray>, donate: Vec<bool>) -> PyResult<Vec<RawArray>> {
        Ok(raws(self.0.call_donating(inners(&args), &donate).py()?))
    }

    /// The QIR text of the program traced at these arguments (after the core's passes).
    fn lower(&self, args: Vec<RawArray>) -> PyResult<String> {
        Ok(self.0.lower(&inners(&args)).py()?.to_text())
    }

    /// Traces and compiles for these arguments' signature without running.
    fn compile(&self, args: Vec<RawArray>) -> PyResult<()> {
        self.0.compile_for(&inners(&args)).py()
    }

    /// How many signatures have been compiled.
    fn cache_size(&self) -> usize {
        self.0.cache_size()
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Pullback>()?;
    m.add_class::<PyJit>()?;
    m.add_function(wrap_pyfunction!(jvp, m)?)?;
    m.add_function(wrap_pyfunction!(vjp, m)?)?;
    m.add_function(wrap_pyfunction!(value_and_grad, m)?)?;
    m.add_function(wrap_pyfunction!(jacobian, m)?)?;
    m.add_function(wrap_pyfunction!(vmap, m)?)?;
    m.add_function(wrap_pyfunction!(named_axis_reduce, m)?)?;
    m.add_function(wrap_pyfunction!(axis_index, m)?)?;
    m.add_function(wrap_pyfunction!(custom_jvp, m)?)?;
    m.add_function(wrap_pyfunction!(eval_shape, m)?)?;
    m.add_function(wrap_pyfunction!(custom_vjp, m)?)?;
    m.add_function(wrap_pyfunction!(closure_convert, m)?)?;
    m.add_class::<ConvertedFn>()?;
    m.add_function(wrap_pyfunction!(checkpoint, m)?)?;
    Ok(())
}
