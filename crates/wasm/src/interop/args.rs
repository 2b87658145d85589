//! Reading JavaScript arguments and options, shared by the exported classes.

use std::rc::Rc;

use js_sys::{Function, Object, Reflect};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use toolctx_core::error::{Error, Result};
use toolctx_core::inputs::{DebugEvent, DebugSink};

pub(crate) fn get(obj: &JsValue, key: &str) -> JsValue {
    if obj.is_object() || obj.is_function() {
        Reflect::get(obj, &key.into()).unwrap_or(JsValue::UNDEFINED)
    } else {
        JsValue::UNDEFINED
    }
}

/// `value` as a whole number ≥ 1 that a JavaScript number holds exactly (at most 2⁵³ − 1);
/// `None` for anything else.
pub(crate) fn positive_integer(value: &JsValue) -> Option<f64> {
    value.as_f64().filter(|n| *n >= 1.0 && n.fract() == 0.0 && *n <= 9_007_199_254_740_991.0)
}

pub(crate) fn opt_string(obj: &JsValue, key: &str) -> Result<Option<String>> {
    let v = get(obj, key);
    if v.is_undefined() {
        return Ok(None);
    }
    v.as_string().map(Some).ok_or_else(|| Error::invalid(format!("{key} must be a string")))
}

pub(crate) fn opt_size(obj: &JsValue, key: &str) -> Result<Option<usize>> {
    let v = get(obj, key);
    if v.is_undefined() {
        return Ok(None);
    }
    match v.as_f64() {
        Some(n) if n >= 0.0 && n.is_finite() => Ok(Some(n as usize)),
        Some(n) if n == f64::INFINITY => Ok(Some(usize::MAX)),
        _ => Err(Error::invalid(format!("{key} must be a non-negative number"))),
    }
}

pub(crate) fn opt_function(obj: &JsValue, key: &str) -> Result<Option<Function>> {
    let v = get(obj, key);
    if v.is_undefined() || v.is_null() {
        return Ok(None);
    }
    v.dyn_into::<Function>().map(Some).map_err(|_| Error::invalid(format!("{key} must be a function")))
}

/// What a store's parts say while it is made (the runtime's choices), as `onDebug` events.
pub(crate) fn debug_note(sink: &Option<DebugSink>) -> impl Fn(&str) + '_ {
    move |message: &str| toolctx_core::inputs::debug(sink.as_ref(), message, None)
}

pub(crate) fn debug_sink(on_debug: &Option<Function>) -> Option<DebugSink> {
    let f = on_debug.clone()?;
    Some(Rc::new(move |event: &DebugEvent| {
        let data = match &event.path {
            Some(path) => {
                let o = Object::new();
                let _ = Reflect::set(&o, &"path".into(), &path.into());
                o.into()
            }
            None => JsValue::UNDEFINED,
        };
        // A throwing debug callback must not break the operation it reports on.
        let _ = f.call2(&JsValue::UNDEFINED, &event.message.as_str().into(), &data);
    }))
}
