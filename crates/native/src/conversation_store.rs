//! The native driver of the conversation store: its async API, for Rust users and the
//! tests. Each method checks its arguments, makes a [`Request`] and runs its plan
//! ([`OperationPlan`]) over the local [`Storage`] with the plan runner (`run_in_turn`: a
//! writing operation takes the store's turn, then the storage's lock), as the package's
//! driver runs it over a host. A sync is a plan too ([`SyncPlan`]), whose steps run on
//! the local storage or the remote (`run_synced`). Nothing else in the store awaits.
//!
//! ```
//! use toolctx::conversation::{ArtifactInput, MessageInput};
//! use toolctx::{ConversationStore, MemoryStorage};
//! # toolctx::block_on(async {
//! let store: ConversationStore<MemoryStorage> =
//!     ConversationStore::new(MemoryStorage::new(), None, toolctx::conversation_options("/ctx"))?;
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

use std::ops::Deref;

use futures_util::lock::Mutex;

use crate::conversation::{
    parse_export, validate_id, validate_type, Answer, ArtifactInput, ArtifactMeta, ConversationMetadata, Conversations,
    Format, Message, MessageInput, OperationPlan, PruneOptions, Pruned, Request, Role, Stats, StoreOptions, SyncPlan,
    SyncReport, SyncStatus,
};
use crate::error::{Error, ErrorKind, Result};
use crate::runner::{run_in_turn, run_synced};
use crate::storage::Storage;

/// The conversation store over local storage `L` and an optional remote `R`: the
/// [`Conversations`] state (which it derefs to) driven over the storages.
pub struct ConversationStore<L, R = L> {
    core: Conversations,
    local: L,
    remote: Option<R>,
    writes: Mutex<()>,
    sync_lock: Mutex<()>,
}

impl<L, R> Deref for ConversationStore<L, R> {
    type Target = Conversations;

    fn deref(&self) -> &Conversations {
        &self.core
    }
}

impl<L: Storage, R: Storage> ConversationStore<L, R> {
    /// A store over `local`, syncing to `remote` when given.
    pub fn new(local: L, remote: Option<R>, options: StoreOptions) -> Result<Self> {
        Ok(ConversationStore {
            core: Conversations::new(options, remote.is_some())?,
            local,
            remote,
            writes: Mutex::new(()),
            sync_lock: Mutex::new(()),
        })
    }

    /// The local storage.
    pub fn storage(&self) -> &L {
        &self.local
    }

    /// The remote storage, if any.
    pub fn remote(&self) -> Option<&R> {
        self.remote.as_ref()
    }

    /// Waits for this store's writes and sync in flight; nothing else is held open.
    pub async fn close(&self) {
        // The order sync takes them in (sync, then writes), so the two never deadlock.
        let _sync = self.sync_lock.lock().await;
        let _writes = self.writes.lock().await;
    }

    /// A new, empty conversation (with the caller's id, if one is given).
    pub async fn create_conversation(&self, title: Option<String>, id: Option<String>) -> Result<ConversationMetadata> {
        if let Some(id) = &id {
            validate_id(id, "conversation id")?;
        }
        match self.perform(Request::Create { title, id }).await? {
            Answer::Conversation(meta) => Ok(meta),
            other => Err(unexpected(other)),
        }
    }

    /// Every conversation, newest `updatedAt` first (from the index, rebuilt when
    /// missing or corrupt).
    pub async fn list_conversations(&self) -> Result<Vec<ConversationMetadata>> {
        match self.perform(Request::List).await? {
            Answer::Conversations(list) => Ok(list),
            other => Err(unexpected(other)),
        }
    }

    /// A conversation's metadata; `NOT_FOUND` when it does not exist.
    pub async fn conversation(&self, id: &str) -> Result<ConversationMetadata> {
        validate_id(id, "conversation id")?;
        match self.perform(Request::Get(id.to_owned())).await? {
            Answer::Conversation(meta) => Ok(meta),
            other => Err(unexpected(other)),
        }
    }

    /// Removes a conversation and everything in it (and, at the next sync, on the remote).
    pub async fn delete_conversation(&self, id: &str) -> Result<()> {
        validate_id(id, "conversation id")?;
        self.perform(Request::Delete(id.to_owned())).await.map(drop)
    }

    /// Appends a message to `messages.jsonl` and updates the metadata and index. A
    /// caller's id that the conversation already has is `INVALID_ARGUMENT`.
    pub async fn append_message(&self, conversation_id: &str, input: MessageInput) -> Result<Message> {
        match self.perform(self.append_request(conversation_id, input, None)?).await? {
            Answer::Message(message, _) => Ok(message),
            other => Err(unexpected(other)),
        }
    }

    /// The messages in conversation order (timestamp, then id), optionally of one role; torn and corrupt lines are
    /// skipped and reported through `on_debug`.
    pub async fn messages(&self, conversation_id: &str, role: Option<&str>) -> Result<Vec<Message>> {
        let role = role.map(Role::parse).transpose()?;
        validate_id(conversation_id, "conversation id")?;
        match self.perform(Request::Messages { conv: conversation_id.to_owned(), role }).await? {
            Answer::Messages(list) => Ok(list),
            other => Err(unexpected(other)),
        }
    }

    /// Stores `content` as an artifact of the conversation.
    pub async fn store_artifact(&self, conversation_id: &str, input: ArtifactInput) -> Result<ArtifactMeta> {
        validate_id(conversation_id, "conversation id")?;
        validate_type(&input.kind)?;
        match self.perform(Request::StoreArtifact { conv: conversation_id.to_owned(), input }).await? {
            Answer::Artifact(meta) => Ok(meta),
            other => Err(unexpected(other)),
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
        match self.perform(self.append_request(conversation_id, message, Some(artifact))?).await? {
            Answer::Message(message, Some(meta)) => Ok((message, meta)),
            other => Err(unexpected(other)),
        }
    }

    /// An artifact's meta and content; `NOT_FOUND` when missing.
    pub async fn artifact(&self, conversation_id: &str, artifact_id: &str) -> Result<(ArtifactMeta, Vec<u8>)> {
        validate_id(artifact_id, "artifact id")?;
        validate_id(conversation_id, "conversation id")?;
        let request = Request::Artifact { conv: conversation_id.to_owned(), art: artifact_id.to_owned() };
        match self.perform(request).await? {
            Answer::Found(meta, content) => Ok((meta, content)),
            other => Err(unexpected(other)),
        }
    }

    /// The artifacts' metas, oldest first.
    pub async fn list_artifacts(&self, conversation_id: &str) -> Result<Vec<ArtifactMeta>> {
        validate_id(conversation_id, "conversation id")?;
        match self.perform(Request::ListArtifacts(conversation_id.to_owned())).await? {
            Answer::Artifacts(list) => Ok(list),
            other => Err(unexpected(other)),
        }
    }

    /// The artifacts `text` references (`artifact://{id}`), in order of first mention;
    /// a reference to a missing artifact is skipped and reported.
    pub async fn resolve_artifacts(&self, conversation_id: &str, text: &str) -> Result<Vec<(ArtifactMeta, Vec<u8>)>> {
        validate_id(conversation_id, "conversation id")?;
        match self.perform(Request::Resolve { conv: conversation_id.to_owned(), text: text.to_owned() }).await? {
            Answer::Contents(list) => Ok(list),
            other => Err(unexpected(other)),
        }
    }

    /// Messages by role, artifacts by type, bytes, estimated tokens and cost.
    pub async fn stats(&self, conversation_id: &str, cost_per_token: Option<f64>) -> Result<Stats> {
        validate_id(conversation_id, "conversation id")?;
        match self.perform(Request::Stats { conv: conversation_id.to_owned(), cost: cost_per_token }).await? {
            Answer::Stats(stats) => Ok(stats),
            other => Err(unexpected(other)),
        }
    }

    /// What pruning would keep and drop; with `apply`, rewrites `messages.jsonl` with the
    /// kept messages (one whole-file write, atomic where the storage's writes are) and
    /// remembers the dropped ids so a sync does not bring them back.
    pub async fn prune(&self, conversation_id: &str, options: PruneOptions, apply: bool) -> Result<Pruned> {
        validate_id(conversation_id, "conversation id")?;
        match self.perform(Request::Prune { conv: conversation_id.to_owned(), options, apply }).await? {
            Answer::Pruned(pruned) => Ok(pruned),
            other => Err(unexpected(other)),
        }
    }

    /// The conversation as JSON, JSON Lines or Markdown.
    pub async fn export(&self, conversation_id: &str, format: Format) -> Result<String> {
        validate_id(conversation_id, "conversation id")?;
        match self.perform(Request::Export { conv: conversation_id.to_owned(), format }).await? {
            Answer::Text(text) => Ok(text),
            other => Err(unexpected(other)),
        }
    }

    /// Imports a JSON or JSON Lines export (`None` guesses). Into a store without the
    /// conversation it is a plain restore (exporting it again gives the same bytes);
    /// into one that has it, it merges as a sync does: messages by id, metadata
    /// last-write-wins, missing artifacts added.
    pub async fn import(&self, text: &str, format: Option<Format>) -> Result<ConversationMetadata> {
        let snapshot = parse_export(text, format)?;
        match self.perform(Request::Import(Box::new(snapshot))).await? {
            Answer::Conversation(meta) => Ok(meta),
            other => Err(unexpected(other)),
        }
    }

    /// How many items are queued, and how many of them have failed.
    pub async fn sync_status(&self) -> Result<SyncStatus> {
        match self.perform(Request::SyncStatus).await? {
            Answer::SyncStatus(status) => Ok(status),
            other => Err(unexpected(other)),
        }
    }

    /// Runs `request`'s plan on the local storage: one that writes takes this store's turn
    /// (its writes run one at a time) and the storage's lock on `conversations/.lock`.
    pub(crate) async fn perform(&self, request: Request) -> Result<Answer> {
        run_in_turn(&self.local, &self.writes, OperationPlan::new(&self.core, request)).await.map(|(answer, _)| answer)
    }

    /// Pushes the queued changes to the remote and pulls what the remote has that is
    /// newer; see the module docs. Fails only when there is no remote or the local
    /// queue cannot be read: remote failures are reported in the result.
    pub async fn sync(&self) -> Result<SyncReport> {
        let plan = SyncPlan::new(&self.core)?;
        let Some(remote) = self.remote.as_ref() else { return Err(Error::invalid("no remote")) };
        let _one_at_a_time = self.sync_lock.lock().await;
        run_synced(&self.local, remote, &self.writes, plan).await
    }
}

/// An answer of another kind than the request's (a bug).
fn unexpected(answer: Answer) -> Error {
    Error::new(ErrorKind::Internal, format!("the conversation store answered {answer:?}"))
}
