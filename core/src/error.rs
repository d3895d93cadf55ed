//! The core's error type: every failure a user can cause is one of these, with a message
//! that says what to do, and a variant that says what kind of failure it is, so front ends
//! can raise the matching exception (Python: `ValueError`, `TypeError`,
//! `NotImplementedError`, `quabla.QuablaInternalError`).

use quabla_abi::abi::{AbiError, ErrorCode};
use quabla_abi::host::LoadError;

/// Errors from the Quabla core.
///
/// `Display` is the message; `Debug` is the variant's name and the message, so
/// `fn main() -> quabla::Result<()>` prints what to do, not just a variant.
///
/// ```
/// use quabla::Error;
/// let e = Error::shape("add: shapes [2] and [3] do not broadcast");
/// assert!(matches!(e, Error::Shape(_)));
/// assert_eq!(e.to_string(), "add: shapes [2] and [3] do not broadcast");
/// assert_eq!(format!("{e:?}"), "Shape: add: shapes [2] and [3] do not broadcast");
/// ```
#[derive(thiserror::Error)]
pub enum Error {
    /// An argument outside what the operation accepts: a count below its minimum, an
    /// unknown option, a missing argument, a file that is not in the expected format.
    #[error("{0}")]
    Value(String),
    /// Shapes that do not fit the operation (they do not broadcast, a matrix is not square,
    /// an axis is out of range).
    #[error("{0}")]
    Shape(String),
    /// Dtypes that do not fit the operation (an integer where a float is needed, two
    /// dtypes that must agree).
    #[error("{0}")]
    DType(String),
    /// The device's backend does not implement an operation the program needs.
    #[error(
        "`{op}` is not implemented by the `{backend}` backend; run this on a backend that \
         lists it (the `cpu` backend implements every operation)"
    )]
    Unsupported { op: String, backend: String },
    /// A backend refused or failed an operation: the plugin's name, its error code and its
    /// message.
    #[error("backend `{plugin}` ({}): {message}", code_name(*.code))]
    Backend {
        plugin: String,
        code: ErrorCode,
        message: String,
    },
    /// An invariant of Quabla's own broke: a bug in Quabla, not in the caller's program.
    #[error(
        "internal error: {0}. This is a bug in Quabla; please report it with the program \
         that triggered it"
    )]
    Internal(String),
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

fn code_name(code: ErrorCode) -> &'static str {
    match code {
        ErrorCode::InvalidArgument => "invalid argument",
        ErrorCode::Unimplemented => "unimplemented",
        ErrorCode::ResourceExhausted => "resource exhausted",
        ErrorCode::FailedPrecondition => "failed precondition",
        ErrorCode::Internal => "internal",
        ErrorCode::Unavailable => "unavailable",
        ErrorCode::DeadlineExceeded => "deadline exceeded",
    }
}

impl Error {
    /// The variant's name, as `Debug` shows it.
    fn kind(&self) -> &'static str {
        match self {
            Error::Value(_) => "Value",
            Error::Shape(_) => "Shape",
            Error::DType(_) => "DType",
            Error::Unsupported { .. } => "Unsupported",
            Error::Backend { .. } => "Backend",
            Error::Internal(_) => "Internal",
            Error::Load(_) => "Load",
            Error::NoBackend(_) => "NoBackend",
            Error::TracedValue => "TracedValue",
            Error::Parse(_) => "Parse",
            Error::LinAlg(_) => "LinAlg",
            Error::Mismatch(_) => "Mismatch",
            Error::Callback(_) => "Callback",
        }
    }
}

impl std::fmt::Debug for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {self}", self.kind())
    }
}

impl Error {
    /// An argument outside what the operation accepts ([`Error::Value`]).
    ///
    /// ```no_run
    /// fn check_rate(r: f64) -> quabla::Result<f64> {
    ///     if r > 0.0 { Ok(r) } else { Err(quabla::Error::value(format!("the rate must be positive, got {r}"))) }
    /// }
    /// ```
    pub fn value(msg: impl Into<String>) -> Error {
        Error::Value(msg.into())
    }

    /// Shapes that do not fit ([`Error::Shape`]).
    ///
    /// ```no_run
    /// let e = quabla::Error::shape("expected [n, 2], got [3]");
    /// assert!(matches!(e, quabla::Error::Shape(_)));
    /// ```
    pub fn shape(msg: impl Into<String>) -> Error {
        Error::Shape(msg.into())
    }

    /// Dtypes that do not fit ([`Error::DType`]).
    ///
    /// ```no_run
    /// let e = quabla::Error::dtype("cholesky needs floats");
    /// assert!(matches!(e, quabla::Error::DType(_)));
    /// ```
    pub fn dtype(msg: impl Into<String>) -> Error {
        Error::DType(msg.into())
    }

    /// A broken invariant of Quabla's own ([`Error::Internal`]).
    ///
    /// ```no_run
    /// let e = quabla::Error::internal("a region returned no result");
    /// assert!(matches!(e, quabla::Error::Internal(_)));
    /// ```
    pub fn internal(msg: impl Into<String>) -> Error {
        Error::Internal(msg.into())
    }

    /// A plugin's error, with the plugin's name.
    ///
    /// ```no_run
    /// # use quabla::{Error, ErrorCode};
    /// # fn from_plugin(e: quabla_abi::abi::AbiError) -> Error {
    /// Error::backend("cuda", e)
    /// # }
    /// ```
    pub fn backend(plugin: impl Into<String>, e: AbiError) -> Error {
        Error::Backend {
            plugin: plugin.into(),
            code: e.code(),
            message: e.message().to_string(),
        }
    }
}

impl Error {
    /// The same error with `what` in front of its message, its variant kept (so a front end
    /// still raises the same exception). Errors that carry no message of ours (a user's
    /// exception, a load error, a parse error) are returned unchanged.
    ///
    /// ```
    /// let e = quabla::Error::shape("[2] vs [3]").context("step 4");
    /// assert_eq!(e.to_string(), "step 4: [2] vs [3]");
    /// ```
    pub fn context(self, what: &str) -> Error {
        let with = |m: String| format!("{what}: {m}");
        match self {
            Error::Value(m) => Error::Value(with(m)),
            Error::Shape(m) => Error::Shape(with(m)),
            Error::DType(m) => Error::DType(with(m)),
            Error::Internal(m) => Error::Internal(with(m)),
            Error::NoBackend(m) => Error::NoBackend(with(m)),
            Error::LinAlg(m) => Error::LinAlg(with(m)),
            Error::Mismatch(m) => Error::Mismatch(with(m)),
            Error::Backend {
                plugin,
                code,
                message,
            } => Error::Backend {
                plugin,
                code,
                message: with(message),
            },
            e @ (Error::Unsupported { .. }
            | Error::Load(_)
            | Error::TracedValue
            | Error::Parse(_)
            | Error::Callback(_)) => e,
        }
    }
}

/// Result alias for the core.
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backend_errors_keep_plugin_code_and_message() {
        let e = Error::backend("toy", AbiError::unimplemented("no kernel for svd"));
        match &e {
            Error::Backend {
                plugin,
                code,
                message,
            } => {
                assert_eq!(plugin, "toy");
                assert_eq!(*code, ErrorCode::Unimplemented);
                assert_eq!(message, "no kernel for svd");
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(
            e.to_string(),
            "backend `toy` (unimplemented): no kernel for svd"
        );
    }

    #[test]
    fn debug_shows_the_message_a_main_returning_result_prints() {
        let d = format!("{:?}", Error::TracedValue);
        assert!(d.starts_with("TracedValue: cannot read the value"), "{d}");
        let r: Result<()> = Err(Error::value("max_steps must be positive"));
        assert_eq!(format!("{:?}", r), "Err(Value: max_steps must be positive)");
    }

    #[test]
    fn internal_errors_ask_for_a_report() {
        let m = Error::internal("transpose without values").to_string();
        assert!(
            m.contains("transpose without values") && m.contains("please report"),
            "{m}"
        );
    }
}
