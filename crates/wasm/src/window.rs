//! The context-window optimiser in JavaScript (SPEC §7): `optimizeWindow`,
//! `findDuplicateFileReads`, `truncationRange`, `shouldCompact`, `estimateTokens` and the
//! `ContextHistory` class. Messages come in as one JSON text (`JSON.stringify`), so the
//! caller's objects are never touched; what goes back is the plan — the messages an
//! edit changed, the range to remove, the edits, the metrics — as JSON text, from which
//! the JS glue (`window.js`) builds the result: a copy of the messages with the changed
//! ones swapped in (a 2,000-message conversation sends back a few small messages rather
//! than megabytes of unchanged text). The glue parses the text once the wasm call has
//! returned (a `JSON.parse` inside a wasm call can crash Node 20's V8; see `pointers` in
//! `manager/select.rs`).
//!
//! A `ContextHistory`'s file is loaded (`__load`) and written (`__save`) by plans of the
//! core (`toolctx_core::window::history`), which `plans.rs` starts and steps (`__planStep`) for
//! the window module's driver: the I/O they ask for runs in JavaScript.

use std::cell::RefCell;
use std::rc::Rc;

use js_sys::Function;
use serde_json::Value;
use wasm_bindgen::prelude::*;

use super::interop::args::get;
use super::interop::errors::IntoJs;
use super::interop::options::history::debug_to;
use super::interop::options::HistoryOptions;
use super::interop::storage::JsStorage;
use super::interop::window::{
    changed_value, check_options, messages_of, opt_number, opt_range, optimize_options, plan_js, range_value, strategy,
    to_js, tools,
};
use super::plans::{self, Reply};
use toolctx_core::error::Error;
use toolctx_core::select::estimated_tokens;
use toolctx_core::window::json::object;
use toolctx_core::window::{self, history, Edit, History, Usage};

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

/// The persisted edit history of one conversation. Its file's load and write are plans
/// (`toolctx_core::window::history`: `load`, `save`) that this module starts and steps
/// (crates/wasm/src/plans.rs) and the window module's driver runs (`window.js`: `open`, `save`,
/// `restoreCheckpoint`): this module computes, and runs no tasks.
#[wasm_bindgen(js_name = ContextHistory, skip_typescript)]
pub struct JsContextHistory {
    storage: Rc<JsStorage>,
    path: String,
    id: String,
    /// `open`'s `discardCorrupt`.
    discard_corrupt: bool,
    /// `open`'s `onDebug`.
    on_debug: Option<Function>,
    /// Shared with a load in flight, which fills it.
    history: Rc<RefCell<History>>,
}

/// The history file's load and write, as plans the driver runs (window.js, driver.js
/// `plan`; docs/protocol.md).
#[wasm_bindgen(js_class = ContextHistory)]
impl JsContextHistory {
    /// A history with nothing loaded yet, its options read: `open` then loads it (`__load`).
    #[wasm_bindgen(js_name = "__open")]
    pub fn open_empty(options: JsValue) -> Result<JsContextHistory, JsValue> {
        let HistoryOptions { id, path, storage, discard_corrupt, on_debug } = HistoryOptions::read(&options).js()?;
        let history = Rc::new(RefCell::new(History::default()));
        Ok(JsContextHistory { storage: Rc::new(storage), path, id, discard_corrupt, on_debug, history })
    }

    /// The first step of the plan that loads the history file into this history (empty
    /// for no file; `CORRUPT_RECORD` when it does not parse, unless `discardCorrupt`, which
    /// tells `onDebug`): resolves to `undefined`.
    #[wasm_bindgen(js_name = "__load")]
    pub fn load(&self) -> JsValue {
        let (history, on_debug) = (self.history.clone(), self.on_debug.clone());
        plans::start(self.storage.clone(), history::load(&self.path, self.discard_corrupt), move |loaded| {
            if let Some(e) = loaded.discarded {
                debug_to(&on_debug, &format!("discarded a corrupt window history: {e}"));
            }
            *history.borrow_mut() = loaded.history;
            Ok(Reply::Value(JsValue::UNDEFINED))
        })
    }

    /// The first step of the plan that writes the history file with what the history
    /// holds now (replaced whole, atomically where the storage allows): resolves to
    /// `undefined`.
    #[wasm_bindgen(js_name = "__save")]
    pub fn save(&self) -> JsValue {
        let plan = history::save(&self.path, &self.history.borrow());
        plans::start(self.storage.clone(), plan, |()| Ok(Reply::Value(JsValue::UNDEFINED)))
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

#[wasm_bindgen(js_class = ContextHistory)]
impl JsContextHistory {
    /// Panics on purpose, so tests can check that a trap in this module (a wasm module of
    /// its own, crates/wasm/src/lib.rs) becomes an `INTERNAL` error and that the module works
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
