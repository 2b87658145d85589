//! The exported `ConversationStore` class (SPEC §7) over host storage, with an
//! optional remote host storage to sync to.
//!
//! Arguments cross as `JSON.stringify` text into serde types and results go back as JSON
//! text, which `conversation.js` parses once the wasm call has returned (a `JSON.parse`
//! inside a wasm call can crash Node 20's V8; see `__pointers` in `manager.rs`). The
//! shapes are the core's, checked in one place.

use std::rc::Rc;

use js_sys::{Array, Function, JSON};
use serde::de::DeserializeOwned;
use serde::Serialize;
use wasm_bindgen::prelude::*;

use super::args::{debug_sink, get, opt_function, opt_size, opt_string};
use super::errors::{with_cause, IntoJs};
use super::host::{resolve_context_dir, storage_from};
use super::steps::{self, Kind};
use super::storage::{host_failure, JsStorage};
use crate::conversation::{parse_export, validate_type};
use crate::conversation::{
    validate_id, Answer, ArtifactInput, ArtifactMeta, Backoff, Conversations, Decision, ExportedArtifact, Files,
    Format, IdRandom, Message, MessageInput, Operation, PruneOptions, Request, Role, Side, Step, StoreOptions, SyncRun,
    DEFAULT_KEEP_RECENT,
};
use crate::error::{Error, ErrorKind, Result};
use crate::plan::Op;
use crate::store::DebugEvent;

#[wasm_bindgen(typescript_custom_section)]
const TYPES: &'static str = include_str!("conversation.d.ts");

/// The store's state and the host storages its steps run over, side by side.
struct Store {
    core: Conversations,
    local: JsStorage,
    remote: Option<JsStorage>,
}

impl std::ops::Deref for Store {
    type Target = Conversations;

    fn deref(&self) -> &Conversations {
        &self.core
    }
}

/// Conversations, messages and artifacts over host storage.
#[wasm_bindgen(js_name = ConversationStore, skip_typescript)]
pub struct JsConversationStore {
    inner: Rc<Store>,
}

/// `JSON.stringify(value)` parsed as `T`: `INVALID_ARGUMENT` for a wrong shape,
/// `NOT_SERIALIZABLE` for what JSON cannot hold.
fn from_js<T: DeserializeOwned>(value: &JsValue, what: &str) -> Result<T> {
    let json = json_of(value, what)?;
    serde_json::from_str(&json).map_err(|e| Error::invalid(format!("{what}: {e}")))
}

/// `JSON.stringify(value)` of an object (the part of [`from_js`] that is the same for
/// every type, compiled once).
fn json_of(value: &JsValue, what: &str) -> Result<String> {
    if !value.is_object() {
        return Err(Error::invalid(format!("{what} must be an object")));
    }
    let json = JSON::stringify(value)
        .map_err(|e| with_cause(ErrorKind::NotSerializable, format!("{what} cannot be serialised as JSON"), e))?
        .as_string()
        .ok_or_else(|| Error::invalid(format!("{what} must be an object")))?;
    crate::record::check_no_lone_surrogates(&json)?;
    Ok(json)
}

/// The JSON text of a result (`conversation.js` parses it).
fn to_js<T: Serialize>(value: &T) -> Result<JsValue> {
    let json = serde_json::to_string(value).map_err(|e| Error::new(ErrorKind::Internal, e.to_string()))?;
    Ok(JsValue::from(json))
}

fn string_arg(value: &JsValue, what: &str) -> Result<String> {
    value.as_string().ok_or_else(|| Error::invalid(format!("{what} must be a string")))
}

/// `random`: `(n) => string` of `[a-z0-9]`, or `() => number` in `[0, 1)` like the
/// `ContextManager` option.
fn id_random(f: Function) -> IdRandom {
    Rc::new(move |n: usize| {
        let first = f
            .call1(&JsValue::UNDEFINED, &(n as f64).into())
            .map_err(|e| with_cause(ErrorKind::InvalidArgument, "random threw", e))?;
        if let Some(s) = first.as_string() {
            return Ok(s.chars().take(n).collect());
        }
        let mut next = first.as_f64();
        let out = crate::naming::random_chars(n, || {
            let x = next.take().or_else(|| f.call0(&JsValue::UNDEFINED).ok().and_then(|v| v.as_f64())).unwrap_or(0.0);
            (x.clamp(0.0, 0.999_999) * 252.0) as u8
        });
        Ok(out)
    })
}

fn build(options: &JsValue) -> Result<Store> {
    if !(options.is_undefined() || options.is_null() || options.is_object()) {
        return Err(Error::invalid("options must be an object"));
    }
    let on_debug = opt_function(options, "onDebug")?;
    let sink = debug_sink(&on_debug);
    let note = |n: &str| {
        if let Some(s) = &sink {
            s(&DebugEvent { message: n.to_owned(), path: None });
        }
    };
    let mut given = get(options, "storage");
    if given.is_undefined() {
        given = get(options, "fileSystem");
    }
    let dir = resolve_context_dir(opt_string(options, "contextDir")?, &given)?;
    let root = crate::paths::normalize(&dir).unwrap_or_else(|| dir.clone());
    let local = storage_from(given, &root, &note)?;
    let remote_dir = opt_string(options, "remoteDir")?;
    let remote_given = get(options, "remote");
    let remote = if remote_given.is_undefined() || remote_given.is_null() {
        None
    } else {
        Some(storage_from(remote_given, remote_dir.as_deref().unwrap_or(&root), &note)?)
    };
    let clock: crate::store::Clock = match opt_function(options, "clock")? {
        Some(f) => Rc::new(move || f.call0(&JsValue::UNDEFINED).ok().and_then(|v| v.as_f64()).unwrap_or(0.0) as i64),
        None => Rc::new(crate::platform::now_ms),
    };
    let random = match opt_function(options, "random")? {
        Some(f) => id_random(f),
        None => Rc::new(crate::platform::random_chars),
    };
    let mut core = StoreOptions::with(dir, clock, random);
    core.remote_dir = remote_dir;
    core.on_debug = sink;
    let retry = get(options, "syncRetry");
    let defaults = Backoff::default();
    core.retry = Backoff {
        base_ms: opt_size(&retry, "baseMs")?.map_or(defaults.base_ms, |n| n as u64),
        max_ms: opt_size(&retry, "maxMs")?.map_or(defaults.max_ms, |n| n as u64),
    };
    Ok(Store { core: Conversations::new(core, remote.is_some())?, local, remote })
}

#[derive(Serialize)]
struct WithArtifact {
    message: Message,
    artifact: ArtifactMeta,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PruneResult {
    kept: Vec<Message>,
    dropped: Vec<Message>,
    tokens_before: usize,
    tokens_after: usize,
}

/// The JSON text of what `answer` is for JavaScript.
fn answer_js(answer: Answer) -> Result<JsValue> {
    match answer {
        Answer::Nothing => Ok(JsValue::UNDEFINED),
        Answer::Conversation(meta) => to_js(&meta),
        Answer::Conversations(list) => to_js(&list),
        Answer::Message(message, None) => to_js(&message),
        Answer::Message(message, Some(artifact)) => to_js(&WithArtifact { message, artifact }),
        Answer::Messages(list) => to_js(&list),
        Answer::Artifact(meta) => to_js(&meta),
        Answer::Artifacts(list) => to_js(&list),
        Answer::Found(meta, content) => to_js(&ExportedArtifact::new(&meta, content)?),
        Answer::Contents(found) => {
            let out: Result<Vec<ExportedArtifact>> =
                found.into_iter().map(|(meta, content)| ExportedArtifact::new(&meta, content)).collect();
            to_js(&out?)
        }
        Answer::Stats(stats) => to_js(&stats),
        Answer::Pruned(p) => to_js(&PruneResult {
            kept: p.kept,
            dropped: p.dropped,
            tokens_before: p.tokens_before,
            tokens_after: p.tokens_after,
        }),
        // The export's text itself, as JSON text (conversation.js parses every answer).
        Answer::Text(text) => to_js(&text),
        Answer::SyncStatus(status) => to_js(&status),
    }
}

/// The request of `method` called with `a`, `b`, checked.
fn request(store: &Store, method: &str, a: &JsValue, b: &JsValue) -> Result<Request> {
    let conv = || -> Result<String> {
        let id = string_arg(a, "conversation id")?;
        validate_id(&id, "conversation id")?;
        Ok(id)
    };
    Ok(match method {
        "createConversation" => {
            let title = opt_string(a, "title")?;
            let id = opt_string(a, "id")?;
            if let Some(id) = &id {
                validate_id(id, "conversation id")?;
            }
            Request::Create { title, id }
        }
        "listConversations" => Request::List,
        "getConversation" => Request::Get(conv()?),
        "deleteConversation" => Request::Delete(conv()?),
        "appendMessage" => {
            let input: MessageInput = from_js(b, "message")?;
            store.append_request(&string_arg(a, "conversation id")?, input, None)?
        }
        "getMessages" => {
            let role = opt_string(b, "role")?.map(|r| Role::parse(&r)).transpose()?;
            Request::Messages { conv: conv()?, role }
        }
        "storeArtifact" => {
            let conv = conv()?;
            let input: ArtifactInput = from_js(b, "artifact")?;
            validate_type(&input.kind)?;
            Request::StoreArtifact { conv, input }
        }
        "getArtifact" => {
            let art = string_arg(b, "artifact id")?;
            validate_id(&art, "artifact id")?;
            Request::Artifact { conv: conv()?, art }
        }
        "listArtifacts" => Request::ListArtifacts(conv()?),
        "resolveArtifacts" => {
            let conv = conv()?;
            Request::Resolve { conv, text: string_arg(b, "text")? }
        }
        "stats" => {
            let conv = conv()?;
            let cost = match get(b, "costPerToken") {
                v if v.is_undefined() => None,
                v => match v.as_f64() {
                    Some(c) if c.is_finite() && c >= 0.0 => Some(c),
                    _ => return Err(Error::invalid("costPerToken must be a non-negative number")),
                },
            };
            Request::Stats { conv, cost }
        }
        "prune" => {
            let conv = conv()?;
            let task = opt_string(b, "task")?.unwrap_or_default();
            let max_tokens = opt_size(b, "maxTokens")?.ok_or_else(|| Error::invalid("prune needs maxTokens"))?;
            let keep_recent = opt_size(b, "keepRecent")?.unwrap_or(DEFAULT_KEEP_RECENT);
            let now_ms = get(b, "now").as_f64().map_or_else(|| store.now_ms(), |n| n as i64);
            let apply = get(b, "apply").as_bool().unwrap_or(false);
            Request::Prune { conv, options: PruneOptions { task, max_tokens, keep_recent, now_ms }, apply }
        }
        "export" => {
            let conv = conv()?;
            Request::Export { conv, format: string_arg(b, "format").and_then(|f| Format::parse(&f))? }
        }
        "import" => {
            let text = string_arg(a, "the text to import")?;
            let format = opt_string(b, "format")?.map(|f| Format::parse(&f)).transpose()?;
            Request::Import(Box::new(parse_export(&text, format)?))
        }
        "syncStatus" => Request::SyncStatus,
        other => return Err(Error::invalid(format!("ConversationStore has no method {other}"))),
    })
}

/// One operation of a store, run by the driver (conversation.js, driver.js `run`): each
/// `step(outcomes)` answers the last step with its outcomes and gives the next
/// (docs/protocol.md). A writing operation takes the local writers' lock first (`lock`),
/// reads what it needs (`run`: reads and listings), makes its changes in order (`change`;
/// a taken name is drawn again and the changes run on from there), releases the lock
/// (`unlock`), and ends (`done`: the answer as JSON text, or `failed`).
#[wasm_bindgen(js_name = ConversationOp, skip_typescript)]
pub struct JsOperation {
    store: Rc<Store>,
    op: Operation,
    at: OpAt,
    /// It holds the local writers' lock.
    locked: bool,
}

/// Where an operation is: what its last step asked for.
enum OpAt {
    Start,
    Locking,
    Reading(Vec<Op>),
    Changing(Decision),
    /// Releasing the lock; the operation's result.
    Releasing(Result<JsValue>),
    Over,
}

impl JsOperation {
    fn storage(&self) -> &JsStorage {
        &self.store.local
    }

    fn lock_name(&self) -> String {
        let [local, _] = self.store.lock_names();
        local
    }

    /// The next step, given the outcomes of the last.
    fn next(&mut self, outcomes: &Array) -> JsValue {
        let result = match std::mem::replace(&mut self.at, OpAt::Over) {
            OpAt::Start if self.op.exclusive() => {
                self.at = OpAt::Locking;
                return steps::lock(Kind::Lock, None, self.storage(), &self.lock_name());
            }
            OpAt::Start => self.read(),
            OpAt::Locking => match steps::outcome(&outcomes.get(0)) {
                Ok(_) => {
                    self.locked = true;
                    self.read()
                }
                Err(e) => Err(host_failure("lock", &self.lock_name(), e)),
            },
            OpAt::Reading(asked) => feed(&mut self.op.files, asked, outcomes).and_then(|()| self.read()),
            OpAt::Changing(decision) => match failure_in(outcomes) {
                None => answer_js(self.store.finish(decision)),
                Some((at, err)) => {
                    let error = action_failure(&decision.actions[self.op.done + at], err);
                    self.store.failed(&mut self.op, &decision, at, error).and_then(|()| self.change())
                }
            },
            OpAt::Releasing(result) => {
                let released = steps::outcome(&outcomes.get(0));
                // A release that fails fails the operation, unless it failed already.
                let result = match (result, released) {
                    (Ok(_), Err(e)) => Err(host_failure("lock", &self.lock_name(), e)),
                    (result, _) => result,
                };
                return end(result);
            }
            OpAt::Over => Err(Error::new(ErrorKind::Internal, "an operation was stepped after it ended")),
        };
        match result {
            // A step to take.
            Ok(step) if !matches!(self.at, OpAt::Over) => step,
            // The answer (`Ok`) or the error: the lock released first.
            result if self.locked => {
                self.locked = false;
                self.at = OpAt::Releasing(result);
                steps::lock(Kind::Unlock, None, self.storage(), &self.lock_name())
            }
            result => end(result),
        }
    }

    /// The reads it still needs, as a step; once it has all, its changes.
    fn read(&mut self) -> Result<JsValue> {
        let needs = self.store.needs(&mut self.op);
        if needs.is_empty() {
            return self.change();
        }
        let step = steps::run(Kind::Run, None, self.storage(), ops_js(&needs));
        self.at = OpAt::Reading(needs);
        Ok(step)
    }

    /// Its changes from where the last stopped, as a step; with none left, its answer
    /// (`at` stays `Over`).
    fn change(&mut self) -> Result<JsValue> {
        let decision = self.store.decide(&mut self.op)?;
        if decision.actions.len() <= self.op.done {
            return answer_js(self.store.finish(decision));
        }
        let step = steps::run(Kind::Change, None, self.storage(), ops_js(&decision.actions[self.op.done..]));
        self.at = OpAt::Changing(decision);
        Ok(step)
    }
}

/// The last step of an operation or a sync: `done` with its answer (JSON text, or
/// `undefined`), or `failed`.
fn end(result: Result<JsValue>) -> JsValue {
    match result {
        Ok(answer) => match answer.as_string() {
            Some(json) => steps::done_json(&json),
            None => steps::done(&answer),
        },
        Err(e) => steps::failed(&super::errors::to_js(e)),
    }
}

#[wasm_bindgen(js_class = ConversationOp)]
impl JsOperation {
    /// The next step, given the outcomes of the last (none for the first).
    pub fn step(&mut self, outcomes: Array) -> JsValue {
        self.next(&outcomes)
    }
}

/// `ops` as a step carries them.
fn ops_js(ops: &[Op]) -> Array {
    ops.iter().map(JsStorage::op_js).collect()
}

/// Puts the outcomes of the reads and listings of `asked` into `files`; the first
/// failure, typed, is the error.
fn feed(files: &mut Files, asked: Vec<Op>, outcomes: &Array) -> Result<()> {
    for (i, op) in asked.into_iter().enumerate() {
        let outcome = JsStorage::outcome(&op, &outcomes.get(i as u32))?;
        files.put(op, outcome);
    }
    Ok(())
}

/// The change that failed among the outcomes of a `change` step, and the host's error.
fn failure_in(outcomes: &Array) -> Option<(usize, JsValue)> {
    outcomes.iter().enumerate().find_map(|(i, o)| steps::outcome(&o).err().map(|e| (i, e)))
}

/// The error of the host's failed `action`.
fn action_failure(action: &Op, err: JsValue) -> Error {
    host_failure(action.method(), action.path(), err)
}

/// A sync of a store, run by the driver as an operation is (see [`JsOperation`]): its
/// steps read and change the local storage or the remote (each step carries its
/// storage), and take and release the writers' lock of either, one at a time.
#[wasm_bindgen(js_name = ConversationSync, skip_typescript)]
pub struct JsSync {
    store: Rc<Store>,
    run: SyncRun,
    /// What its last step asked for.
    last: SyncAt,
}

/// What a sync's last step asked for.
enum SyncAt {
    Nothing,
    Read(Side, Vec<Op>),
    Change(Vec<Op>),
    Lock(Side),
}

impl JsSync {
    fn storage(&self, side: Side) -> Result<&JsStorage> {
        match side {
            Side::Local => Ok(&self.store.local),
            Side::Remote => {
                self.store.remote.as_ref().ok_or_else(|| Error::new(ErrorKind::Internal, "no remote to sync to"))
            }
        }
    }

    fn lock_name(&self, side: Side) -> String {
        let [local, remote] = self.store.lock_names();
        if side == Side::Local {
            local
        } else {
            remote
        }
    }

    /// How the last step went, typed.
    fn last(&mut self, outcomes: &Array) -> Result<()> {
        match std::mem::replace(&mut self.last, SyncAt::Nothing) {
            SyncAt::Nothing => Ok(()),
            SyncAt::Read(side, asked) => feed(self.run.files(side), asked, outcomes),
            SyncAt::Change(plan) => match failure_in(outcomes) {
                Some((at, err)) => Err(action_failure(&plan[at], err)),
                None => Ok(()),
            },
            SyncAt::Lock(side) => {
                steps::outcome(&outcomes.get(0)).map(drop).map_err(|e| host_failure("lock", &self.lock_name(side), e))
            }
        }
    }

    fn next(&mut self, outcomes: &Array) -> Result<JsValue> {
        let last = self.last(outcomes);
        Ok(match self.store.sync_step(&mut self.run, last)? {
            Step::Read(side, needs) => {
                let step = steps::run(Kind::Run, None, self.storage(side)?, ops_js(&needs));
                self.last = SyncAt::Read(side, needs);
                step
            }
            Step::Change(side, plan) => {
                let step = steps::run(Kind::Change, None, self.storage(side)?, ops_js(&plan));
                self.last = SyncAt::Change(plan);
                step
            }
            Step::Lock(side) => {
                let step = steps::lock(Kind::Lock, None, self.storage(side)?, &self.lock_name(side));
                self.last = SyncAt::Lock(side);
                step
            }
            Step::Unlock(side) => {
                self.last = SyncAt::Lock(side);
                steps::lock(Kind::Unlock, None, self.storage(side)?, &self.lock_name(side))
            }
            Step::Done(report) => end(to_js(&report)),
        })
    }
}

#[wasm_bindgen(js_class = ConversationSync)]
impl JsSync {
    /// The next step, given the outcomes of the last (none for the first).
    pub fn step(&mut self, outcomes: Array) -> JsValue {
        self.next(&outcomes).unwrap_or_else(|e| end(Err(e)))
    }
}

#[wasm_bindgen(js_class = ConversationStore)]
impl JsConversationStore {
    /// Panics on purpose, so tests can check that a trap in this module (a wasm module of
    /// its own, src/wasm/mod.rs) becomes an `INTERNAL` error and that the module works
    /// again afterwards. Not part of the API.
    #[wasm_bindgen(js_name = "__panicForTests")]
    pub fn panic_for_tests(message: String) {
        panic!("{message}");
    }

    /// A store over the given (or the runtime's default) storage, syncing to `remote`.
    #[wasm_bindgen(js_name = "__open")]
    pub fn open(options: JsValue) -> Result<JsConversationStore, JsValue> {
        build(&options).map(|s| JsConversationStore { inner: Rc::new(s) }).js()
    }

    /// A sync of the store (`INVALID_ARGUMENT` without a remote).
    #[wasm_bindgen(js_name = "__sync")]
    pub fn begin_sync(&self) -> Result<JsSync, JsValue> {
        let run = self.inner.begin_sync().js()?;
        Ok(JsSync { store: self.inner.clone(), run, last: SyncAt::Nothing })
    }

    /// The operation of `method` (a method of the class) called with `a`, `b`, `c`.
    #[wasm_bindgen(js_name = "__begin")]
    pub fn begin(&self, method: &str, a: JsValue, b: JsValue, c: JsValue) -> Result<JsOperation, JsValue> {
        let request = if method == "appendWithArtifact" {
            let message: MessageInput = from_js(&b, "message").js()?;
            let artifact: ArtifactInput = from_js(&c, "artifact").js()?;
            self.inner.append_request(&string_arg(&a, "conversation id").js()?, message, Some(artifact)).js()?
        } else {
            request(&self.inner, method, &a, &b).js()?
        };
        let op = self.inner.begin(request);
        Ok(JsOperation { store: self.inner.clone(), op, at: OpAt::Start, locked: false })
    }
}
