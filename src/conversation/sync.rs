//! Local-first sync: every change lands in local storage first, after an item naming
//! the conversation has been written to the persisted queue
//! (`conversations/sync-queue/{item}.json`, one file per change, created exclusively so
//! that processes sharing the store never overwrite each other's items). `sync()` pushes
//! each queued conversation to the remote and pulls back what the remote has:
//!
//! - messages merge by id: the union of both sides, ordered by timestamp then id, minus
//!   the ids either side pruned;
//! - metadata is last-write-wins by `updatedAt` (a tie keeps the local one);
//! - artifacts are immutable: each side gets the ones it lacks;
//! - a deleted conversation is deleted on the remote.
//!
//! A change and its item are written in one exclusive section of the store (see
//! [`ConversationStore::exclusive`]); `sync()` takes a conversation's items and reads its
//! local state in one such section too, so the state it pushes holds every change whose
//! item it took, whatever runs between (another task, another process). It removes only
//! the items it took; an item written meanwhile stays for the next sync.
//!
//! An item is removed only once its conversation was pushed; a failure keeps it, with
//! its attempts, the error and the time of the next attempt (exponential backoff on the
//! store's clock), and is reported. Nothing is dropped silently: an artifact whose local
//! content is missing fails the push (`NOT_FOUND`) before anything is written.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use super::artifacts::ArtifactMeta;
use super::files::{Action, Want};
use super::messages::{merge, Message};
use super::replica::{corrupt, to_json, ConversationMetadata, Replica, View};
use super::ConversationStore;
use crate::error::{Error, ErrorKind, Result};
use crate::paths::join;
use crate::sort::set_of;
use crate::storage::{Storage, WriteOptions};

/// Backoff between attempts of a failed item: `base_ms × 2^(attempts-1)`, at most `max_ms`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backoff {
    /// Delay after the first failure (default 1 s).
    pub base_ms: u64,
    /// Longest delay (default 5 min).
    pub max_ms: u64,
}

impl Default for Backoff {
    fn default() -> Self {
        Backoff { base_ms: 1000, max_ms: 300_000 }
    }
}

impl Backoff {
    /// The delay after `attempts` failures.
    pub fn delay(&self, attempts: u32) -> u64 {
        let factor = 1u64.checked_shl(attempts.saturating_sub(1).min(62)).unwrap_or(u64::MAX);
        self.base_ms.saturating_mul(factor).min(self.max_ms)
    }
}

/// What a queue item asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Op {
    /// Push the conversation's state.
    Update,
    /// Delete the conversation on the remote.
    Delete,
}

/// One persisted queue item.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct QueueItem {
    /// The conversation changed.
    pub conversation_id: String,
    /// What to do.
    pub op: Op,
    /// When the change was made (ms since the epoch).
    pub created_ms: i64,
    /// Failed attempts so far.
    #[serde(default)]
    pub attempts: u32,
    /// Not before this time (ms since the epoch).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_attempt_ms: Option<i64>,
    /// The last failure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
}

/// A failed item, as `sync()` reports it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SyncFailure {
    /// The item's file name (or `remote index` for a failed pull).
    pub item: String,
    /// The conversation, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conversation_id: Option<String>,
    /// The error's code (`STORAGE`, `NOT_FOUND`, `CORRUPT_RECORD`, …).
    pub code: &'static str,
    /// What went wrong.
    pub error: String,
    /// Attempts so far.
    pub attempts: u32,
}

/// What `sync()` did.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct SyncReport {
    /// Queue items pushed (and removed from the queue).
    pub pushed: usize,
    /// Conversations changed locally by what the remote had.
    pub pulled: usize,
    /// Items that failed this time (they stay queued).
    pub failed: Vec<SyncFailure>,
    /// Items still queued (failed ones and ones waiting for their backoff).
    pub pending: usize,
}

/// The queue's state.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct SyncStatus {
    /// Items queued.
    pub pending: usize,
    /// Queued items that failed at least once.
    pub failed: usize,
}

pub(crate) type Listed = Vec<(String, Result<QueueItem>)>;

/// Queue items by file name, as far as this sync has read them.
type Known = BTreeMap<String, Result<QueueItem>>;

/// A conversation's local state, as one push sends it.
struct LocalState {
    meta: ConversationMetadata,
    messages: Vec<Message>,
    artifacts: Vec<ArtifactMeta>,
    pruned: BTreeSet<String>,
}

/// What a sync takes of one conversation.
enum Taken {
    /// No item is left (another sync took them).
    Nothing,
    /// Every item waits for its backoff.
    Waiting,
    /// The items to remove once pushed, and the state they describe (`None`: the
    /// conversation was deleted).
    Push(Vec<(String, QueueItem)>, Option<Box<LocalState>>),
}

/// `NOT_FOUND` for an artifact whose meta is there but not its content.
fn missing_content<S: Storage>(local: &Replica<'_, S>, conv: &str, art: &str) -> Error {
    Error::new(ErrorKind::NotFound, format!("the content of artifact {art} is missing; it was not pushed"))
        .with_path(local.layout().artifact_path(conv, art))
}

/// Last write wins: the later `updatedAt`; on a tie the larger title, so both sides pick
/// the same one.
fn lww(local: &ConversationMetadata, remote: Option<&ConversationMetadata>) -> ConversationMetadata {
    match remote {
        Some(r) if (&r.updated_at, &r.title) > (&local.updated_at, &local.title) => {
            let mut m = r.clone();
            m.created_at = m.created_at.min(local.created_at.clone());
            m
        }
        Some(r) => {
            let mut m = local.clone();
            m.created_at = m.created_at.min(r.created_at.clone());
            m
        }
        None => local.clone(),
    }
}

/// A queue item's file, parsed and checked.
fn parse_item(path: &str, bytes: &[u8]) -> Result<QueueItem> {
    let item = serde_json::from_slice::<QueueItem>(bytes).map_err(|e| corrupt(path, e))?;
    super::ids::validate_id(&item.conversation_id, "conversation id")?;
    Ok(item)
}

/// The items of the queue (read with [`Want::queue`]), by file name.
pub(crate) fn queue_items(view: &View<'_>) -> Result<Listed> {
    let dir = view.queue_dir();
    let mut out = Vec::new();
    for name in view.files.listed(&dir)?.iter().filter(|n| n.ends_with(".json")) {
        let path = join(&dir, name);
        if let Some(bytes) = view.files.read(&path)? {
            out.push((name.clone(), parse_item(&path, bytes)));
        }
    }
    Ok(out)
}

/// How many items are queued, and how many of them have failed.
pub(crate) fn sync_status(items: &Listed) -> SyncStatus {
    let failed = items.iter().filter(|(_, i)| i.as_ref().map_or(true, |i| i.attempts > 0)).count();
    SyncStatus { pending: items.len(), failed }
}

impl<L: Storage, R: Storage> ConversationStore<L, R> {
    /// Queues a change of `conversation_id` (before the change itself, so a change that
    /// lands always has its item) in the file `name` of the queue, created exclusively
    /// (a taken name is drawn again). Does nothing without a remote.
    pub(crate) fn enqueue(
        &self,
        plan: &mut Vec<Action>,
        conversation_id: &str,
        op: Op,
        now: i64,
        name: &str,
    ) -> Result<()> {
        if self.remote.is_none() {
            return Ok(());
        }
        let item = QueueItem {
            conversation_id: conversation_id.to_owned(),
            op,
            created_ms: now,
            attempts: 0,
            next_attempt_ms: None,
            last_error: None,
        };
        let path = join(&self.local().layout().queue_dir(), name);
        plan.push(Action::Write { path, bytes: to_json(&item)?.into_bytes(), exclusive: true });
        Ok(())
    }

    /// A fresh name of a queue item made at `now`.
    pub(crate) fn queue_name(&self, now: i64) -> Result<String> {
        Ok(format!("{:013}-{}.json", now.max(0), self.random_chars(12)?))
    }

    async fn queue(&self) -> Result<Listed> {
        let local = self.local();
        let files = local.load(&Want { queue: true, ..Want::default() }).await?;
        queue_items(&local.view(&files))
    }

    /// The item in `dir/name`: `None` for what is not an item file (or is gone), an
    /// error inside for one that does not parse.
    async fn read_item(&self, dir: &str, name: &str) -> Result<Option<Result<QueueItem>>> {
        if !name.ends_with(".json") {
            return Ok(None);
        }
        let path = join(dir, name);
        Ok(self.local.read(&path).await?.map(|bytes| parse_item(&path, &bytes)))
    }

    /// Run under [`ConversationStore::exclusive`]: the queue items of `conv` (reading
    /// those written since `known` was filled, forgetting those gone) and, unless they
    /// all wait for their backoff, the local state of `conv`. One exclusive section, so
    /// every change whose item is taken is in the state.
    async fn take(&self, conv: &str, known: &mut Known, now: i64) -> Result<Taken> {
        let dir = self.local().layout().queue_dir();
        let names = set_of(self.local.list(&dir).await?);
        // Rebuilt in one walk of both (each in name order) rather than `retain`ed: no
        // removal from a map (less code in the wasm module).
        let mut before = std::mem::take(known).into_iter().peekable();
        for name in names {
            while before.next_if(|(old, _)| *old < name).is_some() {}
            let item = match before.next_if(|(old, _)| *old == name) {
                Some((_, item)) => Some(item),
                None => self.read_item(&dir, &name).await?,
            };
            if let Some(item) = item {
                known.insert(name, item);
            }
        }
        let items: Vec<(String, QueueItem)> = known
            .iter()
            .filter_map(|(name, item)| match item {
                Ok(item) if item.conversation_id == conv => Some((name.clone(), item.clone())),
                _ => None,
            })
            .collect();
        if items.is_empty() {
            return Ok(Taken::Nothing);
        }
        if items.iter().all(|(_, i)| i.next_attempt_ms.is_some_and(|t| t > now)) {
            return Ok(Taken::Waiting);
        }
        let local = self.local();
        let state = match local.metadata(conv).await? {
            None => None,
            Some(meta) => Some(Box::new(LocalState {
                meta,
                messages: local.messages(conv).await?.messages,
                artifacts: local.artifacts(conv).await?,
                pruned: local.pruned(conv).await?,
            })),
        };
        Ok(Taken::Push(items, state))
    }

    /// Pushes the queued changes to the remote and pulls what the remote has that is
    /// newer; see the module docs. Fails only when there is no remote or the local
    /// queue cannot be read: remote failures are reported in the result.
    pub async fn sync(&self) -> Result<SyncReport> {
        let Some(remote) = self.remote_replica() else {
            return Err(Error::invalid("this store has no remote to sync with"));
        };
        let _one_at_a_time = self.sync_lock.lock().await;
        let now = self.now_ms();
        let dir = self.local().layout().queue_dir();
        let mut report = SyncReport::default();
        // Which conversations have items; `take` reads them again under the lock.
        let mut known = Known::new();
        known.extend(self.queue().await?);
        let convs = set_of(known.values().filter_map(|i| i.as_ref().ok()).map(|i| i.conversation_id.clone()));
        let mut waiting: BTreeSet<String> = BTreeSet::new();
        for conv in &convs {
            let (items, state) = match self.exclusive(self.take(conv, &mut known, now)).await? {
                Taken::Nothing => continue,
                Taken::Waiting => {
                    waiting.insert(conv.clone());
                    continue;
                }
                Taken::Push(items, state) => (items, state),
            };
            match self.push(&remote, conv, state).await {
                Ok(pulled) => {
                    for (name, _) in &items {
                        self.local.remove(&join(&dir, name)).await?;
                    }
                    report.pushed += items.len();
                    report.pulled += usize::from(pulled);
                }
                Err(e) => {
                    waiting.insert(conv.clone());
                    self.debug(format!("sync of conversation {conv} failed: {e}"), None);
                    for (name, item) in items {
                        let mut item = item.clone();
                        item.attempts += 1;
                        item.last_error = Some(e.to_string());
                        item.next_attempt_ms = Some(now.saturating_add(self.options.retry.delay(item.attempts) as i64));
                        self.local
                            .write(&join(&dir, &name), to_json(&item)?.as_bytes(), WriteOptions::default())
                            .await?;
                        report.failed.push(SyncFailure {
                            item: name,
                            conversation_id: Some(conv.clone()),
                            code: e.code(),
                            error: e.to_string(),
                            attempts: item.attempts,
                        });
                    }
                }
            }
        }
        for (name, item) in known {
            if let Err(e) = item {
                report.failed.push(SyncFailure {
                    item: name,
                    conversation_id: None,
                    code: e.code(),
                    error: format!("unreadable queue item, kept: {e}"),
                    attempts: 0,
                });
            }
        }
        match self.pull_newer(&remote, &waiting).await {
            Ok(n) => report.pulled += n,
            Err(e) => report.failed.push(SyncFailure {
                item: "remote index".into(),
                conversation_id: None,
                code: e.code(),
                error: e.to_string(),
                attempts: 1,
            }),
        }
        report.pending = self.queue().await?.len();
        Ok(report)
    }

    /// Pushes one conversation's local state (or, for `None`, its deletion) and takes in
    /// what the remote had; true when that changed the local copy.
    async fn push(&self, remote: &Replica<'_, R>, conv: &str, state: Option<Box<LocalState>>) -> Result<bool> {
        let local = self.local();
        let Some(state) = state else {
            let lock = join(&remote.base, ".lock");
            return remote
                .storage
                .locked(&lock, async {
                    remote.remove_conversation(conv).await?;
                    remote.index_remove(conv).await
                })
                .await?
                .map(|()| false);
        };
        let LocalState { meta: lmeta, messages: lmsgs, artifacts: larts, pruned: lpruned } = *state;
        let lock = join(&remote.base, ".lock");
        let pushed = remote
            .storage
            .locked(&lock, async {
                let rmeta = remote.metadata(conv).await?;
                let rmsgs = remote.messages(conv).await?.messages;
                let rarts = remote.artifacts(conv).await?;
                let rpruned = remote.pruned(conv).await?;
                let pruned = set_of(lpruned.union(&rpruned).cloned());
                let merged = merge(&lmsgs, &rmsgs, &pruned);
                // Owned ids: the module's one kind of set (a set of `&str` is code of its own).
                let have = set_of(rarts.iter().map(|a| a.id.clone()));
                let missing: Vec<&ArtifactMeta> = larts.iter().filter(|a| !have.contains(&a.id)).collect();
                // Every content is there before anything is written: a missing one fails
                // the push rather than reach the remote as an empty artifact.
                let contents = local.artifact_contents(conv).await?;
                if let Some(a) = missing.iter().find(|a| !contents.contains(&a.id)) {
                    return Err(missing_content(&local, conv, &a.id));
                }
                let mut art_count = rarts.len();
                for a in missing {
                    let content = local
                        .artifact_content(conv, &a.id)
                        .await?
                        .ok_or_else(|| missing_content(&local, conv, &a.id))?;
                    remote.write_artifact(conv, a, &content, false).await?;
                    art_count += 1;
                }
                if pruned != rpruned {
                    remote.write_pruned(conv, &pruned).await?;
                }
                if merged != rmsgs {
                    remote.write_messages(conv, &merged).await?;
                }
                let mut meta = lww(&lmeta, rmeta.as_ref());
                meta.message_count = merged.len() as u64;
                meta.artifact_count = art_count as u64;
                if rmeta.as_ref() != Some(&meta) {
                    remote.write_metadata(&meta).await?;
                    remote.index_upsert(&meta).await?;
                }
                Ok::<_, Error>((meta, merged, pruned, rarts))
            })
            .await??;
        let (meta, merged, pruned, rarts) = pushed;
        self.absorb(remote, &meta, &merged, &pruned, &rarts).await
    }

    /// Pulls the conversations whose remote metadata differs from here (or that only the
    /// remote has), except
    /// those with changes still queued; returns how many changed locally.
    async fn pull_newer(&self, remote: &Replica<'_, R>, skip: &BTreeSet<String>) -> Result<usize> {
        let mut pulled = 0;
        let queued = set_of(self.queue().await?.into_iter().filter_map(|(_, i)| i.ok().map(|i| i.conversation_id)));
        for rmeta in remote.index().await? {
            if skip.contains(&rmeta.id) || queued.contains(&rmeta.id) {
                continue;
            }
            // Any difference, not only a later updatedAt: two sides can change within
            // one clock tick, or with skewed clocks.
            if self.local().metadata(&rmeta.id).await?.as_ref() == Some(&rmeta) {
                continue;
            }
            let meta = match remote.metadata(&rmeta.id).await {
                Ok(Some(meta)) => meta,
                Ok(None) => continue,
                Err(e) if e.kind() == crate::ErrorKind::CorruptRecord => {
                    self.debug(format!("skipped the remote's conversation {}: {e}", rmeta.id), e.path());
                    continue;
                }
                Err(e) => return Err(e),
            };
            let msgs = remote.messages(&meta.id).await?.messages;
            let pruned = remote.pruned(&meta.id).await?;
            let arts = remote.artifacts(&meta.id).await?;
            if self.absorb(remote, &meta, &msgs, &pruned, &arts).await? {
                pulled += 1;
            }
        }
        Ok(pulled)
    }

    /// Merges a remote state of a conversation into the local copy (creating it when
    /// missing); true when the local copy changed.
    async fn absorb(
        &self,
        remote: &Replica<'_, R>,
        rmeta: &ConversationMetadata,
        rmsgs: &[Message],
        rpruned: &BTreeSet<String>,
        rarts: &[ArtifactMeta],
    ) -> Result<bool> {
        let conv = rmeta.id.as_str();
        let local = self.local();
        let mut changed = false;
        let have = set_of(local.artifacts(conv).await?.into_iter().map(|a| a.id));
        for a in rarts.iter().filter(|a| !have.contains(&a.id)) {
            let Some(content) = remote.artifact_content(conv, &a.id).await? else { continue };
            local.write_artifact(conv, a, &content, false).await?;
            changed = true;
        }
        self.exclusive(async {
            let current = local.metadata(conv).await?;
            let cur = local.messages(conv).await?.messages;
            let cur_pruned = local.pruned(conv).await?;
            let pruned = set_of(cur_pruned.union(rpruned).cloned());
            let merged = merge(&cur, rmsgs, &pruned);
            if merged != cur {
                local.write_messages(conv, &merged).await?;
                self.set_tail(conv, super::latest(&merged));
                changed = true;
            }
            if pruned != cur_pruned {
                local.write_pruned(conv, &pruned).await?;
            }
            let mut meta = match &current {
                Some(l) => lww(l, Some(rmeta)),
                None => rmeta.clone(),
            };
            meta.message_count = merged.len() as u64;
            meta.artifact_count = local.artifacts(conv).await?.len() as u64;
            if current.as_ref() != Some(&meta) {
                local.write_metadata(&meta).await?;
                local.index_upsert(&meta).await?;
                changed = true;
            }
            Ok(changed)
        })
        .await
    }
}
