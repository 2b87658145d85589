//! Core errors as JavaScript `Error` objects with a stable `code` and the host's
//! original error as `cause` (SPEC §9).

use js_sys::{Error as JsError, Reflect};
use wasm_bindgen::prelude::*;

use super::storage::HostError;
use toolctx_core::error::{Error, ErrorKind};

/// A JavaScript `Error` named `ToolctxError` with `code`, optional `path` and `cause`.
pub fn to_js(err: Error) -> JsValue {
    let js = JsError::new(&err.to_string());
    js.set_name("ToolctxError");
    set(&js, "code", &err.code().into());
    if let Some(path) = err.path() {
        set(&js, "path", &path.into());
    }
    if let Some(cause) = host_cause(&err) {
        set(&js, "cause", &cause);
    }
    js.into()
}

/// An error of `kind` whose cause is the JavaScript value `cause`.
pub fn with_cause(kind: ErrorKind, message: impl Into<String>, cause: JsValue) -> Error {
    let cause = HostError(cause);
    Error::new(kind, format!("{}: {cause}", message.into())).with_source(cause)
}

fn host_cause(err: &Error) -> Option<JsValue> {
    let mut source = err.host_source();
    while let Some(s) = source {
        if let Some(HostError(value)) = s.downcast_ref::<HostError>() {
            return Some(value.clone());
        }
        if let Some(inner) = s.downcast_ref::<Error>() {
            source = inner.host_source();
        } else {
            break;
        }
    }
    None
}

fn set(target: &JsValue, key: &str, value: &JsValue) {
    // Setting a property on a fresh Error object cannot fail.
    let _ = Reflect::set(target, &key.into(), value);
}

/// `Result<T, JsValue>` from a core result.
pub trait IntoJs<T> {
    /// Converts the error into a JavaScript `Error`.
    fn js(self) -> Result<T, JsValue>;
}

impl<T> IntoJs<T> for toolctx_core::error::Result<T> {
    fn js(self) -> Result<T, JsValue> {
        self.map_err(to_js)
    }
}

/// A JavaScript `INVALID_ARGUMENT` error.
pub fn invalid(message: impl Into<String>) -> JsValue {
    to_js(Error::invalid(message))
}
