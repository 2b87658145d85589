//! `saveContext`: the arguments checked and serialised once, the record's header from
//! the core, the result's bytes left in JavaScript (`Body`), and the plan that writes the
//! record ([`SaveRecord`]), run by the driver as any other (docs/protocol.md).

use js_sys::{Array, Function, JsString, Object, Promise, Reflect, JSON};

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::{JsContextManager, ENCODER_FROM};
use crate::interop::args::{get, opt_string};
use crate::interop::body::Body;
use crate::interop::errors::with_cause;
use crate::interop::json::json_value;
use crate::interop::steps;
use crate::plans::{self, Reply};
use toolctx_core::error::{Error, ErrorKind, Result};
use toolctx_core::record::task_id_from_f64;
use toolctx_core::store::Manager;
use toolctx_core::store::{Begun, HostBody, SaveInput, SaveRecord};

/// A well-formed string, or `NOT_SERIALIZABLE` (a lone surrogate cannot be stored).
pub(super) fn well_formed(value: &JsValue, what: &str) -> Result<String> {
    let s: &JsString = value.dyn_ref().ok_or_else(|| Error::invalid(format!("{what} must be a string")))?;
    if !s.is_valid_utf16() {
        return Err(Error::new(ErrorKind::NotSerializable, format!("{what} holds a lone UTF-16 surrogate")));
    }
    Ok(String::from(s))
}

/// `JSON.stringify(value)`; `None` when it yields `undefined`.
///
/// A long text crosses into wasm as UTF-8 bytes from `TextEncoder` (a native encoder
/// and one memory copy) rather than through wasm-bindgen's string passing, whose per-
/// character loop over ASCII text dominated the cost of saving a large result.
/// `JSON.stringify` escapes lone surrogates, so its text is always well formed.
pub(super) fn stringify(value: &JsValue, what: &str) -> Result<Option<String>> {
    stringify_js(value, what)?.map(text_of).transpose()
}

/// `JSON.stringify(value)` as a JavaScript string (not copied into wasm).
pub(super) fn stringify_js(value: &JsValue, what: &str) -> Result<Option<JsString>> {
    let json = JSON::stringify(value)
        .map_err(|e| with_cause(ErrorKind::NotSerializable, format!("{what} cannot be serialised as JSON"), e))?;
    Ok(json.is_string().then_some(json))
}

/// A JavaScript string in wasm (see [`stringify`]).
pub(super) fn text_of(json: JsString) -> Result<String> {
    if json.length() < ENCODER_FROM {
        return Ok(String::from(json));
    }
    String::from_utf8(crate::interop::body::utf8(&json))
        .map_err(|_| Error::new(ErrorKind::Internal, "TextEncoder produced invalid UTF-8"))
}

/// A result as `saveContext` hands it to the core: its text, or (a large one) its
/// bytes held in JavaScript.
pub(super) enum ResultIn {
    Text(Option<String>),
    Held(Body),
}

/// The core's input of a save, from what `prepare_save` made.
pub(super) fn save_input<'a>(
    tool: &'a str,
    args_json: &'a str,
    result_in: &'a ResultIn,
    fields: SaveFields,
) -> SaveInput<'a> {
    let (result_json, result_body) = match result_in {
        ResultIn::Text(text) => (text.as_deref(), None),
        ResultIn::Held(body) => {
            (None, Some(HostBody { handle: body.handle(), len: body.len(), prefix: &body.prefix, hash: body.hash }))
        }
    };
    SaveInput {
        tool_name: tool,
        args_json,
        result_json,
        task_id: fields.task_id,
        query_id: fields.query_id,
        description: fields.description,
        category: fields.category,
        tool_call_id: fields.tool_call_id,
        result_body,
    }
}

/// Runs the `redact` option over a copy of the record and returns the JSON of the args
/// and result it hands back (or leaves in the record, if it mutates it in place).
pub(super) fn redacted(
    redact: &Function,
    tool: &str,
    args_json: &str,
    result_json: Option<String>,
    fields: &SaveFields,
) -> Result<(String, Option<String>)> {
    let record = Object::new();
    let put = |k: &str, v: &JsValue| {
        let _ = Reflect::set(&record, &k.into(), v);
    };
    put("toolName", &tool.into());
    put("args", &json_value(args_json));
    if let Some(result) = &result_json {
        put("result", &json_value(result));
    }
    if let Some(task) = &fields.task_id {
        put("taskId", &task.as_f64().unwrap_or(f64::NAN).into());
    }
    if let Some(query) = &fields.query_id {
        put("queryId", &query.as_str().into());
    }
    if let Some(call) = &fields.tool_call_id {
        put("toolCallId", &call.as_str().into());
    }
    let returned = redact
        .call1(&JsValue::UNDEFINED, &record)
        .map_err(|e| with_cause(ErrorKind::InvalidArgument, "the redact option threw", e))?;
    if returned.is_instance_of::<Promise>() {
        return Err(Error::invalid("redact must return the record synchronously"));
    }
    let out: JsValue = if returned.is_object() { returned } else { record.into() };
    let args = get(&out, "args");
    if !args.is_object() || Array::is_array(&args) {
        return Err(Error::invalid("redact must leave args a plain object"));
    }
    let args_json = stringify(&args, "redacted args")?.ok_or_else(|| Error::invalid("redacted args vanished"))?;
    Ok((args_json, stringify(&get(&out, "result"), "redacted result")?))
}

/// The optional per-save fields.
pub(super) struct SaveFields {
    task_id: Option<serde_json::Number>,
    query_id: Option<String>,
    description: Option<String>,
    category: Option<String>,
    tool_call_id: Option<String>,
}

impl ResultIn {
    /// The result's JSON text, or its first `contentBytes` bytes when it is held.
    pub(super) fn indexed(&self) -> Option<&str> {
        match self {
            ResultIn::Text(text) => text.as_deref(),
            ResultIn::Held(body) => Some(&body.prefix),
        }
    }
}

impl SaveFields {
    pub(super) fn parse(task_id: &JsValue, query_id: &JsValue, description: &JsValue) -> Result<Self> {
        let task_id = match task_id {
            v if v.is_undefined() || v.is_null() => None,
            v => Some(task_id_from_f64(v.as_f64().ok_or_else(|| Error::invalid("taskId must be a number"))?)?),
        };
        let optional = |v: &JsValue, what: &str| {
            if v.is_undefined() || v.is_null() {
                Ok(None)
            } else {
                well_formed(v, what).map(Some)
            }
        };
        Ok(SaveFields {
            task_id,
            query_id: optional(query_id, "queryId")?,
            description: optional(description, "description")?,
            category: None,
            tool_call_id: None,
        })
    }
}

impl JsContextManager {
    /// `saveContext`: `done` (saved: a record held in memory), or the first step of its
    /// plan ([`SaveRecord`]: the record's write, then the save's follow-up I/O), which
    /// resolves to the filepath (or `{filepath, embed}` with the `embed` option).
    pub(super) fn save_begin(
        &self,
        tool_name: &JsValue,
        args: &JsValue,
        result: &JsValue,
        task_or_options: &JsValue,
        query_id: &JsValue,
    ) -> Result<JsValue> {
        let (begun, result_in) = self.start_save(tool_name, args, result, task_or_options, query_id)?;
        let save = SaveRecord::new(self.inner.clone(), begun);
        let reply = self.saved_reply();
        if let Some(filepath) = save.done() {
            return Ok(steps::done(&reply(filepath.to_owned(), &result_in)));
        }
        // The result's bytes stay held until the plan ends (its write reads them).
        Ok(plans::start(self.storage.clone(), save, move |filepath| Ok(Reply::Value(reply(filepath, &result_in)))))
    }

    /// The first step of a save: the manager open (checked first, so no argument is read
    /// and no describe/redact callback runs on a closed one), the arguments prepared, the
    /// core's `begin_save`; with where the result is.
    fn start_save(
        &self,
        tool_name: &JsValue,
        args: &JsValue,
        result: &JsValue,
        task_or_options: &JsValue,
        query_id: &JsValue,
    ) -> Result<(Begun, ResultIn)> {
        self.inner.check_open("saveContext")?;
        let (tool, args_json, result_in, fields) =
            self.prepare_save(tool_name, args, result, task_or_options, query_id)?;
        let begun = self.inner.begin_save(save_input(&tool, &args_json, &result_in, fields))?;
        Ok((begun, result_in))
    }

    /// Everything `saveContext` does before its first await.
    fn prepare_save(
        &self,
        tool_name: &JsValue,
        args: &JsValue,
        result: &JsValue,
        task_or_options: &JsValue,
        query_id: &JsValue,
    ) -> Result<(String, String, ResultIn, SaveFields)> {
        let tool = well_formed(tool_name, "toolName")?;
        if !args.is_object() || Array::is_array(args) {
            return Err(Error::invalid("args must be a plain object"));
        }
        let args_json = stringify(args, "args")?.filter(|j| j.starts_with('{'));
        let args_json = args_json.ok_or_else(|| Error::invalid("args must serialise to a JSON object"))?;
        let result_json = stringify_js(result, "result")?;
        let fields = if task_or_options.is_object() {
            let o = task_or_options;
            let mut fields = SaveFields::parse(&get(o, "taskId"), &get(o, "queryId"), &get(o, "description"))?;
            fields.category = opt_string(o, "category")?;
            fields.tool_call_id = match get(o, "toolCallId") {
                v if v.is_undefined() || v.is_null() => None,
                v => Some(well_formed(&v, "toolCallId")?),
            };
            fields
        } else {
            SaveFields::parse(task_or_options, query_id, &JsValue::UNDEFINED)?
        };
        let mut fields = fields;
        let (args_json, result_in) = match (&self.redact, result_json) {
            (Some(redact), json) => {
                let json = json.map(text_of).transpose()?;
                let (args_json, json) = redacted(redact, &tool, &args_json, json, &fields)?;
                (args_json, ResultIn::Text(json))
            }
            (None, Some(json)) if json.length() >= ENCODER_FROM => {
                let options = self.inner.options();
                let body = Body::new(&json, options.content_bytes)?;
                // JSON.stringify escapes a lone surrogate (ES2019), so only an escaped
                // one can be there: the exact check runs only when the text has `\ud`.
                if body.escapes_surrogate {
                    toolctx_core::record::check_no_lone_surrogates(&body.text()?)?;
                }
                // A long result stays in JavaScript and its record is written, unless the
                // record may be held in memory (its result under `persistThreshold` bytes).
                let result_in = match body.len() < options.persist_threshold {
                    true => ResultIn::Text(Some(body.text()?)),
                    false => ResultIn::Held(body),
                };
                (args_json, result_in)
            }
            (None, json) => (args_json, ResultIn::Text(json.map(text_of).transpose()?)),
        };
        if fields.description.is_none() {
            if let Some(describe) = &self.describe {
                let d = describe
                    .call2(&JsValue::UNDEFINED, &tool.as_str().into(), &json_value(&args_json))
                    .map_err(|e| with_cause(ErrorKind::InvalidArgument, "the describe option threw", e))?;
                if !d.is_undefined() {
                    fields.description = Some(well_formed(&d, "describe()'s result")?);
                }
            }
        }
        Ok((tool, args_json, result_in, fields))
    }

    /// What a save resolves to, once its record is saved at `filepath`: the filepath,
    /// or with the `embed` option `{filepath, embed}`, the text to embed (the JS glue
    /// calls `embed`, then the `setVector` update).
    fn saved_reply(&self) -> impl FnOnce(String, &ResultIn) -> JsValue + 'static {
        let inner = self.embed.is_some().then(|| self.inner.clone());
        move |filepath, result_in| match inner.and_then(|inner| embed_text(&inner, &filepath, result_in)) {
            Some(text) => steps::saved_to_embed(&filepath, &text),
            None => JsValue::from(filepath),
        }
    }
}

/// The text the `embed` option gets for the record saved at `filepath`: its indexed text
/// (description, tool, args and the bounded start of its result); `None` once its
/// pointer is gone.
fn embed_text(inner: &Manager, filepath: &str, result_in: &ResultIn) -> Option<String> {
    let description = inner.description_of(filepath)?;
    Some(toolctx_core::select::indexed_text(&description, result_in.indexed(), inner.options().content_bytes))
}

#[cfg(test)]
impl JsContextManager {
    /// `saveContext` with its plan run by the native runner, the record written through
    /// `JsStorage`'s async `Storage` (the host's methods awaited in Rust), for the
    /// wasm-bindgen tests.
    pub async fn save_context(
        &self,
        tool_name: JsValue,
        args: JsValue,
        result: JsValue,
        task_or_options: JsValue,
        query_id: JsValue,
    ) -> Result<JsValue, JsValue> {
        use crate::interop::errors::IntoJs;
        let (begun, _result_in) = self.start_save(&tool_name, &args, &result, &task_or_options, &query_id).js()?;
        let save = SaveRecord::new(self.inner.clone(), begun);
        match save.done() {
            Some(filepath) => Ok(filepath.into()),
            None => toolctx::run(&*self.storage, save).await.map(JsValue::from).js(),
        }
    }
}
