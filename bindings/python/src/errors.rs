//! Core errors as Python exceptions, and Python exceptions carried through the core.
//!
//! A Python function called back by a transformation may raise; the exception travels
//! through the core inside `Error::Callback` and is raised again unchanged, so users see
//! their own exception and traceback, not a wrapper.

use pyo3::create_exception;
use pyo3::exceptions::{
    PyException, PyNotImplementedError, PyRuntimeError, PyTypeError, PyValueError,
};
use pyo3::prelude::*;
use quabla::Error;
use quabla::ErrorCode;

create_exception!(
    _quabla,
    ConcretizationTypeError,
    PyTypeError,
    "The value of a traced array was needed (inside `jit` or a transformation), where it has none."
);
create_exception!(
    _quabla,
    BackendError,
    PyRuntimeError,
    "A backend plugin could not be loaded, or refused or failed an operation."
);
create_exception!(
    _quabla,
    CollectiveError,
    BackendError,
    "A collective failed because a peer rank died, left, or did not arrive before the deadline; \
     the communicator cannot be used any more."
);
create_exception!(
    _quabla,
    LinAlgError,
    PyValueError,
    "A linear-algebra computation failed on the given values (as numpy.linalg.LinAlgError)."
);
create_exception!(
    _quabla,
    QuablaError,
    PyException,
    "Base of Quabla's own errors."
);
create_exception!(
    _quabla,
    QuablaInternalError,
    QuablaError,
    "An invariant of Quabla's own broke: a bug in Quabla, not in the program; please report it."
);

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add(
        "ConcretizationTypeError",
        py.get_type::<ConcretizationTypeError>(),
    )?;
    m.add("BackendError", py.get_type::<BackendError>())?;
    m.add("CollectiveError", py.get_type::<CollectiveError>())?;
    m.add("QuablaError", py.get_type::<QuablaError>())?;
    m.add("LinAlgError", py.get_type::<LinAlgError>())?;
    m.add("QuablaInternalError", py.get_type::<QuablaInternalError>())?;
    Ok(())
}

/// The Python exception for a core error: `Value` raises ValueError; `Shape`, `DType` and
/// `Mismatch` TypeError; `Unsupported` NotImplementedError; `Internal` QuablaInternalError;
/// backend and load failures BackendError.
pub fn to_py(e: Error) -> PyErr {
    match e {
        Error::Callback(inner) => match inner.downcast::<PyErr>() {
            Ok(original) => *original,
            Err(other) => PyRuntimeError::new_err(other.to_string()),
        },
        Error::Value(m) => PyValueError::new_err(m),
        // Shape and dtype mismatches raise TypeError, as JAX's primitives do.
        Error::Shape(m) | Error::DType(m) | Error::Mismatch(m) => PyTypeError::new_err(m),
        e @ Error::Unsupported { .. } => PyNotImplementedError::new_err(e.to_string()),
        e @ Error::Internal(_) => QuablaInternalError::new_err(e.to_string()),
        Error::TracedValue => ConcretizationTypeError::new_err(Error::TracedValue.to_string()),
        Error::Parse(p) => PyValueError::new_err(p.to_string()),
        Error::LinAlg(m) => LinAlgError::new_err(m),
        e @ Error::Backend {
            code: ErrorCode::Unavailable | ErrorCode::DeadlineExceeded,
            ..
        } => CollectiveError::new_err(e.to_string()),
        // A run that failed because a Python callback raised: that exception, as raised.
        e @ Error::Backend { .. } => match crate::host_calls::take_pending() {
            Some(raised) => raised,
            None => BackendError::new_err(e.to_string()),
        },
        e @ (Error::Load(_) | Error::NoBackend(_)) => BackendError::new_err(e.to_string()),
    }
}

/// A Python exception raised inside a callback, for the trip through the core.
pub fn from_py(e: PyErr) -> Error {
    Error::Callback(Box::new(e))
}

/// `?` for core results inside `#[pyfunction]`s.
pub trait IntoPyResult<T> {
    fn py(self) -> PyResult<T>;
}

impl<T> IntoPyResult<T> for quabla::Result<T> {
    fn py(self) -> PyResult<T> {
        self.map_err(to_py)
    }
}
