//! The conversation store (SPEC §7): conversations of append-only `messages.jsonl`,
//! `metadata.json` and `artifacts/`, with an index, stats, relevance pruning,
//! export/import, and local-first sync to a remote storage.
//!
//! The `toolctx` crate's `ConversationStore` (crates/native/src/conversation_store.rs)
//! runs it over a storage; its docs have an example.
//!
//! Every operation is a plan (crates/core/src/plan.rs) over the files it read (`ops.rs`: what to
//! read, then what to change and answer); a driver does the I/O in between: natively the
//! plan runner, from the async methods of `ConversationStore`
//! (`crates/native/src/conversation_store.rs`); in JavaScript the package's driver
//! (`pkg-template/driver.js`, through `crates/wasm/src/plans.rs`). A sync is synchronous steps
//! of its own (`sync.rs`), over the local storage and the remote. Writes of one store are
//! serialised and run under the storage's lock on `conversations/.lock`, so processes and
//! tabs sharing a store do not interleave their read-modify-writes of `metadata.json`
//! and `index.json`.

mod artifacts;
mod export;
mod files;
mod ids;
mod messages;
mod ops;
mod prune;
mod replica;
mod stats;
mod sync;

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;

use serde::Deserialize;

pub use artifacts::{artifact_refs, reference_text, validate_type, ArtifactMeta, SCHEME};
pub use export::{parse as parse_export, ExportedArtifact, Format, Snapshot};
pub use files::{Files, Side, Want};
pub use ids::{new_id, validate_id, IdRandom};
pub use messages::{merge, parse_jsonl, parse_timestamp, Message, Role, ToolCall};
pub use ops::{Answer, OperationPlan, Request};
pub use prune::{PruneOptions, Pruned, DEFAULT_KEEP_RECENT};
pub use replica::{ConversationMetadata, View};
pub use stats::{message_tokens, Stats};
pub use sync::{Backoff, QueueItem, QueueOp, Step, SyncFailure, SyncPlan, SyncReport, SyncRun, SyncStatus};

use crate::error::{Error, ErrorKind, Result};
use crate::inputs::{Clock, DebugSink};
use crate::paths::{join, normalize};
use crate::record::iso_timestamp;

/// Parses JSON bytes. Every parse of the conversation store goes through one reader,
/// serde_json's text one: serde_json compiles its whole parser once per reader, and the
/// text one is in any module that parses a `Value` (its `raw_value` path calls
/// `from_str`), so `from_slice` would add a second copy of the parser for the same result.
pub(crate) fn from_json<'a, T: Deserialize<'a>>(bytes: &'a [u8]) -> serde_json::Result<T> {
    match std::str::from_utf8(bytes) {
        Ok(text) => serde_json::from_str(text),
        Err(_) => Err(serde::de::Error::custom("the bytes are not UTF-8")),
    }
}

/// Settings of a [`Conversations`] (and of the `toolctx` crate's `ConversationStore`).
#[derive(Clone)]
pub struct StoreOptions {
    /// The store's folder (the `contextDir` of `ContextManager`); conversations live
    /// in `{context_dir}/conversations/`.
    pub context_dir: String,
    /// The folder on the remote (default: `context_dir`).
    pub remote_dir: Option<String>,
    /// Milliseconds since the epoch (the `toolctx` crate's `platform::now_ms` by default).
    pub clock: Clock,
    /// Random characters for ids (the `toolctx` crate's `platform::random_chars` by default).
    pub random: IdRandom,
    /// Receiver of warnings (skipped lines, rebuilt indexes, sync failures).
    pub on_debug: Option<DebugSink>,
    /// Backoff of failed sync items.
    pub retry: Backoff,
}

impl StoreOptions {
    /// Defaults for a store in `context_dir`, with this clock and random source (natively,
    /// `toolctx::conversation_options` hands in the platform's).
    pub fn with(context_dir: impl Into<String>, clock: Clock, random: IdRandom) -> Self {
        StoreOptions {
            context_dir: context_dir.into(),
            remote_dir: None,
            clock,
            random,
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

/// The conversation store's state and its synchronous steps: no storage, nothing awaited.
/// A driver runs the steps over the storages: natively the `toolctx` crate's `ConversationStore`, in
/// JavaScript the package's driver.
pub struct Conversations {
    options: StoreOptions,
    base: String,
    remote_base: String,
    /// Whether the store syncs to a remote (its changes are queued for it).
    has_remote: bool,
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

pub(crate) fn not_found(what: &str, id: &str) -> Error {
    Error::new(ErrorKind::NotFound, format!("no {what} {id:?}"))
}

impl Conversations {
    /// A store's state, with a remote to sync to or not.
    pub fn new(options: StoreOptions, has_remote: bool) -> Result<Self> {
        let base = base_of(&options.context_dir)?;
        let remote_base = base_of(options.remote_dir.as_deref().unwrap_or(&options.context_dir))?;
        Ok(Conversations {
            options,
            base,
            remote_base,
            has_remote,
            tails: RefCell::new(BTreeMap::new()),
            counter: Cell::new(0),
        })
    }

    /// The names of the writers' locks, locally and on the remote.
    pub fn lock_names(&self) -> [String; 2] {
        [self.layout(Side::Local).lock_name(), self.layout(Side::Remote).lock_name()]
    }

    /// `{contextDir}/conversations`.
    pub fn base(&self) -> &str {
        &self.base
    }

    /// Sends a message to `on_debug`.
    pub fn debug(&self, message: impl Into<String>, path: Option<&str>) {
        crate::inputs::debug(self.options.on_debug.as_ref(), message, path)
    }

    /// What `files` holds of the store's files on `side`.
    pub fn view<'a>(&'a self, files: &'a Files, side: Side) -> View<'a> {
        let base = match side {
            Side::Local => &self.base,
            Side::Remote => &self.remote_base,
        };
        View { files, base, sink: self.options.on_debug.as_ref() }
    }

    /// The store's paths on `side` (which need no reads).
    pub fn layout(&self, side: Side) -> View<'_> {
        self.view(&replica::NOTHING, side)
    }

    /// `messages.jsonl` of `conv` ends with a newline, and its latest timestamp is `last`.
    pub(crate) fn set_tail(&self, conv: &str, last: i64) {
        self.tails.borrow_mut().insert(conv.to_owned(), Some(last));
    }

    /// What `messages.jsonl` of `conv` ends with is not known.
    pub(crate) fn forget_tail(&self, conv: &str) {
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
        ids::checked_random(&self.options.random, n)
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

    /// The request of an append (of a message that references `artifact`, when given).
    pub fn append_request(
        &self,
        conversation_id: &str,
        input: MessageInput,
        artifact: Option<ArtifactInput>,
    ) -> Result<Request> {
        validate_id(conversation_id, "conversation id")?;
        if let Some(artifact) = &artifact {
            artifacts::validate_type(&artifact.kind)?;
        }
        // An append with an artifact does not check the caller's message id (as before).
        let given_id = input.id.is_some() && artifact.is_none();
        let (message, defaulted) = self.new_message(input)?;
        Ok(Request::Append { conv: conversation_id.to_owned(), message, defaulted, given_id, artifact })
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

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::from_json;

    #[test]
    fn from_json_reads_what_from_slice_reads_and_refuses_bytes_that_are_not_utf8() {
        for text in [&b"{\"a\":[1,2.5,\"\xc3\xa9\",null],\"b\":{}}"[..], b" 7 ", b"{\"a\":1", b"[1,]", b"\"\\ud800\""] {
            let ours = from_json::<Value>(text).map_err(|e| e.to_string());
            assert_eq!(ours, serde_json::from_slice::<Value>(text).map_err(|e| e.to_string()));
        }
        assert!(from_json::<Value>(b"\"\xff\"").is_err());
        assert!(from_json::<Value>(b"{\"a\":\"\xc3\"}").is_err());
    }
}
