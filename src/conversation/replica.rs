//! One copy of the conversations (local, or the remote a store syncs to): the layout in
//! its root and the reads and writes of its files, over any [`Storage`].
//!
//! ```text
//! {root}/conversations/index.json                    the index (a cache of every metadata.json)
//! {root}/conversations/{convId}/metadata.json
//! {root}/conversations/{convId}/messages.jsonl       append-only, one message a line
//! {root}/conversations/{convId}/pruned.json          ids dropped by prune (so a merge keeps them out)
//! {root}/conversations/{convId}/artifacts/{artId}            content
//! {root}/conversations/{convId}/artifacts/{artId}.meta.json  its meta
//! {root}/conversations/sync-queue/{itemId}.json      the persisted sync queue (local only)
//! ```

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use super::artifacts::{ArtifactMeta, META_SUFFIX};
use super::messages::{encode_jsonl, parse_jsonl, Message, Parsed};
use crate::sort::{set_of, sort_by};
use crate::error::{Error, ErrorKind, Result};
use crate::paths::join;
use crate::storage::{Storage, WriteOptions};
use crate::store::{DebugEvent, DebugSink};

/// A conversation's `metadata.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ConversationMetadata {
    /// `conv-…`, or the caller's id.
    pub id: String,
    /// A title, if one was given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// ISO 8601 UTC with milliseconds.
    pub created_at: String,
    /// Moves with every change; the metadata with the later one wins a sync.
    pub updated_at: String,
    /// Messages in `messages.jsonl`.
    pub message_count: u64,
    /// Artifacts in `artifacts/`.
    pub artifact_count: u64,
}

#[derive(Serialize, Deserialize)]
struct IndexFile {
    v: u32,
    conversations: Vec<ConversationMetadata>,
}

#[derive(Serialize, Deserialize)]
struct PrunedFile {
    v: u32,
    ids: BTreeSet<String>,
}

/// A storage and the root of a conversation store in it.
pub struct Replica<'a, S> {
    /// Where the files are.
    pub storage: &'a S,
    /// `{root}/conversations`.
    pub base: String,
    /// Receives reports of skipped lines and rebuilt indexes.
    pub sink: Option<&'a DebugSink>,
}

pub(crate) fn corrupt(path: &str, e: impl std::fmt::Display) -> Error {
    Error::new(ErrorKind::CorruptRecord, format!("does not parse: {e}")).with_path(path)
}

pub(crate) fn to_json<T: Serialize>(value: &T) -> Result<String> {
    serde_json::to_string(value).map_err(|e| Error::new(ErrorKind::Internal, e.to_string()))
}

impl<S: Storage> Replica<'_, S> {
    fn report(&self, message: String, path: Option<&str>) {
        if let Some(sink) = self.sink {
            sink(&DebugEvent { message, path: path.map(str::to_owned) });
        }
    }

    /// `{base}/{id}`.
    pub fn dir(&self, id: &str) -> String {
        join(&self.base, id)
    }
    /// `{base}/{id}/messages.jsonl`.
    pub fn messages_path(&self, id: &str) -> String {
        join(&self.dir(id), "messages.jsonl")
    }
    fn metadata_path(&self, id: &str) -> String {
        join(&self.dir(id), "metadata.json")
    }
    fn pruned_path(&self, id: &str) -> String {
        join(&self.dir(id), "pruned.json")
    }
    fn artifacts_dir(&self, id: &str) -> String {
        join(&self.dir(id), "artifacts")
    }
    fn index_path(&self) -> String {
        join(&self.base, "index.json")
    }
    /// `{base}/sync-queue`.
    pub fn queue_dir(&self) -> String {
        join(&self.base, "sync-queue")
    }

    /// The metadata, or `None` when the conversation does not exist.
    pub async fn metadata(&self, id: &str) -> Result<Option<ConversationMetadata>> {
        let path = self.metadata_path(id);
        let Some(bytes) = self.storage.read(&path).await? else { return Ok(None) };
        let meta: ConversationMetadata = serde_json::from_slice(&bytes).map_err(|e| corrupt(&path, e))?;
        // The id inside names files later (a remote's copy, say): it must be the folder's.
        if meta.id != id {
            return Err(corrupt(&path, format!("it names conversation {:?}", meta.id)));
        }
        Ok(Some(meta))
    }

    /// The metadata, or `NOT_FOUND`.
    pub async fn existing(&self, id: &str) -> Result<ConversationMetadata> {
        self.metadata(id)
            .await?
            .ok_or_else(|| Error::new(ErrorKind::NotFound, format!("no conversation {id:?}")).with_path(self.dir(id)))
    }

    /// Replaces `metadata.json` (atomically, as the storage writes whole files).
    pub async fn write_metadata(&self, meta: &ConversationMetadata) -> Result<()> {
        self.storage.write(&self.metadata_path(&meta.id), to_json(meta)?.as_bytes(), WriteOptions::default()).await
    }

    /// Reads `messages.jsonl` in conversation order, reporting what it skipped.
    pub async fn messages(&self, id: &str) -> Result<Parsed> {
        let path = self.messages_path(id);
        let bytes = self.storage.read(&path).await?.unwrap_or_default();
        let mut parsed = parse_jsonl(&bytes);
        // Conversation order: timestamp, then id (what a merge gives). Generated ids sort
        // in append order within a millisecond, so appends keep their order.
        sort_by(&mut parsed.messages, |a, b| a.order_key().cmp(&b.order_key()));
        for note in &parsed.skipped {
            self.report(format!("messages.jsonl: {note}"), Some(&path));
        }
        Ok(parsed)
    }

    /// Replaces `messages.jsonl` whole (atomic where the storage's writes are).
    pub async fn write_messages(&self, id: &str, messages: &[Message]) -> Result<()> {
        self.storage.write(&self.messages_path(id), encode_jsonl(messages)?.as_bytes(), WriteOptions::default()).await
    }

    /// The ids prune dropped.
    pub async fn pruned(&self, id: &str) -> Result<BTreeSet<String>> {
        let path = self.pruned_path(id);
        match self.storage.read(&path).await? {
            None => Ok(BTreeSet::new()),
            Some(bytes) => serde_json::from_slice::<PrunedFile>(&bytes).map(|f| f.ids).map_err(|e| corrupt(&path, e)),
        }
    }

    /// Replaces the ids prune dropped.
    pub async fn write_pruned(&self, id: &str, ids: &BTreeSet<String>) -> Result<()> {
        let json = to_json(&PrunedFile { v: 1, ids: ids.clone() })?;
        self.storage.write(&self.pruned_path(id), json.as_bytes(), WriteOptions::default()).await
    }

    /// The metas of the artifacts, by id; a meta file that does not parse is skipped
    /// and reported.
    pub async fn artifacts(&self, id: &str) -> Result<Vec<ArtifactMeta>> {
        let dir = self.artifacts_dir(id);
        let mut out = Vec::new();
        for name in self.storage.list(&dir).await? {
            let Some(art) = name.strip_suffix(META_SUFFIX) else { continue };
            if super::ids::validate_id(art, "artifact id").is_err() {
                continue;
            }
            let path = join(&dir, &name);
            if let Some(bytes) = self.storage.read(&path).await? {
                match serde_json::from_slice::<ArtifactMeta>(&bytes) {
                    Ok(meta) if meta.id == art => out.push(meta),
                    _ => self.report("artifact meta does not parse; skipped".into(), Some(&path)),
                }
            }
        }
        sort_by(&mut out, |a, b| (&a.created_at, &a.id).cmp(&(&b.created_at, &b.id)));
        Ok(out)
    }

    /// One artifact's meta, or `None`.
    pub async fn artifact_meta(&self, id: &str, art: &str) -> Result<Option<ArtifactMeta>> {
        let path = join(&self.artifacts_dir(id), &format!("{art}{META_SUFFIX}"));
        match self.storage.read(&path).await? {
            None => Ok(None),
            Some(bytes) => serde_json::from_slice(&bytes).map(Some).map_err(|e| corrupt(&path, e)),
        }
    }

    /// One artifact's content, or `None`.
    pub async fn artifact_content(&self, id: &str, art: &str) -> Result<Option<Vec<u8>>> {
        self.storage.read(&self.artifact_path(id, art)).await
    }

    /// Where an artifact's content is.
    pub fn artifact_path(&self, id: &str, art: &str) -> String {
        join(&self.artifacts_dir(id), art)
    }

    /// The ids of the artifacts whose content file is there (one listing, no reads).
    pub async fn artifact_contents(&self, id: &str) -> Result<BTreeSet<String>> {
        let names = self.storage.list(&self.artifacts_dir(id)).await?;
        Ok(set_of(names.into_iter().filter(|n| !n.ends_with('/') && !n.ends_with(META_SUFFIX))))
    }

    /// Writes an artifact: the content first, then its meta (whose presence means the
    /// artifact is whole). `exclusive` refuses to replace an existing content file.
    pub async fn write_artifact(&self, id: &str, meta: &ArtifactMeta, content: &[u8], exclusive: bool) -> Result<()> {
        let dir = self.artifacts_dir(id);
        self.storage.write(&join(&dir, &meta.id), content, WriteOptions { exclusive }).await?;
        let meta_path = join(&dir, &format!("{}{META_SUFFIX}", meta.id));
        self.storage.write(&meta_path, to_json(meta)?.as_bytes(), WriteOptions::default()).await
    }

    /// Removes every file of a conversation and its folders.
    pub async fn remove_conversation(&self, id: &str) -> Result<()> {
        let dir = self.artifacts_dir(id);
        for name in self.storage.list(&dir).await? {
            if !name.ends_with('/') {
                self.storage.remove(&join(&dir, &name)).await?;
            }
        }
        self.storage.remove_dir(&dir).await?;
        // metadata.json last: while it exists the conversation does.
        for path in [self.messages_path(id), self.pruned_path(id), self.metadata_path(id)] {
            self.storage.remove(&path).await?;
        }
        self.storage.remove_dir(&self.dir(id)).await
    }

    /// The index, newest `updatedAt` first; rebuilt from the metadata files when it is
    /// missing or does not parse.
    pub async fn index(&self) -> Result<Vec<ConversationMetadata>> {
        let path = self.index_path();
        let parsed = match self.storage.read(&path).await? {
            Some(bytes) => match serde_json::from_slice::<IndexFile>(&bytes) {
                Ok(f) => Some(f.conversations),
                Err(e) => {
                    self.report(format!("the conversation index does not parse ({e}); rebuilt"), Some(&path));
                    None
                }
            },
            None => None,
        };
        let mut list = match parsed {
            Some(list) => list,
            None => self.rebuild_index().await?,
        };
        // Ids name folders: an index entry (a remote's, say) that could not be one is dropped.
        list.retain(|m| {
            let ok = super::ids::validate_id(&m.id, "conversation id").is_ok();
            if !ok {
                self.report(format!("index entry {:?} is not a conversation id; skipped", m.id), Some(&path));
            }
            ok
        });
        sort_newest_first(&mut list);
        Ok(list)
    }

    /// The index from the metadata files. Not written back: a listing is a read (on a
    /// read-only store a write would fail, and it could race a writer); the next change
    /// to the index writes it whole.
    async fn rebuild_index(&self) -> Result<Vec<ConversationMetadata>> {
        let mut list = Vec::new();
        for name in self.storage.list(&self.base).await? {
            let Some(id) = name.strip_suffix('/') else { continue };
            if super::ids::validate_id(id, "conversation id").is_err() || id == "sync-queue" {
                continue;
            }
            match self.metadata(id).await {
                Ok(Some(meta)) => list.push(meta),
                Ok(None) => {}
                Err(e) => self.report(format!("skipped a conversation: {e}"), Some(&self.dir(id))),
            }
        }
        Ok(list)
    }

    async fn write_index(&self, list: &[ConversationMetadata]) -> Result<()> {
        let mut list = list.to_vec();
        sort_newest_first(&mut list);
        let json = to_json(&IndexFile { v: 1, conversations: list })?;
        self.storage.write(&self.index_path(), json.as_bytes(), WriteOptions::default()).await
    }

    /// Puts `meta` into the index (replacing its id's entry).
    pub async fn index_upsert(&self, meta: &ConversationMetadata) -> Result<()> {
        let mut list = self.index().await?;
        list.retain(|m| m.id != meta.id);
        list.push(meta.clone());
        self.write_index(&list).await
    }

    /// Takes `id` out of the index.
    pub async fn index_remove(&self, id: &str) -> Result<()> {
        let mut list = self.index().await?;
        let before = list.len();
        list.retain(|m| m.id != id);
        if list.len() != before {
            self.write_index(&list).await?;
        }
        Ok(())
    }
}

fn sort_newest_first(list: &mut Vec<ConversationMetadata>) {
    sort_by(list, |a, b| (&b.updated_at, &b.id).cmp(&(&a.updated_at, &a.id)));
}
