//! The exported `ContextManager` class: the seed API (SPEC §2) with its exact names.
//!
//! Methods that do I/O return a Promise and never throw: argument errors become
//! rejections. `saveContext` serialises `args` and `result` before it returns, so a
//! caller mutating them afterwards changes nothing stored.
//!
//! The package's class (pkg-template/context-manager.js) holds an instance and calls it
//! through six exports (with `__planStep`, which steps every plan, the module's seven): the
//! constructor; on an instance, `begin(work)` (a workflow: the first step of its plan,
//! for the driver), `query(q)` and `update(u)` (synchronous); and with no instance, the
//! static `start(options, work)` (a workflow with no manager yet: `open`, and those over
//! a whole folder) and `compute(c)` (synchronous: `hashQuery`, a result's line view,
//! grep_context's matching lines). Each request is a plain object whose `kind`
//! protocol.js names, read in interop/requests.rs; the options in
//! `interop/options/manager.rs`. tests/js/protocol.test.mjs keeps the exports this few.
//!
//! This file holds the class, its lifecycle (open, flush, close, clear, sessions) and the
//! dispatch; the rest, a file each: `save` (`saveContext`'s first step), `load`
//! (`loadContexts`), `select` (selection, vectors, passages and line views), `storewide`
//! (the workflows over a folder) and `grep` (a result's line view and grep_context's
//! matcher).

use std::rc::Rc;

use js_sys::{Array, Function, Object, Reflect, Uint32Array};

use wasm_bindgen::prelude::*;

use super::interop::errors::{invalid, IntoJs};
use super::interop::options::ManagerOptions;
use super::interop::requests::{Compute, Query, Start, Update, Work};
use super::interop::storage::JsStorage;
use super::plans::{self, Reply};
use toolctx_core::error::Result;
use toolctx_core::store::{remove_written, Clearing, ClosePlan, Job, JobPlan, Manager, INDEX_SLICE_BYTES};

mod grep;
mod load;
mod relevant;
mod save;
mod select;
mod storewide;

/// The tool-context store.
#[wasm_bindgen(js_name = ContextManager, skip_typescript)]
#[derive(Clone)]
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

    /// Tells `onDebug` the folder and the storage in use, as the seed's constructor does:
    /// `ContextManager initialized in <dir> with <storage>`, and
    /// `{contextDir, storage, persistThreshold, sessionId?}` as data.
    fn announce(&self, on_debug: &Option<Function>) {
        let Some(f) = on_debug else { return };
        let inner = &self.inner;
        let storage = self.storage.description();
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

    /// Starts `job` as a plan (crates/wasm/src/plans.rs), `reply` making its result once it is
    /// done: its first step, for the driver.
    fn run_job(&self, job: Job, reply: impl FnOnce(Vec<String>) -> Result<Reply> + 'static) -> JsValue {
        let plan = JobPlan { manager: self.inner.clone(), job };
        plans::start(self.storage.clone(), plan, reply)
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

    /// Begins the workflow `work` (interop/requests.rs, [`Work`]): the first step of its
    /// plan, for the driver. Its failures are the plan's (a `failed` step), except what is
    /// wrong before a plan begins, which throws: a request the package made wrong
    /// (`INTERNAL`), a save's arguments, `loadContexts`'s when they are no array.
    pub fn begin(&self, work: JsValue) -> Result<JsValue, JsValue> {
        let unit = |_| Ok(Reply::Value(JsValue::UNDEFINED));
        Ok(match Work::read(&work).js()? {
            Work::Save { tool_name, args, result, task_or_options, query_id } => {
                self.save_begin(&tool_name, &args, &result, &task_or_options, &query_id).js()?
            }
            Work::Load { filepaths } => self.load_contexts(&filepaths).js()?,
            Work::Select { query, options, listed, vector } => {
                if let Err(e) = self.inner.check_open("selectRelevant") {
                    return Ok(plans::failed(e));
                }
                self.select_relevant(&query, options, listed, vector)
            }
            Work::Flush => self.run_begun(self.inner.begin_flush(), unit),
            Work::EndSession => self.run_begun(self.inner.begin_end_session(), unit),
            Work::Reconcile => match self.inner.begin_reconcile() {
                Err(e) => plans::failed(e),
                Ok(None) => plans::done(Array::new().into()),
                Ok(Some(job)) => self.run_job(job, |adopted| {
                    Ok(Reply::Value(adopted.iter().map(|p| JsValue::from(p.as_str())).collect::<Array>().into()))
                }),
            },
            Work::RebuildIndex => self.run_begun(self.inner.begin_rebuild_index(), |indexed: Vec<String>| {
                Ok(Reply::Value((indexed.len() as f64).into()))
            }),
            Work::Clear => self.clearing("clear", true),
            Work::ClearContextDir => self.clearing("clearContextDir", false),
            Work::Close => self.close(),
            // An index segment, when one is due and none is under way; `undefined` otherwise.
            Work::PersistIndex => match self.inner.begin_persist_index() {
                Some(job) => self.run_job(job, unit),
                None => JsValue::UNDEFINED,
            },
        })
    }

    /// Answers `query` (interop/requests.rs, [`Query`]) at once.
    pub fn query(&self, query: JsValue) -> Result<JsValue, JsValue> {
        Ok(match Query::read(&query).js()? {
            Query::Size => (self.inner.len() as f64).into(),
            Query::SessionId => self.inner.session_id().map_or(JsValue::UNDEFINED, JsValue::from),
            Query::ContextDir => self.inner.context_dir().into(),
            Query::Epoch => self.inner.epoch().into(),
            Query::Embed => self.embed_option().map_or(JsValue::UNDEFINED, JsValue::from),
            Query::IndexBacklogged => self.inner.index_backlogged().into(),
            Query::ResolveHandle { handle } => self.resolve_handle(&handle)?.map_or(JsValue::UNDEFINED, JsValue::from),
            Query::PointerAt { filepath } => self.pointer_at(&filepath).map_or(JsValue::UNDEFINED, JsValue::from),
            Query::Slots { filter } => Uint32Array::from(self.slots(&filter).as_slice()).into(),
            Query::Pointers { slots } => self.pointers(&slots).into(),
            Query::SelectListed { query, pointers, options, listed } => {
                Uint32Array::from(self.select_listed(&query, &pointers, &options, &listed)?.as_slice()).into()
            }
            Query::Vector { embedded } => select::query_vector_of(&embedded)?.into(),
        })
    }

    /// Makes the change `update` (interop/requests.rs, [`Update`]); `undefined`, or for
    /// `indexSome` whether records still wait to be indexed.
    pub fn update(&self, update: JsValue) -> Result<JsValue, JsValue> {
        match Update::read(&update).js()? {
            Update::ClearPointers => self.inner.clear_pointers(),
            Update::SetVector { filepath, embedded } => self.set_vector(&filepath, &embedded)?,
            Update::Debug { message, path } => self.inner.debug(message, path.as_deref()),
            Update::IndexSome => return Ok(self.inner.index_some(INDEX_SLICE_BYTES).into()),
        }
        Ok(JsValue::UNDEFINED)
    }

    /// Begins the workflow `work` (interop/requests.rs, [`Start`]) with no manager of the
    /// caller's, over the folder and storage `options` name: the first step of its plan.
    /// `open`'s resolves to the manager, made ready; the others are the store-wide
    /// workflows. Options that are wrong are the plan's failure (a `failed` step); a
    /// request the package made wrong throws (`INTERNAL`).
    pub fn start(options: JsValue, work: JsValue) -> Result<JsValue, JsValue> {
        Ok(match Start::read(&work).js()? {
            Start::Open => Self::open(options).unwrap_or_else(plans::failed),
            Start::Storewide(work) => storewide::begin(options, work),
        })
    }

    /// Answers `compute` (interop/requests.rs, [`Compute`]) at once, with no manager.
    pub fn compute(compute: JsValue) -> Result<JsValue, JsValue> {
        Ok(match Compute::read(&compute).js()? {
            // `q_` and 16 hex digits, the same in every runtime.
            Compute::HashQuery { query } => {
                let q = query.as_string().ok_or_else(|| invalid("query must be a string"))?;
                toolctx_core::naming::hash_query(&q).into()
            }
            Compute::Lines { result_json } => grep::lines(&result_json).js()?.into(),
            Compute::MatchingLines { pattern, text } => {
                let pattern = pattern.as_string().ok_or_else(|| invalid("pattern must be a string"))?;
                Uint32Array::from(grep::matching_lines(&pattern, &text).js()?.as_slice()).into()
            }
            // Panics on purpose, so tests can check that a trap becomes an `INTERNAL`
            // error and that the module works again afterwards. Not part of the API.
            Compute::PanicForTests { message } => panic!("{message}"),
        })
    }
}

impl JsContextManager {
    /// `open()`: the first step of the plan that makes a manager ready (a new session's
    /// manifest written, a named session resumed: a pointer for every persisted record),
    /// which resolves to the manager. A manager whose open fails is dropped with the plan.
    fn open(options: JsValue) -> Result<JsValue> {
        let ManagerOptions { storage, core, describe, redact, embed, on_debug, owns_storage } =
            ManagerOptions::read(&options)?;
        let inner = Manager::new(core)?;
        let manager = JsContextManager::around(inner, storage, describe, redact, embed, owns_storage);
        Ok(match manager.inner.opening() {
            Some(job) => {
                let opened = manager.clone();
                manager.run_job(job, move |_| {
                    opened.announce(&on_debug);
                    Ok(Reply::Value(opened.into()))
                })
            }
            None => {
                manager.announce(&on_debug);
                plans::done(manager.into())
            }
        })
    }
}

impl JsContextManager {
    /// The plan of the job `begun` made, or its failure.
    fn run_begun(&self, begun: Result<Job>, reply: impl FnOnce(Vec<String>) -> Result<Reply> + 'static) -> JsValue {
        match begun {
            Ok(job) => self.run_job(job, reply),
            Err(e) => plans::failed(e),
        }
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
    fn close(&self) -> JsValue {
        let (storage, owns_storage) = (self.storage.clone(), self.owns_storage);
        let reply = move |closed_now: bool| {
            let close = (closed_now && owns_storage).then(|| storage.close_call()).flatten();
            Ok(Reply::Value(close.unwrap_or(JsValue::UNDEFINED)))
        };
        plans::start(self.storage.clone(), ClosePlan::new(self.inner.clone()), reply)
    }

    /// `resolveHandle`: the filepath of the record whose handle is `handle` (SPEC §3:
    /// `ctx:` and base32, any case, long or short), or `None` when no pointer has it.
    /// `INVALID_ARGUMENT` when a short handle names two records.
    fn resolve_handle(&self, handle: &JsValue) -> Result<Option<String>, JsValue> {
        let handle = handle.as_string().ok_or_else(|| invalid("handle must be a string (ctx:…)"))?;
        Ok(self.inner.slot_of_handle(&handle).js()?.and_then(|slot| self.inner.filepath_of(slot)))
    }

    /// The pointer at `filepath` as JSON text, or `None` when none is there: one pointer
    /// without copying every one (toolctx/tools finds the record a handle names).
    fn pointer_at(&self, filepath: &str) -> Option<String> {
        let slot = self.inner.slot_of(filepath)?;
        let mut json = String::new();
        self.inner.pointer_json_of(slot, &mut json).then_some(json)
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
