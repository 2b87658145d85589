//! The exported `ConversationStore` class (SPEC §7) over host storage, with an
//! optional remote host storage to sync to.
//!
//! Arguments cross as `JSON.stringify` text into serde types and results come back as
//! JSON text that the driver parses once the wasm call has returned (`tasks::Done`),
//! so the shapes are the core's, checked in one place.

use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;

use super::tasks::{spawn, spawn_done, Done};
use js_sys::{Function, JSON};
use serde::de::DeserializeOwned;
use serde::Serialize;
use wasm_bindgen::prelude::*;

use super::args::{debug_sink, get, opt_function, opt_size, opt_string, rejected};
use super::errors::{with_cause, IntoJs};
use super::host::{resolve_context_dir, storage_from};
use super::storage::JsStorage;
use crate::conversation::{
    ArtifactInput, ArtifactMeta, Backoff, ConversationStore, ExportedArtifact, Format, IdRandom, Message, MessageInput,
    PruneOptions, StoreOptions, DEFAULT_KEEP_RECENT,
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
    if !value.is_object() {
        return Err(Error::invalid(format!("{what} must be an object")));
    }
    let json = JSON::stringify(value)
        .map_err(|e| with_cause(ErrorKind::NotSerializable, format!("{what} cannot be serialised as JSON"), e))?
        .as_string()
        .ok_or_else(|| Error::invalid(format!("{what} must be an object")))?;
    crate::record::check_no_lone_surrogates(&json)?;
    serde_json::from_slice(json.as_bytes()).map_err(|e| Error::invalid(format!("{what}: {e}")))
}

fn to_js<T: Serialize>(value: &T) -> Result<Done> {
    let json = serde_json::to_string(value).map_err(|e| Error::new(ErrorKind::Internal, e.to_string()))?;
    Ok(Done::Json(json))
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
    let mut core = StoreOptions::new(dir);
    core.remote_dir = remote_dir;
    core.clock = match opt_function(options, "clock")? {
        Some(f) => Rc::new(move || f.call0(&JsValue::UNDEFINED).ok().and_then(|v| v.as_f64()).unwrap_or(0.0) as i64),
        None => Rc::new(|| js_sys::Date::now() as i64),
    };
    core.random = opt_function(options, "random")?.map(id_random);
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

impl JsConversationStore {
    /// Runs `op` on the store as a task (the driver settles the caller's Promise).
    fn run<F, Fut>(&self, op: F) -> u32
    where
        F: FnOnce(Rc<Store>) -> Fut,
        Fut: Future<Output = Result<Done>> + 'static,
    {
        let work = op(self.inner.clone());
        // One `spawn` for every method (a boxed future) instead of one copy per method:
        // smaller wasm.
        let boxed: Pin<Box<dyn Future<Output = Result<Done, JsValue>>>> = Box::pin(async move { work.await.js() });
        spawn_done(boxed)
    }
}

macro_rules! arg {
    ($e:expr) => {
        match $e {
            Ok(v) => v,
            Err(e) => return rejected(e),
        }
    };
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
    pub fn open(options: JsValue) -> u32 {
        spawn(async move { build(&options).map(|s| JsValue::from(JsConversationStore { inner: Rc::new(s) })).js() })
    }

    /// A new, empty conversation.
    #[wasm_bindgen(js_name = createConversation)]
    pub fn create_conversation(&self, init: JsValue) -> u32 {
        let title = arg!(opt_string(&init, "title"));
        let id = arg!(opt_string(&init, "id"));
        self.run(|s| async move { to_js(&s.create_conversation(title, id).await?) })
    }

    /// Every conversation, newest first.
    #[wasm_bindgen(js_name = listConversations)]
    pub fn list_conversations(&self) -> u32 {
        self.run(|s| async move { to_js(&s.list_conversations().await?) })
    }

    /// One conversation's metadata (`NOT_FOUND` when missing).
    #[wasm_bindgen(js_name = getConversation)]
    pub fn get_conversation(&self, id: JsValue) -> u32 {
        let id = arg!(string_arg(&id, "conversation id"));
        self.run(|s| async move { to_js(&s.conversation(&id).await?) })
    }

    /// Removes a conversation and all it holds.
    #[wasm_bindgen(js_name = deleteConversation)]
    pub fn delete_conversation(&self, id: JsValue) -> u32 {
        let id = arg!(string_arg(&id, "conversation id"));
        self.run(|s| async move { s.delete_conversation(&id).await.map(|()| JsValue::UNDEFINED.into()) })
    }

    /// Appends a message.
    #[wasm_bindgen(js_name = appendMessage)]
    pub fn append_message(&self, conversation_id: JsValue, message: JsValue) -> u32 {
        let id = arg!(string_arg(&conversation_id, "conversation id"));
        let input: MessageInput = arg!(from_js(&message, "message"));
        self.run(|s| async move { to_js(&s.append_message(&id, input).await?) })
    }

    /// The messages, optionally of one role.
    #[wasm_bindgen(js_name = getMessages)]
    pub fn get_messages(&self, conversation_id: JsValue, filter: JsValue) -> u32 {
        let id = arg!(string_arg(&conversation_id, "conversation id"));
        let role = arg!(opt_string(&filter, "role"));
        self.run(|s| async move { to_js(&s.messages(&id, role.as_deref()).await?) })
    }

    /// Stores an artifact.
    #[wasm_bindgen(js_name = storeArtifact)]
    pub fn store_artifact(&self, conversation_id: JsValue, artifact: JsValue) -> u32 {
        let id = arg!(string_arg(&conversation_id, "conversation id"));
        let input: ArtifactInput = arg!(from_js(&artifact, "artifact"));
        self.run(|s| async move { to_js(&s.store_artifact(&id, input).await?) })
    }

    /// Stores an artifact and appends a message that references it.
    #[wasm_bindgen(js_name = appendWithArtifact)]
    pub fn append_with_artifact(&self, conversation_id: JsValue, message: JsValue, artifact: JsValue) -> u32 {
        let id = arg!(string_arg(&conversation_id, "conversation id"));
        let message: MessageInput = arg!(from_js(&message, "message"));
        let artifact: ArtifactInput = arg!(from_js(&artifact, "artifact"));
        self.run(|s| async move {
            let (message, artifact) = s.append_with_artifact(&id, message, artifact).await?;
            to_js(&WithArtifact { message, artifact })
        })
    }

    /// An artifact with its content (`NOT_FOUND` when missing).
    #[wasm_bindgen(js_name = getArtifact)]
    pub fn get_artifact(&self, conversation_id: JsValue, artifact_id: JsValue) -> u32 {
        let id = arg!(string_arg(&conversation_id, "conversation id"));
        let art = arg!(string_arg(&artifact_id, "artifact id"));
        self.run(|s| async move {
            let (meta, content) = s.artifact(&id, &art).await?;
            to_js(&ExportedArtifact::new(&meta, content)?)
        })
    }

    /// The artifacts' metas, oldest first.
    #[wasm_bindgen(js_name = listArtifacts)]
    pub fn list_artifacts(&self, conversation_id: JsValue) -> u32 {
        let id = arg!(string_arg(&conversation_id, "conversation id"));
        self.run(|s| async move { to_js(&s.list_artifacts(&id).await?) })
    }

    /// The artifacts `text` references, with their content.
    #[wasm_bindgen(js_name = resolveArtifacts)]
    pub fn resolve_artifacts(&self, conversation_id: JsValue, text: JsValue) -> u32 {
        let id = arg!(string_arg(&conversation_id, "conversation id"));
        let text = arg!(string_arg(&text, "text"));
        self.run(|s| async move {
            let found = s.resolve_artifacts(&id, &text).await?;
            let out = found.into_iter().map(|(meta, content)| ExportedArtifact::new(&meta, content));
            to_js(&out.collect::<Result<Vec<_>>>()?)
        })
    }

    /// Messages by role, artifacts by type, bytes, tokens, cost.
    pub fn stats(&self, conversation_id: JsValue, options: JsValue) -> u32 {
        let id = arg!(string_arg(&conversation_id, "conversation id"));
        let cost = match get(&options, "costPerToken") {
            v if v.is_undefined() => None,
            v => match v.as_f64() {
                Some(c) if c.is_finite() && c >= 0.0 => Some(c),
                _ => return rejected(Error::invalid("costPerToken must be a non-negative number")),
            },
        };
        self.run(move |s| async move { to_js(&s.stats(&id, cost).await?) })
    }

    /// Relevance pruning; with `apply`, rewrites the conversation.
    pub fn prune(&self, conversation_id: JsValue, options: JsValue) -> u32 {
        let id = arg!(string_arg(&conversation_id, "conversation id"));
        let task = arg!(opt_string(&options, "task")).unwrap_or_default();
        let max_tokens = match arg!(opt_size(&options, "maxTokens")) {
            Some(n) => n,
            None => return rejected(Error::invalid("prune needs maxTokens")),
        };
        let keep_recent = arg!(opt_size(&options, "keepRecent")).unwrap_or(DEFAULT_KEEP_RECENT);
        let now = get(&options, "now").as_f64();
        let apply = get(&options, "apply").as_bool().unwrap_or(false);
        self.run(move |s| async move {
            let now_ms = now.map_or_else(|| s.now_ms(), |n| n as i64);
            let report = s.prune(&id, PruneOptions { task, max_tokens, keep_recent, now_ms }, apply).await?;
            to_js(&PruneResult {
                kept: report.kept,
                dropped: report.dropped,
                tokens_before: report.tokens_before,
                tokens_after: report.tokens_after,
            })
        })
    }

    /// The conversation as `json`, `jsonl` or `markdown`.
    pub fn export(&self, conversation_id: JsValue, format: JsValue) -> u32 {
        let id = arg!(string_arg(&conversation_id, "conversation id"));
        let format = arg!(string_arg(&format, "format").and_then(|f| Format::parse(&f)));
        self.run(move |s| async move { Ok(JsValue::from(s.export(&id, format).await?).into()) })
    }

    /// Imports a `json` or `jsonl` export.
    pub fn import(&self, text: JsValue, options: JsValue) -> u32 {
        let text = arg!(string_arg(&text, "the text to import"));
        let format = arg!(arg!(opt_string(&options, "format")).map(|f| Format::parse(&f)).transpose());
        self.run(move |s| async move { to_js(&s.import(&text, format).await?) })
    }

    /// Pushes the queued changes to the remote and pulls what it has.
    pub fn sync(&self) -> u32 {
        self.run(|s| async move { to_js(&s.sync().await?) })
    }

    /// `{pending, failed}` of the sync queue.
    #[wasm_bindgen(js_name = syncStatus)]
    pub fn sync_status(&self) -> u32 {
        self.run(|s| async move { to_js(&s.sync_status().await?) })
    }

    /// Nothing is held open between calls; resolves once earlier calls are done.
    pub fn close(&self) -> u32 {
        self.run(|s| async move {
            s.close().await;
            Ok(JsValue::UNDEFINED.into())
        })
    }
}
