//! The index persisted (SPEC §4): the stages of a job that write a segment of the
//! records indexed since the last one and merge segments ([`SegmentWrite`]). Where
//! segments live and when they merge: [`super::segments`]; their format:
//! `toolctx_search::segment`; how `open()` reads them: `super::opened` and `super::open`.

use std::collections::HashSet;

use super::stage::Next;
use super::terms::terms_of;
use super::Manager;
use crate::naming::is_record_filename;
use crate::paths;
use crate::plan::{self, Op, Outcomes, Plan, Step};
use crate::record::RecordMeta;
use crate::segments::{self, segment_name, segment_records, segments_dir, to_merge};
use crate::select::segment::{self as format, Builder, Segment, ToWrite};
use crate::select::Terms;
use crate::session::{self, RecordFiles};

/// Writing a segment, then merging if a level is full, under the folder's lock (a
/// session's own lock, which `endSession` takes too; outside a session the segment
/// folder's).
pub(super) struct SegmentWrite {
    /// Whether it writes whatever waits (flush, close, open, a rebuild), else only once
    /// [`SEGMENT_RECORDS`] wait: the background write (at most one runs at a time).
    forced: bool,
    /// A rebuild's: once written, its segment replaces every other (they may hold
    /// records as they were before the rebuild read them).
    replaces: bool,
    phase: WritePhase,
    /// The records the segment being written holds: put back to wait on a failure.
    taken: Option<Builder>,
    /// The segments being written (one, or several within the storage's largest value):
    /// their names and bytes.
    segments: Vec<(String, Vec<u8>)>,
    /// The records each segment being written holds (their full paths), in the same order.
    parts: Vec<Vec<String>>,
    /// The bytes and records of the segments being written (see `Manager::bytes_per_record`).
    written: (usize, usize),
    /// The segments of a merge being written that take no more merges: more than half
    /// the storage's largest value.
    full: Vec<String>,
    /// The segments of a merge being written, and the records each holds (their paths
    /// relative to the record folder).
    merged: Vec<(String, Vec<String>)>,
    /// Whether the merge written leaves fewer segments than it took: only then is the
    /// folder planned again.
    fewer: bool,
    /// The segment folder's listing the merge being made was planned from.
    listed: HashSet<String>,
    /// The segments this job's merges removed: never planned again, whatever a listing
    /// that lags the removals (an eventually consistent store's) still shows.
    removed: HashSet<String>,
    /// A session folder's listing (a merge keeps only records still there).
    listing: Option<RecordFiles>,
    /// The segments being merged, or replaced.
    inputs: Vec<String>,
    records: HashSet<String>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum WritePhase {
    Locking,
    Writing,
    ListingSegments,
    ListingRecords,
    Reading,
    WritingMerged,
    /// A merge's inputs being removed.
    Removing,
    /// The segments a rebuild's segment replaces being removed.
    Replacing,
    Unlocking,
}

impl SegmentWrite {
    /// A segment write: `forced`, of whatever waits; else once [`SEGMENT_RECORDS`] wait.
    pub(super) fn new(forced: bool) -> SegmentWrite {
        let (taken, listing, inputs, records) = (None, None, Vec::new(), HashSet::new());
        SegmentWrite {
            forced,
            replaces: false,
            phase: WritePhase::Locking,
            taken,
            segments: Vec::new(),
            parts: Vec::new(),
            written: (0, 0),
            full: Vec::new(),
            merged: Vec::new(),
            fewer: false,
            listed: HashSet::new(),
            removed: HashSet::new(),
            listing,
            inputs,
            records,
        }
    }

    /// A rebuild's segment write: of whatever waits, replacing every other segment.
    pub(super) fn replacing() -> SegmentWrite {
        SegmentWrite { replaces: true, ..SegmentWrite::new(true) }
    }
}

impl Manager {
    /// Whether a background segment write is due: enough records wait to be written into
    /// one (see `crates/core/src/segments.rs`), and, after a write that failed, twice as
    /// many as waited then (a storage that keeps refusing, full or over a quota, is not
    /// sent a whole segment at every save).
    pub fn segment_due(&self) -> bool {
        let state = self.state.borrow();
        let due = segments::SEGMENT_RECORDS.max(self.segment_retry_at.get());
        !self.options.read_only && state.live.segment_waiting() >= due
    }

    /// Whether a save should yield to the host's event loop before it resolves: records
    /// wait in no segment, [`segments::SEGMENT_BACKLOG`] of them, or
    /// [`segments::SEGMENT_RECORDS`] while a segment is being written. The segment due, or
    /// the one under way, has not been written: its start, lock and write wait in the event
    /// loop, which a loop of awaited saves over synchronous writes never reaches. `onDebug`
    /// is told once each time saves begin to yield.
    pub fn index_backlogged(&self) -> bool {
        let waiting = self.state.borrow().live.segment_waiting();
        let bound = if self.segmenting.get() {
            segments::SEGMENT_RECORDS
        } else {
            // after a failed write, none is due before twice the records then waiting
            segments::SEGMENT_BACKLOG.max(self.segment_retry_at.get())
        };
        let backlogged = !self.options.read_only && waiting >= bound;
        if backlogged != self.backlogged.replace(backlogged) && backlogged {
            let message = format!(
                "saves yield to the event loop: {waiting} records wait for an index segment (the bound is {bound})"
            );
            self.debug(message, None);
        }
        backlogged
    }

    /// The segment folder of this manager's records.
    pub(super) fn segment_dir(&self) -> String {
        segments_dir(self.record_root())
    }

    /// Adds the persisted record at `path`, whose content `content` holds (its passages;
    /// its metadata is made again from its pointer, as the index made it), to those
    /// waiting for the next segment. A record whose pointer is gone waits for none.
    pub(super) fn to_segment(&self, path: &str, content: Terms) {
        if self.options.read_only {
            return;
        }
        let Some(meta) = self.state.borrow().pointers.entry(path).map(|e| e.meta()) else { return };
        let terms = terms_of(&meta).with_passages_of(content);
        self.wait_for_segment(path, &meta, &terms);
    }

    /// The persisted record at `path` (its pointer's `meta`, indexed by `terms`: its
    /// metadata's and its content's) waits for the next segment.
    pub(super) fn wait_for_segment(&self, path: &str, meta: &RecordMeta, terms: &Terms) {
        if self.options.read_only {
            return;
        }
        let mut state = self.state.borrow_mut();
        let Some(size) = state.pointers.entry(path).map(|e| e.size() as u64) else { return };
        let header = String::from_utf8_lossy(&meta.encode(None)).into_owned();
        state.live.wait_for_segment(path, size, header, terms);
    }

    /// The first step of a segment write: the content waiting indexed; the records still
    /// here and persisted taken, their segment made; then the lock.
    pub(super) fn start_segment(&self, w: &mut SegmentWrite) -> Next {
        if self.options.read_only || (!w.forced && !self.segment_due()) {
            return self.segment_done(w);
        }
        self.index_content();
        let root = format!("{}/", self.record_root());
        let mut taken = self.state.borrow_mut().live.take_unsegmented();
        let made = {
            let state = self.state.borrow();
            let keep = |path: &str| {
                let rel = path.strip_prefix(&root)?;
                (state.pointers.slot_of(path).is_some() && !state.held.contains(path)).then(|| rel.to_owned())
            };
            taken.encode(keep, self.options.max_value_bytes)
        };
        let limit = self.options.max_value_bytes;
        let mut left_out = HashSet::new();
        for (keys, bytes) in made {
            if bytes.len() > limit {
                self.left_out(bytes.len(), keys.first().map(String::as_str));
                left_out.extend(keys);
                continue;
            }
            let Ok(name) = self.random_part().map(|r| segment_name(keys.len(), (self.options.clock)(), &r)) else {
                w.taken = Some(taken);
                self.put_back(w);
                return self.segment_done(w);
            };
            w.segments.push((name, bytes));
            w.parts.push(keys);
        }
        if !left_out.is_empty() {
            taken.retain(|key| !left_out.contains(key));
        }
        if w.segments.is_empty() {
            return self.segment_done(w);
        }
        w.taken = Some(taken);
        w.phase = WritePhase::Locking;
        self.segment_lock(w.forced)
    }

    /// The lock a segment write and a merge hold: a session's own (`endSession` and the
    /// manifest writes take it too, so no segment lands in a session being removed), else
    /// the segment folder's. Index work never makes anyone wait on it (SPEC §4), so it is
    /// taken without waiting (held by another: the records wait for the next segment)
    /// except by a `forced` write in a session, whose lock is held only by other
    /// foreground work for as long as a manifest write.
    fn segment_lock(&self, forced: bool) -> Next {
        match &self.session {
            Some(s) => Next::Lock { name: session::lock_name(&s.dir), wait: forced },
            None => Next::Lock { name: segments::merge_lock(&self.segment_dir()), wait: false },
        }
    }

    /// The next step of a segment write, given what the last one's ops gave.
    pub(super) fn segment_step(&self, w: &mut SegmentWrite, out: Outcomes) -> Next {
        const WHAT: &str = "could not write an index segment";
        const MERGE: &str = "could not merge index segments";
        let dir = self.segment_dir();
        match w.phase {
            WritePhase::Locking => {
                if let Some(Err(e)) = out.into_iter().next() {
                    self.debug(format!("{WHAT}: {e}"), None);
                    self.put_back(w);
                    return self.segment_done(w);
                }
                if self.session.as_ref().is_some_and(|s| s.ended.get()) {
                    // The session was removed meanwhile: nothing of it is written again.
                    w.taken = None;
                    return self.unlock_segments(w);
                }
                let segments = std::mem::take(&mut w.segments);
                if segments.is_empty() {
                    return self.unlock_segments(w);
                }
                w.phase = WritePhase::Writing;
                w.inputs = segments.iter().map(|(name, _)| name.clone()).collect();
                w.written = (segments.iter().map(|(_, b)| b.len()).sum(), w.parts.iter().map(Vec::len).sum());
                let writes = segments.into_iter().map(|(name, bytes)| Op::Write {
                    path: paths::join(&dir, &name),
                    bytes,
                    exclusive: true,
                });
                Next::Run(writes.collect())
            }
            WritePhase::Writing => {
                // A part that failed puts its own records back, to wait for the next
                // segment; the parts written stand.
                let parts = std::mem::take(&mut w.parts);
                let mut failed: HashSet<String> = HashSet::new();
                let mut error = None;
                for ((outcome, keys), name) in out.into_iter().zip(parts).zip(&w.inputs) {
                    match outcome {
                        Err(e) => {
                            error.get_or_insert(e);
                            failed.extend(keys);
                        }
                        Ok(_) => self.state.borrow_mut().held_by(name, &keys),
                    }
                }
                if let Some(e) = error {
                    self.debug(format!("{WHAT}: {e}"), None);
                    if let Some(taken) = w.taken.as_mut() {
                        taken.retain(|key| failed.contains(key));
                    }
                    self.put_back(w);
                    let waiting = self.state.borrow().live.segment_waiting();
                    self.segment_retry_at.set(waiting.saturating_mul(2));
                    return self.unlock_segments(w);
                }
                self.segment_retry_at.set(0);
                let (bytes, records) = w.written;
                let per_record = bytes as f64 / records.max(1) as f64;
                self.bytes_per_record.set(self.bytes_per_record.get().max(per_record));
                w.taken = None;
                w.phase = WritePhase::ListingSegments;
                Next::Run(vec![Op::List(dir)])
            }
            WritePhase::ListingSegments => {
                let names: Vec<String> = plan::names(plan::only(out)).unwrap_or_default();
                let names: Vec<String> =
                    names.into_iter().filter(|n| segment_records(n).is_some() && !w.removed.contains(n)).collect();
                if w.replaces {
                    // A rebuild's segment holds every record as it is now: the others go.
                    let written = std::mem::take(&mut w.inputs);
                    w.phase = WritePhase::Replacing;
                    let others: Vec<&String> = names.iter().filter(|n| !written.contains(n)).collect();
                    self.state.borrow_mut().holdings.removed(others.iter().copied());
                    return self
                        .run_or_unlock(others.into_iter().map(|n| Op::Remove(paths::join(&dir, n))).collect(), w);
                }
                // On a storage with a largest value, a segment that would be more than
                // half of it takes no more merges (two would not fit): as Lucene's
                // TieredMergePolicy leaves a segment past half its largest merge. Its size
                // is its records (in its name) times the bytes a record took in the
                // segments this manager wrote, and known exactly for those it merged.
                let limit = self.options.max_value_bytes;
                let per_record = self.bytes_per_record.get();
                let small = |n: &String| {
                    limit == usize::MAX || segment_records(n).unwrap_or(0) as f64 * per_record <= (limit / 2) as f64
                };
                let unmergeable = self.unmergeable.borrow();
                let mergeable: Vec<String> =
                    names.iter().filter(|n| !unmergeable.contains(*n) && small(n)).cloned().collect();
                drop(unmergeable);
                // Else the segments at least half of whose records are gone (evicted,
                // deleted), whatever their size: see `super::holdings`.
                let compaction = || {
                    let sparse = self.state.borrow().holdings.sparse(&names);
                    (!sparse.is_empty()).then(|| sparse.into_iter().take(segments::MERGE_FACTOR).collect())
                };
                match to_merge(&mergeable).or_else(compaction) {
                    None => self.unlock_segments(w),
                    Some(mut inputs) => {
                        // Read newest first: a record two inputs hold (rewritten under its
                        // name since the older) is merged as the newest holds it.
                        segments::newest_first(&mut inputs);
                        w.inputs = inputs;
                        w.listed = names.into_iter().collect();
                        w.phase = WritePhase::ListingRecords;
                        match &self.session {
                            Some(s) => {
                                w.listing = Some(RecordFiles::new(&s.dir));
                                self.segment_step(w, Vec::new())
                            }
                            None => Next::Run(vec![Op::List(self.record_root().to_owned())]),
                        }
                    }
                }
            }
            WritePhase::ListingRecords => {
                let listed = match w.listing.as_mut() {
                    Some(listing) => match listing.step(out).finished::<()>() {
                        Err(Step::Run(ops)) => return Next::Run(ops),
                        Err(_) => Err(crate::error::Error::new(crate::error::ErrorKind::Internal, "a listing locked")),
                        Ok(result) => result,
                    },
                    None => {
                        plan::names(plan::only(out)).map(|n| n.into_iter().filter(|n| is_record_filename(n)).collect())
                    }
                };
                w.listing = None;
                match listed {
                    Err(e) => {
                        self.debug(format!("{MERGE}: {e}"), None);
                        self.unlock_segments(w)
                    }
                    Ok(files) => {
                        w.records = files.into_iter().collect();
                        w.phase = WritePhase::Reading;
                        Next::Run(w.inputs.iter().map(|n| Op::Read(paths::join(&dir, n))).collect())
                    }
                }
            }
            WritePhase::Reading => {
                let mut read = Vec::new();
                let mut gone = Vec::new();
                for (name, outcome) in w.inputs.iter().zip(out) {
                    match plan::bytes(outcome) {
                        // A read that failed says nothing of the segment: no merge now.
                        Err(e) => {
                            self.debug(format!("{MERGE}: {e}"), Some(name));
                            return self.unlock_segments(w);
                        }
                        Ok(None) => gone.push(name.clone()),
                        Ok(Some(bytes)) => match Segment::decode(&bytes) {
                            Ok(segment) => read.push((paths::join(&dir, name), segment)),
                            Err(why) => self
                                .debug(format!("an index segment was refused ({why}): merged without it"), Some(name)),
                        },
                    }
                }
                // Copies a newer segment holds are left out (before the inputs gone are
                // dropped from the inputs: a segment merged was never a newer holder).
                let stale = self.stale_copies(&read, w);
                // The inputs to remove once merged: those read (a refused one too); one
                // gone meanwhile (another process merged it) is no input.
                w.inputs.retain(|n| !gone.contains(n));
                let mut seen = HashSet::new();
                // Records this manager holds without their terms (their segment read by
                // range) get them before the segment goes.
                self.materialize(&read.iter().map(|(path, s)| (path.clone(), s)).collect::<Vec<_>>());
                let records: Vec<ToWrite<'_>> = read
                    .iter()
                    .enumerate()
                    .flat_map(|(at, (_, s))| s.records.iter().enumerate().map(move |(i, r)| (at, s, i, r)))
                    .filter(|&(at, _, i, r)| {
                        w.records.contains(&r.path) && !stale.contains(&(at, i)) && seen.insert(r.path.as_str())
                    })
                    .map(|(_, s, i, _)| ToWrite::from_segment(s, i))
                    .collect();
                w.phase = WritePhase::WritingMerged;
                if records.is_empty() {
                    return self.segment_step(w, vec![Ok(crate::plan::Outcome::Done)]);
                }
                // One segment, or several within the storage's largest value; a part of
                // more than half of it takes no more merges (two would not fit).
                let limit = self.options.max_value_bytes;
                let mut parts = Vec::new();
                format::encode_within(&records, limit, &mut parts);
                let mut writes = Vec::new();
                w.full.clear();
                w.merged.clear();
                for (range, bytes) in parts {
                    if bytes.len() > limit {
                        self.left_out(bytes.len(), Some(records[range.start].path));
                        continue;
                    }
                    let Ok(name) = self.random_part().map(|r| segment_name(range.len(), (self.options.clock)(), &r))
                    else {
                        return self.unlock_segments(w);
                    };
                    if bytes.len() > limit / 2 {
                        w.full.push(name.clone());
                    }
                    w.merged.push((name.clone(), records[range].iter().map(|r| r.path.to_owned()).collect()));
                    writes.push(Op::Write { path: paths::join(&dir, &name), bytes, exclusive: true });
                }
                self.run_or_unlock(writes, w)
            }
            WritePhase::WritingMerged => {
                if let Some(Err(e)) = out.into_iter().find(|o| o.is_err()) {
                    self.debug(format!("{MERGE}: {e}"), None);
                    return self.unlock_segments(w);
                }
                let mut unmergeable = self.unmergeable.borrow_mut();
                unmergeable.retain(|n| !w.inputs.contains(n));
                unmergeable.extend(w.full.drain(..));
                drop(unmergeable);
                let root = self.record_root();
                w.fewer = w.merged.len() < w.inputs.len();
                for (name, rels) in std::mem::take(&mut w.merged) {
                    self.state.borrow_mut().held_by(&name, rels.iter().map(|rel| paths::join(root, rel)));
                }
                self.state.borrow_mut().holdings.removed(&w.inputs);
                w.removed.extend(w.inputs.iter().cloned());
                // Written before its inputs go: a writer stopped here leaves both, and a
                // reader takes each record once.
                w.phase = WritePhase::Removing;
                let removes = w.inputs.iter().map(|n| Op::Remove(paths::join(&dir, n))).collect();
                self.run_or_unlock(removes, w)
            }
            WritePhase::Removing => {
                // Merged and its inputs gone: another merge may be due (a level it filled,
                // more sparse segments), so the folder is planned again, as Lucene's
                // IndexWriter looks for merges after each one. Only after a merge that
                // left fewer segments than it took, so the job ends; and not after a
                // removal that failed (its inputs would be merged again). A listing that
                // still shows the inputs removed is not believed (`SegmentWrite::removed`).
                if w.fewer && out.iter().all(Result::is_ok) {
                    w.phase = WritePhase::ListingSegments;
                    return Next::Run(vec![Op::List(dir)]);
                }
                self.unlock_segments(w)
            }
            WritePhase::Replacing => self.unlock_segments(w),
            WritePhase::Unlocking => self.segment_done(w),
        }
    }

    /// The records of the merge's inputs `read` (by input and place) that are stale
    /// copies: this manager's pointer names a segment that holds the record, is listed, is
    /// no input and is newer than the input (written again into it, or restored from it at
    /// `open()`). The reader never takes such a copy; merged, it would be in the newest
    /// segment and taken. A record none of whose copies is stale is kept, as listed.
    fn stale_copies(&self, read: &[(String, Segment)], w: &SegmentWrite) -> HashSet<(usize, usize)> {
        let state = self.state.borrow();
        let root = self.record_root();
        let mut stale = HashSet::new();
        for (at, (path, segment)) in read.iter().enumerate() {
            let input = paths::file_name(path);
            for (i, r) in segment.records.iter().enumerate() {
                let pointer = state.pointers.entry(&paths::join(root, &r.path));
                let Some(holder) = pointer.and_then(|e| e.segment).and_then(|id| state.holdings.name(id)) else {
                    continue;
                };
                if w.listed.contains(holder) && !w.inputs.iter().any(|n| n == holder) && segments::newer(holder, input)
                {
                    stale.insert((at, i));
                }
            }
        }
        stale
    }

    /// The records a segment write took, back with those waiting (its write failed).
    fn put_back(&self, w: &mut SegmentWrite) {
        if let Some(taken) = w.taken.take() {
            self.state.borrow_mut().live.put_back(taken);
        }
    }

    /// `ops` to run, or (none) the lock released.
    fn run_or_unlock(&self, ops: Vec<Op>, w: &mut SegmentWrite) -> Next {
        if ops.is_empty() {
            self.unlock_segments(w)
        } else {
            Next::Run(ops)
        }
    }

    /// A record whose index alone (`bytes` long) is over the storage's largest value: no
    /// segment holds it, and `open()` reads it as a record; `onDebug` is told.
    fn left_out(&self, bytes: usize, path: Option<&str>) {
        let limit = self.options.max_value_bytes;
        let message = format!(
            "a record's index is over the storage's largest value ({bytes} bytes, the limit {limit}): no segment holds it"
        );
        self.debug(message, path);
    }

    fn unlock_segments(&self, w: &mut SegmentWrite) -> Next {
        w.phase = WritePhase::Unlocking;
        Next::Unlock
    }

    fn segment_done(&self, w: &mut SegmentWrite) -> Next {
        if !w.forced {
            self.segmenting.set(false);
        }
        Next::Nothing
    }
}
