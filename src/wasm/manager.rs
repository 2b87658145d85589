//! The exported `ContextManager` class: the seed API (SPEC §2) with its exact names.
//!
//! Methods that do I/O return a Promise and never throw: argument errors become
//! rejections. `saveContext` serialises `args` and `result` before it returns, so a
//! caller mutating them afterwards changes nothing stored.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;

use js_sys::{Array, Function, JsString, Object, Promise, Reflect, Uint8Array, JSON};

use serde_json::Value;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::args::{debug_sink, get, opt_function, opt_size, opt_string};
use super::body::Body;
use super::errors::{invalid, with_cause, IntoJs};
use super::host::{resolve_context_dir, storage_from};
use super::json::json_value;
use super::plans::{self, Reply};
use super::steps::{self, LoadSource, Skip};
use super::storage::{host_failure, JsStorage};
use crate::error::{Error, ErrorKind, Result};
use crate::plan::Plan;
use crate::record::task_id_from_f64;
use crate::select::{Fallback, Strategy, Terms};
use crate::store::{
    Begun, Candidate, Clearing, Closing, DebugEvent, FailedSave, Filter, HostBody, Job, JobPlan, Listed, LoadStep,
    Loading, Manager, NotLoaded, Options, PendingSave, SaveInput, SessionChoice, Written,
};

/// The tool-context store.
#[wasm_bindgen(js_name = ContextManager, skip_typescript)]
pub struct JsContextManager {
    inner: Rc<Manager>,
    /// The host storage its steps run over.
    storage: Rc<JsStorage>,
    describe: Option<Function>,
    redact: Option<Function>,
    /// The `embed` option: texts to vectors, for hybrid ranking.
    embed: Option<Function>,
    /// The storage is the runtime's default, made for this manager: `close()` closes it.
    owns_storage: bool,
    /// The saves whose record the driver is writing, by id.
    saves: RefCell<HashMap<u32, Saving>>,
    next_save: Cell<u32>,
    /// The loads whose records the driver is reading, by id.
    loads: RefCell<HashMap<u32, Loading>>,
    next_load: Cell<u32>,
}

/// The `retention` option: `{maxBytes?, maxRecords?, maxAgeMs?}`, each a positive
/// integer; any other key is refused, so a misspelt cap is not silently no cap.
fn retention(value: &JsValue) -> Result<crate::Retention> {
    if value.is_undefined() || value.is_null() {
        return Ok(crate::Retention::default());
    }
    if !value.is_object() || Array::is_array(value) {
        return Err(Error::invalid("retention must be an object {maxBytes?, maxRecords?, maxAgeMs?}"));
    }
    const KEYS: [&str; 3] = ["maxBytes", "maxRecords", "maxAgeMs"];
    for key in Object::keys(value.unchecked_ref::<Object>()).iter() {
        let key = key.as_string().unwrap_or_default();
        if !KEYS.contains(&key.as_str()) {
            return Err(Error::invalid(format!("retention has no option {key:?} (maxBytes, maxRecords, maxAgeMs)")));
        }
    }
    let cap = |key: &str| -> Result<Option<f64>> {
        let v = get(value, key);
        if v.is_undefined() {
            return Ok(None);
        }
        match v.as_f64() {
            Some(n) if n >= 1.0 && n.fract() == 0.0 && n <= 9_007_199_254_740_991.0 => Ok(Some(n)),
            _ => Err(Error::invalid(format!("retention.{key} must be a positive integer"))),
        }
    };
    Ok(crate::Retention {
        max_bytes: cap("maxBytes")?.map(|n| n as usize),
        max_records: cap("maxRecords")?.map(|n| n as usize),
        max_age_ms: cap("maxAgeMs")?.map(|n| n as i64),
    })
}

/// A well-formed string, or `NOT_SERIALIZABLE` (a lone surrogate cannot be stored).
fn well_formed(value: &JsValue, what: &str) -> Result<String> {
    let s: &JsString = value.dyn_ref().ok_or_else(|| Error::invalid(format!("{what} must be a string")))?;
    if !s.is_valid_utf16() {
        return Err(Error::new(ErrorKind::NotSerializable, format!("{what} holds a lone UTF-16 surrogate")));
    }
    Ok(String::from(s))
}

/// Below this many UTF-16 units a call into `TextEncoder` costs more than it saves.
const ENCODER_FROM: u32 = 4096;

/// `JSON.stringify(value)`; `None` when it yields `undefined`.
///
/// A long text crosses into wasm as UTF-8 bytes from `TextEncoder` (a native encoder
/// and one memory copy) rather than through wasm-bindgen's string passing, whose per-
/// character loop over ASCII text dominated the cost of saving a large result.
/// `JSON.stringify` escapes lone surrogates, so its text is always well formed.
fn stringify(value: &JsValue, what: &str) -> Result<Option<String>> {
    stringify_js(value, what)?.map(text_of).transpose()
}

/// `JSON.stringify(value)` as a JavaScript string (not copied into wasm).
fn stringify_js(value: &JsValue, what: &str) -> Result<Option<JsString>> {
    let json = JSON::stringify(value)
        .map_err(|e| with_cause(ErrorKind::NotSerializable, format!("{what} cannot be serialised as JSON"), e))?;
    Ok(json.is_string().then_some(json))
}

/// A JavaScript string in wasm (see [`stringify`]).
fn text_of(json: JsString) -> Result<String> {
    if json.length() < ENCODER_FROM {
        return Ok(String::from(json));
    }
    String::from_utf8(super::body::utf8(&json))
        .map_err(|_| Error::new(ErrorKind::Internal, "TextEncoder produced invalid UTF-8"))
}

/// A result as `saveContext` hands it to the core: its text, or (a large one) its
/// bytes held in JavaScript.
enum ResultIn {
    Text(Option<String>),
    Held(Body),
}

impl ResultIn {
    /// The result's JSON text, or its first `contentBytes` bytes when it is held.
    fn indexed(&self) -> Option<&str> {
        match self {
            ResultIn::Text(text) => text.as_deref(),
            ResultIn::Held(body) => Some(&body.prefix),
        }
    }
}

/// What an options object holds, checked.
struct Parts {
    storage: JsStorage,
    core: Options,
    describe: Option<Function>,
    redact: Option<Function>,
    embed: Option<Function>,
    on_debug: Option<Function>,
    owns_storage: bool,
}

impl Parts {
    fn read(options: &JsValue) -> Result<Parts> {
        if !(options.is_undefined() || options.is_null() || options.is_object()) {
            return Err(Error::invalid("options must be an object"));
        }
        let on_debug = opt_function(options, "onDebug")?;
        let sink = debug_sink(&on_debug);
        let mut storage_opt = get(options, "fileSystem");
        if storage_opt.is_undefined() {
            storage_opt = get(options, "storage");
        }
        let owns_storage = storage_opt.is_undefined() || storage_opt.is_null();
        let given_dir = opt_string(options, "contextDir")?;
        let defaulted = given_dir.is_none();
        let dir = resolve_context_dir(given_dir, &storage_opt)?;
        if let (true, Some(s)) = (defaulted, &sink) {
            // The runtime could not resolve the default store as documented: said once.
            if let Some(note) = super::host::default_dir_note() {
                s(&DebugEvent { message: note, path: None });
            }
        }
        let root = crate::paths::normalize(&dir).unwrap_or_else(|| dir.clone());
        let storage = storage_from(storage_opt, &root, &|note| {
            if let Some(s) = &sink {
                s(&DebugEvent { message: note.to_owned(), path: None });
            }
        })?;
        let clock: crate::store::Clock = match opt_function(options, "clock")? {
            Some(f) => {
                Rc::new(move || f.call0(&JsValue::UNDEFINED).ok().and_then(|v| v.as_f64()).unwrap_or(0.0) as i64)
            }
            None => Rc::new(crate::platform::now_ms),
        };
        let random: crate::store::Random = match opt_function(options, "random")? {
            Some(f) => Rc::new(move || Ok(f.call0(&JsValue::UNDEFINED).ok().and_then(|v| v.as_f64()).unwrap_or(0.0))),
            None => Rc::new(crate::platform::random_unit),
        };
        let mut core = Options::with(dir, clock, random);
        // A large result's bytes stay in JavaScript (body.rs): the core reads them by handle.
        core.host_bytes = Some(Rc::new(|handle| super::body::held(handle).map(|b| b.to_vec())));
        if let Some(n) = opt_size(options, "persistThreshold")? {
            core.persist_threshold = n;
        }
        if let Some(n) = opt_size(options, "memoryBudget")? {
            core.memory_budget = n;
        }
        if let Some(n) = opt_size(options, "maxRecordBytes")? {
            core.max_record_bytes = n;
        }
        if let Some(n) = opt_size(options, "indexContentBytes")? {
            core.content_bytes = n;
        }
        core.on_debug = sink;
        core.read_only = match get(options, "readOnly") {
            v if v.is_undefined() || v.is_null() => false,
            v => v.as_bool().ok_or_else(|| Error::invalid("readOnly must be a boolean"))?,
        };
        core.retention = retention(&get(options, "retention"))?;
        if let Some(f) = opt_function(options, "onEvict")? {
            let debug = core.on_debug.clone();
            core.on_evict = Some(Rc::new(move |pointers: &str| {
                // A throwing callback must not fail the save that evicted.
                if let Err(e) = f.call1(&JsValue::UNDEFINED, &json_value(pointers)) {
                    if let Some(sink) = &debug {
                        let why = e.as_string().or_else(|| Reflect::get(&e, &"message".into()).ok()?.as_string());
                        let message = format!("onEvict threw: {}", why.unwrap_or_default());
                        sink(&DebugEvent { message, path: None });
                    }
                }
            }));
        }
        core.session = match get(options, "session") {
            v if v.is_undefined() || v.is_null() || v.as_bool() == Some(false) => None,
            v if v.as_bool() == Some(true) => Some(SessionChoice::New),
            v => match v.as_string() {
                Some(id) => Some(SessionChoice::Resume(id)),
                None => return Err(Error::invalid("session must be true or a session id")),
            },
        };
        Ok(Parts {
            storage,
            core,
            describe: opt_function(options, "describe")?,
            redact: opt_function(options, "redact")?,
            embed: opt_function(options, "embed")?,
            on_debug,
            owns_storage,
        })
    }
}

impl JsContextManager {
    fn build(options: JsValue) -> Result<(Self, Option<Function>)> {
        let Parts { storage, core, describe, redact, embed, on_debug, owns_storage } = Parts::read(&options)?;
        let inner = Manager::new(core)?;
        Ok((JsContextManager::around(inner, storage, describe, redact, embed, owns_storage), on_debug))
    }

    /// The wasm object around a core manager and the hooks it was given.
    fn around(
        inner: Manager,
        storage: JsStorage,
        describe: Option<Function>,
        redact: Option<Function>,
        embed: Option<Function>,
        owns_storage: bool,
    ) -> Self {
        JsContextManager {
            inner: Rc::new(inner),
            storage: Rc::new(storage),
            describe,
            redact,
            embed,
            owns_storage,
            saves: RefCell::default(),
            next_save: Cell::new(0),
            loads: RefCell::default(),
            next_load: Cell::new(0),
        }
    }

    /// Tells `onDebug` the folder and the storage in use (see [`announce`]).
    fn announce(&self, on_debug: &Option<Function>) {
        announce(&self.inner, &self.storage, on_debug)
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
                // JSON.stringify escapes a lone surrogate (ES2019), so only an escaped
                // one can be there: the exact check runs only when the text has `\ud`.
                if json.includes("\\ud", 0) {
                    crate::record::check_no_lone_surrogates(&text_of(json.clone())?)?;
                }
                (args_json, ResultIn::Held(Body::new(&json, self.inner.options().content_bytes)?))
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

    /// A saved record: `{kind: "done", value: filepath}`, or the first step of the plan
    /// of the I/O left (the save's follow-up: a spill, retention, the session manifest;
    /// src/wasm/plans.rs) that resolves to it. With the `embed` option the value is
    /// `{filepath, embed}`, the text to embed (the JS glue calls `embed`, then
    /// `__setVector`).
    fn saved(&self, filepath: String, after: Option<Job>, result_in: ResultIn) -> JsValue {
        let text = self.embed.is_some().then(|| self.embed_text(&filepath, &result_in)).flatten();
        let value = move || match text {
            Some(text) => steps::saved_to_embed(&filepath, &text),
            None => JsValue::from(filepath),
        };
        match after {
            None => steps::done(&value()),
            Some(job) => self.run_job(job, move |_| Ok(Reply::Value(value()))),
        }
    }

    /// The text the `embed` option gets for the record saved at `filepath`: its indexed
    /// text (description, tool, args and the bounded start of its result); `None` once
    /// its pointer is gone.
    fn embed_text(&self, filepath: &str, result_in: &ResultIn) -> Option<String> {
        let description = self.inner.description_of(filepath)?;
        Some(crate::select::indexed_text(&description, result_in.indexed(), self.inner.options().content_bytes))
    }

    /// The answer of a `close()` step: the first step of its plan (src/wasm/plans.rs),
    /// resolving to `{host, close}`, the host's `close()` for the driver to call last, or
    /// `undefined`; or a `wait` step, naming the method to call once this manager's
    /// operations in flight have ended.
    fn closing(&self, closing: Closing) -> JsValue {
        match closing {
            Closing::Done => plans::done(JsValue::UNDEFINED),
            Closing::Wait => steps::wait("__close"),
            Closing::Busy => steps::wait("__closeIdle"),
            Closing::WriteOut(job) => {
                let (storage, owns_storage) = (self.storage.clone(), self.owns_storage);
                let close = move |_| {
                    let close = owns_storage.then(|| storage.close_call()).flatten();
                    Ok(Reply::Value(close.unwrap_or(JsValue::UNDEFINED)))
                };
                self.run_job(job, close)
            }
        }
    }

    /// Starts `job` as a plan (src/wasm/plans.rs), `reply` making its result once it is
    /// done: its first step, for the driver.
    fn run_job(&self, job: Job, reply: impl FnOnce(Vec<String>) -> Result<Reply> + 'static) -> JsValue {
        let plan = JobPlan { manager: self.inner.clone(), job };
        plans::start(self.storage.clone(), plan, reply)
    }
}

/// Tells `onDebug` the folder and the storage in use, as the seed's constructor does:
/// `ContextManager initialized in <dir> with <storage>`, and
/// `{contextDir, storage, persistThreshold, sessionId?}` as data.
fn announce(inner: &Manager, storage: &JsStorage, on_debug: &Option<Function>) {
    let Some(f) = on_debug else { return };
    let storage = storage.description();
    let mut message = format!("ContextManager initialized in {} with {storage}", inner.context_dir());
    let data = Object::new();
    let set = |k: &str, v: JsValue| {
        let _ = Reflect::set(&data, &k.into(), &v);
    };
    set("contextDir", inner.context_dir().into());
    set("storage", storage.as_str().into());
    set("persistThreshold", (inner.options().persist_threshold as f64).into());
    if let Some(id) = inner.session_id() {
        message.push_str(&format!(", session {id}"));
        set("sessionId", id.into());
    }
    // A throwing debug callback must not break the constructor.
    let _ = f.call2(&JsValue::UNDEFINED, &message.as_str().into(), &data);
}

/// The core's input of a save, from what `prepare_save` made.
fn save_input<'a>(tool: &'a str, args_json: &'a str, result_in: &'a ResultIn, fields: SaveFields) -> SaveInput<'a> {
    let (result_json, result_body) = match result_in {
        ResultIn::Text(text) => (text.as_deref(), None),
        ResultIn::Held(body) => {
            (None, Some(HostBody { handle: body.handle(), len: body.len(), prefix: &body.prefix, hash: None }))
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

#[cfg(test)]
impl JsContextManager {
    /// `saveContext` with its steps driven here, the record written through `JsStorage`'s
    /// async `Storage` (the host's methods awaited in Rust), for the wasm-bindgen tests. A
    /// save's follow-up job is not run.
    pub async fn save_context(
        &self,
        tool_name: JsValue,
        args: JsValue,
        result: JsValue,
        task_or_options: JsValue,
        query_id: JsValue,
    ) -> Result<JsValue, JsValue> {
        use crate::storage::{Storage, WriteOptions};
        self.inner.check_open("saveContext").js()?;
        let (tool, args_json, result_in, fields) =
            self.prepare_save(&tool_name, &args, &result, &task_or_options, &query_id).js()?;
        let mut pending = match self.inner.begin_save(save_input(&tool, &args_json, &result_in, fields)).js()? {
            Begun::Saved(filepath, _) => return Ok(filepath.into()),
            Begun::Write(pending) => pending,
        };
        let exclusive = WriteOptions { exclusive: true };
        loop {
            if let (true, ResultIn::Held(body)) = (pending.wants_result_hash(), &result_in) {
                pending.set_result_hash(body.hash());
            }
            pending.index(self.inner.options().content_bytes);
            let written = match pending.record() {
                (head, Some(body)) => self.storage.write_parts(pending.path(), head, body, b"}", exclusive).await,
                (whole, None) => self.storage.write(pending.path(), whole, exclusive).await,
            };
            match self.inner.record_written(pending, written) {
                Written::Saved(filepath, _) => return Ok(filepath.into()),
                Written::Retry(next) => pending = next,
                Written::Remove(failed) => {
                    let _ = self.storage.remove(&failed.path).await;
                    return Err(failed.into_error()).js();
                }
                Written::Failed(e) => return Err(e).js(),
            }
        }
    }
}

/// What `__loadBegin` says of a load, gathered ([`JsContextManager::plan_load`]).
#[derive(Default)]
struct LoadPlan {
    /// Where the record of each path asked comes from ([`LoadSource`]).
    sources: Vec<u8>,
    /// The texts of the records held in memory, NUL-joined.
    held: String,
    reads: Vec<String>,
}

impl JsContextManager {
    /// Adds the path `asked` to a load's plan.
    fn plan_load(&self, plan: &mut LoadPlan, asked: &str) {
        let kind = match self.inner.load_step(asked) {
            LoadStep::Held(bytes) => match std::str::from_utf8(&bytes) {
                Ok(text) if !text.contains('\0') => {
                    if !plan.held.is_empty() {
                        plan.held.push('\0'); // a record's text is never empty
                    }
                    plan.held.push_str(text);
                    LoadSource::Held
                }
                _ => {
                    self.inner.load_skipped(asked, &NotLoaded::NotARecord("not UTF-8 JSON text".to_owned()));
                    LoadSource::Skipped
                }
            },
            LoadStep::Read(path) => {
                plan.reads.push(path);
                LoadSource::Read
            }
            LoadStep::Skipped => LoadSource::Skipped,
        };
        plan.sources.push(kind.code());
    }
}

/// A save between its steps (see `__saveBegin`).
enum Saving {
    /// Its record is being written; the result, held until the save ends.
    Writing(Box<PendingSave>, ResultIn),
    /// Its write failed: what it left is being removed.
    Removing(FailedSave),
}

/// Runs the `redact` option over a copy of the record and returns the JSON of the args
/// and result it hands back (or leaves in the record, if it mutates it in place).
fn redacted(
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
struct SaveFields {
    task_id: Option<serde_json::Number>,
    query_id: Option<String>,
    description: Option<String>,
    category: Option<String>,
    tool_call_id: Option<String>,
}

impl SaveFields {
    fn parse(task_id: &JsValue, query_id: &JsValue, description: &JsValue) -> Result<Self> {
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

#[wasm_bindgen(js_class = ContextManager)]
impl JsContextManager {
    /// A manager over the given (or the runtime's default) storage.
    #[wasm_bindgen(constructor)]
    pub fn new(options: JsValue) -> Result<JsContextManager, JsValue> {
        // For the tests: a panic inside a constructor (`{__panicForTests: message}`).
        if let Some(message) = Reflect::get(&options, &"__panicForTests".into()).ok().and_then(|m| m.as_string()) {
            panic!("{message}");
        }
        let (manager, on_debug) = Self::build(options).js()?;
        manager.announce(&on_debug);
        Ok(manager)
    }

    /// `open()`, its first step: `{manager, step}`, the manager and the first step of the
    /// plan that makes it ready (src/wasm/plans.rs): a new session's manifest written, a
    /// named session resumed (a pointer for every persisted record).
    #[wasm_bindgen(js_name = "__open")]
    pub fn open(options: JsValue) -> Result<JsValue, JsValue> {
        let Parts { storage, core, describe, redact, embed, on_debug, owns_storage } = Parts::read(&options).js()?;
        let inner = Manager::new(core).js()?;
        let manager = JsContextManager::around(inner, storage, describe, redact, embed, owns_storage);
        let step = match manager.inner.opening() {
            Some(job) => {
                let (inner, storage) = (manager.inner.clone(), manager.storage.clone());
                manager.run_job(job, move |_| {
                    announce(&inner, &storage, &on_debug);
                    Ok(Reply::Value(JsValue::UNDEFINED))
                })
            }
            None => {
                manager.announce(&on_debug);
                plans::done(JsValue::UNDEFINED)
            }
        };
        Ok(steps::opened(JsValue::from(manager), &step))
    }

    /// The first step of a background write of an index segment (SPEC §4), when one is
    /// due and none is under way; `undefined` otherwise. The driver asks after each save
    /// resolves and runs it as a plan of this manager (so `close()` waits for it); its
    /// failures go to `onDebug`.
    #[wasm_bindgen(js_name = "__persistIndex")]
    pub fn persist_index(&self) -> JsValue {
        match self.inner.begin_persist_index() {
            Some(job) => self.run_job(job, |_| Ok(Reply::Value(JsValue::UNDEFINED))),
            None => JsValue::UNDEFINED,
        }
    }

    /// `endSession()`: removes the session's records, manifest and (if empty) folder; the
    /// first step of its plan (src/wasm/plans.rs), resolving to `undefined`.
    #[wasm_bindgen(js_name = endSession)]
    pub fn end_session(&self) -> JsValue {
        match self.inner.begin_end_session() {
            Ok(job) => self.run_job(job, |_| Ok(Reply::Value(JsValue::UNDEFINED))),
            Err(e) => plans::failed(e),
        }
    }

    /// Writes out the records held in memory (and brings the session manifest up to
    /// date); the first step of its plan (src/wasm/plans.rs), resolving to `undefined`.
    pub fn flush(&self) -> JsValue {
        match self.inner.begin_flush() {
            Ok(job) => self.run_job(job, |_| Ok(Reply::Value(JsValue::UNDEFINED))),
            Err(e) => plans::failed(e),
        }
    }

    /// Adopts the records of the session folder its manifest does not list (left by a
    /// crash); resolves to their filepaths. Outside a session, nothing: `[]`. The first
    /// step of its plan (src/wasm/plans.rs).
    pub fn reconcile(&self) -> JsValue {
        match self.inner.begin_reconcile() {
            Err(e) => plans::failed(e),
            Ok(None) => plans::done(Array::new().into()),
            Ok(Some(job)) => self.run_job(job, |adopted| {
                Ok(Reply::Value(adopted.iter().map(|p| JsValue::from(p.as_str())).collect::<Array>().into()))
            }),
        }
    }

    /// Rebuilds the index (the session manifest, or the pointers of the context dir)
    /// from the record files; resolves to the number of records indexed. The first step
    /// of its plan (src/wasm/plans.rs).
    #[wasm_bindgen(js_name = rebuildIndex)]
    pub fn rebuild_index(&self) -> JsValue {
        match self.inner.begin_rebuild_index() {
            Err(e) => plans::failed(e),
            Ok(job) => self.run_job(job, |indexed| Ok(Reply::Value((indexed.len() as f64).into()))),
        }
    }

    /// `[{id, createdAt, lastActivity, records, bytes}]` for the sessions of `contextDir`.
    #[wasm_bindgen(js_name = listSessions)]
    pub fn list_sessions(options: JsValue) -> JsValue {
        Self::store_plan(
            options,
            |m| Ok(crate::session::ListSessions::new(m.context_dir())),
            |sessions| {
                let out = Array::new();
                for info in sessions {
                    let o = Object::new();
                    let set = |k: &str, v: JsValue| {
                        let _ = Reflect::set(&o, &k.into(), &v);
                    };
                    set("id", info.id.as_str().into());
                    set("createdAt", info.created_at.as_str().into());
                    set("lastActivity", info.last_activity.as_str().into());
                    set("records", (info.records as f64).into());
                    set("bytes", (info.bytes as f64).into());
                    out.push(&o);
                }
                Ok(Reply::Value(out.into()))
            },
        )
    }

    /// `[{sessionId, filepath, score, matched, pointer}]`: the best `limit` (default 10)
    /// records of every session of `contextDir` for `query`, ranked from the sessions'
    /// manifests alone.
    pub fn search(options: JsValue, query: JsValue, search_options: JsValue) -> JsValue {
        let Some(query) = query.as_string() else {
            return plans::failed(Error::invalid("query must be a string"));
        };
        let limit = match opt_size(&search_options, "limit") {
            Ok(limit) => limit.unwrap_or(10),
            Err(e) => return plans::failed(e),
        };
        // The hits go back as JSON text, parsed by the driver.
        Self::store_plan(
            options,
            |m| Ok(crate::session::SearchSessions::new(m.context_dir(), &query, limit)),
            |hits| Ok(Reply::Json(hits_json(&hits))),
        )
    }

    /// Removes the sessions idle longer than `olderThanMs` (default 24 h): only the files
    /// their manifests track. Resolves to the ids removed.
    #[wasm_bindgen(js_name = cleanupStaleSessions)]
    pub fn cleanup_stale_sessions(options: JsValue) -> JsValue {
        let older_than = match opt_size(&options, "olderThanMs") {
            Ok(v) => v.map_or(crate::session::DEFAULT_STALE_MS, |n| n.min(i64::MAX as usize) as i64),
            Err(e) => return plans::failed(e),
        };
        Self::store_plan(
            options,
            |m| {
                m.check_writable()?;
                let now = (m.options().clock)();
                Ok(crate::session::CleanupStale::new(m.context_dir(), now, older_than))
            },
            |ids| Ok(Reply::Value(ids.iter().map(|id| JsValue::from(id.as_str())).collect::<Array>().into())),
        )
    }

    /// Removes every toolctx record of `contextDir` (files named as records), whoever
    /// wrote them, and nothing else; resolves to the number removed.
    pub fn purge(options: JsValue) -> JsValue {
        Self::store_plan(
            options,
            |m| {
                m.check_writable()?;
                Ok(crate::storewide::Purge::new(m.context_dir()))
            },
            |removed| Ok(Reply::Value(JsValue::from(removed as f64))),
        )
    }

    /// The persisted records of `contextDir` as lossless JSON Lines (one record a line,
    /// every record's bytes recoverable); resolves to `{jsonl, exported, skipped}`, the
    /// files named as records that are not records listed with the reason.
    #[wasm_bindgen(js_name = exportRecords)]
    pub fn export_records(options: JsValue) -> JsValue {
        Self::store_plan(
            options,
            |m| Ok(crate::storewide::ExportJsonl::new(m.context_dir())),
            |export| {
                let skipped = Array::new();
                for s in &export.skipped {
                    let o = Object::new();
                    let _ = Reflect::set(&o, &"filename".into(), &s.filename.as_str().into());
                    let _ = Reflect::set(&o, &"reason".into(), &s.reason.as_str().into());
                    skipped.push(&o);
                }
                let out = Object::new();
                let _ = Reflect::set(&out, &"jsonl".into(), &export.jsonl.into());
                let _ = Reflect::set(&out, &"exported".into(), &(export.exported as f64).into());
                let _ = Reflect::set(&out, &"skipped".into(), &skipped);
                Ok(Reply::Value(out.into()))
            },
        )
    }

    /// Writes the records of an `exportRecords` result (or its `jsonl` text) into
    /// `contextDir`, byte for byte; resolves to `{imported, unchanged}`.
    #[wasm_bindgen(js_name = importRecords)]
    pub fn import_records(options: JsValue, jsonl: JsValue) -> JsValue {
        let text = if jsonl.is_object() { get(&jsonl, "jsonl") } else { jsonl };
        let Some(text) = text.as_string() else {
            return plans::failed(Error::invalid(
                "the records to import must be a string of JSON Lines or an exportRecords result",
            ));
        };
        Self::store_plan(
            options,
            |m| {
                m.check_writable()?;
                Ok(crate::storewide::ImportJsonl::new(m.context_dir(), text))
            },
            |report| {
                let out = Object::new();
                let _ = Reflect::set(&out, &"imported".into(), &(report.imported as f64).into());
                let _ = Reflect::set(&out, &"unchanged".into(), &(report.unchanged as f64).into());
                Ok(Reply::Value(out.into()))
            },
        )
    }

    /// `saveContext`, its first step; the driver runs the rest (driver.js, `save`).
    /// Returns `done` (saved: a record held in memory), the first step of a plan (it
    /// finishes the save: its follow-up I/O), or `write` (docs/protocol.md): write the
    /// record (`bytes`, or `parts` to join: the header, the result's bytes that JavaScript
    /// holds, and `}`) to `path` exclusively, call `__saveIndex(id)` meanwhile, then
    /// `__saveWritten`.
    #[wasm_bindgen(js_name = "__saveBegin")]
    pub fn save_begin(
        &self,
        tool_name: JsValue,
        args: JsValue,
        result: JsValue,
        task_or_options: JsValue,
        query_id: JsValue,
    ) -> Result<JsValue, JsValue> {
        // Closed first: no argument is read and no describe/redact callback runs.
        self.inner.check_open("saveContext").js()?;
        let (tool, args_json, result_in, fields) =
            self.prepare_save(&tool_name, &args, &result, &task_or_options, &query_id).js()?;
        let pending = match self.inner.begin_save(save_input(&tool, &args_json, &result_in, fields)) {
            Ok(Begun::Saved(filepath, after)) => return Ok(self.saved(filepath, after, result_in)),
            Ok(Begun::Write(pending)) => pending,
            Err(e) => return Err(e).js(),
        };
        let (record, parts): (JsValue, bool) = match (pending.record(), &result_in) {
            ((head, Some(_)), ResultIn::Held(body)) => {
                (Array::of3(&Uint8Array::from(head), body.bytes(), &Uint8Array::from(&b"}"[..])).into(), true)
            }
            ((whole, _), _) => (Uint8Array::from(whole).into(), false),
        };
        let id = self.next_save.get().wrapping_add(1);
        self.next_save.set(id);
        let step = steps::write_record(id, &self.storage, pending.path(), &record, parts);
        self.saves.borrow_mut().insert(id, Saving::Writing(pending, result_in));
        Ok(step)
    }

    /// Indexes the result of save `id` (while the host writes its record).
    #[wasm_bindgen(js_name = "__saveIndex")]
    pub fn save_index(&self, id: u32) {
        if let Some(Saving::Writing(pending, result_in)) = self.saves.borrow_mut().get_mut(&id) {
            if let (true, ResultIn::Held(body)) = (pending.wants_result_hash(), &*result_in) {
                pending.set_result_hash(body.hash());
            }
            pending.index(self.inner.options().content_bytes);
        }
    }

    /// How the write of save `id` ended (`ok`, and the host's value or error): `done` or
    /// a plan's first step as `__saveBegin`; `write` again at another `path` (the name was
    /// taken: the same record there); `remove` (the write failed: remove `path`, whatever
    /// it left, then `__saveEnd`).
    #[wasm_bindgen(js_name = "__saveWritten")]
    pub fn save_written(&self, id: u32, ok: bool, value: JsValue) -> Result<JsValue, JsValue> {
        let Some(Saving::Writing(pending, result_in)) = self.saves.borrow_mut().remove(&id) else {
            return Err(Error::new(ErrorKind::Internal, "no save is writing under this id")).js();
        };
        let written = if ok { Ok(()) } else { Err(host_failure("write", pending.path(), value)) };
        match self.inner.record_written(pending, written) {
            Written::Saved(filepath, after) => Ok(self.saved(filepath, after, result_in)),
            Written::Retry(pending) => {
                let step = steps::write_again(id, pending.path());
                self.saves.borrow_mut().insert(id, Saving::Writing(pending, result_in));
                Ok(step)
            }
            Written::Remove(failed) => {
                let step = steps::remove_record(id, &failed.path);
                self.saves.borrow_mut().insert(id, Saving::Removing(failed));
                Ok(step)
            }
            Written::Failed(e) => Err(e).js(),
        }
    }

    /// The end of save `id` whose write failed, once what it left is removed: throws why.
    #[wasm_bindgen(js_name = "__saveEnd")]
    pub fn save_end(&self, id: u32) -> Result<(), JsValue> {
        match self.saves.borrow_mut().remove(&id) {
            Some(Saving::Removing(failed)) => Err(failed.into_error()).js(),
            _ => Err(Error::new(ErrorKind::Internal, "no failed save under this id")).js(),
        }
    }

    /// `loadContexts`, its first step; the driver runs the rest (driver.js, `load`).
    /// `filepaths` as asked, also NUL-joined in `joined` when they are all strings free
    /// of NUL (one crossing for all). Returns a `read` step (docs/protocol.md): `sources`,
    /// a [`LoadSource`] byte per filepath (held in memory, to read, skipped with its `onDebug`
    /// warning given); `held`, the texts of the held ones, NUL-joined (JSON text never
    /// holds a NUL); `paths`, the paths to read, in order. `id` names the load until
    /// `__loadEnd`; 0 when there is nothing to read (the load has ended).
    #[wasm_bindgen(js_name = "__loadBegin")]
    pub fn load_begin(&self, filepaths: JsValue, joined: Option<String>) -> Result<JsValue, JsValue> {
        let loading = self.inner.begin_load().js()?;
        let list: &Array = filepaths.dyn_ref().ok_or_else(|| invalid("filepaths must be an array of strings"))?;
        let mut plan = LoadPlan::default();
        match joined {
            Some(joined) if list.length() > 0 => joined.split('\0').for_each(|asked| self.plan_load(&mut plan, asked)),
            _ => {
                for value in list.iter() {
                    match value.as_string() {
                        Some(asked) => self.plan_load(&mut plan, &asked),
                        None => {
                            let shown = JSON::stringify(&value)
                                .ok()
                                .and_then(|t| t.as_string())
                                .unwrap_or_else(|| format!("{value:?}"));
                            self.inner.debug(format!("Failed to load {shown}: a filepath must be a string"), None);
                            plan.sources.push(LoadSource::Skipped.code());
                        }
                    }
                }
            }
        }
        let mut id = 0;
        if !plan.reads.is_empty() {
            id = self.next_load.get().wrapping_add(1).max(1);
            self.next_load.set(id);
            self.loads.borrow_mut().insert(id, loading);
        }
        Ok(steps::read_records(id, &self.storage, &plan.sources, &plan.held, plan.reads))
    }

    /// The end of load `id` (0: one that read nothing): `skipped`, `[{asked, path, why,
    /// value}]`, each path it skipped after its read, in order ([`Skip`]: the storage has
    /// no such file; its read failed with `value`; what it read is not a whole record,
    /// `value` says why). The `onDebug` warnings are given in that order.
    #[wasm_bindgen(js_name = "__loadEnd")]
    pub fn load_end(&self, id: u32, skipped: JsValue) {
        let loading = self.loads.borrow_mut().remove(&id);
        for s in steps::skipped(&skipped) {
            let why = match s.why {
                Some(Skip::Missing) => NotLoaded::Missing,
                Some(Skip::Unreadable) => NotLoaded::Unreadable(host_failure("read", &s.path, s.value)),
                _ => NotLoaded::NotARecord(s.value.as_string().unwrap_or_default()),
            };
            self.inner.load_skipped(&s.asked, &why);
        }
        drop(loading);
    }

    /// `selectRelevantContexts` (the JS glue's `extras.js` exports it under that name):
    /// the places in `pointers` of the relevant ones, best first, all of them when none
    /// match (the glue maps them to the filepaths it read). How the pointers are given
    /// (see [`Given`]): by `slots` taken at `epoch` where the glue knows them, else by
    /// their filepaths NUL-joined in `joined`, one crossing for all.
    #[wasm_bindgen(js_name = "__selectListed")]
    pub fn select_listed(
        &self,
        query: JsValue,
        pointers: JsValue,
        options: JsValue,
        slots: Vec<u32>,
        epoch: u32,
        joined: String,
    ) -> Result<Vec<u32>, JsValue> {
        let list: &Array = pointers.dyn_ref().ok_or_else(|| invalid("pointers must be an array"))?;
        let (query_id, task_id) = filter_options(&options).js()?;
        let filter = Filter { query_id: query_id.as_deref(), task_id: task_id.as_ref() };
        let source = self.list_source(list, Given { slots, epoch, joined: Some(joined) }, filter);
        let ranking = self.rank(&query, &source, &options, Selection::Seed).js()?;
        let Source::List { listed, .. } = &source else { unreachable!("a list source") };
        Ok(ranking.hits.iter().map(|hit| listed[hit.index].position).collect())
    }

    /// Scored selection: `{filepath, score, pointer, matched}`, best first. Without
    /// `pointers`, the pointers of this manager through the index: every one, or those
    /// saved with the `queryId` / `taskId` given (no pointer object is made to rank
    /// them). With `pointers` (given as [`Given`] says, in `__slots`, `__epoch` and
    /// `__paths` when the JS glue made them), `queryId` / `taskId` narrow that list.
    /// Over this manager's pointers the answer is the JSON text of the list, which the
    /// glue parses once the call has returned (see `plans::Reply::Json`).
    #[wasm_bindgen(js_name = "__selectRelevant")]
    pub fn select_relevant(&self, query: JsValue, options: JsValue) -> Result<JsValue, JsValue> {
        self.inner.check_open("selectRelevant").js()?;
        let (query_id, task_id) = filter_options(&options).js()?;
        let filter = Filter { query_id: query_id.as_deref(), task_id: task_id.as_ref() };
        let given = get(&options, "pointers");
        let source = if given.is_undefined() {
            Source::Slots((!filter.is_all()).then(|| self.inner.slots(filter)))
        } else {
            match given.dyn_ref::<Array>() {
                Some(list) => {
                    let slots = get(&options, "__slots");
                    let given = Given {
                        slots: if slots.is_undefined() {
                            Vec::new()
                        } else {
                            js_sys::Uint32Array::new(&slots).to_vec()
                        },
                        epoch: get(&options, "__epoch").as_f64().map_or(0, |e| e as u32),
                        joined: get(&options, "__paths").as_string(),
                    };
                    self.list_source(list, given, filter)
                }
                None => return Err(Error::invalid("pointers must be an array")).js(),
            }
        };
        let ranking = self.rank(&query, &source, &options, Selection::Scored).js()?;
        let out = match &source {
            Source::Slots(_) => {
                let (mut json, mut path) = (String::from("["), String::new());
                for hit in &ranking.hits {
                    if json.len() > 1 {
                        json.push(',');
                    }
                    json.push_str("{\"filepath\":");
                    path.clear();
                    self.inner.push_filepath(hit.index as u32, &mut path);
                    crate::record::push_json_str(&mut json, &path);
                    json.push_str(",\"score\":");
                    json.push_str(&score_json(hit.score));
                    json.push_str(",\"pointer\":");
                    self.inner.pointer_json_of(hit.index as u32, &mut json);
                    json.push_str(",\"matched\":[");
                    for (i, m) in ranking.matched(hit).enumerate() {
                        if i > 0 {
                            json.push(',');
                        }
                        crate::record::push_json_str(&mut json, m);
                    }
                    json.push_str("]}");
                }
                json.push(']');
                JsValue::from(json)
            }
            Source::List { list, listed } => JsValue::from(
                ranking
                    .hits
                    .iter()
                    .map(|s| {
                        let o = Object::new();
                        let it = &listed[s.index];
                        let path = match &it.path {
                            Some(path) => path.clone(),
                            None => it.slot.and_then(|slot| self.inner.filepath_of(slot)).unwrap_or_default(),
                        };
                        let _ = Reflect::set(&o, &"filepath".into(), &path.into());
                        let _ = Reflect::set(&o, &"score".into(), &s.score.into());
                        let _ = Reflect::set(&o, &"pointer".into(), &list.get(it.position));
                        let matched: Array = ranking.matched(s).map(JsValue::from).collect();
                        let _ = Reflect::set(&o, &"matched".into(), &matched);
                        JsValue::from(o)
                    })
                    .collect::<Array>(),
            ),
        };
        Ok(out)
    }

    /// The `embed` option (texts to vectors), while the manager is open: the JS glue
    /// calls it (with a saved record's text, or the query of `selectRelevant`).
    #[wasm_bindgen(getter, js_name = "__embed")]
    pub fn embed_option(&self) -> Option<Function> {
        self.embed.clone().filter(|_| self.inner.check_open("embed").is_ok())
    }

    /// Gives the record saved at `filepath` the vector in `embedded` (what the `embed`
    /// option returned for its text); throws when that is not one vector, and tells
    /// `onDebug` when the vector is refused (the record is then ranked by BM25 alone).
    #[wasm_bindgen(js_name = "__setVector")]
    pub fn set_vector(&self, filepath: String, embedded: JsValue) -> Result<(), JsValue> {
        let vector = one_vector(&embedded).js()?;
        // A pointer gone while `embed` ran (cleared, evicted) needs no vector.
        if self.inner.description_of(&filepath).is_some() && !self.inner.set_vector(&filepath, &vector) {
            self.inner.debug(
                "embed gave a vector that was refused (empty, zero, not finite or of another dimension)",
                Some(&filepath),
            );
        }
        Ok(())
    }

    /// The query's vector from what the `embed` option returned for it, for
    /// `selectRelevant`'s hybrid ranking (`__queryVector` in its options); throws when
    /// that is not one vector.
    #[wasm_bindgen(js_name = "__queryVector")]
    pub fn query_vector(embedded: JsValue) -> Result<js_sys::Float32Array, JsValue> {
        let vector = one_vector(&embedded).js()?;
        Ok(js_sys::Float32Array::from(vector.as_slice()))
    }

    /// The slots of the pointers `getAllPointers` (`kind` 0), `getPointersForQuery` (1)
    /// or `getPointersForTask` (2) list, in order (the JS glue makes the lists).
    #[wasm_bindgen(js_name = "__slots")]
    pub fn slots(&self, kind: u32, value: JsValue) -> Vec<u32> {
        match kind {
            0 => self.inner.slots(Filter::ALL),
            1 => value.as_string().map_or_else(Vec::new, |q| self.inner.slots(Filter::query(&q))),
            _ => match value.as_f64().map(task_id_from_f64) {
                Some(Ok(t)) => self.inner.slots(Filter::task(&t)),
                _ => Vec::new(),
            },
        }
    }

    /// The pointers in `slots`, as the JSON text of an array, in one crossing. The JS
    /// glue parses it once the call has returned: objects made (and field representations
    /// changed) while a wasm call is on the stack can crash Node 20's V8 when it
    /// deoptimises the caller, which inlined the call.
    #[wasm_bindgen(js_name = "__pointers")]
    pub fn pointers(&self, slots: &[u32]) -> String {
        let mut json = String::from("[");
        for &slot in slots {
            if json.len() > 1 {
                json.push(',');
            }
            if !self.inner.pointer_json_of(slot, &mut json) {
                json.push_str("null");
            }
        }
        json.push(']');
        json
    }

    /// Changes whenever slots are forgotten or moved (clearPointers, rebuild, compaction),
    /// so pointers the JS glue keeps by slot are stale.
    #[wasm_bindgen(getter, js_name = "__epoch")]
    pub fn epoch(&self) -> u32 {
        self.inner.epoch()
    }

    /// Sends a message to this manager's `onDebug` (for the JS glue).
    #[wasm_bindgen(js_name = "__debug")]
    pub fn debug_js(&self, message: String, path: Option<String>) {
        self.inner.debug(message, path.as_deref());
    }

    /// Panics on purpose, so tests can check that a trap becomes an `INTERNAL` error and
    /// that the module works again afterwards. Not part of the API.
    #[wasm_bindgen(js_name = "__panicForTests")]
    pub fn panic_for_tests(message: String) {
        panic!("{message}");
    }

    /// Like `__panicForTests`, in a plan's second step (so in the driver's `__planStep`,
    /// after the call returned), over the default storage.
    #[wasm_bindgen(js_name = "__panicForTestsAsync")]
    pub fn panic_for_tests_async(message: String) -> JsValue {
        Self::store_plan(
            JsValue::UNDEFINED,
            |_| Ok(PanicInStep(message, false)),
            |()| Ok(Reply::Value(JsValue::UNDEFINED)),
        )
    }

    /// The passage of a selected record for `query`: its best-matching lines as the model
    /// reads its result (`result_json`, the result's JSON text), `{text, startLine,
    /// endLine}`, or `undefined` when no line holds a word of the query.
    #[wasm_bindgen(js_name = "__passage")]
    pub fn passage(query: String, result_json: String) -> Result<JsValue, JsValue> {
        let result: Value = crate::record::from_json(&result_json)
            .map_err(|e| Error::invalid(format!("the result is not JSON: {e}")))
            .js()?;
        let view = crate::view::lines_of(&result);
        let Some(p) = crate::select::best_passage(&view, &crate::select::Query::new(&query)) else {
            return Ok(JsValue::UNDEFINED);
        };
        let o = Object::new();
        let _ = Reflect::set(&o, &"text".into(), &p.text.into());
        let _ = Reflect::set(&o, &"startLine".into(), &(p.start_line as f64).into());
        let _ = Reflect::set(&o, &"endLine".into(), &(p.end_line as f64).into());
        Ok(o.into())
    }

    /// A result (`result_json`, its JSON text) as the model reads it: its line view
    /// (src/view.rs), the lines passages number and the model's tools read and grep.
    #[wasm_bindgen(js_name = "__lines")]
    pub fn lines(&self, result_json: String) -> Result<String, JsValue> {
        let result: Value = crate::record::from_json(&result_json)
            .map_err(|e| Error::invalid(format!("the result is not JSON: {e}")))
            .js()?;
        Ok(crate::view::lines_of(&result))
    }

    /// `hashQuery`: `q_` and 16 hex digits, the same in every runtime.
    #[wasm_bindgen(js_name = hashQuery)]
    pub fn hash_query(query: JsValue) -> Result<String, JsValue> {
        let q = query.as_string().ok_or_else(|| invalid("query must be a string"))?;
        Ok(crate::naming::hash_query(&q))
    }

    /// Forgets every pointer; records stay.
    #[wasm_bindgen(js_name = clearPointers)]
    pub fn clear_pointers(&self) {
        self.inner.clear_pointers();
    }

    /// Removes the records this manager wrote and drops those held in memory.
    #[wasm_bindgen(js_name = clearContextDir)]
    pub fn clear_context_dir(&self) -> JsValue {
        self.clearing("clearContextDir", false)
    }

    /// `clearContextDir()` and `clearPointers()`.
    pub fn clear(&self) -> JsValue {
        self.clearing("clear", true)
    }

    /// Closes the manager: waits for the operations in flight, writes out the records
    /// held in memory and the session manifest, and closes the storage if it is the
    /// runtime's default (made for this manager). Afterwards every method that returns
    /// a Promise rejects with `CLOSED`; pointers stay readable. A second call resolves.
    ///
    /// Its first step, for the driver (driver.js, `close`): see `closing`.
    #[wasm_bindgen(js_name = "__close")]
    pub fn close(&self) -> JsValue {
        self.closing(self.inner.begin_close())
    }

    /// The step of `close()` once the operations in flight have ended (as `__close`).
    #[wasm_bindgen(js_name = "__closeIdle")]
    pub fn close_idle(&self) -> JsValue {
        self.closing(self.inner.close_when_idle())
    }

    /// Number of pointers.
    #[wasm_bindgen(getter)]
    pub fn size(&self) -> usize {
        self.inner.len()
    }

    /// The filepath of the record whose handle is `handle` (SPEC §3: `ctx:` and base32,
    /// any case, long or short), or `undefined` when no pointer has it. Throws
    /// `INVALID_ARGUMENT` when a short handle names two records.
    #[wasm_bindgen(js_name = resolveHandle)]
    pub fn resolve_handle(&self, handle: &str) -> Result<Option<String>, JsValue> {
        Ok(self.inner.slot_of_handle(handle).js()?.and_then(|slot| self.inner.filepath_of(slot)))
    }

    /// The pointer at `filepath` as JSON text, or `undefined` when none is there: one
    /// pointer without copying every one (toolctx/tools finds the record a handle names).
    #[wasm_bindgen(js_name = "__pointerAt")]
    pub fn pointer_at(&self, filepath: &str) -> Option<String> {
        let slot = self.inner.slot_of(filepath)?;
        let mut json = String::new();
        self.inner.pointer_json_of(slot, &mut json).then_some(json)
    }

    /// The (normalised, absolute where the runtime has paths) context dir.
    #[wasm_bindgen(js_name = getContextDir)]
    pub fn get_context_dir(&self) -> String {
        self.inner.context_dir().to_owned()
    }

    /// The session id; `undefined` without a session.
    #[wasm_bindgen(getter, js_name = sessionId)]
    pub fn session_id(&self) -> Option<String> {
        self.inner.session_id().map(str::to_owned)
    }
}

/// Which selection ranks: `selectRelevantContexts` (the seed's contract: only its
/// keywords make a pointer relevant, duplicates kept unless asked) or `selectRelevant`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Selection {
    Seed,
    Scored,
}

/// What a selection ranks: this manager's pointers by slot (all of them when `None`),
/// or an array of pointer objects from anywhere.
enum Source<'a> {
    Slots(Option<Vec<u32>>),
    /// The array and its usable pointers, in order.
    List {
        list: &'a Array,
        listed: Vec<ListedPointer>,
    },
}

/// A usable pointer of a list given to a selection.
struct ListedPointer {
    /// Its place in the array.
    position: u32,
    /// Its slot, when it is this manager's pointer (its terms are indexed).
    slot: Option<u32>,
    /// Its filepath, when it was given by filepath or is no pointer of this manager
    /// (else the slot's).
    path: Option<String>,
}

/// How the JS glue gives the pointers of a list (pointers.js: `listedSlots`): a slot
/// for each pointer it listed itself at `epoch` and whose filepath is still the one it
/// listed (`u32::MAX` for the others, and past the end), and the filepaths of the others
/// NUL-joined in `joined` ("" for a pointer without one; filepaths never hold NUL),
/// `None` to read them from the objects. A slot names a pointer only within its epoch,
/// and the pointer may be gone since: the core checks both ([`ContextManager::resolve_slot`]).
struct Given {
    slots: Vec<u32>,
    epoch: u32,
    joined: Option<String>,
}

/// No slot: the pointer is given by its filepath.
const NO_SLOT: u32 = u32::MAX;

/// The `queryId` and `taskId` selection options, checked.
fn filter_options(options: &JsValue) -> Result<(Option<String>, Option<serde_json::Number>)> {
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

/// The hits of `search` as JSON text.
fn hits_json(hits: &[crate::session::SessionHit]) -> String {
    let mut json = String::from("[");
    for hit in hits {
        if json.len() > 1 {
            json.push(',');
        }
        let e = &hit.entry;
        json.push_str("{\"sessionId\":");
        crate::record::push_json_str(&mut json, &hit.session_id);
        json.push_str(",\"filepath\":");
        crate::record::push_json_str(&mut json, &hit.filepath);
        json.push_str(",\"score\":");
        json.push_str(&score_json(hit.score));
        json.push_str(",\"matched\":");
        json.push_str(&serde_json::to_string(&hit.matched).unwrap_or_else(|_| "[]".into()));
        json.push_str(",\"pointer\":{\"filepath\":");
        crate::record::push_json_str(&mut json, &hit.filepath);
        json.push_str(",\"filename\":");
        crate::record::push_json_str(&mut json, hit.filepath.rsplit('/').next().unwrap_or(&hit.filepath));
        json.push_str(",\"toolName\":");
        crate::record::push_json_str(&mut json, &e.tool_name);
        json.push_str(",\"toolDescription\":");
        crate::record::push_json_str(&mut json, &e.tool_description);
        json.push_str(",\"args\":");
        json.push_str(e.args.get());
        if let Some(task) = &e.task_id {
            json.push_str(",\"taskId\":");
            json.push_str(&task.to_string());
        }
        if let Some(q) = &e.query_id {
            json.push_str(",\"queryId\":");
            crate::record::push_json_str(&mut json, q);
        }
        json.push_str(",\"argsHash\":");
        crate::record::push_json_str(&mut json, &e.args_hash);
        json.push_str(",\"timestamp\":");
        crate::record::push_json_str(&mut json, &e.created);
        json.push_str(",\"size\":");
        json.push_str(&e.size.to_string());
        json.push_str("}}");
    }
    json.push(']');
    json
}

/// A score as JSON (scores are finite; JSON has no NaN).
fn score_json(score: f64) -> String {
    if score.is_finite() {
        serde_json::Number::from_f64(score).map_or_else(|| "0".to_owned(), |n| n.to_string())
    } else {
        "0".to_owned()
    }
}

impl JsContextManager {
    /// Starts a store-wide operation over the storage and context dir that `options`
    /// name: the plan `plan` makes, its result made a JavaScript value by `reply`. Its
    /// first step, for the driver (src/wasm/plans.rs).
    fn store_plan<P: Plan + 'static>(
        options: JsValue,
        plan: impl FnOnce(&Manager) -> Result<P>,
        reply: impl FnOnce(P::Output) -> Result<Reply> + 'static,
    ) -> JsValue {
        let manager = match Self::build(options) {
            Ok((manager, _)) => manager,
            Err(e) => return plans::failed(e),
        };
        match plan(&manager.inner) {
            Ok(plan) => plans::start(manager.storage.clone(), plan, reply),
            Err(e) => plans::failed(e),
        }
    }

    /// `clearContextDir` (`what`), and with `pointers` `clear`: a plan that removes the
    /// records this manager wrote; in a session, one that removes the session.
    fn clearing(&self, what: &str, pointers: bool) -> JsValue {
        let inner = self.inner.clone();
        match inner.begin_clear(what) {
            Err(e) => plans::failed(e),
            // The job clears the pointers for `clear`.
            Ok(Clearing::Session(job)) => self.run_job(job, |_| Ok(Reply::Value(JsValue::UNDEFINED))),
            Ok(Clearing::Files(pass, written)) => {
                let manager = inner.clone();
                let removes = written.iter().map(|p| crate::plan::Op::Remove(p.clone())).collect();
                let plan = crate::plan::batch(removes, move |outcomes| {
                    let result = manager.written_removed(&written, outcomes);
                    if pointers {
                        manager.clear_pointers();
                    }
                    drop(pass);
                    result
                });
                plans::start(self.storage.clone(), plan, |()| Ok(Reply::Value(JsValue::UNDEFINED)))
            }
        }
    }

    /// The usable pointers of `list` (those with a string filepath that `filter` lets
    /// through, by their own `queryId` and `taskId`), by slot where `given` has a
    /// current one, else by filepath (from `given`, else read from each object).
    fn list_source<'a>(&self, list: &'a Array, given: Given, filter: Filter<'_>) -> Source<'a> {
        let mut joined = given.joined.as_deref().map(|j| j.split('\0'));
        let mut listed = Vec::new();
        for i in 0..list.length() {
            let slot = given.slots.get(i as usize).copied().unwrap_or(NO_SLOT);
            let resolved = if slot == NO_SLOT { None } else { self.inner.resolve_slot(given.epoch, slot) };
            let (slot, path) = match resolved {
                Some(Listed::Slot(slot)) => (Some(slot), None),
                Some(Listed::Gone(path)) => (None, Some(path)),
                None => {
                    let path = match joined.as_mut() {
                        Some(paths) if slot == NO_SLOT => paths.next().map(str::to_owned),
                        _ => get(&list.get(i), "filepath").as_string(),
                    };
                    let Some(path) = path.filter(|p| !p.is_empty()) else { continue };
                    (self.inner.slot_of(&path), Some(path))
                }
            };
            if !filter.is_all() {
                let pointer = list.get(i);
                let task = get(&pointer, "taskId").as_f64().and_then(|t| task_id_from_f64(t).ok());
                if !filter.passes(get(&pointer, "queryId").as_string().as_deref(), task.as_ref()) {
                    continue;
                }
            }
            listed.push(ListedPointer { position: i, slot, path });
        }
        Source::List { list, listed }
    }

    /// Ranks `source` for `query` with the selection options (strategy, fallback,
    /// limit, budgets, dedupe) as `selection` reads them. Hits index slots
    /// (`Source::Slots`) or `paths` (`Source::List`).
    fn rank(
        &self,
        query: &JsValue,
        source: &Source,
        options: &JsValue,
        selection: Selection,
    ) -> Result<crate::select::Ranking> {
        let query = query.as_string().ok_or_else(|| Error::invalid("query must be a string"))?;
        let dedupe_default = selection == Selection::Scored;
        let fallback = match get(options, "fallback").as_string().as_deref() {
            None | Some("all") => Fallback::All,
            Some("none") => Fallback::None,
            Some(other) => return Err(Error::invalid(format!("unknown fallback {other:?}"))),
        };
        let strategy = match get(options, "strategy").as_string().as_deref() {
            None | Some("bm25") => Strategy::Bm25,
            Some("overlap") => Strategy::Overlap,
            Some(other) => return Err(Error::invalid(format!("unknown strategy {other:?}"))),
        };
        let limit = opt_size(options, "limit")?;
        let max_bytes = opt_size(options, "maxBytes")?;
        let max_tokens = opt_size(options, "maxTokens")?;
        let dedupe = match get(options, "dedupe") {
            v if v.is_undefined() || v.is_null() => dedupe_default,
            v => v.as_bool().ok_or_else(|| Error::invalid("dedupe must be a boolean"))?,
        };
        // `selectRelevant` with the `embed` option: the query's vector (extras.js asks
        // `embed` for it, `__queryVector` makes it).
        let vector = match get(options, "__queryVector") {
            v if v.is_undefined() => None,
            v => Some(js_sys::Float32Array::new(&v).to_vec()),
        };
        let vector = vector.as_deref();
        let query = crate::select::query_for(&query, strategy, selection == Selection::Seed);
        // Without a budget only the best `limit` need sorting.
        let early = if max_bytes.is_none() && max_tokens.is_none() { limit } else { None };
        let mut ranking = self.ranked(&query, source, fallback, strategy, early, vector);
        if dedupe {
            let inner = &self.inner;
            let slot_of = |i: usize| match source {
                Source::Slots(_) => Some(i as u32),
                Source::List { listed, .. } => listed[i].slot,
            };
            let full = ranking.hits.len();
            let superseded = early.is_some()
                && ranking.hits.iter().any(|h| slot_of(h.index).is_some_and(|s| inner.has_later_copy(s)));
            let dropped = inner.collapse_duplicates(&mut ranking.hits, slot_of);
            if superseded || (dropped > 0 && early.is_some_and(|k| full >= k)) {
                // Duplicates took places in the best `limit`, or a later copy may lie
                // beyond it: rank every candidate.
                ranking = self.ranked(&query, source, fallback, strategy, None, vector);
                inner.collapse_duplicates(&mut ranking.hits, slot_of);
            }
        }
        let inner = &self.inner;
        let size_of = |i: usize| match source {
            Source::Slots(_) => inner.size_of_slot(i as u32).unwrap_or(0),
            Source::List { list, listed } => {
                if let Some(size) = listed[i].slot.and_then(|slot| inner.size_of_slot(slot)) {
                    return size;
                }
                let pointer = list.get(listed[i].position);
                match get(&pointer, "size").as_f64() {
                    Some(n) if n >= 0.0 => n as usize,
                    _ => JSON::stringify(&pointer).ok().and_then(|s| s.as_string()).map_or(0, |s| s.len()),
                }
            }
        };
        if let Some(max) = max_bytes {
            ranking.hits = crate::select::within_budget(ranking.hits, max, size_of);
        }
        if let Some(max) = max_tokens {
            ranking.hits =
                crate::select::within_budget(ranking.hits, max, |i| crate::select::estimated_tokens(size_of(i)));
        }
        if let Some(limit) = limit {
            ranking.hits.truncate(limit);
        }
        Ok(ranking)
    }

    /// The ranking of `source` for `query`, the best `early` of it when given. With the
    /// query's `vector`: hybrid, the keyword ranking and the [`VECTOR_DEPTH`] nearest
    /// pointers by cosine fused by reciprocal rank (the score is the fused one; a pointer
    /// found by its vector alone matched no keyword); the fallback applies when neither
    /// finds anything.
    ///
    /// [`VECTOR_DEPTH`]: crate::select::VECTOR_DEPTH
    fn ranked(
        &self,
        query: &crate::select::Query,
        source: &Source,
        fallback: Fallback,
        strategy: Strategy,
        early: Option<usize>,
        vector: Option<&[f32]>,
    ) -> crate::select::Ranking {
        let inner = &self.inner;
        if let Some(vector) = vector {
            let candidates: Vec<(usize, u32)> = match source {
                Source::Slots(None) => inner.slots(Filter::ALL).into_iter().map(|s| (s as usize, s)).collect(),
                Source::Slots(Some(slots)) => slots.iter().map(|&s| (s as usize, s)).collect(),
                Source::List { listed, .. } => {
                    listed.iter().enumerate().filter_map(|(i, it)| it.slot.map(|s| (i, s))).collect()
                }
            };
            let depth = crate::select::VECTOR_DEPTH.max(early.unwrap_or(0));
            let near = inner.nearest(vector, candidates.into_iter(), depth);
            if !near.is_empty() {
                let lexical = self.ranked(query, source, Fallback::None, strategy, None, None);
                let keyword_hits: Vec<usize> = lexical.hits.iter().map(|h| h.index).collect();
                let matched: HashMap<usize, u64> = lexical.hits.iter().map(|h| (h.index, h.matched)).collect();
                let mut hits: Vec<crate::select::Scored> = crate::select::fuse(&[&keyword_hits, &near])
                    .into_iter()
                    .map(|(index, score)| crate::select::Scored {
                        index,
                        score,
                        matched: matched.get(&index).copied().unwrap_or(0),
                    })
                    .collect();
                if let Some(k) = early {
                    hits.truncate(k);
                }
                return crate::select::Ranking { keywords: lexical.keywords, hits };
            }
        }
        match source {
            Source::Slots(None) => inner.rank_all(query, fallback, strategy, early),
            Source::Slots(Some(slots)) => inner.rank_slots(query, slots, fallback, strategy, early),
            Source::List { list, listed } => {
                let candidates: Vec<Candidate> = listed
                    .iter()
                    .map(|it| match it.slot {
                        Some(slot) => Candidate::Known(slot),
                        None => foreign_terms(&list.get(it.position)),
                    })
                    .collect();
                inner.rank(query, &candidates, fallback, strategy, early)
            }
        }
    }
}

/// The one vector in what the `embed` option returned for one text: an array holding
/// one array of numbers or `Float32Array`.
fn one_vector(embedded: &JsValue) -> Result<Vec<f32>> {
    let first = embedded.dyn_ref::<Array>().filter(|a| a.length() == 1).map(|a| a.get(0));
    let vector = first.filter(|v| Array::is_array(v) || v.is_instance_of::<js_sys::Float32Array>());
    let vector =
        vector.ok_or_else(|| Error::invalid("embed must return one array of numbers (or Float32Array) per text"))?;
    Ok(js_sys::Float32Array::new(&vector).to_vec())
}

/// A plan that asks for nothing, then panics at its next step (`__panicForTestsAsync`):
/// the message, and whether it has asked.
struct PanicInStep(String, bool);

impl crate::plan::Plan for PanicInStep {
    type Output = ();

    fn step(&mut self, _: crate::plan::Outcomes) -> crate::plan::Step<()> {
        if !self.1 {
            self.1 = true;
            return crate::plan::Step::Run(Vec::new());
        }
        panic!("{}", self.0);
    }
}

/// The indexed terms of a pointer object this manager did not make.
fn foreign_terms(pointer: &JsValue) -> Candidate {
    let text = |k: &str| get(pointer, k).as_string().unwrap_or_default();
    let args = JSON::stringify(&get(pointer, "args"))
        .ok()
        .and_then(|s| s.as_string())
        .and_then(|s| crate::record::from_json::<Value>(&s).ok())
        .unwrap_or(Value::Null);
    Candidate::Foreign(Terms::of_record(&text("toolDescription"), &text("toolName"), &args))
}
