//! JavaScript values from the core's JSON, built value by value inside a wasm call.
//!
//! `JSON.parse` run while a wasm call is on the stack has crashed Node 20's V8 (SIGTRAP
//! lazily deoptimising the caller). So a plan's JSON result goes back as text and the
//! driver parses it after the call (`plans::Reply::Json`); where a value must exist during
//! the call (a `describe`, `redact` or `onEvict` callback, a window function's result),
//! it is built here without `JSON.parse`.

use js_sys::{Array, Object, Reflect};
use wasm_bindgen::prelude::*;

/// The JavaScript value of JSON text the core produced or validated (`undefined` if it
/// does not parse).
#[cfg_attr(not(feature = "core"), allow(dead_code))]
pub fn json_value(text: &str) -> JsValue {
    match serde_json::from_str(text) {
        Ok(value) => js_of(&value),
        Err(_) => JsValue::UNDEFINED,
    }
}

/// The JavaScript value of a JSON value; `__proto__` stays an own key, as with `JSON.parse`.
#[cfg_attr(not(feature = "core"), allow(dead_code))]
pub fn js_of(value: &serde_json::Value) -> JsValue {
    use serde_json::Value;
    match value {
        Value::Null => JsValue::NULL,
        Value::Bool(b) => JsValue::from(*b),
        Value::Number(n) => JsValue::from(n.as_f64().unwrap_or(f64::NAN)),
        Value::String(s) => JsValue::from(s.as_str()),
        Value::Array(list) => list.iter().map(js_of).collect::<Array>().into(),
        Value::Object(map) => {
            let out = Object::new();
            for (key, v) in map {
                let v = js_of(v);
                if key == "__proto__" {
                    // An own property, as JSON.parse makes it (`set` would change the prototype).
                    let field = Object::new();
                    let flags = [("writable", true), ("enumerable", true), ("configurable", true)];
                    let _ = Reflect::set(&field, &"value".into(), &v);
                    for (k, x) in flags {
                        let _ = Reflect::set(&field, &k.into(), &x.into());
                    }
                    let _ = Reflect::define_property(&out, &key.into(), &field);
                } else {
                    let _ = Reflect::set(&out, &key.into(), &v);
                }
            }
            out.into()
        }
    }
}
