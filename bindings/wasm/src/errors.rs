//! Core errors as JavaScript exceptions of a matching kind, so programs can catch them by
//! class as Python programs do: shape and dtype errors are `TypeError`s; the others are
//! `Error`s whose `name` says what they are (`ValueError`, `NotImplementedError`,
//! `QuablaInternalError`, `BackendError`, `LinAlgError`, `ConcretizationTypeError`); an
//! exception a user's function threw inside a transformation comes out as itself.
//!
//! ```js
//! try { q.add(q.ones([2]), q.ones([3])); }
//! catch (e) { console.assert(e instanceof TypeError); }
//! ```

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use wasm_bindgen::prelude::*;

thread_local! {
    /// JavaScript exceptions on their way through the core, by ticket: a `JsValue` cannot live
    /// in the core's `Send + Sync` error, so the error carries the ticket.
    static IN_FLIGHT: RefCell<HashMap<u64, JsValue>> = RefCell::new(HashMap::new());
    static NEXT_TICKET: Cell<u64> = const { Cell::new(0) };
}

/// A JavaScript exception raised inside a function a transformation called back, carried
/// through the core as `Error::Callback` and thrown again as the very same value (its class
/// and stack kept), as the Python binding re-raises the original exception.
#[derive(Debug)]
pub struct JsException {
    message: String,
    ticket: Option<u64>,
}

impl JsException {
    /// An error of the binding's own inside a callback (no JavaScript value to carry).
    pub fn message(message: String) -> JsException {
        JsException {
            message,
            ticket: None,
        }
    }

    /// The core error carrying the exception `value` (its `message` for display).
    pub fn carry(message: String, value: JsValue) -> quabla::Error {
        let ticket = NEXT_TICKET.with(|n| {
            let t = n.get();
            n.set(t.wrapping_add(1));
            t
        });
        IN_FLIGHT.with(|m| m.borrow_mut().insert(ticket, value));
        quabla::Error::Callback(Box::new(JsException {
            message,
            ticket: Some(ticket),
        }))
    }

    fn take(&self) -> Option<JsValue> {
        let t = self.ticket?;
        IN_FLIGHT.with(|m| m.borrow_mut().remove(&t))
    }
}

impl Drop for JsException {
    fn drop(&mut self) {
        // An exception the core dropped (it never reached JS) must not stay in the table.
        let _ = self.take();
    }
}

impl std::fmt::Display for JsException {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for JsException {}

/// The JavaScript class and `name` of a core error.
fn kind(e: &quabla::Error) -> (bool, &'static str) {
    use quabla::Error;
    match e {
        Error::Shape(_) | Error::DType(_) | Error::Mismatch(_) => (true, "TypeError"),
        Error::TracedValue => (true, "ConcretizationTypeError"),
        Error::Value(_) | Error::Parse(_) => (false, "ValueError"),
        Error::Unsupported { .. } => (false, "NotImplementedError"),
        Error::Internal(_) => (false, "QuablaInternalError"),
        Error::LinAlg(_) => (false, "LinAlgError"),
        Error::Backend { .. } | Error::Load(_) | Error::NoBackend(_) => (false, "BackendError"),
        Error::Callback(_) => (false, "Error"),
    }
}

/// The exception a core error throws in JavaScript.
pub fn js_error(e: quabla::Error) -> JsValue {
    if let quabla::Error::Callback(inner) = &e {
        if let Some(original) = inner
            .downcast_ref::<JsException>()
            .and_then(JsException::take)
        {
            return original;
        }
    }
    let (type_error, name) = kind(&e);
    let msg = e.to_string();
    let err: js_sys::Error = if type_error {
        js_sys::TypeError::new(&msg).into()
    } else {
        js_sys::Error::new(&msg)
    };
    if name != "Error" {
        err.set_name(name);
    }
    err.into()
}

/// A plain JavaScript `Error` with `msg`, for failures of the binding's own checks.
pub fn js_msg(msg: &str) -> JsValue {
    js_sys::Error::new(msg).into()
}

/// `?` for core results in functions exported to JavaScript.
pub trait IntoJsResult<T> {
    fn js(self) -> Result<T, JsValue>;
}

impl<T> IntoJsResult<T> for quabla::Result<T> {
    fn js(self) -> Result<T, JsValue> {
        self.map_err(js_error)
    }
}
