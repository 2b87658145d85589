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
//! A change and its item are written in one exclusive section of the store (under the
//! writers' lock, as the store's only writer: see `ops.rs`); `sync()` takes a
//! conversation's items and reads its local state in one such section too, so the state
//! it pushes holds every change whose item it took, whatever runs between (another task,
//! another process). It removes only the items it took; an item written meanwhile stays
//! for the next sync. A sync runs as a plan ([`SyncPlan`]).
//!
//! An item is removed only once its conversation was pushed; a failure keeps it, with
//! its attempts, the error and the time of the next attempt (exponential backoff on the
//! store's clock), and is reported. Nothing is dropped silently: an artifact whose local
//! content is missing fails the push (`NOT_FOUND`) before anything is written.

mod absorb;
mod plan;
mod pull;
mod push;

pub use plan::SyncPlan;

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use super::artifacts::ArtifactMeta;

use super::files::{Files, Side, Want};
use super::messages::Message;
use super::replica::{corrupt, to_json, ConversationMetadata, View};
use super::Conversations;
use crate::error::{Error, ErrorKind, Result};
use crate::paths::join;
use crate::plan::Op;

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
pub enum QueueOp {
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
    pub op: QueueOp,
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

/// A conversation's local state, as one push sends it.
struct LocalState {
    meta: ConversationMetadata,
    messages: Vec<Message>,
    artifacts: Vec<ArtifactMeta>,
    pruned: BTreeSet<String>,
}

/// `NOT_FOUND` for an artifact whose meta is there but not its content.
fn missing_content(local: &View<'_>, conv: &str, art: &str) -> Error {
    Error::new(ErrorKind::NotFound, format!("the content of artifact {art} is missing; it was not pushed"))
        .with_path(local.artifact_path(conv, art))
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
    let item = super::from_json::<QueueItem>(bytes).map_err(|e| corrupt(path, e))?;
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

/// What a sync asks its driver to do next ([`Conversations::sync_step`]).
#[derive(Debug)]
pub enum Step {
    /// Read these on a side, into [`SyncRun::files`].
    Read(Side, Vec<Op>),
    /// Make these changes on a side, in order.
    Change(Side, Vec<Op>),
    /// Take the writers' lock of a side (locally, also as the store's only writer).
    Lock(Side),
    /// Release it.
    Unlock(Side),
    /// The sync is over.
    Done(SyncReport),
}

/// Where a sync is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum At {
    /// Reading the queue: which conversations have items.
    Start,
    /// The next conversation to push.
    NextConv,
    /// Locally locked: its items.
    Take,
    /// Locally locked: its local state.
    TakeState,
    /// Unlocked: lock the remote.
    PushLock,
    /// Remotely locked: the remote's copy.
    PushRead,
    /// The contents of the artifacts the remote lacks.
    PushContents,
    /// The remote changed: unlock it.
    Pushed,
    /// The local copy takes in the merged state: the artifacts it lacks.
    Absorb,
    /// Their contents read on the remote: write them.
    AbsorbContents,
    /// Locally locked: the local copy.
    AbsorbRead,
    /// The local copy changed: unlock.
    Absorbed,
    /// Unlocked: done with the conversation.
    AbsorbEnd,
    /// A push failed: record it in its items.
    PushFailed,
    /// The queue's unreadable items.
    Unreadable,
    /// The remote's index.
    Pull,
    /// The next conversation the remote may have newer.
    PullNext,
    /// Its local metadata.
    PullLocal,
    /// Its remote copy.
    PullRemote,
    /// The queue that is left.
    Final,
}

/// Why errors end where they do: before and between pushes a failure is the sync's;
/// within a push it is the conversation's (kept in its items); within the pull it is
/// reported and ends the pull.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Queue,
    Push,
    Pull,
}

/// A remote state of a conversation, to merge into the local copy.
struct Merged {
    meta: ConversationMetadata,
    messages: Vec<Message>,
    pruned: BTreeSet<String>,
    artifacts: Vec<ArtifactMeta>,
}

/// A sync under way: see the module docs. Driven by [`Conversations::sync_step`].
pub struct SyncRun {
    at: At,
    phase: Phase,
    now: i64,
    /// What was read locally (a queue item is read once a sync).
    pub(super) local: Files,
    /// What was read on the remote.
    pub(super) remote: Files,
    report: SyncReport,
    convs: Vec<String>,
    next: usize,
    waiting: BTreeSet<String>,
    conv: String,
    items: Vec<(String, QueueItem)>,
    state: Option<Box<LocalState>>,
    merged: Option<Box<Merged>>,
    changed: bool,
    failure: Option<Error>,
    /// The lock asked for by the last step, and the lock held.
    asked: Option<Side>,
    held: Option<Side>,
    pull: Vec<ConversationMetadata>,
}

impl SyncRun {
    /// Where the answers of a [`Step::Read`] on `side` go.
    pub fn files(&mut self, side: Side) -> &mut Files {
        match side {
            Side::Local => &mut self.local,
            Side::Remote => &mut self.remote,
        }
    }
}

fn conv_want(conv: &str) -> Want {
    Want { conv: Some(conv.to_owned()), meta: true, messages: true, pruned: true, artifacts: true, ..Want::default() }
}

impl Conversations {
    /// Queues a change of `conversation_id` (before the change itself, so a change that
    /// lands always has its item) in the file `name` of the queue, created exclusively
    /// (a taken name is drawn again). Does nothing without a remote.
    pub(crate) fn enqueue(
        &self,
        plan: &mut Vec<Op>,
        conversation_id: &str,
        op: QueueOp,
        now: i64,
        name: &str,
    ) -> Result<()> {
        if !self.has_remote {
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
        let path = join(&self.layout(Side::Local).queue_dir(), name);
        plan.push(Op::Write { path, bytes: to_json(&item)?.into_bytes(), exclusive: true });
        Ok(())
    }

    /// A fresh name of a queue item made at `now`.
    pub(crate) fn queue_name(&self, now: i64) -> Result<String> {
        Ok(format!("{:013}-{}.json", now.max(0), self.random_chars(12)?))
    }

    /// A sync, started now; `INVALID_ARGUMENT` without a remote.
    pub fn begin_sync(&self) -> Result<SyncRun> {
        if !self.has_remote {
            return Err(Error::invalid("this store has no remote to sync with"));
        }
        Ok(SyncRun {
            at: At::Start,
            phase: Phase::Queue,
            now: self.now_ms(),
            local: Files::new(),
            remote: Files::new(),
            report: SyncReport::default(),
            convs: Vec::new(),
            next: 0,
            waiting: BTreeSet::new(),
            conv: String::new(),
            items: Vec::new(),
            state: None,
            merged: None,
            changed: false,
            failure: None,
            asked: None,
            held: None,
            pull: Vec::new(),
        })
    }

    /// The next step of `run`, given how the last one went (its error typed by the driver).
    pub fn sync_step(&self, run: &mut SyncRun, last: Result<()>) -> Result<Step> {
        // A lock asked for is held once taken.
        if let Some(side) = run.asked.take() {
            if last.is_ok() {
                run.held = Some(side);
            }
        }
        match last.and_then(|()| self.advance(run)) {
            Ok(step) => {
                match step {
                    Step::Lock(side) => run.asked = Some(side),
                    Step::Unlock(_) => run.held = None,
                    _ => {}
                }
                Ok(step)
            }
            Err(e) => {
                if run.phase == Phase::Queue {
                    return Err(e);
                }
                let side = run.held.take();
                if run.phase == Phase::Push {
                    run.failure = Some(e);
                    run.at = At::PushFailed;
                } else {
                    run.report.failed.push(SyncFailure {
                        item: "remote index".into(),
                        conversation_id: None,
                        code: e.code(),
                        error: e.to_string(),
                        attempts: 1,
                    });
                    run.at = At::Final;
                }
                run.phase = Phase::Queue;
                match side {
                    // The next step runs once the lock is released (how that went does not matter).
                    Some(side) => Ok(Step::Unlock(side)),
                    None => self.sync_step(run, Ok(())),
                }
            }
        }
    }

    /// The reads `want` still needs on `side`, as a step (none: `None`).
    fn load(&self, run: &SyncRun, side: Side, want: &Want) -> Option<Step> {
        let files = match side {
            Side::Local => &run.local,
            Side::Remote => &run.remote,
        };
        let needs = self.view(files, side).needs(want);
        (!needs.is_empty()).then_some(Step::Read(side, needs))
    }

    /// Runs `run` from where it is to its next step: each state of [`At`] is a method that
    /// answers a step, or moves `run` on and lets the next state run (`None`).
    fn advance(&self, run: &mut SyncRun) -> Result<Step> {
        loop {
            let step = match run.at {
                At::Start => self.start(run)?,
                At::NextConv => self.next_conv(run)?,
                At::Take => self.take(run)?,
                At::TakeState => self.take_state(run)?,
                At::PushLock => self.push_lock(run)?,
                At::PushRead => self.push_read(run)?,
                At::PushContents => self.push_contents(run)?,
                At::Pushed => self.pushed(run)?,
                At::Absorb => self.absorb(run)?,
                At::AbsorbContents => self.absorb_contents(run)?,
                At::AbsorbRead => self.absorb_read(run)?,
                At::Absorbed => self.absorbed(run)?,
                At::AbsorbEnd => self.absorb_end(run)?,
                At::PushFailed => self.push_failed(run)?,
                At::Unreadable => self.unreadable(run)?,
                At::Pull => self.pull(run)?,
                At::PullNext => self.pull_next(run)?,
                At::PullLocal => self.pull_local(run)?,
                At::PullRemote => self.pull_remote(run)?,
                At::Final => self.finish_sync(run)?,
            };
            if let Some(step) = step {
                return Ok(step);
            }
        }
    }
}
