//! One copy of the conversations (local, or the remote a store syncs to): the layout in
//! its root and the reads and writes of its files, over any `Storage`.
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
use super::files::{Files, Want};
use super::messages::{encode_jsonl, parse_jsonl, Message, Parsed};
use crate::error::{Error, ErrorKind, Result};
use crate::inputs::DebugSink;
use crate::paths::join;
use crate::plan::Op;
use crate::sort::{set_of, sort_by};

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

/// The files of a conversation store (local, or a remote) as an operation has read
/// them: what its reads found and the actions its writes take, decided synchronously.
pub struct View<'a> {
    /// What was read.
    pub files: &'a Files,
    /// `{root}/conversations`.
    pub base: &'a str,
    /// Receives reports of skipped lines and rebuilt indexes.
    pub sink: Option<&'a DebugSink>,
}

pub(crate) fn corrupt(path: &str, e: impl std::fmt::Display) -> Error {
    Error::new(ErrorKind::CorruptRecord, format!("does not parse: {e}")).with_path(path)
}

pub(crate) fn to_json<T: Serialize>(value: &T) -> Result<String> {
    serde_json::to_string(value).map_err(|e| Error::new(ErrorKind::Internal, e.to_string()))
}

fn write(path: String, json: String) -> Op {
    Op::Write { path, bytes: json.into_bytes(), exclusive: false }
}

/// The artifact id of a meta file's name in `artifacts/`.
fn meta_of(name: &str) -> Option<&str> {
    name.strip_suffix(META_SUFFIX).filter(|art| super::ids::validate_id(art, "artifact id").is_ok())
}

/// The conversation ids of the folders in `{base}`.
fn conversation_dirs(names: &[String]) -> impl Iterator<Item = &str> {
    names
        .iter()
        .filter_map(|name| name.strip_suffix('/'))
        .filter(|id| super::ids::validate_id(id, "conversation id").is_ok() && *id != "sync-queue")
}

impl View<'_> {
    fn report(&self, message: String, path: Option<&str>) {
        crate::inputs::debug(self.sink, message, path)
    }

    /// `{base}/{id}`.
    pub fn dir(&self, id: &str) -> String {
        join(self.base, id)
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
    fn artifact_meta_path(&self, id: &str, art: &str) -> String {
        join(&self.artifacts_dir(id), &format!("{art}{META_SUFFIX}"))
    }
    /// Where an artifact's content is.
    pub fn artifact_path(&self, id: &str, art: &str) -> String {
        join(&self.artifacts_dir(id), art)
    }
    fn index_path(&self) -> String {
        join(self.base, "index.json")
    }
    /// `{base}/sync-queue`.
    pub fn queue_dir(&self) -> String {
        join(self.base, "sync-queue")
    }
    /// `{base}/.lock`: the name of the lock of the store's writers.
    pub fn lock_name(&self) -> String {
        join(self.base, ".lock")
    }

    /// The reads and listings of `want` not done yet (none: everything is there). A
    /// listing comes before the reads of what it lists, so an operation asks until none
    /// are left (three rounds at most).
    pub fn needs(&self, want: &Want) -> Vec<Op> {
        let mut out = Vec::new();
        let mut need = |n: Op| {
            if !self.files.has(&n) {
                out.push(n);
            }
        };
        if let Some(id) = want.conv.as_deref() {
            for (wanted, path) in [
                (want.meta, self.metadata_path(id)),
                (want.messages, self.messages_path(id)),
                (want.pruned, self.pruned_path(id)),
            ] {
                if wanted {
                    need(Op::Read(path));
                }
            }
            if want.artifacts || want.contents {
                let dir = self.artifacts_dir(id);
                match self.files.listed(&dir) {
                    Err(_) => need(Op::List(dir)),
                    Ok(names) => {
                        for art in names.iter().filter_map(|n| meta_of(n)) {
                            need(Op::Read(self.artifact_meta_path(id, art)));
                            if want.contents {
                                need(Op::Read(self.artifact_path(id, art)));
                            }
                        }
                    }
                }
            }
            for art in &want.artifact_ids {
                need(Op::Read(self.artifact_meta_path(id, art)));
                need(Op::Read(self.artifact_path(id, art)));
            }
        }
        if want.index {
            let path = self.index_path();
            match self.files.read(&path) {
                Err(_) => need(Op::Read(path)),
                Ok(Some(bytes)) if super::from_json::<IndexFile>(bytes).is_ok() => {}
                Ok(_) => match self.files.listed(self.base) {
                    Err(_) => need(Op::List(self.base.to_owned())),
                    Ok(names) => {
                        for id in conversation_dirs(names) {
                            need(Op::Read(self.metadata_path(id)));
                        }
                    }
                },
            }
        }
        if want.queue {
            let dir = self.queue_dir();
            match self.files.listed(&dir) {
                Err(_) => need(Op::List(dir)),
                Ok(names) => {
                    for name in names.iter().filter(|n| n.ends_with(".json")) {
                        need(Op::Read(join(&dir, name)));
                    }
                }
            }
        }
        out
    }

    /// The metadata, or `None` when the conversation does not exist.
    pub fn metadata(&self, id: &str) -> Result<Option<ConversationMetadata>> {
        let path = self.metadata_path(id);
        let Some(bytes) = self.files.read(&path)? else { return Ok(None) };
        let meta: ConversationMetadata = super::from_json(bytes).map_err(|e| corrupt(&path, e))?;
        // The id inside names files later (a remote's copy, say): it must be the folder's.
        if meta.id != id {
            return Err(corrupt(&path, format!("it names conversation {:?}", meta.id)));
        }
        Ok(Some(meta))
    }

    /// The metadata, or `NOT_FOUND`.
    pub fn existing(&self, id: &str) -> Result<ConversationMetadata> {
        self.metadata(id)?
            .ok_or_else(|| Error::new(ErrorKind::NotFound, format!("no conversation {id:?}")).with_path(self.dir(id)))
    }

    /// Replaces `metadata.json` (atomically, as the storage writes whole files).
    pub fn write_metadata(&self, plan: &mut Vec<Op>, meta: &ConversationMetadata) -> Result<()> {
        plan.push(write(self.metadata_path(&meta.id), to_json(meta)?));
        Ok(())
    }

    /// `messages.jsonl` in conversation order, reporting what it skipped.
    pub fn messages(&self, id: &str) -> Result<Parsed> {
        let path = self.messages_path(id);
        let mut parsed = parse_jsonl(self.files.read(&path)?.unwrap_or_default());
        // Conversation order: timestamp, then id (what a merge gives). Generated ids sort
        // in append order within a millisecond, so appends keep their order.
        sort_by(&mut parsed.messages, |a, b| a.order_key().cmp(&b.order_key()));
        for note in &parsed.skipped {
            self.report(format!("messages.jsonl: {note}"), Some(&path));
        }
        Ok(parsed)
    }

    /// Replaces `messages.jsonl` whole (atomic where the storage's writes are).
    pub fn write_messages(&self, plan: &mut Vec<Op>, id: &str, messages: &[Message]) -> Result<()> {
        plan.push(write(self.messages_path(id), encode_jsonl(messages)?));
        Ok(())
    }

    /// The ids prune dropped.
    pub fn pruned(&self, id: &str) -> Result<BTreeSet<String>> {
        let path = self.pruned_path(id);
        match self.files.read(&path)? {
            None => Ok(BTreeSet::new()),
            Some(bytes) => super::from_json::<PrunedFile>(bytes).map(|f| f.ids).map_err(|e| corrupt(&path, e)),
        }
    }

    /// Replaces the ids prune dropped.
    pub fn write_pruned(&self, plan: &mut Vec<Op>, id: &str, ids: &BTreeSet<String>) -> Result<()> {
        plan.push(write(self.pruned_path(id), to_json(&PrunedFile { v: 1, ids: ids.clone() })?));
        Ok(())
    }

    /// The metas of the artifacts, by creation; a meta file that does not parse is
    /// skipped and reported.
    pub fn artifacts(&self, id: &str) -> Result<Vec<ArtifactMeta>> {
        let mut out = Vec::new();
        for art in self.files.listed(&self.artifacts_dir(id))?.iter().filter_map(|n| meta_of(n)) {
            let path = self.artifact_meta_path(id, art);
            if let Some(bytes) = self.files.read(&path)? {
                match super::from_json::<ArtifactMeta>(bytes) {
                    Ok(meta) if meta.id == art => out.push(meta),
                    _ => self.report("artifact meta does not parse; skipped".into(), Some(&path)),
                }
            }
        }
        sort_by(&mut out, |a, b| (&a.created_at, &a.id).cmp(&(&b.created_at, &b.id)));
        Ok(out)
    }

    /// One artifact's meta, or `None`.
    pub fn artifact_meta(&self, id: &str, art: &str) -> Result<Option<ArtifactMeta>> {
        let path = self.artifact_meta_path(id, art);
        match self.files.read(&path)? {
            None => Ok(None),
            Some(bytes) => super::from_json(bytes).map(Some).map_err(|e| corrupt(&path, e)),
        }
    }

    /// One artifact's content, or `None`.
    pub fn artifact_content(&self, id: &str, art: &str) -> Result<Option<Vec<u8>>> {
        Ok(self.files.read(&self.artifact_path(id, art))?.map(<[u8]>::to_vec))
    }

    /// The ids of the artifacts whose content file is there (the listing, no reads).
    pub fn artifact_contents(&self, id: &str) -> Result<BTreeSet<String>> {
        let names = self.files.listed(&self.artifacts_dir(id))?;
        Ok(set_of(names.iter().filter(|n| !n.ends_with('/') && !n.ends_with(META_SUFFIX)).cloned()))
    }

    /// Writes an artifact: the content first, then its meta (whose presence means the
    /// artifact is whole). `exclusive` refuses to replace an existing content file.
    pub fn write_artifact(
        &self,
        plan: &mut Vec<Op>,
        id: &str,
        meta: &ArtifactMeta,
        content: &[u8],
        exclusive: bool,
    ) -> Result<()> {
        plan.push(Op::Write { path: self.artifact_path(id, &meta.id), bytes: content.to_vec(), exclusive });
        plan.push(write(self.artifact_meta_path(id, &meta.id), to_json(meta)?));
        Ok(())
    }

    /// Removes every file of a conversation and its folders (the artifacts listed).
    pub fn remove_conversation(&self, plan: &mut Vec<Op>, id: &str) -> Result<()> {
        let dir = self.artifacts_dir(id);
        for name in self.files.listed(&dir)? {
            if !name.ends_with('/') {
                plan.push(Op::Remove(join(&dir, name)));
            }
        }
        plan.push(Op::RemoveDir(dir));
        // metadata.json last: while it exists the conversation does.
        for path in [self.messages_path(id), self.pruned_path(id), self.metadata_path(id)] {
            plan.push(Op::Remove(path));
        }
        plan.push(Op::RemoveDir(self.dir(id)));
        Ok(())
    }

    /// The index, newest `updatedAt` first; rebuilt from the metadata files when it is
    /// missing or does not parse.
    pub fn index(&self) -> Result<Vec<ConversationMetadata>> {
        let path = self.index_path();
        let parsed = match self.files.read(&path)? {
            Some(bytes) => match super::from_json::<IndexFile>(bytes) {
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
            None => self.rebuild_index()?,
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
    fn rebuild_index(&self) -> Result<Vec<ConversationMetadata>> {
        let mut list = Vec::new();
        for id in conversation_dirs(self.files.listed(self.base)?) {
            match self.metadata(id) {
                Ok(Some(meta)) => list.push(meta),
                Ok(None) => {}
                Err(e) => self.report(format!("skipped a conversation: {e}"), Some(&self.dir(id))),
            }
        }
        Ok(list)
    }

    fn write_index(&self, plan: &mut Vec<Op>, mut list: Vec<ConversationMetadata>) -> Result<()> {
        sort_newest_first(&mut list);
        plan.push(write(self.index_path(), to_json(&IndexFile { v: 1, conversations: list })?));
        Ok(())
    }

    /// Puts `meta` into the index (replacing its id's entry).
    pub fn index_upsert(&self, plan: &mut Vec<Op>, meta: &ConversationMetadata) -> Result<()> {
        let mut list = self.index()?;
        list.retain(|m| m.id != meta.id);
        list.push(meta.clone());
        self.write_index(plan, list)
    }

    /// Takes `id` out of the index.
    pub fn index_remove(&self, plan: &mut Vec<Op>, id: &str) -> Result<()> {
        let mut list = self.index()?;
        let before = list.len();
        list.retain(|m| m.id != id);
        if list.len() != before {
            self.write_index(plan, list)?;
        }
        Ok(())
    }
}

/// Read nothing yet: for the paths, which need no files.
pub(crate) static NOTHING: Files = Files::new();

fn sort_newest_first(list: &mut [ConversationMetadata]) {
    sort_by(list, |a, b| (&b.updated_at, &b.id).cmp(&(&a.updated_at, &a.id)));
}
