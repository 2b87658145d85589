//! The manager's workflows that need I/O after their first step, as synchronous steps
//! (SPEC §0): a save's follow-up (a spill over the memory budget, retention, the session
//! manifest), `flush`, `close`, `open` of a session, `endSession`, `rebuildIndex` and
//! `reconcile`.
//!
//! A [`Job`] is a queue of stages; [`ContextManager::job_step`] runs them in order, each
//! deciding what to read, write or remove ([`Op`]), or which lock to take, and consuming
//! the outcomes. A job runs as a [`Plan`] ([`JobPlan`]): the JavaScript driver runs it
//! as any other (`src/wasm/plans.rs`), and natively [`ContextManager::drive`] does.

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};

use super::persist::{Content, Opening, SegmentWrite, Stored};
use super::segments::segments_dir;
use super::{content_terms, manifest_words, ContextManager, Entry, MANIFEST_EVERY_MS, MANIFEST_EVERY_RECORDS};
use crate::error::{Error, ErrorKind, Result};
use crate::lifecycle::Pass;
use crate::paths;
use crate::plan::{self, Op, Outcome, Outcomes, Plan, Step};
use crate::record::{iso_timestamp, parse_record, push_json_str, RecordMeta};
use crate::retention::Owned;
use crate::select::segment::Segment;
use crate::select::Terms;
use crate::session::{self, Manifest, ManifestEntry, RecordFiles, RemoveSession, MANIFEST};
use crate::storage::Storage;

/// A workflow between its steps. It holds the operation's pass through the gate:
/// `close()` waits for it.
pub struct Job {
    _pass: Option<Pass>,
    /// What is left to do, in order; the first is under way once the job has started.
    stages: VecDeque<Stage>,
    started: bool,
    /// A save's follow-up: its failures go to `onDebug` (the record is saved). Otherwise
    /// the first failure is the job's result.
    quiet: bool,
    /// A failure ends the job (its later stages do not run).
    fatal: bool,
    /// What its end does besides, whether it failed or not.
    end: End,
    error: Option<Error>,
    /// The filepaths it indexed from their files: a rebuild's records, a reconcile's
    /// adoptions (what the job resolves to; empty for the others).
    indexed: Vec<String>,
}

/// What the end of a job does besides.
#[derive(Clone, Copy, PartialEq, Eq)]
enum End {
    Nothing,
    /// `close()`'s write-out: the manager closed (or open again, on a failure).
    Close,
    /// `clear()` in a session: the pointers cleared.
    ClearPointers,
}

/// A [`Job`] of the manager `M` points at (a reference natively, an `Rc` in wasm) as a [`Plan`].
pub struct JobPlan<M> {
    /// Whose job.
    pub manager: M,
    /// The job.
    pub job: Job,
}

impl<M: std::ops::Deref<Target = ContextManager<S>>, S: Storage> Plan for JobPlan<M> {
    /// The filepaths the job indexed ([`Job::rebuild`], [`Job::reconcile`]).
    type Output = Vec<String>;

    fn step(&mut self, outcomes: Outcomes) -> Step<Vec<String>> {
        self.manager.job_step(&mut self.job, outcomes)
    }

    /// The lock failed (taking or releasing it): the stage under way knows where it is.
    fn lock_failed(&mut self, e: Error) -> Step<Vec<String>> {
        self.manager.job_step(&mut self.job, vec![Err(e)])
    }
}

/// What a stage asks for next.
pub(super) enum Next {
    /// Nothing: the stage is done.
    Nothing,
    /// Run these ops.
    Run(Vec<Op>),
    /// Take the named lock (the stage's next step gets no outcome, or the lock's failure).
    Lock(String),
    /// Release it (the next step gets no outcome, or the lock's failure).
    Unlock,
}

impl From<Vec<Op>> for Next {
    fn from(ops: Vec<Op>) -> Next {
        if ops.is_empty() {
            Next::Nothing
        } else {
            Next::Run(ops)
        }
    }
}

/// One part of a job.
enum Stage {
    /// Writing out in-memory records: those past the memory budget, or (`all`) every one.
    Spill { all: bool, writing: Vec<String>, removing: bool },
    /// Evicting the owned records past the retention caps (never `keep`).
    Evict { keep: Option<String>, victims: Vec<Victim>, phase: EvictPhase },
    /// Writing the session manifest.
    Manifest(ManifestWrite),
    /// Resuming the session: its folder listed, its manifest read, the records it does
    /// not list read, the pointers restored.
    Resume(Box<Resuming>),
    /// Ending the session: under its lock, its records, manifest and empty folders removed.
    EndSession { phase: EndPhase, removal: Option<RemoveSession>, result: Result<()> },
    /// Rebuilding the index from the record files: listed, read, the pointers (and a
    /// session's manifest) replaced; a torn record of a session removed.
    Rebuild(Box<Rebuilding>),
    /// Adopting the session's record files that neither this manager nor the manifest on
    /// disk lists: listed, the manifest read, the unlisted records read and indexed.
    Reconcile(Box<Reconciling>),
    /// Writing an index segment of the records indexed since the last one; merging.
    Segment(Box<SegmentWrite>),
    /// Opening the context dir outside a session: its pointers restored from its index
    /// segments and the records no segment holds.
    Open(Box<Opening>),
}

/// A record file read whole for a manifest (see `ContextManager::read_entry`).
struct ReadEntry {
    full: String,
    meta: RecordMeta,
    size: usize,
    entry: ManifestEntry,
    content: Terms,
}

#[derive(Default)]
struct Resuming {
    phase: ResumePhase,
    /// The listing of the folder's record files, while it runs.
    listing: Option<RecordFiles>,
    /// What reading the manifest gave.
    manifest: Option<Result<Option<Vec<u8>>>>,
    files: Vec<String>,
    /// The manifest being brought up to date (`None` until it is read).
    found: Option<Manifest>,
    rebuilt: bool,
    changed: bool,
    /// The records no index segment holds, being read.
    unlisted: Vec<String>,
    /// The segment folder's segments, then those read, and which record of which each
    /// record file is; the removals of those refused.
    segment_names: Vec<String>,
    segments: Vec<Segment>,
    covered: HashMap<String, Stored>,
    segment_removes: Vec<Op>,
    /// The content terms of the records read whole (those it did not list): their
    /// pointers rank on all of it, not on what the manifest keeps.
    read: HashMap<String, Terms>,
}

#[derive(Clone, Copy, Default, PartialEq, Eq)]
enum ResumePhase {
    #[default]
    Listing,
    Manifest,
    Segments,
    Adopting,
    /// Removing the segments refused (their outcomes do not matter).
    RemovingSegments,
}

#[derive(Default)]
struct Rebuilding {
    phase: RebuildPhase,
    /// The listing of a session folder's record files, while it runs.
    listing: Option<RecordFiles>,
    /// The record files (relative to the record root), being read.
    files: Vec<String>,
}

#[derive(Clone, Copy, Default, PartialEq, Eq)]
enum RebuildPhase {
    /// Listing the session folder ([`RecordFiles`]).
    #[default]
    Listing,
    /// Listing the context dir (no session): its `.json` files.
    ListingDir,
    Reading,
    /// Removing the torn records found (their outcomes do not matter).
    Removing,
}

#[derive(Default)]
struct Reconciling {
    phase: ReconcilePhase,
    listing: Option<RecordFiles>,
    files: Vec<String>,
    /// The files neither manifest lists, being read.
    orphans: Vec<String>,
}

#[derive(Clone, Copy, Default, PartialEq, Eq)]
enum ReconcilePhase {
    #[default]
    Listing,
    Manifest,
    Adopting,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum EndPhase {
    Locking,
    Reading,
    Removing,
    Unlocking,
}

/// A record retention takes out, and its pointer as `onEvict` hears it.
struct Victim {
    owned: Owned,
    pointer: Option<String>,
    /// Held in memory (dropped at once), else a file to remove.
    held: bool,
    removed: Option<Result<()>>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum EvictPhase {
    Start,
    /// Reading the files of victims whose pointer is known nowhere else.
    Reading,
    /// Removing the victims' files.
    Removing,
}

/// When a manifest write is wanted.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Due {
    /// When the coalescing rule says so (a save: at most one a second or every 64 records).
    Coalesced,
    /// Now, unless it is up to date (flush, close).
    Forced,
    /// Now, keeping `last_activity` (resume, rebuild, reconcile: indexing is no activity).
    Reindex,
    /// As `Reindex`, when entries changed since the last write (after a resume, retention).
    Changed,
}

struct ManifestWrite {
    due: Due,
    /// The clock when it was decided: `last_activity` moves there (not for a reindex).
    now: i64,
    phase: ManifestPhase,
    /// Entries added since the last write that this write holds.
    taken: usize,
    /// Paths evicted before this write read the manifest on disk.
    gone: Vec<String>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum ManifestPhase {
    Locking,
    Reading,
    Writing,
    Unlocking,
}

impl ManifestWrite {
    /// Whether the write keeps `last_activity` (indexing is no activity).
    fn keeps_activity(&self) -> bool {
        matches!(self.due, Due::Reindex | Due::Changed)
    }
}

impl Job {
    fn new(pass: Option<Pass>, quiet: bool, stages: impl IntoIterator<Item = Stage>) -> Job {
        let stages = stages.into_iter().collect();
        let end = End::Nothing;
        Job { _pass: pass, stages, started: false, quiet, fatal: false, end, error: None, indexed: Vec::new() }
    }

    /// A save's follow-up: the spill over the memory budget, retention (never `saved`,
    /// the record just saved), the session manifest when due.
    pub(super) fn after_save(pass: Pass, saved: String) -> Job {
        Job::new(Some(pass), true, [Stage::spill(false), Stage::evict(Some(saved)), Stage::manifest(Due::Coalesced)])
    }

    /// `flush`/`close`: every record held in memory written out, a segment of the records
    /// indexed since the last one written, the manifest brought up to date.
    pub(super) fn write_out(pass: Option<Pass>) -> Job {
        Job::new(pass, false, [Stage::spill(true), Stage::segment(true), Stage::manifest(Due::Forced)])
    }

    /// A background write of an index segment (see [`ContextManager::begin_persist_index`]).
    pub(super) fn persist_index(pass: Pass) -> Job {
        Job::new(Some(pass), true, [Stage::segment(false)])
    }

    /// `open()` outside a session: the pointers of the context dir restored from its
    /// index segments and the records no segment holds, which then get a segment.
    pub fn load() -> Job {
        let mut job = Job::new(None, false, [Stage::Open(Box::default()), Stage::segment(true)]);
        job.fatal = true;
        job
    }

    /// `close()`: [`Job::write_out`], then the manager closed (or reopened, on a failure:
    /// see [`ContextManager::end_close`]).
    pub(super) fn close() -> Job {
        let mut job = Job::write_out(None);
        job.end = End::Close;
        job
    }

    /// `endSession` (and `clearContextDir` in a session): the session's files removed.
    pub(super) fn end_session(pass: Option<Pass>) -> Job {
        let stage = Stage::EndSession { phase: EndPhase::Locking, removal: None, result: Ok(()) };
        Job::new(pass, false, [stage])
    }

    /// `clear()` in a session: [`Job::end_session`], then the pointers cleared (whether
    /// the removal worked or not).
    pub(super) fn clear_session(pass: Pass) -> Job {
        let mut job = Job::end_session(Some(pass));
        job.end = End::ClearPointers;
        job
    }

    /// `open` of a named session: resumed (a pointer for every persisted record), its
    /// manifest brought up to date, retention (`maxAgeMs` and every cap) over what it holds.
    pub fn open() -> Job {
        let mut job = Job::new(
            None,
            false,
            [
                Stage::Resume(Box::default()),
                Stage::segment(true),
                Stage::manifest(Due::Changed),
                Stage::evict(None),
                Stage::manifest(Due::Changed),
            ],
        );
        job.fatal = true;
        job
    }

    /// `rebuildIndex`: the index rebuilt from the record files, then the manifest written
    /// (`last_activity` kept). Resolves to the filepaths indexed.
    pub(super) fn rebuild(pass: Pass) -> Job {
        let mut job = Job::new(
            Some(pass),
            false,
            [
                Stage::Rebuild(Box::default()),
                Stage::Segment(Box::new(SegmentWrite::replacing())),
                Stage::manifest(Due::Reindex),
            ],
        );
        job.fatal = true;
        job
    }

    /// `reconcile`: the records a crash left out of the manifest adopted, retention, the
    /// manifest written if that changed it. Resolves to the filepaths adopted.
    pub(super) fn reconcile(pass: Pass) -> Job {
        let stages = [Stage::Reconcile(Box::default()), Stage::evict(None), Stage::manifest(Due::Changed)];
        let mut job = Job::new(Some(pass), false, stages);
        job.fatal = true;
        job
    }
}

impl Stage {
    fn spill(all: bool) -> Stage {
        Stage::Spill { all, writing: Vec::new(), removing: false }
    }

    fn evict(keep: Option<String>) -> Stage {
        Stage::Evict { keep, victims: Vec::new(), phase: EvictPhase::Start }
    }

    fn segment(forced: bool) -> Stage {
        Stage::Segment(Box::new(SegmentWrite::new(forced)))
    }

    fn manifest(due: Due) -> Stage {
        let phase = ManifestPhase::Locking;
        Stage::Manifest(ManifestWrite { due, now: 0, phase, taken: 0, gone: Vec::new() })
    }
}

impl<S: Storage> ContextManager<S> {
    /// The next step of `job`, given the outcomes of the operations the last one asked
    /// for (none at the first step, nor after taking or releasing a lock; the lock's
    /// failure then): operations to run, a lock to take or release, or the job's result.
    pub fn job_step(&self, job: &mut Job, outcomes: Outcomes) -> Step<Vec<String>> {
        let mut outcomes = if job.started { Some(outcomes) } else { None };
        job.started = true;
        while let Some(mut stage) = job.stages.pop_front() {
            let next = match outcomes.take() {
                None => self.start_stage(&mut stage, job),
                Some(outcomes) => self.resume_stage(&mut stage, job, outcomes),
            };
            if job.fatal && job.error.is_some() {
                job.stages.clear();
                break;
            }
            let step = match next {
                Next::Nothing => continue,
                Next::Run(ops) => Step::Run(ops),
                Next::Lock(name) => Step::Lock(name),
                Next::Unlock => Step::Unlock,
            };
            job.stages.push_front(stage);
            return step;
        }
        let result = job.error.take().map_or(Ok(()), Err);
        match job.end {
            End::Nothing => {}
            End::Close => self.end_close(&result),
            End::ClearPointers => self.clear_pointers(),
        }
        Step::Done(result.map(|()| std::mem::take(&mut job.indexed)))
    }

    /// Runs `job` natively: its operations against the storage, between its steps, its
    /// locks inside this manager's turn at them.
    pub(super) async fn drive(&self, job: Job) -> Result<()> {
        self.drive_indexing(job).await.map(drop)
    }

    /// [`ContextManager::drive`], resolving to the filepaths the job indexed.
    pub(super) async fn drive_indexing(&self, job: Job) -> Result<Vec<String>> {
        plan::run_in_turn(&self.storage, &self.turn, JobPlan { manager: self, job }).await
    }

    /// A failure of `job`: reported through `onDebug` (`what` says what failed), or kept.
    pub(super) fn fail(&self, job: &mut Job, what: &str, e: Error, path: Option<&str>) {
        if job.quiet {
            self.debug(format!("{what}: {e}"), path);
        } else {
            job.error.get_or_insert(e);
        }
    }

    fn start_stage(&self, stage: &mut Stage, job: &mut Job) -> Next {
        match stage {
            Stage::Spill { all, writing, .. } => self.start_spill(*all, writing),
            Stage::Evict { keep, victims, phase } => self.start_evict(keep.as_deref(), victims, phase),
            Stage::Manifest(write) => self.start_manifest(write),
            Stage::Resume(resuming) => match &self.session {
                Some(s) => {
                    resuming.listing = Some(RecordFiles::new(&s.dir));
                    self.resuming(resuming, job, Vec::new())
                }
                None => Next::Nothing,
            },
            Stage::EndSession { .. } => match &self.session {
                Some(s) => Next::Lock(session::lock_name(&s.dir)),
                None => Next::Nothing,
            },
            Stage::Rebuild(r) => match &self.session {
                Some(s) => {
                    r.listing = Some(RecordFiles::new(&s.dir));
                    self.rebuilding(r, job, Vec::new())
                }
                None => {
                    r.phase = RebuildPhase::ListingDir;
                    Next::Run(vec![Op::List(self.record_root().to_owned())])
                }
            },
            Stage::Reconcile(r) => match &self.session {
                Some(s) => {
                    r.listing = Some(RecordFiles::new(&s.dir));
                    self.reconciling(r, job, Vec::new())
                }
                None => Next::Nothing,
            },
            Stage::Segment(w) => self.start_segment(w),
            Stage::Open(o) => self.start_opening(o),
        }
    }

    fn resume_stage(&self, stage: &mut Stage, job: &mut Job, outcomes: Outcomes) -> Next {
        match stage {
            Stage::Spill { writing, removing, .. } => self.spilled(writing, removing, job, outcomes),
            Stage::Evict { victims, phase, .. } => self.evicting(victims, phase, outcomes),
            Stage::Manifest(write) => self.manifest_step(write, job, outcomes),
            Stage::EndSession { phase, removal, result } => self.ending(phase, removal, result, job, outcomes),
            Stage::Resume(resuming) => self.resuming(resuming, job, outcomes),
            Stage::Rebuild(r) => self.rebuilding(r, job, outcomes),
            Stage::Reconcile(r) => self.reconciling(r, job, outcomes),
            Stage::Segment(w) => self.segment_step(w, outcomes),
            Stage::Open(o) => self.opening_step(o, job, outcomes),
        }
    }

    /// Steps `listing` (a session folder's record files) with `out`: `Err` with what to
    /// do next while it runs, or once it failed (the job's failure, `what` says of what);
    /// `Ok` with the files once listed.
    fn listed(&self, listing: &mut RecordFiles, job: &mut Job, what: &str, out: Outcomes) -> Result<Vec<String>, Next> {
        match listing.step(out).finished::<()>() {
            Err(Step::Run(ops)) => Err(Next::Run(ops)),
            Err(_) => Err(Next::Nothing),
            Ok(Err(e)) => {
                self.fail(job, what, e, None);
                Err(Next::Nothing)
            }
            Ok(Ok(files)) => Ok(files),
        }
    }

    /// The first steps of a resume and a reconcile: the session folder's record files
    /// listed (into `files`, `listing` then `None`), then the manifest read.
    fn list_then_read_manifest(
        &self,
        listing: &mut Option<RecordFiles>,
        files: &mut Vec<String>,
        job: &mut Job,
        what: &str,
        out: Outcomes,
    ) -> Next {
        let (Some(s), Some(running)) = (&self.session, listing.as_mut()) else { return Next::Nothing };
        match self.listed(running, job, what, out) {
            Err(next) => next,
            Ok(listed) => {
                *listing = None;
                *files = listed;
                Next::Run(vec![Op::Read(paths::join(&s.dir, MANIFEST))])
            }
        }
    }

    /// A record file of the session folder (`rel`) read for the manifest: its path,
    /// metadata, size, entry (its top content terms in it) and the terms of its whole
    /// content; `None` when it is missing, unreadable, torn or foreign (reported).
    fn read_entry(&self, rel: &str, outcome: Result<Outcome>) -> Result<Option<ReadEntry>> {
        let Some(s) = &self.session else { return Ok(None) };
        let full = paths::join(&s.dir, rel);
        let Ok(Some(bytes)) = plan::bytes(outcome) else { return Ok(None) };
        let Some((meta, size, content)) = self.adopted(&full, &bytes) else { return Ok(None) };
        let entry = ManifestEntry::new(&meta, size, &manifest_words(&meta))?.with_content(&content);
        Ok(Some(ReadEntry { full, meta, size, entry, content }))
    }

    // -- spill

    /// The writes of the oldest in-memory records while they exceed `memoryBudget` (or
    /// of every one).
    fn start_spill(&self, all: bool, writing: &mut Vec<String>) -> Next {
        let mut state = self.state.borrow_mut();
        let mut over = state.memory_bytes.saturating_sub(self.options.memory_budget);
        let mut ops = Vec::new();
        while all || over > 0 {
            let Some((path, bytes)) = state.memory.next_out() else { break };
            over = over.saturating_sub(bytes.len());
            ops.push(Op::Write { path: path.clone(), bytes: bytes.to_vec(), exclusive: true });
            writing.push(path);
        }
        ops.into()
    }

    /// The records written out leave memory (and enter the manifest); one dropped while
    /// it was written (evicted, cleared) is removed; one whose write failed goes back to
    /// the front of the queue.
    fn spilled(&self, writing: &mut Vec<String>, removing: &mut bool, job: &mut Job, out: Outcomes) -> Next {
        const WHAT: &str = "could not write out an in-memory record";
        let paths = std::mem::take(writing);
        if std::mem::take(removing) {
            for (path, outcome) in paths.iter().zip(out) {
                if let Err(e) = outcome {
                    self.fail(job, WHAT, e, Some(path));
                }
            }
            return Next::Nothing;
        }
        let mut failed = Vec::new();
        let mut removes = Vec::new();
        for (path, outcome) in paths.into_iter().zip(out) {
            if let Err(e) = outcome {
                self.fail(job, WHAT, e, Some(&path));
                failed.push(path);
                continue;
            }
            let kept = {
                let mut state = self.state.borrow_mut();
                let kept = state.memory.remove(&path);
                if let Some(bytes) = &kept {
                    state.memory_bytes -= bytes.len();
                    state.mark_written(&path);
                }
                kept
            };
            match kept {
                Some(bytes) => {
                    let terms = content_terms(&bytes, self.options.content_bytes);
                    self.track(&path, &terms);
                    self.to_segment(&path, terms);
                }
                None => {
                    removes.push(Op::Remove(path.to_string()));
                    writing.push(path);
                }
            }
        }
        let mut state = self.state.borrow_mut();
        for path in failed.into_iter().rev() {
            state.memory.requeue(&path);
        }
        *removing = !removes.is_empty();
        removes.into()
    }

    // -- retention

    /// Takes out the owned records past the caps, oldest first: a record held in memory
    /// is dropped at once; the pointer of each is made before it goes (from its file when
    /// it is known nowhere else); then their files are removed.
    fn start_evict(&self, keep: Option<&str>, victims: &mut Vec<Victim>, phase: &mut EvictPhase) -> Next {
        let caps = self.options.retention;
        if caps.is_unbounded() || self.options.read_only {
            return Next::Nothing;
        }
        let now = (self.options.clock)();
        let taken = self.state.borrow_mut().owned.take_over(&caps, now, keep);
        *victims = taken
            .into_iter()
            .map(|owned| Victim { pointer: self.known_pointer(&owned), owned, held: false, removed: None })
            .collect();
        let reads: Vec<Op> =
            victims.iter().filter(|v| v.pointer.is_none()).map(|v| Op::Read(v.owned.path.clone())).collect();
        if !reads.is_empty() {
            *phase = EvictPhase::Reading;
            return Next::Run(reads);
        }
        self.remove_victims(victims, phase)
    }

    fn evicting(&self, victims: &mut Vec<Victim>, phase: &mut EvictPhase, out: Outcomes) -> Next {
        let mut out = out.into_iter();
        if *phase == EvictPhase::Reading {
            for v in victims.iter_mut().filter(|v| v.pointer.is_none()) {
                let bytes = out.next().and_then(|o| plan::bytes(o).ok().flatten());
                v.pointer = Some(self.pointer_from_file(&v.owned, bytes.as_deref()));
            }
            return self.remove_victims(victims, phase);
        }
        for v in victims.iter_mut().filter(|v| !v.held) {
            v.removed = Some(out.next().map_or(Ok(()), |o| o.map(drop)));
        }
        self.evicted(std::mem::take(victims));
        Next::Nothing
    }

    /// Drops the victims held in memory; the removals of the others' files.
    fn remove_victims(&self, victims: &mut Vec<Victim>, phase: &mut EvictPhase) -> Next {
        let mut removes = Vec::new();
        {
            let mut state = self.state.borrow_mut();
            for v in victims.iter_mut() {
                let path = v.owned.path.as_str();
                match state.memory.remove(path) {
                    Some(bytes) => {
                        state.memory_bytes -= bytes.len();
                        v.held = true;
                        v.removed = Some(Ok(()));
                    }
                    None => removes.push(Op::Remove(v.owned.path.clone())),
                }
            }
        }
        if removes.is_empty() {
            self.evicted(std::mem::take(victims));
        }
        *phase = EvictPhase::Removing;
        removes.into()
    }

    /// Forgets the records evicted (pointer, index entry, manifest entry) and tells
    /// `onEvict`; one whose file could not be removed stays owned, to go at the next check.
    fn evicted(&self, victims: Vec<Victim>) {
        let mut pointers = String::from("[");
        let mut evicted = 0;
        for v in victims {
            let path = v.owned.path.as_str();
            if let Some(Err(e)) = v.removed {
                self.debug(format!("retention could not evict a record: {e}"), Some(path));
                let o = &v.owned;
                self.state.borrow_mut().owned.add(path, o.at_ms, o.seq, o.size);
                continue;
            }
            {
                let mut state = self.state.borrow_mut();
                state.unmark_written(path);
                state.remove_pointer(path);
            }
            if let Some(s) = &self.session {
                if let Some(rel) = path.strip_prefix(&s.dir).and_then(|r| r.strip_prefix('/')) {
                    if s.manifest.borrow_mut().context_files.remove(rel).is_some() {
                        s.evicted.borrow_mut().insert(rel.to_owned());
                        s.dirty.set(s.dirty.get() + 1);
                    }
                }
            }
            if evicted > 0 {
                pointers.push(',');
            }
            pointers.push_str(v.pointer.as_deref().unwrap_or("{}"));
            evicted += 1;
        }
        pointers.push(']');
        if evicted > 0 {
            self.debug(format!("retention evicted {evicted} record(s)"), None);
            if let Some(sink) = &self.options.on_evict {
                sink(&pointers);
            }
        }
    }

    /// The pointer of a record about to be evicted, as `getAllPointers` gives it; for a
    /// record whose pointer was cleared (`clearPointers`), made from its manifest entry
    /// or its bytes in memory. `None`: only its file tells.
    fn known_pointer(&self, victim: &Owned) -> Option<String> {
        let path = victim.path.as_str();
        let mut out = String::new();
        let state = self.state.borrow();
        if let Some(entry) = state.entry(path) {
            entry.pointer_json(&mut out, state.handle_len(entry));
            return Some(out);
        }
        drop(state);
        let from_manifest = self.session.as_ref().and_then(|s| {
            let rel = path.strip_prefix(&s.dir)?.strip_prefix('/')?;
            s.manifest.borrow().context_files.get(rel).map(ManifestEntry::meta)
        });
        let meta = match from_manifest {
            Some(meta) => meta,
            None => {
                let held = self.state.borrow().memory.get(path).cloned()?;
                parse_record(&held).and_then(|v| v.meta()).ok()?
            }
        };
        Entry::new(path, meta, victim.size, &mut Default::default(), None).pointer_json(&mut out, crate::handle::SHORT);
        Some(out)
    }

    /// The pointer of an evicted record made from its file's bytes; only its path when
    /// they are gone or not a record.
    fn pointer_from_file(&self, victim: &Owned, bytes: Option<&[u8]>) -> String {
        let path = victim.path.as_str();
        let mut out = String::new();
        match bytes.and_then(|b| parse_record(b).and_then(|v| v.meta()).ok()) {
            Some(meta) => Entry::new(path, meta, victim.size, &mut Default::default(), None)
                .pointer_json(&mut out, crate::handle::SHORT),
            None => {
                out.push_str("{\"filepath\":");
                push_json_str(&mut out, path);
                out.push_str(",\"filename\":");
                push_json_str(&mut out, path.rsplit('/').next().unwrap_or(path));
                out.push('}');
            }
        }
        out
    }

    // -- resuming a session

    /// The steps of a resume: the listings (the folder's, then its category folders'),
    /// the manifest, the records it does not list yet; then the pointers restored.
    fn resuming(&self, r: &mut Resuming, job: &mut Job, out: Outcomes) -> Next {
        const WHAT: &str = "could not resume the session";
        if self.session.is_none() {
            return Next::Nothing;
        }
        match r.phase {
            ResumePhase::Listing => {
                let mut next = self.list_then_read_manifest(&mut r.listing, &mut r.files, job, WHAT, out);
                if r.listing.is_none() {
                    r.phase = ResumePhase::Manifest;
                    // The segment folder listed beside the manifest's read.
                    if let Next::Run(ops) = &mut next {
                        ops.push(Op::List(segments_dir(self.record_root())));
                    }
                }
                next
            }
            ResumePhase::Manifest => {
                let mut out = out.into_iter();
                r.manifest = Some(out.next().map_or(Ok(None), plan::bytes));
                let reads;
                (r.segment_names, reads) = self.segment_reads(out.next());
                if r.segment_names.is_empty() {
                    return self.read_unlisted(r, job);
                }
                r.phase = ResumePhase::Segments;
                Next::Run(reads)
            }
            ResumePhase::Segments => {
                let read = self.segments_read(&std::mem::take(&mut r.segment_names), out, &r.files);
                (r.segments, r.covered, r.segment_removes) = (read.segments, read.covered, read.removes);
                self.read_unlisted(r, job)
            }
            ResumePhase::Adopting => {
                let Some(manifest) = r.found.as_mut() else { return Next::Nothing };
                for (rel, outcome) in std::mem::take(&mut r.unlisted).into_iter().zip(out) {
                    match self.read_entry(&rel, outcome) {
                        Ok(Some(read)) => {
                            r.read.insert(rel.clone(), read.content);
                            if manifest.context_files.contains_key(&rel) {
                                continue;
                            }
                            manifest.context_files.insert(rel.clone(), read.entry);
                            self.debug("indexed a record the manifest did not list yet", Some(&read.full));
                            r.changed = true;
                        }
                        Ok(None) => {}
                        Err(e) => {
                            self.fail(job, WHAT, e, None);
                            return Next::Nothing;
                        }
                    }
                }
                self.resumed(r);
                r.phase = ResumePhase::RemovingSegments;
                std::mem::take(&mut r.segment_removes).into()
            }
            ResumePhase::RemovingSegments => Next::Nothing,
        }
    }

    /// Once the folder is listed: the manifest read (or rebuilt, when missing or corrupt),
    /// its entries whose records are gone dropped; the reads of the records it does not list.
    fn read_unlisted(&self, r: &mut Resuming, job: &mut Job) -> Next {
        let Some(s) = &self.session else { return Next::Nothing };
        let path = paths::join(&s.dir, MANIFEST);
        let manifest = match r.manifest.take().unwrap_or(Ok(None)) {
            Err(e) => {
                self.fail(job, "could not resume the session", e, None);
                return Next::Nothing;
            }
            Ok(Some(bytes)) => match Manifest::parse(&bytes, &s.id) {
                Ok(m) => Some(m),
                Err(e) => {
                    self.debug(format!("rebuilding a corrupt manifest: {e}"), Some(&path));
                    None
                }
            },
            Ok(None) if r.files.is_empty() => {
                let e = Error::new(ErrorKind::NotFound, format!("no session {:?} in this store", s.id));
                self.fail(job, "could not resume the session", e, None);
                return Next::Nothing;
            }
            Ok(None) => {
                self.debug("rebuilding a missing manifest", Some(&path));
                None
            }
        };
        r.rebuilt = manifest.is_none();
        let mut manifest = manifest.unwrap_or_else(|| s.manifest.borrow().clone());
        let listed: HashSet<&String> = r.files.iter().collect();
        let before = manifest.context_files.len();
        manifest.context_files.retain(|rel, _| listed.contains(rel));
        if manifest.context_files.len() != before {
            self.debug("dropped manifest entries whose records are gone", Some(&path));
            r.changed = true;
        }
        // A record a segment holds is restored from it (and enters the manifest if it is
        // not there: a crash between the two writes); any other is read whole.
        for (rel, stored) in &r.covered {
            if manifest.context_files.contains_key(rel) {
                continue;
            }
            match ManifestEntry::new(&stored.meta, stored.size, &manifest_words(&stored.meta)) {
                Ok(entry) => {
                    let (s, i) = stored.at;
                    let terms = r.segments[s].terms_of(i);
                    manifest.context_files.insert(rel.clone(), entry.with_content(&terms));
                    r.changed = true;
                }
                Err(e) => {
                    self.fail(job, "could not resume the session", e, None);
                    return Next::Nothing;
                }
            }
        }
        r.unlisted = r.files.iter().filter(|rel| !r.covered.contains_key(*rel)).cloned().collect();
        r.found = Some(manifest);
        if r.unlisted.is_empty() {
            self.resumed(r);
            r.phase = ResumePhase::RemovingSegments;
            return std::mem::take(&mut r.segment_removes).into();
        }
        r.phase = ResumePhase::Adopting;
        Next::Run(r.unlisted.iter().map(|rel| Op::Read(paths::join(&s.dir, rel))).collect())
    }

    /// The pointers restored from the manifest, which becomes the session's; marked for a
    /// write when it changed (and the manager writes).
    fn resumed(&self, r: &mut Resuming) {
        let (Some(s), Some(mut manifest)) = (&self.session, r.found.take()) else { return };
        if r.changed {
            // The records found are the session's last writes; the resume is not one.
            manifest.date_from_entries(r.rebuilt);
        }
        let read: Vec<(String, Terms)> = r.read.iter().map(|(rel, t)| (paths::join(&s.dir, rel), t.clone())).collect();
        self.restore_pointers(
            &s.dir,
            manifest.context_files.iter().map(|(rel, e)| (rel.clone(), e.meta(), e.size)),
            &r.segments,
            |rel| {
                if let Some(terms) = r.read.remove(rel) {
                    return Some(Content::Terms(terms));
                }
                if let Some(stored) = r.covered.get(rel) {
                    return Some(Content::Stored(stored.at.0, stored.at.1));
                }
                let e = manifest.context_files.get(rel)?;
                Some(Content::Terms(Terms::default().with_content(&e.content_terms, e.content_length)))
            },
            true,
        );
        r.segments = Vec::new();
        for (path, terms) in read {
            self.to_segment(&path, terms);
        }
        *s.manifest.borrow_mut() = manifest;
        if !r.changed || self.options.read_only {
            // Up to date on disk (or only read): the next save's write moves last_activity.
            s.last_write_ms.set(Some((self.options.clock)()));
        } else {
            s.dirty.set(1);
        }
    }

    // -- rebuilding the index

    /// The steps of a rebuild: the listing (a session's record files, or the context
    /// dir's `.json` files), the reads of every file, then the index replaced
    /// ([`ContextManager::rebuilt`]) and the torn records of a session removed.
    fn rebuilding(&self, r: &mut Rebuilding, job: &mut Job, out: Outcomes) -> Next {
        const WHAT: &str = "could not rebuild the index";
        match r.phase {
            RebuildPhase::Listing => {
                let Some(listing) = r.listing.as_mut() else { return Next::Nothing };
                match self.listed(listing, job, WHAT, out) {
                    Err(next) => next,
                    Ok(files) => {
                        r.listing = None;
                        self.read_all(r, job, files)
                    }
                }
            }
            RebuildPhase::ListingDir => match plan::names(plan::only(out)) {
                Err(e) => {
                    self.fail(job, WHAT, e, None);
                    Next::Nothing
                }
                Ok(names) => {
                    let files = names.into_iter().filter(|n| n.ends_with(".json") && !n.ends_with('/')).collect();
                    self.read_all(r, job, files)
                }
            },
            RebuildPhase::Reading => self.rebuilt(r, job, out),
            RebuildPhase::Removing => Next::Nothing,
        }
    }

    /// The reads of the files listed (none: the index is rebuilt empty at once).
    fn read_all(&self, r: &mut Rebuilding, job: &mut Job, files: Vec<String>) -> Next {
        r.files = files;
        r.phase = RebuildPhase::Reading;
        if r.files.is_empty() {
            return self.rebuilt(r, job, Vec::new());
        }
        let dir = self.record_root();
        Next::Run(r.files.iter().map(|rel| Op::Read(paths::join(dir, rel))).collect())
    }

    /// The files read: the records that parse indexed, in a session as its manifest
    /// (`last_activity` kept); the pointers replaced. A file that is missing or unreadable
    /// is left out; one that does not parse is reported, and in a session removed (not by
    /// a read-only manager). Adopted records are pointers, not this manager's own outside
    /// a session: `clearContextDir` leaves them.
    fn rebuilt(&self, r: &mut Rebuilding, job: &mut Job, out: Outcomes) -> Next {
        let dir = self.record_root().to_owned();
        let remove_torn = self.session.is_some() && !self.options.read_only;
        let mut records: Vec<(String, RecordMeta, usize)> = Vec::with_capacity(r.files.len());
        let mut contents: HashMap<String, (BTreeMap<String, u32>, u32)> = HashMap::with_capacity(r.files.len());
        // Every record is read here: its pointer ranks on all of its content.
        let mut read: HashMap<String, Terms> = HashMap::with_capacity(r.files.len());
        let mut removes = Vec::new();
        for (rel, outcome) in std::mem::take(&mut r.files).into_iter().zip(out) {
            let Ok(Some(bytes)) = plan::bytes(outcome) else { continue };
            let full = paths::join(&dir, &rel);
            match self.adopted(&full, &bytes) {
                Some((meta, size, content)) => {
                    let top = content.top_content(session::MAX_CONTENT_TERMS);
                    contents.insert(rel.clone(), (top, content.content_len()));
                    read.insert(rel.clone(), content);
                    records.push((rel, meta, size));
                }
                None if remove_torn => removes.push(Op::Remove(full)),
                None => {}
            }
        }
        if let Some(s) = &self.session {
            let mut manifest = Manifest::new(&s.id, &s.manifest.borrow().created_at);
            manifest.last_activity = s.manifest.borrow().last_activity.clone();
            for (rel, meta, size) in &records {
                let mut entry = match ManifestEntry::new(meta, *size, &manifest_words(meta)) {
                    Ok(entry) => entry,
                    Err(e) => {
                        self.fail(job, "could not rebuild the index", e, None);
                        return Next::Nothing;
                    }
                };
                if let Some((terms, len)) = contents.get(rel) {
                    (entry.content_terms, entry.content_length) = (terms.clone(), *len);
                }
                manifest.context_files.insert(rel.clone(), entry);
            }
            manifest.date_from_entries(false);
            *s.manifest.borrow_mut() = manifest;
            s.dirty.set(records.len().max(1));
        }
        job.indexed = records.iter().map(|(rel, ..)| paths::join(&dir, rel)).collect();
        let segment: Vec<(String, Terms)> = read.iter().map(|(rel, t)| (paths::join(&dir, rel), t.clone())).collect();
        let content = |rel: &str| read.remove(rel).map(Content::Terms);
        self.restore_pointers(&dir, records.into_iter(), &[], content, self.session.is_some());
        for (path, terms) in segment {
            self.to_segment(&path, terms);
        }
        r.phase = RebuildPhase::Removing;
        removes.into()
    }

    // -- reconciling a session

    /// The steps of a reconcile: the session's record files listed, the manifest on disk
    /// read, the files neither it nor this manager lists read and adopted.
    fn reconciling(&self, r: &mut Reconciling, job: &mut Job, out: Outcomes) -> Next {
        const WHAT: &str = "could not reconcile the session";
        let Some(s) = &self.session else { return Next::Nothing };
        match r.phase {
            ReconcilePhase::Listing => {
                let next = self.list_then_read_manifest(&mut r.listing, &mut r.files, job, WHAT, out);
                if r.listing.is_none() {
                    r.phase = ReconcilePhase::Manifest;
                }
                next
            }
            ReconcilePhase::Manifest => {
                let on_disk = match plan::bytes(plan::only(out)) {
                    Err(e) => {
                        self.fail(job, WHAT, e, None);
                        return Next::Nothing;
                    }
                    Ok(Some(bytes)) => Manifest::parse(&bytes, &s.id).map(|m| m.context_files).unwrap_or_default(),
                    Ok(None) => Default::default(),
                };
                let ours = s.manifest.borrow();
                r.orphans = std::mem::take(&mut r.files)
                    .into_iter()
                    .filter(|rel| !ours.context_files.contains_key(rel) && !on_disk.contains_key(rel))
                    .collect();
                r.phase = ReconcilePhase::Adopting;
                r.orphans.iter().map(|rel| Op::Read(paths::join(&s.dir, rel))).collect::<Vec<_>>().into()
            }
            ReconcilePhase::Adopting => {
                for (rel, outcome) in std::mem::take(&mut r.orphans).into_iter().zip(out) {
                    let ReadEntry { full, meta, size, entry, content } = match self.read_entry(&rel, outcome) {
                        Ok(Some(read)) => read,
                        Ok(None) => continue,
                        Err(e) => {
                            self.fail(job, WHAT, e, None);
                            return Next::Nothing;
                        }
                    };
                    // Read whole: its pointer ranks on all of its content.
                    if !self.adopt_pointer(&full, &rel, meta, size, &entry.terms().with_passages_of(content)) {
                        continue;
                    }
                    s.manifest.borrow_mut().context_files.insert(rel, entry);
                    s.dirty.set(s.dirty.get() + 1);
                    self.debug("reconcile adopted a record the manifest did not list", Some(&full));
                    job.indexed.push(full);
                }
                Next::Nothing
            }
        }
    }

    // -- the end of a session

    /// Under the session lock: the manifest on disk read (its entries are the session's
    /// too), the removal run ([`RemoveSession`]), the lock released; then the manager forgets
    /// the session's records.
    fn ending(
        &self,
        phase: &mut EndPhase,
        removal: &mut Option<RemoveSession>,
        result: &mut Result<()>,
        job: &mut Job,
        mut out: Outcomes,
    ) -> Next {
        let Some(s) = &self.session else { return Next::Nothing };
        match *phase {
            EndPhase::Locking => {
                if let Some(Err(e)) = out.pop() {
                    self.fail(job, "could not end the session", e, None);
                    return Next::Nothing;
                }
                // From here no segment write of this manager lands in the session (they
                // take this lock and look).
                s.ended.set(true);
                *phase = EndPhase::Reading;
                Next::Run(vec![Op::Read(paths::join(&s.dir, MANIFEST))])
            }
            EndPhase::Reading => {
                let mut manifest = s.manifest.borrow().clone();
                let on_disk = plan::bytes(plan::only(out)).ok().flatten();
                if let Some(on_disk) = on_disk.and_then(|b| Manifest::parse(&b, &s.id).ok()) {
                    manifest.context_files.extend(on_disk.context_files);
                }
                let written = self.state.borrow().written_paths();
                *removal = Some(RemoveSession::new(&s.dir, &manifest, &written));
                *phase = EndPhase::Removing;
                self.ending(phase, removal, result, job, Vec::new())
            }
            EndPhase::Removing => {
                if let Some(removing) = removal.as_mut() {
                    match removing.step(out).finished::<()>() {
                        Ok(done) => *result = done,
                        Err(Step::Run(ops)) => return Next::Run(ops),
                        Err(_) => {}
                    }
                }
                *phase = EndPhase::Unlocking;
                Next::Unlock
            }
            EndPhase::Unlocking => {
                let unlocked = out.pop().unwrap_or(Ok(Outcome::Done));
                match (std::mem::replace(result, Ok(())), unlocked) {
                    (Err(e), _) | (Ok(()), Err(e)) => self.fail(job, "could not end the session", e, None),
                    (Ok(()), Ok(_)) => self.forget_session(),
                }
                Next::Nothing
            }
        }
    }

    /// After the session's files are removed: no manifest, no record, no pointer left.
    fn forget_session(&self) {
        let Some(s) = &self.session else { return };
        s.manifest.borrow_mut().context_files.clear();
        s.dirty.set(0);
        s.last_write_ms.set(None);
        let mut state = self.state.borrow_mut();
        state.forget_written();
        state.owned.clear();
        state.memory.clear();
        state.memory_bytes = 0;
        state.forget_pointers();
    }

    // -- the session manifest

    /// Whether a manifest write is wanted (the clock is read here, once, for a save and a
    /// flush); then the session lock.
    fn start_manifest(&self, write: &mut ManifestWrite) -> Next {
        let Some(s) = &self.session else { return Next::Nothing };
        if self.options.read_only {
            return Next::Nothing;
        }
        let wanted = match write.due {
            Due::Reindex => true,
            Due::Changed => s.dirty.get() > 0,
            due => {
                write.now = (self.options.clock)();
                match s.last_write_ms.get() {
                    None => true,
                    // Up to date, unless a write in flight has yet to land (flush waits for it).
                    Some(_) if s.dirty.get() == 0 => due == Due::Forced && s.writes_in_flight.get() > 0,
                    Some(_) if due == Due::Forced => true,
                    Some(last) => s.dirty.get() >= MANIFEST_EVERY_RECORDS || write.now - last >= MANIFEST_EVERY_MS,
                }
            }
        };
        if !wanted {
            return Next::Nothing;
        }
        s.writes_in_flight.set(s.writes_in_flight.get() + 1);
        write.phase = ManifestPhase::Locking;
        Next::Lock(session::lock_name(&s.dir))
    }

    /// Under the session lock: read the manifest on disk, merge it with ours (entries
    /// another manager of the session added are kept, those evicted here are not), write
    /// it whole, release the lock.
    fn manifest_step(&self, write: &mut ManifestWrite, job: &mut Job, out: Outcomes) -> Next {
        const WHAT: &str = "could not update the session manifest";
        let Some(s) = &self.session else { return Next::Nothing };
        let outcome = out.into_iter().next().unwrap_or(Ok(Outcome::Done));
        let path = paths::join(&s.dir, MANIFEST);
        match write.phase {
            ManifestPhase::Locking => {
                if let Err(e) = outcome {
                    s.writes_in_flight.set(s.writes_in_flight.get() - 1);
                    self.fail(job, WHAT, e, None);
                    return Next::Nothing;
                }
                if !write.keeps_activity() && s.last_write_ms.get().is_some() && s.dirty.get() == 0 {
                    // A write that held the lock before wrote what this one would.
                    write.phase = ManifestPhase::Unlocking;
                    return Next::Unlock;
                }
                write.gone = s.evicted.borrow().iter().cloned().collect();
                write.phase = ManifestPhase::Reading;
                Next::Run(vec![Op::Read(path)])
            }
            ManifestPhase::Reading => {
                if let Some(on_disk) = plan::bytes(outcome).ok().flatten().and_then(|b| Manifest::parse(&b, &s.id).ok())
                {
                    self.merge_manifest(on_disk);
                }
                // The entries written get the content terms of the records saved since.
                self.index_content();
                let encoded = {
                    let mut manifest = s.manifest.borrow_mut();
                    if !write.keeps_activity() {
                        manifest.last_activity = iso_timestamp(write.now);
                    }
                    manifest.encode()
                };
                write.phase = ManifestPhase::Writing;
                match encoded {
                    Ok(bytes) => {
                        write.taken = s.dirty.replace(0);
                        Next::Run(vec![Op::Write { path, bytes, exclusive: false }])
                    }
                    Err(e) => {
                        self.fail(job, WHAT, e, None);
                        write.phase = ManifestPhase::Unlocking;
                        Next::Unlock
                    }
                }
            }
            ManifestPhase::Writing => {
                match outcome {
                    Ok(_) => {
                        let mut evicted = s.evicted.borrow_mut();
                        for rel in std::mem::take(&mut write.gone) {
                            evicted.remove(&rel);
                        }
                        let now = if write.keeps_activity() { (self.options.clock)() } else { write.now };
                        s.last_write_ms.set(Some(now));
                    }
                    Err(e) => {
                        s.dirty.set(s.dirty.get() + write.taken);
                        self.fail(job, WHAT, e, None);
                    }
                }
                write.phase = ManifestPhase::Unlocking;
                Next::Unlock
            }
            ManifestPhase::Unlocking => {
                s.writes_in_flight.set(s.writes_in_flight.get() - 1);
                if let Err(e) = outcome {
                    self.fail(job, WHAT, e, None);
                }
                Next::Nothing
            }
        }
    }

    /// Merges the manifest on disk into ours: its entries we do not have (and did not
    /// evict), the earlier `created_at`, the later `last_activity`.
    fn merge_manifest(&self, on_disk: Manifest) {
        let Some(s) = &self.session else { return };
        let mut ours = s.manifest.borrow_mut();
        let evicted = s.evicted.borrow();
        for (rel, entry) in on_disk.context_files {
            if !evicted.contains(&rel) {
                ours.context_files.entry(rel).or_insert(entry);
            }
        }
        if session::parse_iso_ms(&on_disk.created_at) < session::parse_iso_ms(&ours.created_at) {
            ours.created_at = on_disk.created_at;
        }
        if session::parse_iso_ms(&on_disk.last_activity) > session::parse_iso_ms(&ours.last_activity) {
            ours.last_activity = on_disk.last_activity;
        }
    }
}
