//! The options of a `ContextManager`.

use std::rc::Rc;

use js_sys::{Array, Function, Object, Reflect};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::super::args::{debug_note, debug_sink, get, opt_function, opt_size, opt_string, positive_integer};
use super::super::host::{default_dir_note, storage_from};
use super::super::json::json_value;
use super::super::storage::JsStorage;
use super::{clock, folder, host_random, storage_option};
use toolctx_core::error::{Error, Result};
use toolctx_core::store::{Options, SessionChoice};

/// The options of a `ContextManager`, checked.
pub struct ManagerOptions {
    pub storage: JsStorage,
    pub core: Options,
    pub describe: Option<Function>,
    pub redact: Option<Function>,
    pub embed: Option<Function>,
    pub on_debug: Option<Function>,
    pub owns_storage: bool,
}

impl ManagerOptions {
    /// Reads `options` (`undefined` for none).
    pub fn read(options: &JsValue) -> Result<ManagerOptions> {
        if !(options.is_undefined() || options.is_null() || options.is_object()) {
            return Err(Error::invalid("options must be an object"));
        }
        let on_debug = opt_function(options, "onDebug")?;
        let sink = debug_sink(&on_debug);
        let storage_opt = storage_option(options, "fileSystem", "storage");
        let owns_storage = storage_opt.is_undefined() || storage_opt.is_null();
        let given_dir = opt_string(options, "contextDir")?;
        let defaulted = given_dir.is_none();
        let (dir, root) = folder(given_dir, &storage_opt)?;
        let note = debug_note(&sink);
        if defaulted && sink.is_some() {
            // The runtime could not resolve the default store as documented: said once,
            // to a manager that listens.
            if let Some(default_dir) = default_dir_note() {
                note(&default_dir);
            }
        }
        let storage = storage_from(storage_opt, &root, &note)?;
        let clock = clock(options)?;
        let random: toolctx_core::store::Random = match opt_function(options, "random")? {
            Some(f) => Rc::new(move || Ok(f.call0(&JsValue::UNDEFINED).ok().and_then(|v| v.as_f64()).unwrap_or(0.0))),
            None => Rc::new(host_random),
        };
        let mut core = Options::with(dir, clock, random);
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
        if let Some(n) = opt_size(options, "indexMemory")? {
            core.index_memory = n;
        }
        // A host that reads ranges: the index reads its segments by range.
        core.ranges = storage.reads_ranges();
        // A storage with a largest value: index segments are written within it.
        if let Some(n) = storage.max_value_bytes() {
            core.max_value_bytes = n;
        }
        core.on_debug = sink.clone();
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
                    let why = e.as_string().or_else(|| Reflect::get(&e, &"message".into()).ok()?.as_string());
                    toolctx_core::inputs::debug(
                        debug.as_ref(),
                        format!("onEvict threw: {}", why.unwrap_or_default()),
                        None,
                    );
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
        Ok(ManagerOptions {
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

/// The `retention` option: `{maxBytes?, maxRecords?, maxAgeMs?}`, each a positive
/// integer; any other key is refused, so a misspelt cap is not silently no cap.
fn retention(value: &JsValue) -> Result<toolctx_core::Retention> {
    if value.is_undefined() || value.is_null() {
        return Ok(toolctx_core::Retention::default());
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
        match positive_integer(&v) {
            Some(n) => Ok(Some(n)),
            None => Err(Error::invalid(format!("retention.{key} must be a positive integer"))),
        }
    };
    Ok(toolctx_core::Retention {
        max_bytes: cap("maxBytes")?.map(|n| n as usize),
        max_records: cap("maxRecords")?.map(|n| n as usize),
        max_age_ms: cap("maxAgeMs")?.map(|n| n as i64),
    })
}
