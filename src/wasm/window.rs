//! The context-window optimiser in JavaScript (SPEC §7): `optimizeWindow`,
//! `findDuplicateFileReads`, `truncationRange`, `shouldCompact`, `estimateTokens` and the
//! `ContextHistory` class. Messages come in as one JSON text (`JSON.stringify`), so the
//! caller's objects are never touched; what goes back is the plan — the messages an
//! edit changed, the range to remove, the edits, the metrics — as JSON text, from which
//! the JS glue (`window.js`) builds the result: a copy of the messages with the changed
//! ones swapped in (a 2,000-message conversation sends back a few small messages rather
//! than megabytes of unchanged text). The glue parses the text once the wasm call has
//! returned (a `JSON.parse` inside a wasm call can crash Node 20's V8; see `__pointers` in
//! `manager/select.rs`).

use std::cell::RefCell;

use js_sys::Array;
use serde_json::Value;
use wasm_bindgen::prelude::*;

use super::interop::args::get;
use super::interop::errors::IntoJs;
use super::interop::options::history::{debug_to, on_debug};
use super::interop::options::HistoryOptions;
use super::interop::steps::{self, Kind};
use super::interop::storage::{host_failure, op_js, outcome_of, JsStorage};
use super::interop::window::{
    changed_value, check_options, messages_of, opt_number, opt_range, optimize_options, plan_js, range_value, strategy,
    to_js, tools,
};
use crate::error::{Error, ErrorKind, Result};
use crate::plan::{Op, Outcome};
use crate::select::estimated_tokens;
use crate::window::json::object;
use crate::window::{self, history, Edit, History, Usage};

// The core's values cross as JSON text built from `serde_json::Value`s (no serde
// derives), which keeps the module small.

#[wasm_bindgen(typescript_custom_section)]
const WINDOW_TYPES: &'static str = include_str!("window.d.ts");

/// The plan of `optimizeWindow(messages, options)` without a history (the JS glue sends
/// calls with `options.history` to `ContextHistory.optimize`).
#[wasm_bindgen(js_name = "__optimizeWindow", skip_typescript)]
pub fn optimize_window(messages: JsValue, options: JsValue) -> Result<JsValue, JsValue> {
    let run = || {
        let messages = messages_of(&messages)?;
        let mut history = History::default();
        if let Some(range) = opt_range(&options, "deletedRange")? {
            history.truncations.push(window::Truncation { ts: i64::MIN, range });
        }
        plan_js(window::plan(messages, &optimize_options(&options)?, &mut history)?)
    };
    run().js()
}

/// Files whose content appears more than once, with every place it appears.
#[wasm_bindgen(js_name = "findDuplicateFileReads", skip_typescript)]
pub fn find_duplicate_file_reads(messages: JsValue, options: JsValue) -> Result<JsValue, JsValue> {
    let run = || {
        check_options(&options)?;
        let messages = messages_of(&messages)?;
        let reads = window::find_file_reads(&messages, &tools(&options)?, |i| i >= 2, true);
        let out: Vec<Value> = reads
            .iter()
            .map(|f| {
                let occurrences: Vec<Value> = f
                    .occurrences
                    .iter()
                    .map(|o| {
                        object(vec![
                            ("message", o.message.into()),
                            ("block", o.block.into()),
                            ("kind", o.kind.name().into()),
                        ])
                    })
                    .collect();
                object(vec![("path", f.path.as_str().into()), ("occurrences", Value::Array(occurrences))])
            })
            .collect();
        Ok(to_js(&Value::Array(out)))
    };
    run().js()
}

/// The inclusive range a truncation with `strategy` removes, or `null`.
#[wasm_bindgen(js_name = "truncationRange", skip_typescript)]
pub fn truncation_range(messages: JsValue, strategy_name: JsValue, options: JsValue) -> Result<JsValue, JsValue> {
    let run = || {
        check_options(&options)?;
        let messages = messages_of(&messages)?;
        let range =
            window::truncation_range(&messages, strategy(&strategy_name)?, opt_range(&options, "deletedRange")?);
        Ok(to_js(&range_value(range)))
    };
    run().js()
}

/// Whether the last request's tokens reach the window minus the reserve.
#[wasm_bindgen(js_name = "shouldCompact", skip_typescript)]
pub fn should_compact(usage: JsValue, context_window: JsValue, options: JsValue) -> Result<bool, JsValue> {
    let run = || {
        if !usage.is_object() {
            return Err(Error::invalid("usage must be an object with inputTokens"));
        }
        check_options(&options)?;
        let count = |key: &str| opt_number(&usage, key).map(|n| n.unwrap_or(0.0) as u64);
        if get(&usage, "inputTokens").is_undefined() {
            return Err(Error::invalid("usage.inputTokens is required"));
        }
        let usage = Usage {
            input: count("inputTokens")?,
            output: count("outputTokens")?,
            cache_read: count("cacheReadTokens")?,
            cache_write: count("cacheWriteTokens")?,
        };
        let window_size = match context_window.as_f64() {
            Some(n) if n.is_finite() && n > 0.0 => n as u64,
            _ => return Err(Error::invalid("contextWindow must be a positive number")),
        };
        let reserve = opt_number(&options, "reserve")?.map(|n| n as u64);
        Ok(window::should_compact(usage, window_size, reserve))
    };
    run().js()
}

/// Estimated tokens of a text or of messages (4 UTF-8 bytes a token).
#[wasm_bindgen(js_name = "estimateTokens", skip_typescript)]
pub fn estimate_tokens(value: JsValue) -> Result<f64, JsValue> {
    let run = || {
        if let Some(text) = value.as_string() {
            return Ok(estimated_tokens(text.len()) as f64);
        }
        Ok(window::estimate_message_tokens(&messages_of(&value)?) as f64)
    };
    run().js()
}

/// The persisted edit history of one conversation. Its file's read and write run in
/// `window.js` (`open`, `save`, `restoreCheckpoint`): this module computes, and runs no
/// tasks (no executor, no futures in it).
#[wasm_bindgen(js_name = ContextHistory, skip_typescript)]
pub struct JsContextHistory {
    storage: JsStorage,
    path: String,
    id: String,
    history: RefCell<History>,
}

impl JsContextHistory {
    /// The read of the history's file.
    fn read_op(&self) -> Op {
        Op::Read(self.path.clone())
    }

    /// The history in what the host's `read` gave: empty for no file; `CORRUPT_RECORD`
    /// when it does not parse, unless `discardCorrupt`.
    fn load(&self, bytes: Option<Vec<u8>>, options: &JsValue) -> Result<()> {
        let loaded = match history::of_file(bytes.as_deref(), &self.path) {
            Err(e) if get(options, "discardCorrupt").is_truthy() => {
                debug_to(&on_debug(options), &format!("discarded a corrupt window history: {e}"));
                History::default()
            }
            other => other?,
        };
        *self.history.borrow_mut() = loaded;
        Ok(())
    }
}

/// The history file's read and write, as steps the driver runs (window.js, driver.js
/// `run`; docs/protocol.md).
#[wasm_bindgen(js_class = ContextHistory)]
impl JsContextHistory {
    /// A history with nothing loaded yet: `open` reads the file (`__readStep`) and loads
    /// it (`__loaded`).
    #[wasm_bindgen(js_name = "__open")]
    pub fn open_empty(options: JsValue) -> Result<JsContextHistory, JsValue> {
        let HistoryOptions { id, path, storage } = HistoryOptions::read(&options).js()?;
        Ok(JsContextHistory { storage, path, id, history: RefCell::new(History::default()) })
    }

    /// A `run` step: read the history file.
    #[wasm_bindgen(js_name = "__readStep")]
    pub fn read_step(&self) -> JsValue {
        steps::run(Kind::Run, None, &self.storage, Array::of1(&op_js(&self.read_op())))
    }

    /// Loads what the read gave (`open`'s `options` say whether a corrupt file is
    /// discarded): `done`, or `failed` with the typed error.
    #[wasm_bindgen(js_name = "__loaded")]
    pub fn loaded(&self, outcomes: Array, options: JsValue) -> JsValue {
        let read = outcome_of(&self.read_op(), &outcomes.get(0));
        last_step(read.and_then(|read| match read {
            Outcome::Read(bytes) => self.load(bytes, &options),
            _ => Err(Error::new(ErrorKind::Internal, "a read gave another outcome")),
        }))
    }

    /// A `run` step: write the history file with what the history holds now (replaced
    /// whole, atomically where the storage allows).
    #[wasm_bindgen(js_name = "__writeStep")]
    pub fn write_step(&self) -> JsValue {
        let write = Op::Write { path: self.path.clone(), bytes: self.history.borrow().to_json(), exclusive: false };
        steps::run(Kind::Run, None, &self.storage, Array::of1(&op_js(&write)))
    }

    /// How the write went: `done`, or `failed` with the typed error.
    #[wasm_bindgen(js_name = "__written")]
    pub fn written(&self, outcomes: Array) -> JsValue {
        last_step(steps::outcome(&outcomes.get(0)).map(drop).map_err(|e| host_failure("write", &self.path, e)))
    }

    /// Drops the edits and truncations made after `ts`; how many (`restoreCheckpoint`
    /// then saves).
    #[wasm_bindgen(js_name = "__restoreCheckpoint")]
    pub fn restore(&self, ts: JsValue) -> Result<f64, JsValue> {
        let Some(ts) = ts.as_f64().filter(|n| !n.is_nan()) else {
            return Err(super::interop::errors::invalid("ts must be a number"));
        };
        Ok(self.history.borrow_mut().restore_checkpoint(ts.floor() as i64) as f64)
    }
}

/// `done` (with nothing), or `failed`.
fn last_step(result: Result<()>) -> JsValue {
    match result {
        Ok(()) => steps::done(&JsValue::UNDEFINED),
        Err(e) => steps::failed(&super::interop::errors::to_js(e)),
    }
}

#[wasm_bindgen(js_class = ContextHistory)]
impl JsContextHistory {
    /// Panics on purpose, so tests can check that a trap in this module (a wasm module of
    /// its own, src/wasm/mod.rs) becomes an `INTERNAL` error and that the module works
    /// again afterwards. Not part of the API.
    #[wasm_bindgen(js_name = "__panicForTests")]
    pub fn panic_for_tests(message: String) {
        panic!("{message}");
    }

    /// The id.
    #[wasm_bindgen(getter)]
    pub fn id(&self) -> String {
        self.id.clone()
    }

    /// The history file's path.
    #[wasm_bindgen(getter)]
    pub fn path(&self) -> String {
        self.path.clone()
    }

    /// The range the latest truncation removed, or `null`.
    #[wasm_bindgen(getter, js_name = deletedRange)]
    pub fn deleted_range(&self) -> JsValue {
        to_js(&range_value(self.history.borrow().deleted_range()))
    }

    /// The plan of `optimizeWindow` recording its edits here (call `save()` to persist them).
    #[wasm_bindgen(js_name = "__optimize")]
    pub fn optimize(&self, messages: JsValue, options: JsValue) -> Result<JsValue, JsValue> {
        let run = || {
            let messages = messages_of(&messages)?;
            let options = optimize_options(&options)?;
            // Work on a copy so that a failure leaves the history as it was.
            let mut history = self.history.borrow().clone();
            let plan = window::plan(messages, &options, &mut history)?;
            *self.history.borrow_mut() = history;
            plan_js(plan)
        };
        run().js()
    }

    /// `{changed, truncated}`: the messages the recorded edits change and the latest
    /// range, from which the JS glue builds `apply(messages)`.
    #[wasm_bindgen(js_name = "__apply")]
    pub fn apply(&self, messages: JsValue) -> Result<JsValue, JsValue> {
        let run = || {
            let applied = window::apply_history_in_place(messages_of(&messages)?, &self.history.borrow())?;
            let changed = changed_value(applied.messages, &applied.changed);
            Ok(to_js(&object(vec![("changed", changed), ("truncated", range_value(applied.truncated))])))
        };
        run().js()
    }

    /// Copies of the recorded edits, oldest first.
    pub fn edits(&self) -> JsValue {
        to_js(&Value::Array(self.history.borrow().edits.iter().map(Edit::to_value).collect()))
    }
}

/// For `JSON.stringify(history)` and debugging: `{id, path, edits, truncations}`.
#[wasm_bindgen(js_class = ContextHistory)]
impl JsContextHistory {
    #[wasm_bindgen(js_name = toJSON)]
    pub fn to_json(&self) -> JsValue {
        let mut value = self.history.borrow().to_value();
        if let Some(o) = value.as_object_mut() {
            o.insert("id".to_owned(), Value::from(self.id.as_str()));
            o.insert("path".to_owned(), Value::from(self.path.as_str()));
        }
        to_js(&value)
    }
}
