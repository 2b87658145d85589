//! Selection's arguments and results: the `queryId`/`taskId` options, the slots of a
//! listed pointer list, the vectors the `embed` option returns, the terms of a pointer
//! object from elsewhere, scores as JSON.

use js_sys::{Array, JSON};
use serde_json::Value;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::args::get;
use toolctx_core::error::{Error, ErrorKind, Result};
use toolctx_core::record::task_id_from_f64;
use toolctx_core::select::Terms;
use toolctx_core::store::Candidate;

/// The `queryId` and `taskId` selection options, checked.
pub(crate) fn filter_options(options: &JsValue) -> Result<(Option<String>, Option<serde_json::Number>)> {
    let query_id = match get(options, "queryId") {
        v if v.is_undefined() || v.is_null() => None,
        v => Some(v.as_string().ok_or_else(|| Error::invalid("queryId must be a string"))?),
    };
    let task_id = match get(options, "taskId") {
        v if v.is_undefined() || v.is_null() => None,
        v => Some(task_id_from_f64(v.as_f64().ok_or_else(|| Error::invalid("taskId must be a number"))?)?),
    };
    Ok((query_id, task_id))
}

/// The pointers of a list given to a selection that this manager listed itself (the JS
/// glue, pointers.js `given`, knows them): `positions[i]` of the list is the pointer at
/// `slots[i]` in the slots of `epoch`, positions ascending. The other pointers of the
/// list are read from their objects. A slot names a pointer only within its epoch, and
/// that pointer may be gone since: the core checks both
/// ([`toolctx_core::store::Manager::resolve_slot`]).
#[derive(Default)]
pub(crate) struct ListedSlots {
    pub epoch: u32,
    pub positions: Vec<u32>,
    pub slots: Vec<u32>,
}

/// [`ListedSlots`] from `{epoch, positions, slots}` (`undefined`: none known). The glue
/// makes it, so a wrong shape is an internal error, named by its field.
pub(crate) fn listed_slots(value: &JsValue) -> Result<ListedSlots> {
    if value.is_undefined() {
        return Ok(ListedSlots::default());
    }
    let internal = |field: &str, what: &str| Error::new(ErrorKind::Internal, format!("listed.{field} must be {what}"));
    let array = |field: &str| {
        get(value, field)
            .dyn_into::<js_sys::Uint32Array>()
            .map(|a| a.to_vec())
            .map_err(|_| internal(field, "a Uint32Array"))
    };
    let epoch = get(value, "epoch").as_f64().filter(|e| e.fract() == 0.0 && (0.0..=u32::MAX as f64).contains(e));
    let epoch = epoch.ok_or_else(|| internal("epoch", "an epoch (a u32)"))? as u32;
    let (positions, slots) = (array("positions")?, array("slots")?);
    if positions.len() != slots.len() || positions.windows(2).any(|w| w[0] >= w[1]) {
        return Err(internal("positions", "ascending, one for each slot"));
    }
    Ok(ListedSlots { epoch, positions, slots })
}

/// The query's vector given to `selectRelevant` (`undefined`: none), made by
/// the `queryVector` query from what the `embed` option returned.
pub(crate) fn query_vector(value: &JsValue) -> Result<Option<Vec<f32>>> {
    if value.is_undefined() {
        return Ok(None);
    }
    match value.dyn_ref::<js_sys::Float32Array>() {
        Some(vector) => Ok(Some(vector.to_vec())),
        None => Err(Error::new(ErrorKind::Internal, "the query's vector must be a Float32Array")),
    }
}

/// A score as JSON (scores are finite; JSON has no NaN).
pub(crate) fn score_json(score: f64) -> String {
    if score.is_finite() {
        serde_json::Number::from_f64(score).map_or_else(|| "0".to_owned(), |n| n.to_string())
    } else {
        "0".to_owned()
    }
}

/// The one vector in what the `embed` option returned for one text: an array holding
/// one array of numbers or `Float32Array`.
pub(crate) fn one_vector(embedded: &JsValue) -> Result<Vec<f32>> {
    let first = embedded.dyn_ref::<Array>().filter(|a| a.length() == 1).map(|a| a.get(0));
    let vector = first.filter(|v| Array::is_array(v) || v.is_instance_of::<js_sys::Float32Array>());
    let vector =
        vector.ok_or_else(|| Error::invalid("embed must return one array of numbers (or Float32Array) per text"))?;
    Ok(js_sys::Float32Array::new(&vector).to_vec())
}

/// The indexed terms of a pointer object this manager did not make.
pub(crate) fn foreign_terms(pointer: &JsValue) -> Candidate {
    let text = |k: &str| get(pointer, k).as_string().unwrap_or_default();
    let args = JSON::stringify(&get(pointer, "args"))
        .ok()
        .and_then(|s| s.as_string())
        .and_then(|s| toolctx_core::record::from_json::<Value>(&s).ok())
        .unwrap_or(Value::Null);
    Candidate::Foreign(Terms::of_record(&text("toolDescription"), &text("toolName"), &args))
}
