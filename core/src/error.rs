//! The core's error type: every failure a user can cause is one of these, with a message
//! that says what to do.

use quabla_abi::abi::AbiError;
use quabla_abi::host::LoadError;

/// Errors from the Quabla core.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Shapes, dtypes or arguments that do not fit the operation.
    #[error("{0}")]
    Type(String),
    /// A backend refused or failed an operation.
    #[error("backend `{backend}`: {source}")]
    Backend { backend: String, source: AbiError },
    /// A plugin library could not be loaded.
    #[error(transparent)]
    Load(#[from] LoadError),
    /// No backend could be found or selected.
    #[error("{0}")]
    NoBackend(String),
    /// A traced value was read while tracing.
    #[error(
        "cannot read the value of a traced array inside `jit`: it has no data until the compiled \
         function runs; return it from the function instead, or call the function outside `jit`"
    )]
    TracedValue,
    /// QIR text that does not parse.
    #[error(transparent)]
    Parse(#[from] quabla_abi::qir::ParseError),
    /// A linear-algebra computation failed on the values given (a matrix that is not
    /// positive definite for a checked Cholesky factorization).
    #[error("{0}")]
    LinAlg(String),
    /// Arrays from different traces or devices were mixed.
    #[error("{0}")]
    Mismatch(String),
    /// An error raised by a user function that a transformation called back (a Python
    /// exception, say); carried unchanged so the front end can re-raise the original.
    #[error("{0}")]
    Callback(Box<dyn std::error::Error + Send + Sync>),
}

/// Result alias for the core.
pub type Result<T, E = Error> = std::result::Result<T, E>;

pub(crate) fn type_err<T>(msg: impl Into<String>) -> Result<T> {
    Err(Error::Type(msg.into()))
}
