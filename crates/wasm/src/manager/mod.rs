//! The exported `ContextManager` class: the seed API (SPEC §2) with its exact names.
//!
//! Methods that do I/O return a Promise and never throw: argument errors become
//! rejections. `saveContext` serialises `args` and `result` before it returns, so a
//! caller mutating them afterwards changes nothing stored.
//!
//! This file holds the class and its lifecycle (open, flush, close, clear, sessions; its
//! options are read in `interop/options/manager.rs`); the rest, a file each: `save` (`saveContext` in steps), `load`
//! (`loadContexts` in steps), `select` (selection, vectors, passages and line views) and
//! `storewide` (the static operations over a folder).

use std::rc::Rc;

use js_sys::{Array, Function, Object, Reflect};

use wasm_bindgen::prelude::*;

use super::interop::errors::{invalid, IntoJs};
use super::interop::options::ManagerOptions;
use super::interop::steps;
use super::interop::storage::JsStorage;
use super::plans::{self, Reply};
use toolctx_core::error::Result;
use toolctx_core::store::{remove_written, Clearing, ClosePlan, Job, JobPlan, Manager};

mod grep;
mod load;
mod save;
mod select;
mod storewide;

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
}

/// Below this many UTF-16 units a call into `TextEncoder` costs more than it saves.
const ENCODER_FROM: u32 = 4096;

impl JsContextManager {
    fn build(options: JsValue) -> Result<(Self, Option<Function>)> {
        let ManagerOptions { storage, core, describe, redact, embed, on_debug, owns_storage } =
            ManagerOptions::read(&options)?;
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
        JsContextManager { inner: Rc::new(inner), storage: Rc::new(storage), describe, redact, embed, owns_storage }
    }

    /// Tells `onDebug` the folder and the storage in use (see [`announce`]).
    fn announce(&self, on_debug: &Option<Function>) {
        announce(&self.inner, &self.storage, on_debug)
    }

    /// Starts `job` as a plan (crates/wasm/src/plans.rs), `reply` making its result once it is
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

impl JsContextManager {}

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
    /// plan that makes it ready (crates/wasm/src/plans.rs): a new session's manifest written, a
    /// named session resumed (a pointer for every persisted record).
    #[wasm_bindgen(js_name = "__open")]
    pub fn open(options: JsValue) -> Result<JsValue, JsValue> {
        let ManagerOptions { storage, core, describe, redact, embed, on_debug, owns_storage } =
            ManagerOptions::read(&options).js()?;
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
    /// first step of its plan (crates/wasm/src/plans.rs), resolving to `undefined`.
    #[wasm_bindgen(js_name = endSession)]
    pub fn end_session(&self) -> JsValue {
        match self.inner.begin_end_session() {
            Ok(job) => self.run_job(job, |_| Ok(Reply::Value(JsValue::UNDEFINED))),
            Err(e) => plans::failed(e),
        }
    }

    /// Writes out the records held in memory (and brings the session manifest up to
    /// date); the first step of its plan (crates/wasm/src/plans.rs), resolving to `undefined`.
    pub fn flush(&self) -> JsValue {
        match self.inner.begin_flush() {
            Ok(job) => self.run_job(job, |_| Ok(Reply::Value(JsValue::UNDEFINED))),
            Err(e) => plans::failed(e),
        }
    }

    /// Adopts the records of the session folder its manifest does not list (left by a
    /// crash); resolves to their filepaths. Outside a session, nothing: `[]`. The first
    /// step of its plan (crates/wasm/src/plans.rs).
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
    /// of its plan (crates/wasm/src/plans.rs).
    #[wasm_bindgen(js_name = rebuildIndex)]
    pub fn rebuild_index(&self) -> JsValue {
        match self.inner.begin_rebuild_index() {
            Err(e) => plans::failed(e),
            Ok(job) => self.run_job(job, |indexed| Ok(Reply::Value((indexed.len() as f64).into()))),
        }
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

    /// `hashQuery`: `q_` and 16 hex digits, the same in every runtime.
    #[wasm_bindgen(js_name = hashQuery)]
    pub fn hash_query(query: JsValue) -> Result<String, JsValue> {
        let q = query.as_string().ok_or_else(|| invalid("query must be a string"))?;
        Ok(toolctx_core::naming::hash_query(&q))
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
    /// The first step of its plan ([`ClosePlan`]: `wait` while operations are in flight,
    /// then the write-out), for the driver (driver.js, `close`). It resolves to `{host,
    /// close}`, the storage's `close()` for the driver to call last when this close
    /// closed the manager over a storage it made, else `undefined`.
    #[wasm_bindgen(js_name = "__close")]
    pub fn close(&self) -> JsValue {
        let (storage, owns_storage) = (self.storage.clone(), self.owns_storage);
        let reply = move |closed_now: bool| {
            let close = (closed_now && owns_storage).then(|| storage.close_call()).flatten();
            Ok(Reply::Value(close.unwrap_or(JsValue::UNDEFINED)))
        };
        plans::start(self.storage.clone(), ClosePlan::new(self.inner.clone()), reply)
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
    pub fn resolve_handle(&self, handle: JsValue) -> Result<Option<String>, JsValue> {
        let handle = handle.as_string().ok_or_else(|| invalid("handle must be a string (ctx:…)"))?;
        Ok(self.inner.slot_of_handle(&handle).js()?.and_then(|slot| self.inner.filepath_of(slot)))
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

impl JsContextManager {
    /// `clearContextDir` (`what`), and with `pointers` `clear`: a plan that removes the
    /// records this manager wrote; in a session, one that removes the session.
    fn clearing(&self, what: &str, pointers: bool) -> JsValue {
        let inner = self.inner.clone();
        match inner.begin_clear(what) {
            Err(e) => plans::failed(e),
            // The job clears the pointers for `clear`.
            Ok(Clearing::Session(job)) => self.run_job(job, |_| Ok(Reply::Value(JsValue::UNDEFINED))),
            Ok(Clearing::Files(pass, written)) => {
                let plan = remove_written(inner, pass, written, pointers);
                plans::start(self.storage.clone(), plan, |()| Ok(Reply::Value(JsValue::UNDEFINED)))
            }
        }
    }
}

/// A plan that asks for nothing, then panics at its next step (`__panicForTestsAsync`):
/// the message, and whether it has asked.
struct PanicInStep(String, bool);

impl toolctx_core::plan::Plan for PanicInStep {
    type Output = ();

    fn step(&mut self, _: toolctx_core::plan::Outcomes) -> toolctx_core::plan::Step<()> {
        if !self.1 {
            self.1 = true;
            return toolctx_core::plan::Step::Run(Vec::new());
        }
        panic!("{}", self.0);
    }
}
