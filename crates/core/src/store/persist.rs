//! The index persisted (SPEC §4): the stages of a job that write a segment of the
//! records indexed since the last one and merge segments ([`SegmentWrite`]), and the
//! stage of `open({contextDir})` that loads a store from its segments ([`Opening`]),
//! reading only the records no segment holds. Where segments live and when they merge:
//! [`super::segments`]; their format: `toolctx_search::segment`.

use std::collections::{HashMap, HashSet};
use std::hash::BuildHasherDefault;

use toolctx_text::TermHasher;

use super::entry::Interned;
use super::opened::{Opened, OpenedRead, ReadDirectories};
use super::restore::{Content, Made};
use super::stage::Next;
use super::terms::terms_of;
use super::Manager;
use crate::naming::is_record_filename;
use crate::paths;
use crate::plan::{self, Op, Outcome, Outcomes, Plan, Step};
use crate::record::parse_record;
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
    /// The segment being written: its name and bytes.
    segment: Option<(String, Vec<u8>)>,
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
    Removing,
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
            segment: None,
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

/// The stage of `open()` outside a session: the context dir's records listed, its
/// segments read, the records no segment holds read whole, every pointer restored.
#[derive(Default)]
pub(super) struct Opening {
    phase: OpenPhase,
    files: Vec<String>,
    reading: SegmentsReading,
    segments: Vec<Opened>,
    covered: Covered,
    tail: Vec<String>,
    /// The removals of the segments refused, once the tail is read.
    removes: Vec<Op>,
    interned: Interned,
}

#[derive(Clone, Copy, Default, PartialEq, Eq)]
enum OpenPhase {
    #[default]
    Listing,
    ReadingSegments,
    ReadingTail,
    Removing,
}

/// Segments being read at `open()` or a resume ([`Manager::begin_segments`]): whole, by
/// their paths, or by range.
pub(super) enum SegmentsReading {
    Whole(Vec<String>),
    Ranges(ReadDirectories),
}

impl Default for SegmentsReading {
    fn default() -> Self {
        SegmentsReading::Whole(Vec::new())
    }
}

/// Segments read: the segments that decoded, the listed records they hold (each from the
/// first segment holding it), the removals of the segments refused, and what the entries
/// made as segments were read by range share.
pub(super) struct SegmentsRead {
    pub segments: Vec<Opened>,
    pub covered: Covered,
    pub removes: Vec<Op>,
    pub interned: Interned,
}

/// The listed records the segments hold, by path (relative to the record folder).
/// Hashed with FxHash (`toolctx_text::TermHasher`), as the names listed are: a store's
/// paths are hashed a few times each at `open()` (SipHash took 11% of it in wasm at
/// 100,000 records), and they are the storage's names of the record grammar, not input a
/// model chooses.
pub(super) type Covered = HashMap<String, Stored, BuildHasherDefault<TermHasher>>;

/// A listed record a segment holds: which record of which segment, and what its header says.
pub(super) struct Stored {
    /// Segment `.0`'s record `.1`.
    pub at: (usize, usize),
    pub made: Made,
    pub size: usize,
}

impl Manager {
    /// Whether a background segment write is due: enough records wait to be written into
    /// one (see `crates/core/src/segments.rs`).
    pub fn segment_due(&self) -> bool {
        let state = self.state.borrow();
        !self.options.read_only && state.live.segment_waiting() >= segments::SEGMENT_RECORDS
    }

    /// Whether a save should yield to the host's event loop before it resolves: records
    /// wait in no segment, [`segments::SEGMENT_BACKLOG`] of them, or
    /// [`segments::SEGMENT_RECORDS`] while a segment is being written. The segment due, or
    /// the one under way, has not been written: its start, lock and write wait in the event
    /// loop, which a loop of awaited saves over synchronous writes never reaches. `onDebug`
    /// is told once each time saves begin to yield.
    pub fn index_backlogged(&self) -> bool {
        let waiting = self.state.borrow().live.segment_waiting();
        let bound = if self.segmenting.get() { segments::SEGMENT_RECORDS } else { segments::SEGMENT_BACKLOG };
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
    fn segment_dir(&self) -> String {
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
        let taken = self.state.borrow_mut().live.take_unsegmented();
        let made = {
            let state = self.state.borrow();
            let keep = |path: &str| {
                let rel = path.strip_prefix(&root)?;
                (state.pointers.slot_of(path).is_some() && !state.held.contains(path)).then(|| rel.to_owned())
            };
            taken.encode(keep)
        };
        let Some((records, bytes)) = made else { return self.segment_done(w) };
        w.taken = Some(taken);
        let Ok(name) = self.random_part().map(|r| segment_name(records, (self.options.clock)(), &r)) else {
            self.put_back(w);
            return self.segment_done(w);
        };
        w.segment = Some((name, bytes));
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
                let Some((name, bytes)) = w.segment.take() else { return self.unlock_segments(w) };
                w.phase = WritePhase::Writing;
                w.inputs = vec![name.clone()];
                Next::Run(vec![Op::Write { path: paths::join(&dir, &name), bytes, exclusive: true }])
            }
            WritePhase::Writing => {
                if let Err(e) = plan::only(out) {
                    self.debug(format!("{WHAT}: {e}"), None);
                    self.put_back(w);
                    return self.unlock_segments(w);
                }
                w.taken = None;
                w.phase = WritePhase::ListingSegments;
                Next::Run(vec![Op::List(dir)])
            }
            WritePhase::ListingSegments => {
                let names: Vec<String> = plan::names(plan::only(out)).unwrap_or_default();
                let names: Vec<String> = names.into_iter().filter(|n| segment_records(n).is_some()).collect();
                if w.replaces {
                    // A rebuild's segment holds every record as it is now: the others go.
                    let written = std::mem::take(&mut w.inputs);
                    w.phase = WritePhase::Removing;
                    let others = names.iter().filter(|n| !written.contains(n));
                    return self.run_or_unlock(others.map(|n| Op::Remove(paths::join(&dir, n))).collect(), w);
                }
                match to_merge(&names) {
                    None => self.unlock_segments(w),
                    Some(mut inputs) => {
                        // Read newest first: a record two inputs hold (rewritten under its
                        // name since the older) is merged as the newest holds it.
                        segments::newest_first(&mut inputs);
                        w.inputs = inputs;
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
                // The inputs to remove once merged: those read (a refused one too); one
                // gone meanwhile (another process merged it) is no input.
                w.inputs.retain(|n| !gone.contains(n));
                let mut seen = HashSet::new();
                // Records this manager holds without their terms (their segment read by
                // range) get them before the segment goes.
                self.materialize(&read.iter().map(|(path, s)| (path.clone(), s)).collect::<Vec<_>>());
                let records: Vec<ToWrite<'_>> = read
                    .iter()
                    .map(|(_, s)| s)
                    .flat_map(|s| s.records.iter().enumerate().map(move |(i, r)| (s, i, r)))
                    .filter(|(_, _, r)| w.records.contains(&r.path) && seen.insert(r.path.as_str()))
                    .map(|(s, i, _)| ToWrite::from_segment(s, i))
                    .collect();
                w.phase = WritePhase::WritingMerged;
                if records.is_empty() {
                    return self.segment_step(w, vec![Ok(crate::plan::Outcome::Done)]);
                }
                let Ok(name) = self.random_part().map(|r| segment_name(records.len(), (self.options.clock)(), &r))
                else {
                    return self.unlock_segments(w);
                };
                let bytes = format::encode(&records);
                Next::Run(vec![Op::Write { path: paths::join(&dir, &name), bytes, exclusive: true }])
            }
            WritePhase::WritingMerged => {
                if let Err(e) = plan::only(out) {
                    self.debug(format!("{MERGE}: {e}"), None);
                    return self.unlock_segments(w);
                }
                // Written before its inputs go: a writer stopped here leaves both, and a
                // reader takes each record once.
                w.phase = WritePhase::Removing;
                let removes = w.inputs.iter().map(|n| Op::Remove(paths::join(&dir, n))).collect();
                self.run_or_unlock(removes, w)
            }
            WritePhase::Removing => self.unlock_segments(w),
            WritePhase::Unlocking => self.segment_done(w),
        }
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

    /// Begins reading the segments of the segment folder's listing (`listed`, the outcome
    /// of its List; a failed one lists none), newest first: whole, or, with `by_range`
    /// where the storage reads ranges, their directories and records. The first reads:
    /// none when there is no segment.
    pub(super) fn begin_segments(
        &self,
        listed: Option<crate::error::Result<Outcome>>,
        by_range: bool,
    ) -> (SegmentsReading, Vec<Op>) {
        let names = listed.map(plan::names).and_then(Result::ok).unwrap_or_default();
        let mut names: Vec<String> = names.into_iter().filter(|n| segment_records(n).is_some()).collect();
        segments::newest_first(&mut names);
        let dir = self.segment_dir();
        let paths: Vec<String> = names.iter().map(|n| paths::join(&dir, n)).collect();
        if paths.is_empty() {
            return (SegmentsReading::Whole(paths), Vec::new());
        }
        if by_range && self.options.ranges {
            let mut directories = ReadDirectories::new(paths, self.record_root());
            return match directories.step(Vec::new()) {
                Step::Run(ops) => (SegmentsReading::Ranges(directories), ops),
                _ => (SegmentsReading::Ranges(directories), Vec::new()),
            };
        }
        let reads = paths.iter().map(|p| Op::Read(p.clone())).collect();
        (SegmentsReading::Whole(paths), reads)
    }

    /// Takes the outcomes of the last reads of `reading`: the next reads, or the segments
    /// read (see [`Manager::segments_taken`]; `files`: the listed record paths).
    pub(super) fn segments_step(
        &self,
        reading: &mut SegmentsReading,
        out: Outcomes,
        files: &[String],
    ) -> crate::error::Result<Result<SegmentsRead, Vec<Op>>> {
        let mut interned = Interned::default();
        let read = match reading {
            SegmentsReading::Whole(paths) => std::mem::take(paths)
                .into_iter()
                .zip(out)
                .map(|(path, outcome)| {
                    let opened = plan::bytes(outcome).map(|b| b.map(|b| Segment::decode(&b).map(Opened::Whole)));
                    (path, opened)
                })
                .collect(),
            SegmentsReading::Ranges(directories) => match directories.step(out) {
                Step::Run(ops) => return Ok(Err(ops)),
                Step::Done(read) => {
                    interned = directories.take_interned();
                    read?
                }
                _ => {
                    return Err(crate::error::Error::new(crate::error::ErrorKind::Internal, "a directory read locked"))
                }
            },
        };
        let mut read = self.segments_taken(read, files);
        read.interned = interned;
        Ok(Ok(read))
    }

    /// The segments read (`read`: each path and what was read of it): those that decode,
    /// the records of `files` (listed record paths) they hold, and the removals of the
    /// refused ones (none for a read-only manager). A refused segment is reported and never
    /// trusted: the records it held are read instead, as is a record whose header in it
    /// does not parse.
    pub(super) fn segments_taken(&self, read_in: Vec<(String, OpenedRead)>, files: &[String]) -> SegmentsRead {
        let listed: HashSet<&str, BuildHasherDefault<TermHasher>> = files.iter().map(String::as_str).collect();
        let mut read = SegmentsRead {
            segments: Vec::new(),
            covered: Covered::default(),
            removes: Vec::new(),
            interned: Interned::default(),
        };
        for (path, opened) in read_in {
            let segment = match opened {
                Ok(Some(Ok(segment))) => segment,
                Ok(None) => continue,
                Err(e) => {
                    self.debug(
                        format!("could not read an index segment ({e}): its records are read instead"),
                        Some(&path),
                    );
                    continue;
                }
                Ok(Some(Err(why))) => {
                    self.debug(
                        format!("an index segment was refused ({why}): its records are read instead"),
                        Some(&path),
                    );
                    if !self.options.read_only {
                        read.removes.push(Op::Remove(path));
                    }
                    continue;
                }
            };
            let mut segment = segment;
            let at = read.segments.len();
            // A segment read by range has its records' entries made already (as they were
            // read): taken here, one beside each record; a whole one's headers are parsed here.
            let (records, parsed) = match &mut segment {
                Opened::Whole(whole) => (&whole.records[..], Vec::new()),
                Opened::Lazy { records, headers, .. } => (&records[..], std::mem::take(headers)),
            };
            let mut parsed = parsed.into_iter();
            // Its listed records that a newer segment holds, and those taken from it.
            let (mut newer, mut taken) = (0, 0);
            for (i, r) in records.iter().enumerate() {
                let header = parsed.next();
                if !listed.contains(r.path.as_str()) {
                    continue;
                }
                if read.covered.contains_key(&r.path) {
                    newer += 1;
                    continue;
                }
                let made = match header {
                    Some(entry) => entry.map(Made::Entry),
                    None => parse_record(r.header.as_bytes()).and_then(|v| v.meta()).map(|m| Made::Meta(Box::new(m))),
                };
                match made {
                    Ok(made) => {
                        let size = usize::try_from(r.size).unwrap_or(usize::MAX);
                        read.covered.insert(r.path.clone(), Stored { at: (at, i), made, size });
                        taken += 1;
                    }
                    Err(e) => {
                        self.debug(format!("an index segment holds a header that does not parse ({e})"), Some(&path))
                    }
                }
            }
            if taken == 0 && newer > 0 {
                // A merge's input that the merge wrote out but did not remove (it was
                // cut short, crates/core/src/segments.rs): nothing of it is read.
                self.debug(
                    "every record of an index segment is in a newer one (a merge cut short): it is removed",
                    Some(&path),
                );
                if !self.options.read_only {
                    read.removes.push(Op::Remove(path));
                }
                continue;
            }
            if matches!(segment, Opened::Lazy { .. }) && taken == 0 {
                continue; // none of its records is here any more
            }
            read.segments.push(segment);
        }
        read
    }

    // -- open() outside a session

    /// The first step of loading the context dir: its records and its segments listed.
    pub(super) fn start_opening(&self, l: &mut Opening) -> Next {
        if self.session.is_some() {
            return Next::Nothing;
        }
        l.phase = OpenPhase::Listing;
        Next::Run(vec![Op::List(self.record_root().to_owned()), Op::List(self.segment_dir())])
    }

    /// The next step of loading the context dir; an error fails the open (the job says
    /// what failed).
    pub(super) fn opening_step(&self, l: &mut Opening, out: Outcomes) -> crate::error::Result<Next> {
        match l.phase {
            OpenPhase::Listing => {
                let mut out = out.into_iter();
                let files = out.next().map(plan::names).unwrap_or_else(|| Ok(Vec::new()))?;
                l.files = files.into_iter().filter(|n| is_record_filename(n)).collect();
                // A segment folder that cannot be listed (a file where it should be, SPEC §4)
                // fails the open, as the record folder does: no segment could be written either.
                let listed = match out.next() {
                    Some(Err(e)) => return Err(e),
                    listed => listed,
                };
                let reads;
                (l.reading, reads) = self.begin_segments(listed, true);
                l.phase = OpenPhase::ReadingSegments;
                if reads.is_empty() {
                    return self.opening_step(l, Vec::new());
                }
                Ok(Next::Run(reads))
            }
            OpenPhase::ReadingSegments => {
                let read = match self.segments_step(&mut l.reading, out, &l.files)? {
                    Ok(read) => read,
                    Err(reads) => return Ok(Next::Run(reads)),
                };
                (l.segments, l.covered, l.removes, l.interned) =
                    (read.segments, read.covered, read.removes, read.interned);
                l.tail = l.files.iter().filter(|f| !l.covered.contains_key(*f)).cloned().collect();
                l.phase = OpenPhase::ReadingTail;
                if l.tail.is_empty() {
                    return Ok(self.loaded(l, Vec::new()));
                }
                let root = self.record_root();
                Ok(Next::Run(l.tail.iter().map(|rel| Op::Read(paths::join(root, rel))).collect()))
            }
            OpenPhase::ReadingTail => Ok(self.loaded(l, out)),
            OpenPhase::Removing => Ok(Next::Nothing),
        }
    }

    /// The pointers restored: from the segments, and from the records read whole (`out`,
    /// the tail's reads), which wait for the next segment; then the refused segments removed.
    fn loaded(&self, l: &mut Opening, out: Outcomes) -> Next {
        let root = self.record_root().to_owned();
        let mut records = Vec::new();
        let mut read_tail = Vec::new();
        for (rel, outcome) in std::mem::take(&mut l.tail).into_iter().zip(out) {
            let Ok(Some(bytes)) = plan::bytes(outcome) else { continue };
            let full = paths::join(&root, &rel);
            if let Some((meta, size, content)) = self.adopted(&full, &bytes) {
                read_tail.push((full, content.clone()));
                records.push((rel, Made::Meta(Box::new(meta)), size, Some(Content::Terms(Box::new(content)))));
            }
        }
        let covered = std::mem::take(&mut l.covered)
            .into_iter()
            .map(|(rel, stored)| (rel, stored.made, stored.size, Some(Content::Stored(stored.at.0, stored.at.1))));
        self.restore_pointers(&root, records.into_iter().chain(covered), &l.segments, false);
        // The entries made as the segments were read share texts and args: the table
        // shares them with what is saved next.
        self.state.borrow_mut().pointers.interned().absorb(std::mem::take(&mut l.interned));
        l.segments = Vec::new();
        for (full, content) in read_tail {
            self.to_segment(&full, content);
        }
        l.phase = OpenPhase::Removing;
        std::mem::take(&mut l.removes).into()
    }
}
