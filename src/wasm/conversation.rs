//! The exported `ConversationStore` class (SPEC §7) over host storage, with an
//! optional remote host storage to sync to.
//!
//! Arguments cross as `JSON.stringify` text into serde types and results go back as JSON
//! text, which `conversation.js` parses once the wasm call has returned (a `JSON.parse`
//! inside a wasm call can crash Node 20's V8; see `__pointers` in `manager.rs`). The
//! shapes are the core's, checked in one place.

use std::rc::Rc;

use js_sys::{Array, Function, Uint8Array, JSON};
use serde::de::DeserializeOwned;
use serde::Serialize;
use wasm_bindgen::prelude::*;

use super::args::{debug_sink, get, opt_function, opt_size, opt_string};
use super::errors::{with_cause, IntoJs};
use super::host::{resolve_context_dir, storage_from};
use super::storage::{host_failure, list_names, read_bytes, JsStorage};
use crate::conversation::{parse_export, validate_type};
use crate::conversation::{
    validate_id, Action, Answer, ArtifactInput, ArtifactMeta, Backoff, ConversationStore, Decision, ExportedArtifact,
    Files, Format, IdRandom, Message, MessageInput, Need, Operation, PruneOptions, Request, Role, Side, Step,
    StoreOptions, SyncRun, DEFAULT_KEEP_RECENT,
};
use crate::error::{Error, ErrorKind, Result};
use crate::store::DebugEvent;

#[wasm_bindgen(typescript_custom_section)]
const TYPES: &'static str = include_str!("conversation.d.ts");

type Store = ConversationStore<JsStorage>;

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
    ConversationStore::new(local, remote, core)
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

/// One operation of a store, run by `conversation.js`: what to read (`needs`, answered by
/// `fed`), then what to change (`plan`, its failures told to `failed`), then the answer
/// (`finish`). Every method is synchronous.
#[wasm_bindgen(js_name = ConversationOp, skip_typescript)]
pub struct JsOperation {
    store: Rc<Store>,
    op: Operation,
    /// The reads of the last `needs`, answered in order by `fed`.
    asked: Vec<Need>,
    decision: Option<Decision>,
}

#[wasm_bindgen(js_class = ConversationOp)]
impl JsOperation {
    /// Whether the operation runs as the store's only writer (under its lock).
    pub fn exclusive(&self) -> bool {
        self.op.exclusive()
    }

    /// `[kind, path, …]` of the reads (0) and listings (1) still needed; empty when none.
    pub fn needs(&mut self) -> Array {
        self.asked = self.store.needs(&mut self.op);
        needs_js(&self.asked)
    }

    /// The outcomes of the reads and listings `needs` asked for: `[ok, value, …]` in
    /// order. The first failure is the operation's error.
    pub fn fed(&mut self, outcomes: Array) -> Result<(), JsValue> {
        feed(&mut self.op.files, std::mem::take(&mut self.asked), &outcomes).js()
    }

    /// `[kind, path, bytes, exclusive, …]` of the changes to make in order (0 write,
    /// 1 append, 2 remove, 3 removeDir), from where the last plan stopped.
    pub fn plan(&mut self) -> Result<Array, JsValue> {
        let decision = self.store.decide(&mut self.op).js()?;
        let out = plan_js(&decision.actions[self.op.done..]);
        self.decision = Some(decision);
        Ok(out)
    }

    /// Change `at` of the last plan failed with `err`: nothing to throw when the
    /// operation plans again (a taken name drawn again); else its error.
    pub fn failed(&mut self, at: usize, err: JsValue) -> Result<(), JsValue> {
        let decision = self.decision.take().ok_or_else(|| Error::new(ErrorKind::Internal, "no plan")).js()?;
        let error = action_failure(&decision.actions[self.op.done + at], err);
        self.store.failed(&mut self.op, &decision, at, error).js()
    }

    /// Every change of the plan was made: the answer, as JSON text.
    pub fn finish(&mut self) -> Result<JsValue, JsValue> {
        let decision = self.decision.take().ok_or_else(|| Error::new(ErrorKind::Internal, "no plan")).js()?;
        answer_js(self.store.finish(decision)).js()
    }
}

/// `[kind, path, …]` of `needs`: 0 a read, 1 a listing.
fn needs_js(needs: &[Need]) -> Array {
    let out = Array::new();
    for need in needs {
        let (kind, path) = match need {
            Need::Read(path) => (0, path),
            Need::List(dir) => (1, dir),
        };
        out.push(&kind.into());
        out.push(&path.into());
    }
    out
}

/// Puts the outcomes `[ok, value, …]` of the host calls of `asked` into `files`; the
/// first failure, typed, is the error.
fn feed(files: &mut Files, asked: Vec<Need>, outcomes: &Array) -> Result<()> {
    for (i, need) in asked.into_iter().enumerate() {
        let ok = outcomes.get(2 * i as u32).as_bool().unwrap_or(false);
        let value = outcomes.get(2 * i as u32 + 1);
        match need {
            Need::Read(path) if ok => {
                let bytes = read_bytes(value, &path)?;
                files.put_read(path, bytes);
            }
            Need::List(dir) if ok => {
                let names = list_names(value, &dir)?;
                files.put_listed(dir, names);
            }
            Need::Read(path) => return Err(host_failure("read", &path, value)),
            Need::List(dir) => return Err(host_failure("list", &dir, value)),
        }
    }
    Ok(())
}

/// `[kind, path, bytes, exclusive, …]` of `actions`: 0 write, 1 append, 2 remove, 3 removeDir.
fn plan_js(actions: &[Action]) -> Array {
    let out = Array::new();
    for action in actions {
        let (kind, bytes, exclusive) = match action {
            Action::Write { bytes, exclusive, .. } => (0, Some(bytes), *exclusive),
            Action::Append { bytes, .. } => (1, Some(bytes), false),
            Action::Remove { .. } => (2, None, false),
            Action::RemoveDir { .. } => (3, None, false),
        };
        out.push(&kind.into());
        out.push(&action.path().into());
        out.push(&bytes.map_or(JsValue::UNDEFINED, |b| Uint8Array::from(b.as_slice()).into()));
        out.push(&exclusive.into());
    }
    out
}

/// The error of the host's failed `action`.
fn action_failure(action: &Action, err: JsValue) -> Error {
    let op = match action {
        Action::Write { .. } => "write",
        Action::Append { .. } => "append",
        Action::Remove { .. } => "remove",
        Action::RemoveDir { .. } => "removeDir",
    };
    host_failure(op, action.path(), err)
}

/// A sync of a store, run by `conversation.js`: each `next()` is the step to take
/// (`[0, side, reads…]`, `[1, side, changes…]`, `[2, side]` lock, `[3, side]` unlock,
/// `[4, report]` done; side 0 local, 1 remote), and how it went is told before the next
/// (`fed`, `changed`, `locked`).
#[wasm_bindgen(js_name = ConversationSync, skip_typescript)]
pub struct JsSync {
    store: Rc<Store>,
    run: SyncRun,
    last: Result<()>,
    asked: (Side, Vec<Need>),
    plan: Vec<Action>,
}

fn side_js(side: Side) -> JsValue {
    JsValue::from(u8::from(side == Side::Remote))
}

#[wasm_bindgen(js_class = ConversationSync)]
impl JsSync {
    /// The next step (see the type).
    pub fn next(&mut self) -> Result<Array, JsValue> {
        let last = std::mem::replace(&mut self.last, Ok(()));
        let out = Array::new();
        match self.store.sync_step(&mut self.run, last).js()? {
            Step::Read(side, needs) => {
                out.push(&0.into());
                out.push(&side_js(side));
                out.push(&needs_js(&needs));
                self.asked = (side, needs);
            }
            Step::Change(side, plan) => {
                out.push(&1.into());
                out.push(&side_js(side));
                out.push(&plan_js(&plan));
                self.plan = plan;
            }
            Step::Lock(side) => {
                out.push(&2.into());
                out.push(&side_js(side));
            }
            Step::Unlock(side) => {
                out.push(&3.into());
                out.push(&side_js(side));
            }
            Step::Done(report) => {
                out.push(&4.into());
                out.push(&to_js(&report).js()?);
            }
        }
        Ok(out)
    }

    /// The outcomes `[ok, value, …]` of the reads asked for.
    pub fn fed(&mut self, outcomes: Array) {
        let (side, asked) = std::mem::replace(&mut self.asked, (Side::Local, Vec::new()));
        self.last = feed(self.run.files(side), asked, &outcomes);
    }

    /// The changes were made (`at` < 0), or change `at` failed with `err`.
    pub fn changed(&mut self, at: i32, err: JsValue) {
        let plan = std::mem::take(&mut self.plan);
        self.last = match usize::try_from(at).ok().and_then(|at| plan.get(at)) {
            Some(action) => Err(action_failure(action, err)),
            None => Ok(()),
        };
    }

    /// The lock named `name` was taken or released (`ok`), or failed with `err`.
    pub fn locked(&mut self, ok: bool, name: &str, err: JsValue) {
        self.last = if ok { Ok(()) } else { Err(host_failure("lock", name, err)) };
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

    /// `[host, readOptions, lockName]` of the local storage, then of the remote one (if
    /// any), for `conversation.js`, which makes the host calls.
    #[wasm_bindgen(js_name = "__hosts")]
    pub fn hosts(&self) -> Array {
        let out = Array::new();
        let storages = [Some(self.inner.storage()), self.inner.remote()];
        for (storage, lock) in storages.into_iter().zip(self.inner.lock_names()) {
            if let Some(storage) = storage {
                let (host, read_options) = storage.host();
                for value in [host.clone(), read_options.into(), lock.into()] {
                    out.push(&value);
                }
            }
        }
        out
    }

    /// A sync of the store (`INVALID_ARGUMENT` without a remote).
    #[wasm_bindgen(js_name = "__sync")]
    pub fn begin_sync(&self) -> Result<JsSync, JsValue> {
        let run = self.inner.begin_sync().js()?;
        Ok(JsSync { store: self.inner.clone(), run, last: Ok(()), asked: (Side::Local, Vec::new()), plan: Vec::new() })
    }

    /// The error of the storage's `lock(name)` failing with `err`.
    #[wasm_bindgen(js_name = "__lockFailed")]
    pub fn lock_failed(&self, name: &str, err: JsValue) -> JsValue {
        super::errors::to_js(host_failure("lock", name, err))
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
        Ok(JsOperation { store: self.inner.clone(), op, asked: Vec::new(), decision: None })
    }
}
