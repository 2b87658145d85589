//! The context-window optimiser's arguments and results: the messages in (UTF-8 JSON
//! bytes), the options read, and the plan out as JSON text (`window.js` parses it).

use js_sys::{Array, Uint8Array};
use serde_json::Value;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::args::get;
use toolctx_core::error::{Error, Result};
use toolctx_core::window::json::object;
use toolctx_core::window::{self, history, Edit, OptimizeOptions, Plan, Strategy, Tools};

pub(crate) fn strategy(value: &JsValue) -> Result<Strategy> {
    if value.is_undefined() {
        return Ok(Strategy::default());
    }
    let name = value.as_string().ok_or_else(|| Error::invalid("strategy must be a string"))?;
    Strategy::parse(&name)
}

/// The messages given, as JSON values. The JS glue sends them as UTF-8 JSON bytes
/// (`TextEncoder` over `JSON.stringify`): one native encoding and one copy, where
/// handing over megabytes of strings converts them character by character.
pub(crate) fn messages_of(value: &JsValue) -> Result<Vec<Value>> {
    let bytes = value.dyn_ref::<Uint8Array>().ok_or_else(|| Error::invalid("messages must be an array"))?.to_vec();
    let text = std::str::from_utf8(&bytes).map_err(|_| Error::invalid("messages are not UTF-8 JSON"))?;
    let messages = match window::json::parse(text) {
        Ok(Value::Array(list)) => list,
        Ok(_) => return Err(Error::invalid("messages must be an array")),
        Err(e) => return Err(Error::invalid(format!("messages: {e}"))),
    };
    window::message::validate(&messages)?;
    Ok(messages)
}

/// The JSON text of a value (`window.js` parses it).
pub(crate) fn to_js(value: &Value) -> JsValue {
    JsValue::from(window::message::json_text(value))
}

pub(crate) fn range_value(range: Option<(usize, usize)>) -> Value {
    range.map_or(Value::Null, history::range)
}

pub(crate) fn tools(options: &JsValue) -> Result<Tools> {
    let mut tools = Tools::default();
    if let Some(read) = opt_strings(options, "readFileTools")? {
        tools.read = read;
    }
    if let Some(write) = opt_strings(options, "writeFileTools")? {
        tools.write = write;
    }
    Ok(tools)
}

pub(crate) fn optimize_options(options: &JsValue) -> Result<OptimizeOptions> {
    check_options(options)?;
    Ok(OptimizeOptions {
        min_savings: opt_number(options, "minSavings")?.unwrap_or(window::DEFAULT_MIN_SAVINGS),
        strategy: strategy(&get(options, "strategy"))?,
        tools: tools(options)?,
        now: opt_number(options, "now")?.unwrap_or_else(js_sys::Date::now) as i64,
    })
}

/// `[[index, content], ...]`: the new content of the messages at `changed` (edits change
/// nothing else of a message).
pub(crate) fn changed_value(messages: Vec<Value>, changed: &[usize]) -> Value {
    let mut wanted = changed.iter().peekable();
    let mut out = Vec::with_capacity(changed.len());
    for (i, mut message) in messages.into_iter().enumerate() {
        if wanted.peek() == Some(&&i) {
            wanted.next();
            let content = message.get_mut("content").map(Value::take).unwrap_or(Value::Null);
            out.push(Value::Array(vec![i.into(), content]));
        }
    }
    Value::Array(out)
}

/// The plan for the JS glue: `{changed, truncated, edits, metrics}`.
pub(crate) fn plan_js(plan: Plan) -> Result<JsValue> {
    let Plan { messages, changed, edits, truncated, metrics: m } = plan;
    let saved_ratio = if m.chars_before == 0 {
        0.0
    } else {
        m.chars_before.saturating_sub(m.chars_after) as f64 / m.chars_before as f64
    };
    let metrics = object(vec![
        ("charsBefore", m.chars_before.into()),
        ("charsAfter", m.chars_after.into()),
        ("tokensBefore", m.tokens_before.into()),
        ("tokensAfter", m.tokens_after.into()),
        ("tokensSaved", m.tokens_before.saturating_sub(m.tokens_after).into()),
        ("duplicatesReplaced", m.duplicates_replaced.into()),
        ("messagesRemoved", m.messages_removed.into()),
        // Shortest round-trip text: JSON.parse gives back the same numbers.
        ("savedRatio", saved_ratio.into()),
        ("duplicateSavings", m.duplicate_savings.into()),
    ]);
    let value = object(vec![
        ("changed", changed_value(messages, &changed)),
        ("edits", Value::Array(edits.iter().map(Edit::to_value).collect())),
        ("truncated", range_value(truncated)),
        ("metrics", metrics),
    ]);
    Ok(to_js(&value))
}

/// `options` is an options object, or `undefined`/`null` for none.
pub(crate) fn check_options(options: &JsValue) -> Result<()> {
    if options.is_undefined() || options.is_null() || options.is_object() {
        Ok(())
    } else {
        Err(Error::invalid("options must be an object"))
    }
}

/// A non-negative finite number option.
pub(crate) fn opt_number(obj: &JsValue, key: &str) -> Result<Option<f64>> {
    let v = get(obj, key);
    if v.is_undefined() {
        return Ok(None);
    }
    match v.as_f64() {
        Some(n) if n.is_finite() && n >= 0.0 => Ok(Some(n)),
        _ => Err(Error::invalid(format!("{key} must be a finite number >= 0"))),
    }
}

/// An array of strings option.
pub(crate) fn opt_strings(obj: &JsValue, key: &str) -> Result<Option<Vec<String>>> {
    let v = get(obj, key);
    if v.is_undefined() {
        return Ok(None);
    }
    let list = v.dyn_into::<Array>().map_err(|_| Error::invalid(format!("{key} must be an array of strings")))?;
    let names: Result<Vec<String>> = list
        .iter()
        .map(|s| s.as_string().ok_or_else(|| Error::invalid(format!("{key} must be an array of strings"))))
        .collect();
    names.map(Some)
}

/// An inclusive `[start, end]` option.
pub(crate) fn opt_range(options: &JsValue, key: &str) -> Result<Option<(usize, usize)>> {
    let v = get(options, key);
    if v.is_undefined() || v.is_null() {
        return Ok(None);
    }
    let bad = || Error::invalid(format!("{key} must be [start, end] with 0 <= start <= end"));
    let list = v.dyn_into::<Array>().map_err(|_| bad())?;
    let index = |i: u32| list.get(i).as_f64().filter(|n| n.fract() == 0.0 && *n >= 0.0).map(|n| n as usize);
    match (list.length(), index(0), index(1)) {
        (2, Some(start), Some(end)) if start <= end => Ok(Some((start, end))),
        _ => Err(bad()),
    }
}
