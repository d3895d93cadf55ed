//! `host_callback`: a Python function called from a running program (the Python half's
//! `pure_callback`, `debug.callback`, `debug.print`). The Python half passes a function over
//! plain values, `f(list[(bytes, dtype name, shape)], list[(shape, dtype name)]) ->
//! list[bytes]` (the arguments, then the result types to make), and checks the results'
//! shapes and dtypes itself; this side turns it into the core's host function.

use crate::array::{dtype_from_name, RawArray};
use crate::errors::IntoPyResult;
use crate::transforms::{inners, raws};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyTuple};
use quabla::{HostArray, HostView};
use quabla::{HostCallbackOptions, HostFn, TensorType, VmapMethod};
use std::cell::RefCell;
use std::sync::Arc;

thread_local! {
    /// The Python exception of the last failed callback on this thread, until the backend
    /// error it caused is turned into a Python exception (which re-raises it instead).
    static PENDING: RefCell<Option<PyErr>> = const { RefCell::new(None) };
}

/// The exception a callback raised during the program run that just failed, if any.
pub fn take_pending() -> Option<PyErr> {
    PENDING.with(|p| p.borrow_mut().take())
}

fn vmap_method(name: &str) -> PyResult<VmapMethod> {
    Ok(match name {
        "sequential" | "sequential_unrolled" => VmapMethod::Sequential,
        "expand_dims" => VmapMethod::ExpandDims,
        "broadcast_all" | "legacy_vectorized" => VmapMethod::BroadcastAll,
        "none" => VmapMethod::Refuse,
        other => {
            return Err(PyValueError::new_err(format!(
                "vmap_method must be 'sequential', 'sequential_unrolled', 'expand_dims', \
                 'broadcast_all', 'legacy_vectorized' or None, got {other:?}"
            )))
        }
    })
}

/// The call into Python, on the thread the program runs on (the GIL taken there). The
/// Python function gets the values and the result types the op declares (under `vmap` they
/// carry the batch axis).
fn call_python(
    f: &Py<PyAny>,
    args: &[HostView<'_>],
    results: &[TensorType],
) -> PyResult<Vec<HostArray>> {
    Python::attach(|py| {
        let items = args
            .iter()
            .map(|a| {
                let shape = PyTuple::new(py, &a.ty.shape)?;
                PyTuple::new(
                    py,
                    [
                        PyBytes::new(py, a.bytes).into_any(),
                        a.ty.dtype.numpy_name().into_pyobject(py)?.into_any(),
                        shape.into_any(),
                    ],
                )
            })
            .collect::<PyResult<Vec<_>>>()?;
        let declared = results
            .iter()
            .map(|t| {
                PyTuple::new(
                    py,
                    [
                        PyTuple::new(py, &t.shape)?.into_any(),
                        t.dtype.numpy_name().into_pyobject(py)?.into_any(),
                    ],
                )
            })
            .collect::<PyResult<Vec<_>>>()?;
        let out = f.call1(py, (PyList::new(py, items)?, PyList::new(py, declared)?))?;
        let out: Vec<Vec<u8>> = out.extract(py)?;
        if out.len() != results.len() {
            return Err(PyValueError::new_err(format!(
                "the callback returned {} arrays, {} declared",
                out.len(),
                results.len()
            )));
        }
        out.into_iter()
            .zip(results)
            .map(|(b, t)| HostArray::new(t.clone(), b).map_err(PyValueError::new_err))
            .collect()
    })
}

/// Calls `f` on the values of `args` (now when they are concrete, else whenever the traced
/// program runs); `results` are `(shape, dtype name)` pairs.
#[pyfunction]
#[pyo3(signature = (f, args, results, effectful, vmap_method_name, name))]
fn host_callback(
    f: Py<PyAny>,
    args: Vec<RawArray>,
    results: Vec<(Vec<usize>, String)>,
    effectful: bool,
    vmap_method_name: &str,
    name: String,
) -> PyResult<Vec<RawArray>> {
    let types = results
        .into_iter()
        .map(|(shape, dtype)| Ok(TensorType::new(dtype_from_name(&dtype)?, shape)))
        .collect::<PyResult<Vec<_>>>()?;
    let label = name.clone();
    let function: Arc<HostFn> = Arc::new(move |a: &[HostView<'_>], results: &[TensorType]| {
        call_python(&f, a, results).map_err(|e| {
            let message = format!("the {label} callback raised {e}");
            PENDING.with(|p| *p.borrow_mut() = Some(e));
            message
        })
    });
    let options = HostCallbackOptions {
        effectful,
        vmap: vmap_method(vmap_method_name)?,
        name,
    };
    Ok(raws(
        quabla::host_callback(function, &inners(&args), &types, options).py()?,
    ))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(host_callback, m)?)?;
    Ok(())
}
