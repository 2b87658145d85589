//! The conversation store (SPEC §7): conversations of append-only `messages.jsonl`,
//! `metadata.json` and `artifacts/`, with an index, stats, relevance pruning,
//! export/import, and local-first sync to a remote storage.
//!
//! ```
//! use toolctx::conversation::{ArtifactInput, ConversationStore, MessageInput, StoreOptions};
//! use toolctx::MemoryStorage;
//! # futures_executor::block_on(async {
//! let store: ConversationStore<MemoryStorage> =
//!     ConversationStore::new(MemoryStorage::new(), None, StoreOptions::new("/ctx"))?;
//! let conv = store.create_conversation(Some("Add login".into()), None).await?;
//! store.append_message(&conv.id, MessageInput::new("user", "Add a login page")).await?;
//! let artifact = ArtifactInput { kind: "file".into(), name: "src/login.ts".into(), content: "export {}".into(), mime_type: None };
//! let (message, meta) = store
//!     .append_with_artifact(&conv.id, MessageInput::new("tool", "Read src/login.ts"), artifact)
//!     .await?;
//! assert!(message.content.ends_with(&format!("(artifact://{})", meta.id)));
//! let resolved = store.resolve_artifacts(&conv.id, &message.content).await?;
//! assert_eq!(resolved[0].1, b"export {}");
//! assert_eq!(store.stats(&conv.id, None).await?.messages, 2);
//! # Ok::<(), toolctx::Error>(())
//! # }).unwrap();
//! ```
//!
//! Writes of one store are serialised (an async mutex) and run under the storage's
//! lock on `conversations/.lock`, so processes and tabs sharing a store do not
//! interleave their read-modify-writes of `metadata.json` and `index.json`.

mod artifacts;
mod export;
mod ids;
mod messages;
mod prune;
mod replica;
mod stats;
mod sync;

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::future::Future;

use futures_util::lock::Mutex;
use serde::Deserialize;

pub use artifacts::{artifact_refs, reference_text, ArtifactMeta, SCHEME};
pub use export::{ExportedArtifact, Format, Snapshot};
pub use ids::{new_id, validate_id, IdRandom};
pub use messages::{merge, parse_jsonl, parse_timestamp, Message, Role, ToolCall};
pub use prune::{PruneOptions, Pruned, DEFAULT_KEEP_RECENT};
pub use replica::{ConversationMetadata, Replica};
pub use stats::{message_tokens, Stats};
pub use sync::{Backoff, Op, QueueItem, SyncFailure, SyncReport, SyncStatus};

use crate::error::{Error, ErrorKind, Result};
use crate::paths::{join, normalize};
use crate::record::iso_timestamp;
use crate::storage::Storage;
use crate::store::{Clock, DebugEvent, DebugSink};

/// Settings of a [`ConversationStore`].
#[derive(Clone)]
pub struct StoreOptions {
    /// The store's folder (the `contextDir` of `ContextManager`); conversations live
    /// in `{context_dir}/conversations/`.
    pub context_dir: String,
    /// The folder on the remote (default: `context_dir`).
    pub remote_dir: Option<String>,
    /// Milliseconds since the epoch.
    pub clock: Clock,
    /// Random characters for ids (tests); default the CSPRNG.
    pub random: Option<IdRandom>,
    /// Receiver of warnings (skipped lines, rebuilt indexes, sync failures).
    pub on_debug: Option<DebugSink>,
    /// Backoff of failed sync items.
    pub retry: Backoff,
}

impl StoreOptions {
    /// Defaults for a store in `context_dir`.
    pub fn new(context_dir: impl Into<String>) -> Self {
        let defaults = crate::store::Options::new("");
        StoreOptions {
            context_dir: context_dir.into(),
            remote_dir: None,
            clock: defaults.clock,
            random: None,
            on_debug: None,
            retry: Backoff::default(),
        }
    }
}

/// A new message. `role` is checked; `id` and `timestamp` default to fresh ones.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MessageInput {
    /// `user`, `assistant`, `tool` or `system`.
    pub role: String,
    /// The text.
    pub content: String,
    /// An id of `[A-Za-z0-9_-]` (default `msg-…`).
    #[serde(default)]
    pub id: Option<String>,
    /// ISO 8601 UTC with milliseconds (default now).
    #[serde(default)]
    pub timestamp: Option<String>,
    /// Tool calls made.
    #[serde(default)]
    pub tool_calls: Option<Vec<ToolCall>>,
    /// Whether the operation succeeded.
    #[serde(default)]
    pub success: Option<bool>,
}

impl MessageInput {
    /// A message of `role` with `content`.
    pub fn new(role: &str, content: &str) -> Self {
        MessageInput { role: role.into(), content: content.into(), ..MessageInput::default() }
    }
}

/// A new artifact.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ArtifactInput {
    /// `file`, `search_result`, `command_output`, …
    #[serde(rename = "type")]
    pub kind: String,
    /// A human-readable name.
    pub name: String,
    /// The data.
    pub content: String,
    /// Default `text/plain`.
    #[serde(default)]
    pub mime_type: Option<String>,
}

/// The conversation store, over local storage `L` and an optional remote `R`.
pub struct ConversationStore<L, R = L> {
    local: L,
    remote: Option<R>,
    options: StoreOptions,
    base: String,
    remote_base: String,
    writes: Mutex<()>,
    sync_lock: Mutex<()>,
    /// Per conversation whose `messages.jsonl` is known to end with a newline, the latest
    /// message timestamp in it (ms): default timestamps of new messages go after it.
    /// `None`: not known (the file is read again); a set entry, not a removed one, keeps
    /// map removal out of the wasm module.
    tails: RefCell<BTreeMap<String, Option<i64>>>,
    counter: Cell<u64>,
}

fn base_of(dir: &str) -> Result<String> {
    let dir = normalize(dir).ok_or_else(|| Error::invalid(format!("contextDir {dir:?} is not a usable path")))?;
    Ok(join(&dir, "conversations"))
}

fn not_found(what: &str, id: &str) -> Error {
    Error::new(ErrorKind::NotFound, format!("no {what} {id:?}"))
}

impl<L: Storage, R: Storage> ConversationStore<L, R> {
    /// A store over `local`, syncing to `remote` when given.
    pub fn new(local: L, remote: Option<R>, options: StoreOptions) -> Result<Self> {
        let base = base_of(&options.context_dir)?;
        let remote_base = base_of(options.remote_dir.as_deref().unwrap_or(&options.context_dir))?;
        Ok(ConversationStore {
            local,
            remote,
            options,
            base,
            remote_base,
            writes: Mutex::new(()),
            sync_lock: Mutex::new(()),
            tails: RefCell::new(BTreeMap::new()),
            counter: Cell::new(0),
        })
    }

    /// The local storage.
    pub fn storage(&self) -> &L {
        &self.local
    }

    /// `{contextDir}/conversations`.
    pub fn base(&self) -> &str {
        &self.base
    }

    /// Sends a message to `on_debug`.
    pub fn debug(&self, message: impl Into<String>, path: Option<&str>) {
        if let Some(sink) = &self.options.on_debug {
            sink(&DebugEvent { message: message.into(), path: path.map(str::to_owned) });
        }
    }

    pub(crate) fn local(&self) -> Replica<'_, L> {
        Replica { storage: &self.local, base: self.base.clone(), sink: self.options.on_debug.as_ref() }
    }

    pub(crate) fn remote_replica(&self) -> Option<Replica<'_, R>> {
        let storage = self.remote.as_ref()?;
        Some(Replica { storage, base: self.remote_base.clone(), sink: self.options.on_debug.as_ref() })
    }

    /// `messages.jsonl` of `conv` ends with a newline, and its latest timestamp is `last`.
    pub(crate) fn set_tail(&self, conv: &str, last: i64) {
        self.tails.borrow_mut().insert(conv.to_owned(), Some(last));
    }

    /// What `messages.jsonl` of `conv` ends with is not known.
    fn forget_tail(&self, conv: &str) {
        self.tails.borrow_mut().insert(conv.to_owned(), None);
    }

    /// The store's clock.
    pub fn now_ms(&self) -> i64 {
        (self.options.clock)()
    }

    fn now_iso(&self) -> String {
        iso_timestamp(self.now_ms())
    }

    pub(crate) fn random_chars(&self, n: usize) -> Result<String> {
        match &self.options.random {
            Some(random) => {
                let s = random(n)?;
                if s.is_empty() || !s.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit()) {
                    return Err(Error::invalid("the random option must give characters of [a-z0-9]"));
                }
                Ok(s)
            }
            None => crate::naming::os_random_chars(n),
        }
    }

    /// A message id that sorts after this store's earlier ones within a millisecond:
    /// `msg-{ms, base 36}{counter, base 36}{random}`.
    fn message_id(&self) -> Result<String> {
        let n = self.counter.get();
        self.counter.set(n.wrapping_add(1));
        Ok(format!(
            "msg-{:0>9}{:0>4}{}",
            base36(self.now_ms().max(0) as u64),
            base36(n % 1_679_616),
            self.random_chars(8)?
        ))
    }

    /// Waits for this store's writes and sync in flight; nothing else is held open.
    pub async fn close(&self) {
        // The order sync takes them in (sync, then writes), so the two never deadlock.
        let _sync = self.sync_lock.lock().await;
        let _writes = self.writes.lock().await;
    }

    /// Runs `work` as this store's only writer (in this process, and under the
    /// storage's lock across processes and tabs).
    pub(crate) async fn exclusive<T>(&self, work: impl Future<Output = Result<T>>) -> Result<T> {
        let _guard = self.writes.lock().await;
        // Boxed: one instance of the storage's `locked` per result type rather than one
        // per call site (the wasm binary is smaller for it).
        let work: std::pin::Pin<Box<dyn Future<Output = Result<T>> + '_>> = Box::pin(work);
        self.local.locked(&join(&self.base, ".lock"), work).await?
    }

    /// A new, empty conversation (with the caller's id, if one is given).
    pub async fn create_conversation(&self, title: Option<String>, id: Option<String>) -> Result<ConversationMetadata> {
        if let Some(id) = &id {
            validate_id(id, "conversation id")?;
        }
        let local = self.local();
        self.exclusive(async {
            let id = match id {
                Some(id) => {
                    if local.metadata(&id).await?.is_some() {
                        return Err(Error::invalid(format!("conversation {id:?} exists already")));
                    }
                    id
                }
                None => new_id("conv", self.options.random.as_ref())?,
            };
            let now = self.now_iso();
            let meta = ConversationMetadata {
                id: id.clone(),
                title,
                created_at: now.clone(),
                updated_at: now,
                message_count: 0,
                artifact_count: 0,
            };
            self.enqueue(&id, Op::Update).await?;
            local.write_metadata(&meta).await?;
            local.index_upsert(&meta).await?;
            Ok(meta)
        })
        .await
    }

    /// Every conversation, newest `updatedAt` first (from the index, rebuilt when
    /// missing or corrupt).
    pub async fn list_conversations(&self) -> Result<Vec<ConversationMetadata>> {
        self.local().index().await
    }

    /// A conversation's metadata; `NOT_FOUND` when it does not exist.
    pub async fn conversation(&self, id: &str) -> Result<ConversationMetadata> {
        validate_id(id, "conversation id")?;
        self.local().existing(id).await
    }

    /// Removes a conversation and everything in it (and, at the next sync, on the remote).
    pub async fn delete_conversation(&self, id: &str) -> Result<()> {
        validate_id(id, "conversation id")?;
        let local = self.local();
        self.exclusive(async {
            local.existing(id).await?;
            self.enqueue(id, Op::Delete).await?;
            local.remove_conversation(id).await?;
            self.forget_tail(id);
            local.index_remove(id).await
        })
        .await
    }

    /// Appends a message to `messages.jsonl` and updates the metadata and index. A
    /// caller's id that the conversation already has is `INVALID_ARGUMENT`.
    pub async fn append_message(&self, conversation_id: &str, input: MessageInput) -> Result<Message> {
        validate_id(conversation_id, "conversation id")?;
        let given_id = input.id.is_some();
        let (message, defaulted) = self.new_message(input)?;
        self.exclusive(async {
            self.local().existing(conversation_id).await?;
            if given_id && self.local().messages(conversation_id).await?.messages.iter().any(|m| m.id == message.id) {
                return Err(Error::invalid(format!("message {:?} exists already", message.id)));
            }
            self.enqueue(conversation_id, Op::Update).await?;
            self.append_locked(conversation_id, message, defaulted, 0).await
        })
        .await
    }

    /// The message, and whether its timestamp is a default one.
    fn new_message(&self, input: MessageInput) -> Result<(Message, bool)> {
        let role = Role::parse(&input.role)?;
        let id = match input.id {
            Some(id) => {
                validate_id(&id, "message id")?;
                id
            }
            None => self.message_id()?,
        };
        let defaulted = input.timestamp.is_none();
        let timestamp = match input.timestamp {
            Some(t) => {
                parse_timestamp(&t)?;
                t
            }
            None => self.now_iso(),
        };
        if let Some(calls) = &input.tool_calls {
            if calls.iter().any(|c| c.name.is_empty()) {
                return Err(Error::invalid("a tool call needs a name"));
            }
        }
        let message = Message {
            id,
            role,
            content: input.content,
            timestamp,
            tool_calls: input.tool_calls,
            success: input.success,
        };
        Ok((message, defaulted))
    }

    /// Appends under [`Self::exclusive`], after the caller checked the conversation and
    /// queued the change.
    async fn append_locked(
        &self,
        conv: &str,
        mut message: Message,
        defaulted: bool,
        new_artifacts: u64,
    ) -> Result<Message> {
        let local = self.local();
        let mut meta = local.existing(conv).await?;
        let path = local.messages_path(conv);
        let mut torn = false;
        let known = self.tails.borrow().get(conv).copied().flatten();
        let last = match known {
            Some(last) => last,
            None => {
                let bytes = self.local.read(&path).await?.unwrap_or_default();
                let parsed = parse_jsonl(&bytes);
                torn = !parsed.clean_tail;
                latest(&parsed.messages)
            }
        };
        if defaulted {
            // After every message already there, so that conversation order (timestamp,
            // then id) is append order even within one millisecond.
            message.timestamp = iso_timestamp(self.now_ms().max(last.saturating_add(1)));
        }
        let mut line = message.to_line()?;
        if torn {
            self.debug("messages.jsonl ends in a torn line (a crash mid-append?); the next message starts a new line and the torn one is skipped on read", Some(&path));
            line.insert(0, '\n');
        }
        if let Err(e) = self.local.append(&path, line.as_bytes()).await {
            self.forget_tail(conv);
            return Err(e);
        }
        let own = parse_timestamp(&message.timestamp).unwrap_or(last);
        self.set_tail(conv, last.max(own));
        meta.message_count += 1;
        meta.artifact_count += new_artifacts;
        meta.updated_at = self.now_iso().max(meta.updated_at);
        local.write_metadata(&meta).await?;
        local.index_upsert(&meta).await?;
        Ok(message)
    }

    /// The messages in conversation order (timestamp, then id), optionally of one role; torn and corrupt lines are
    /// skipped and reported through `on_debug`.
    pub async fn messages(&self, conversation_id: &str, role: Option<&str>) -> Result<Vec<Message>> {
        let role = role.map(Role::parse).transpose()?;
        self.conversation(conversation_id).await?;
        let parsed = self.local().messages(conversation_id).await?;
        if parsed.clean_tail {
            self.set_tail(conversation_id, latest(&parsed.messages));
        }
        Ok(parsed.messages.into_iter().filter(|m| role.is_none() || role == Some(m.role)).collect())
    }

    /// Stores `content` as an artifact of the conversation.
    pub async fn store_artifact(&self, conversation_id: &str, input: ArtifactInput) -> Result<ArtifactMeta> {
        validate_id(conversation_id, "conversation id")?;
        artifacts::validate_type(&input.kind)?;
        self.exclusive(async {
            let local = self.local();
            let mut conv = local.existing(conversation_id).await?;
            self.enqueue(conversation_id, Op::Update).await?;
            let meta = self.store_artifact_locked(conversation_id, &input).await?;
            conv.artifact_count += 1;
            conv.updated_at = self.now_iso().max(conv.updated_at);
            local.write_metadata(&conv).await?;
            local.index_upsert(&conv).await?;
            Ok(meta)
        })
        .await
    }

    /// Writes an artifact under [`Self::exclusive`] (the caller queued the change).
    async fn store_artifact_locked(&self, conv: &str, input: &ArtifactInput) -> Result<ArtifactMeta> {
        let mut meta = ArtifactMeta {
            id: String::new(),
            kind: input.kind.clone(),
            name: input.name.clone(),
            mime_type: input.mime_type.clone().unwrap_or_else(|| "text/plain".to_owned()),
            size: input.content.len() as u64,
            created_at: self.now_iso(),
        };
        loop {
            meta.id = new_id("art", self.options.random.as_ref())?;
            match self.local().write_artifact(conv, &meta, input.content.as_bytes(), true).await {
                Err(e) if e.kind() == ErrorKind::AlreadyExists => continue,
                other => return other.map(|()| meta),
            }
        }
    }

    /// Stores the artifact, then appends the message with ` (artifact://{id})` after
    /// its content (the compact summary).
    pub async fn append_with_artifact(
        &self,
        conversation_id: &str,
        message: MessageInput,
        artifact: ArtifactInput,
    ) -> Result<(Message, ArtifactMeta)> {
        validate_id(conversation_id, "conversation id")?;
        artifacts::validate_type(&artifact.kind)?;
        let (mut message, defaulted) = self.new_message(message)?;
        self.exclusive(async {
            self.local().existing(conversation_id).await?;
            self.enqueue(conversation_id, Op::Update).await?;
            let meta = self.store_artifact_locked(conversation_id, &artifact).await?;
            message.content = reference_text(&message.content, &meta.id);
            let message = self.append_locked(conversation_id, message, defaulted, 1).await?;
            Ok((message, meta))
        })
        .await
    }

    /// An artifact's meta and content; `NOT_FOUND` when missing.
    pub async fn artifact(&self, conversation_id: &str, artifact_id: &str) -> Result<(ArtifactMeta, Vec<u8>)> {
        validate_id(artifact_id, "artifact id")?;
        self.conversation(conversation_id).await?;
        let local = self.local();
        let meta = local.artifact_meta(conversation_id, artifact_id).await?;
        let content = local.artifact_content(conversation_id, artifact_id).await?;
        match (meta, content) {
            (Some(meta), Some(content)) => Ok((meta, content)),
            _ => Err(not_found("artifact", artifact_id)),
        }
    }

    /// The artifacts' metas, oldest first.
    pub async fn list_artifacts(&self, conversation_id: &str) -> Result<Vec<ArtifactMeta>> {
        self.conversation(conversation_id).await?;
        self.local().artifacts(conversation_id).await
    }

    /// The artifacts `text` references (`artifact://{id}`), in order of first mention;
    /// a reference to a missing artifact is skipped and reported.
    pub async fn resolve_artifacts(&self, conversation_id: &str, text: &str) -> Result<Vec<(ArtifactMeta, Vec<u8>)>> {
        self.conversation(conversation_id).await?;
        let mut out = Vec::new();
        for id in artifact_refs(text) {
            match self.artifact(conversation_id, &id).await {
                Ok(found) => out.push(found),
                Err(e) if matches!(e.kind(), ErrorKind::NotFound | ErrorKind::InvalidArgument) => {
                    self.debug(format!("artifact://{id} does not resolve; skipped"), None)
                }
                Err(e) => return Err(e),
            }
        }
        Ok(out)
    }

    /// Messages by role, artifacts by type, bytes, estimated tokens and cost.
    pub async fn stats(&self, conversation_id: &str, cost_per_token: Option<f64>) -> Result<Stats> {
        let messages = self.messages(conversation_id, None).await?;
        let artifacts = self.local().artifacts(conversation_id).await?;
        Ok(stats::stats(conversation_id, &messages, &artifacts, cost_per_token))
    }

    /// What pruning would keep and drop; with `apply`, rewrites `messages.jsonl` with the
    /// kept messages (one whole-file write, atomic where the storage's writes are) and
    /// remembers the dropped ids so a sync does not bring them back.
    pub async fn prune(&self, conversation_id: &str, options: PruneOptions, apply: bool) -> Result<Pruned> {
        validate_id(conversation_id, "conversation id")?;
        let local = self.local();
        let work = async {
            let mut meta = local.existing(conversation_id).await?;
            let messages = local.messages(conversation_id).await?.messages;
            let pruned = prune::prune(&messages, &options);
            if apply && !pruned.dropped.is_empty() {
                self.enqueue(conversation_id, Op::Update).await?;
                let mut dropped = local.pruned(conversation_id).await?;
                dropped.extend(pruned.dropped.iter().map(|m| m.id.clone()));
                local.write_pruned(conversation_id, &dropped).await?;
                local.write_messages(conversation_id, &pruned.kept).await?;
                self.set_tail(conversation_id, latest(&pruned.kept));
                meta.message_count = pruned.kept.len() as u64;
                meta.updated_at = self.now_iso().max(meta.updated_at);
                local.write_metadata(&meta).await?;
                local.index_upsert(&meta).await?;
            }
            Ok(pruned)
        };
        if apply {
            self.exclusive(work).await
        } else {
            work.await
        }
    }

    /// The whole conversation.
    pub async fn snapshot(&self, conversation_id: &str) -> Result<Snapshot> {
        let conversation = self.conversation(conversation_id).await?;
        let messages = self.local().messages(conversation_id).await?.messages;
        let mut artifacts = Vec::new();
        for meta in self.local().artifacts(conversation_id).await? {
            let content = self
                .local()
                .artifact_content(conversation_id, &meta.id)
                .await?
                .ok_or_else(|| not_found("artifact content", &meta.id))?;
            artifacts.push(ExportedArtifact::new(&meta, content)?);
        }
        Ok(Snapshot { conversation, messages, artifacts })
    }

    /// The conversation as JSON, JSON Lines or Markdown.
    pub async fn export(&self, conversation_id: &str, format: Format) -> Result<String> {
        export::export(&self.snapshot(conversation_id).await?, format)
    }

    /// Imports a JSON or JSON Lines export (`None` guesses). Into a store without the
    /// conversation it is a plain restore (exporting it again gives the same bytes);
    /// into one that has it, it merges as a sync does: messages by id, metadata
    /// last-write-wins, missing artifacts added.
    pub async fn import(&self, text: &str, format: Option<Format>) -> Result<ConversationMetadata> {
        let snapshot = export::parse(text, format)?;
        let local = self.local();
        let id = snapshot.conversation.id.clone();
        self.exclusive(async {
            self.enqueue(&id, Op::Update).await?;
            let current = local.metadata(&id).await?;
            let have = crate::sort::set_of(local.artifacts(&id).await?.into_iter().map(|a| a.id));
            for a in snapshot.artifacts.iter().filter(|a| !have.contains(&a.id)) {
                local.write_artifact(&id, &a.meta(), a.content.as_bytes(), false).await?;
            }
            let cur = local.messages(&id).await?.messages;
            let dropped = local.pruned(&id).await?;
            let merged =
                if current.is_some() { merge(&cur, &snapshot.messages, &dropped) } else { snapshot.messages.clone() };
            local.write_messages(&id, &merged).await?;
            self.set_tail(&id, latest(&merged));
            let mut meta = match &current {
                Some(c) if c.updated_at >= snapshot.conversation.updated_at => c.clone(),
                _ => snapshot.conversation.clone(),
            };
            meta.message_count = merged.len() as u64;
            meta.artifact_count = local.artifacts(&id).await?.len() as u64;
            local.write_metadata(&meta).await?;
            local.index_upsert(&meta).await?;
            Ok(meta)
        })
        .await
    }
}

/// The latest timestamp of `messages` in ms (`i64::MIN` for none).
pub(crate) fn latest(messages: &[Message]) -> i64 {
    messages.iter().filter_map(|m| parse_timestamp(&m.timestamp).ok()).max().unwrap_or(i64::MIN)
}

fn base36(mut n: u64) -> String {
    const DIGITS: &[u8; 36] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut out = Vec::new();
    loop {
        out.push(DIGITS[(n % 36) as usize]);
        n /= 36;
        if n == 0 {
            break;
        }
    }
    out.reverse();
    String::from_utf8(out).unwrap_or_default()
}
