//! The manager's workflows that need I/O after their first step, as synchronous steps
//! (SPEC §0): a save's follow-up (a spill over the memory budget, retention, the session
//! manifest), `flush`, `close`, `open` of a session, `endSession`, `rebuildIndex` and
//! `reconcile`.
//!
//! A [`Job`] is a queue of stages; [`Manager::job_step`] runs them in order, each
//! deciding what to read, write or remove ([`Op`]), or which lock to take, and consuming
//! the outcomes. A job runs as a [`Plan`] ([`JobPlan`]): the JavaScript driver runs it
//! as any other (`crates/wasm/src/plans.rs`), and natively `ContextManager::drive`
//! (`crates/native/src/manager.rs`) does.

use std::collections::{HashMap, VecDeque};

use super::open::Opening;
use super::opened::Covered;
use super::persist::SegmentWrite;
use super::stage::Next;
use super::terms::manifest_words;
use super::Manager;
use crate::error::{Error, Result};
use crate::lifecycle::Pass;
use crate::paths;
use crate::plan::{self, Op, Outcome, Outcomes, Plan, Step};
use crate::record::RecordMeta;
use crate::retention::Owned;
use crate::select::Terms;
use crate::session::{self, Manifest, ManifestEntry, RecordFiles, RemoveSession, MANIFEST};

mod evict;
mod manifest;
mod rebuild;
mod resume;

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

impl<M: std::ops::Deref<Target = Manager>> Plan for JobPlan<M> {
    /// The filepaths the job indexed (`Job::rebuild`, `Job::reconcile`).
    type Output = Vec<String>;

    fn step(&mut self, outcomes: Outcomes) -> Step<Vec<String>> {
        self.manager.job_step(&mut self.job, outcomes)
    }

    /// The lock failed (taking or releasing it): the stage under way knows where it is.
    fn lock_failed(&mut self, e: Error) -> Step<Vec<String>> {
        self.manager.job_step(&mut self.job, vec![Err(e)])
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

/// A record file read whole for a manifest (see `Manager::read_entry`).
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
    /// The segment folder's segments being read, then those read, and which record of
    /// which each record file is; the removals of those refused.
    reading: super::opened::SegmentsReading,
    segments: Vec<super::opened::Opened>,
    covered: Covered,
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
    /// As `Changed`, in `open()`: a write that fails is reported and left for later, not
    /// the open's failure (the records are the source of truth: a resume on a full disk
    /// still opens the session).
    Opened,
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
        matches!(self.due, Due::Reindex | Due::Changed | Due::Opened)
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

    /// A background write of an index segment (see [`Manager::begin_persist_index`]).
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
    /// see [`Manager::end_close`]).
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
                Stage::manifest(Due::Opened),
                Stage::evict(None),
                Stage::manifest(Due::Opened),
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

impl Manager {
    // -- the jobs that begin here (the others begin with their operation: `flush` and
    // `close` in `close`, `endSession` and `clear` in `clear`, `open` in the store's root)

    /// The first step of `rebuildIndex`: its job, which resolves to the filepaths indexed
    /// (see [`Manager::job_step`]).
    pub fn begin_rebuild_index(&self) -> Result<Job> {
        Ok(Job::rebuild(self.gate.enter("rebuildIndex")?))
    }

    /// The first step of `reconcile`: its job, which resolves to the filepaths adopted
    /// (see [`Manager::job_step`]); `None` outside a session (nothing to adopt).
    pub fn begin_reconcile(&self) -> Result<Option<Job>> {
        let pass = self.gate.enter("reconcile")?;
        self.check_writable()?;
        Ok(self.session.is_some().then(|| Job::reconcile(pass)))
    }

    /// A background job writing a segment of the records indexed since the last one (and
    /// merging segments), when one is due and none is under way; its failures go to
    /// `onDebug`. The JavaScript driver starts it after a save resolves; natively a save
    /// runs it.
    pub fn begin_persist_index(&self) -> Option<Job> {
        if self.segmenting.get() || !self.segment_due() {
            return None;
        }
        let pass = self.gate.enter("persistIndex").ok()?;
        self.segmenting.set(true);
        Some(Job::persist_index(pass))
    }

    // -- running a job

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
                Next::Lock { name, wait } => Step::Lock { name, wait },
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
                Some(s) => Next::Lock { name: session::lock_name(&s.dir), wait: true },
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
            Stage::Open(o) => self.opening_step(o, outcomes).unwrap_or_else(|e| {
                self.fail(job, "could not open the store", e, None);
                Next::Nothing
            }),
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
}
