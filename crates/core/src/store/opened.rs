//! Segments as `open()` and a resume read them ([`Manager::begin_segments`],
//! [`Opened`]): read whole, or, where the storage reads ranges, only their directories and
//! records ([`ReadDirectories`]), a bounded run of records blocks a step, each record's
//! pointer entry made as its block is read; then the listed records they hold, each
//! from the newest segment holding it ([`Manager::segments_taken`]). The lists of a
//! segment read by range are read when a query needs them (`super::lazy`).

use std::collections::{HashMap, HashSet};
use std::hash::BuildHasherDefault;

use toolctx_text::TermHasher;

use super::entry::{Entry, Interned};
use super::restore::Made;
use super::Manager;
use crate::paths;
use crate::plan::{self, Op, Outcome, Outcomes, Plan, Step};
use crate::record::parse_record;
use crate::segments::{self, segment_records};
use crate::select::segment::layout::{Directory, Head, Span};
use crate::select::segment::{Refused, Segment, SegmentRecord};

/// Bytes read from the start of a segment at `open()`: its head and directory in one read
/// for segments of up to about 100,000 terms; a longer directory takes a second read.
pub const FIRST_READ: u64 = 64 * 1024;

/// Bytes asked for in one step of reading segments at `open()` (at least one read a step):
/// what is read is parsed and let go before the next reads, so `open()` never holds every
/// segment's records blocks at once (33.5 of 102.7 MiB at its peak natively, before, at
/// 100,000 records; in wasm, each step's bytes are copied into the module's memory too).
pub const READ_STEP_BYTES: u64 = 4 * 1024 * 1024;

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
        let (read, interned) = match reading {
            SegmentsReading::Whole(paths) => {
                let read = std::mem::take(paths)
                    .into_iter()
                    .zip(out)
                    .map(|(path, outcome)| {
                        let opened = plan::bytes(outcome).map(|b| {
                            b.map(|b| Segment::decode(&b).map(|segment| Opened::Whole { path: path.clone(), segment }))
                        });
                        (path, opened)
                    })
                    .collect();
                (read, Interned::default())
            }
            SegmentsReading::Ranges(directories) => match directories.step(out) {
                Step::Run(ops) => return Ok(Err(ops)),
                Step::Done(read) => (read?, directories.take_interned()),
                _ => {
                    return Err(crate::error::Error::new(crate::error::ErrorKind::Internal, "a directory read locked"))
                }
            },
        };
        Ok(Ok(self.segments_taken(read, files, interned)))
    }

    /// The segments read (`read`: each path and what was read of it): those that decode,
    /// the records of `files` (listed record paths) they hold, and the removals of the
    /// refused ones (none for a read-only manager); `interned`: what the entries made as
    /// they were read share. A refused segment is reported and never
    /// trusted: the records it held are read instead, as is a record whose header in it
    /// does not parse.
    pub(super) fn segments_taken(
        &self,
        read_in: Vec<(String, OpenedRead)>,
        files: &[String],
        interned: Interned,
    ) -> SegmentsRead {
        let listed: HashSet<&str, BuildHasherDefault<TermHasher>> = files.iter().map(String::as_str).collect();
        let mut read =
            SegmentsRead { segments: Vec::new(), covered: Covered::default(), removes: Vec::new(), interned };
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
            let (records, entries) = match &mut segment {
                Opened::Whole { segment: whole, .. } => (&whole.records[..], Vec::new()),
                Opened::Lazy { records, entries, .. } => (&records[..], std::mem::take(entries)),
            };
            let mut entries = entries.into_iter();
            // Its listed records that a newer segment holds, and those taken from it.
            let (mut newer, mut taken) = (0, 0);
            for (i, r) in records.iter().enumerate() {
                let entry = entries.next();
                if !listed.contains(r.path.as_str()) {
                    continue;
                }
                if read.covered.contains_key(&r.path) {
                    newer += 1;
                    continue;
                }
                let made = match entry {
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
            // A segment none of whose records is here any more is kept too: restoring takes
            // nothing from it, and it counts as a segment all of whose records are gone
            // (`super::holdings`), so the next merge removes it.
            read.segments.push(segment);
        }
        // The entries of records not taken (gone from the folder, or held by a newer
        // segment) are dropped: their args are shared by nothing any more.
        read.interned.prune();
        read
    }
}

/// A segment as `open()` read it: whole, or its directory and records only (by range).
pub(super) enum Opened {
    /// Read whole: where it is, and its lists too.
    Whole { path: String, segment: Segment },
    /// Read by range: where it is, its directory and its records, and their pointers'
    /// entries made as they were read (the records keep no header text: at 100,000
    /// records the texts of every segment held at once were a quarter of `open()`'s peak
    /// of memory). [`Manager::segments_taken`] takes the entries out.
    Lazy { path: String, directory: Directory, records: Vec<SegmentRecord>, entries: Vec<EntryRead> },
}

/// A record's pointer entry, made from its header as its block is read (the entries of a
/// store are what `open()` keeps; parsed headers, about twice their size, are never held
/// for every record), or why its header was refused.
pub(super) type EntryRead = crate::error::Result<Box<Entry>>;

impl Opened {
    /// Its records.
    pub(super) fn records(&self) -> &[SegmentRecord] {
        match self {
            Opened::Whole { segment, .. } => &segment.records,
            Opened::Lazy { records, .. } => records,
        }
    }

    /// Its file name in the segment folder.
    pub(super) fn name(&self) -> &str {
        let (Opened::Whole { path, .. } | Opened::Lazy { path, .. }) = self;
        paths::file_name(path)
    }
}

/// A segment read at `open()`: `None` when it is gone, else what was read or why it is refused.
pub(super) type OpenedRead = crate::error::Result<Option<Result<Opened, Refused>>>;

/// Reads the directory and the records of each segment at `paths` by range: the first
/// [`FIRST_READ`] bytes, the rest of the directory where it is longer, then its records
/// blocks, a run of them at a time (they lie one after the other, last in the file), so
/// that no step asks for more than [`READ_STEP_BYTES`] but to read one block.
pub(super) struct ReadDirectories {
    paths: Vec<String>,
    /// Per segment: what is known so far.
    state: Vec<Reading>,
    /// The reads in flight: for which segment, and how many records blocks they hold.
    asked: Vec<(usize, usize)>,
    /// Bytes asked for in one step: [`READ_STEP_BYTES`].
    step_bytes: u64,
    /// The folder the segments' record paths are relative to, and what the entries made
    /// share (see [`ReadDirectories::take_interned`]).
    root: String,
    interned: Interned,
}

enum Reading {
    Start,
    /// The head read, the directory not whole in the bytes read.
    Head(Head),
    /// The directory read, and its records blocks before the next one read.
    Records(Records),
    Done(OpenedRead),
}

/// A segment's records blocks read so far: its records, and beside each its pointer's
/// entry (or why its header was refused).
struct Records {
    directory: Directory,
    /// The next block to read.
    next: usize,
    records: Vec<SegmentRecord>,
    entries: Vec<EntryRead>,
}

impl ReadDirectories {
    /// Reads the segments at `paths`, whose records' paths are relative to `root`.
    pub(super) fn new(paths: Vec<String>, root: &str) -> Self {
        let state = paths.iter().map(|_| Reading::Start).collect();
        let (root, interned) = (root.to_owned(), Interned::default());
        ReadDirectories { paths, state, asked: Vec::new(), step_bytes: READ_STEP_BYTES, root, interned }
    }

    /// The texts and args the entries made share, for the pointer table to share them too.
    pub(super) fn take_interned(&mut self) -> Interned {
        std::mem::take(&mut self.interned)
    }

    /// The next reads, for the segments not done: as many as [`READ_STEP_BYTES`] takes,
    /// one at least.
    fn reads(&mut self) -> Vec<Op> {
        self.asked.clear();
        let mut ops = Vec::new();
        let mut budget = self.step_bytes;
        for (i, (path, state)) in self.paths.iter().zip(&self.state).enumerate() {
            let (span, blocks) = match state {
                Reading::Start => (Span { offset: 0, len: FIRST_READ }, 0),
                Reading::Head(head) => (head.directory, 0),
                Reading::Records(r) => blocks_within(&r.directory, r.next, budget),
                Reading::Done(_) => continue,
            };
            if span.len > budget && !ops.is_empty() {
                break;
            }
            budget = budget.saturating_sub(span.len);
            ops.push(Op::ReadRange { path: path.clone(), offset: span.offset, len: span.len });
            self.asked.push((i, blocks));
        }
        ops
    }

    /// What segment `i`'s read of `bytes` (`blocks` records blocks, for a read of them) tells.
    fn took(&mut self, i: usize, bytes: Vec<u8>, blocks: usize) {
        let path = &self.paths[i];
        let mut maker = EntryMaker { root: &self.root, interned: &mut self.interned };
        let next = match std::mem::replace(&mut self.state[i], Reading::Start) {
            Reading::Start => match Head::decode(&bytes) {
                Err(why) => Reading::Done(Ok(Some(Err(why)))),
                Ok(head) => match head.directory.of(&bytes) {
                    // The records too, where the bytes read hold them (a small segment).
                    Ok(directory) => match directory_read(path, &head, directory) {
                        Reading::Records(r) if records_region(&r.directory).of(&bytes).is_ok() => {
                            let n = r.directory.records_blocks();
                            r.read(path, n, &bytes, 0, &mut maker)
                        }
                        other => other,
                    },
                    Err(_) => Reading::Head(head),
                },
            },
            Reading::Head(head) => directory_read(path, &head, &bytes),
            Reading::Records(r) => {
                let at = r.directory.records_span(r.next).offset;
                r.read(path, blocks, &bytes, at, &mut maker)
            }
            done @ Reading::Done(_) => done,
        };
        self.state[i] = next;
    }
}

/// Where a segment's records blocks lie: one after the other, to the end of the file.
fn records_region(directory: &Directory) -> Span {
    match directory.records_blocks() {
        0 => Span::default(),
        n => blocks_span(directory, 0, n),
    }
}

/// Where records blocks `first..first + count` of a segment lie (`count` ≥ 1).
fn blocks_span(directory: &Directory, first: usize, count: usize) -> Span {
    let (a, b) = (directory.records_span(first), directory.records_span(first + count - 1));
    Span { offset: a.offset, len: b.offset.saturating_add(b.len).saturating_sub(a.offset) }
}

/// The run of records blocks from block `first` (one of the segment's) that fits in
/// `budget` bytes, one block at least, and how many blocks it holds.
fn blocks_within(directory: &Directory, first: usize, budget: u64) -> (Span, usize) {
    let n = directory.records_blocks();
    let mut count = 1;
    while first + count < n && blocks_span(directory, first, count + 1).len <= budget {
        count += 1;
    }
    (blocks_span(directory, first, count), count)
}

/// The directory of the segment at `path`, from the bytes read of it.
fn directory_read(path: &str, head: &Head, bytes: &[u8]) -> Reading {
    match Directory::decode(head, bytes) {
        Ok(directory) => {
            let r = Records { directory, next: 0, records: Vec::new(), entries: Vec::new() };
            match r.directory.records_blocks() {
                0 => r.done(path),
                _ => Reading::Records(r),
            }
        }
        Err(why) => Reading::Done(Ok(Some(Err(why)))),
    }
}

/// Makes the entries of records read from a segment: their paths are relative to `root`.
struct EntryMaker<'a> {
    root: &'a str,
    interned: &'a mut Interned,
}

impl EntryMaker<'_> {
    /// The entry of `record`, from its header's text.
    fn of(&mut self, record: &SegmentRecord, header: &str) -> EntryRead {
        let meta = parse_record(header.as_bytes()).and_then(|v| v.meta())?;
        let size = usize::try_from(record.size).unwrap_or(usize::MAX);
        Ok(Box::new(Entry::new(&paths::join(self.root, &record.path), meta, size, self.interned, None)))
    }
}

impl Records {
    /// Takes `count` records blocks from the next, read in `bytes` (from offset `at` of the
    /// file): their records added, each header made into its entry and its text let go;
    /// the segment (at `path`) done once its last block is.
    fn read(mut self, path: &str, count: usize, bytes: &[u8], at: u64, maker: &mut EntryMaker<'_>) -> Reading {
        for b in self.next..self.next + count {
            let span = self.directory.records_span(b);
            let block = Span { offset: span.offset.saturating_sub(at), len: span.len }.of(bytes);
            let block = match block.and_then(|bytes| self.directory.records_block(b, bytes)) {
                Ok(block) => block,
                Err(why) => return Reading::Done(Ok(Some(Err(why)))),
            };
            // Reserved as the records are read (a count in the directory reserves nothing).
            self.records.reserve(block.len());
            self.entries.reserve(block.len());
            for mut record in block {
                let header = std::mem::take(&mut record.header);
                self.entries.push(maker.of(&record, &header));
                self.records.push(record);
            }
        }
        self.next += count;
        if self.next < self.directory.records_blocks() {
            return Reading::Records(self);
        }
        self.done(path)
    }

    /// The segment at `path`, read. Its vectors, grown by doubling as blocks were read
    /// (the directory's count is not trusted for a reservation), give back what they do
    /// not hold: they live until every segment is read and restored, `open()`'s peak.
    fn done(self, path: &str) -> Reading {
        let Records { directory, mut records, mut entries, .. } = self;
        records.shrink_to_fit();
        entries.shrink_to_fit();
        Reading::Done(Ok(Some(Ok(Opened::Lazy { path: path.to_owned(), directory, records, entries }))))
    }
}

impl Plan for ReadDirectories {
    type Output = Vec<(String, OpenedRead)>;

    fn step(&mut self, outcomes: Outcomes) -> Step<Self::Output> {
        for ((i, blocks), outcome) in std::mem::take(&mut self.asked).into_iter().zip(outcomes) {
            match plan::bytes(outcome) {
                Ok(Some(bytes)) => self.took(i, bytes, blocks),
                Ok(None) => self.state[i] = Reading::Done(Ok(None)),
                Err(e) => self.state[i] = Reading::Done(Err(e)),
            }
        }
        let ops = self.reads();
        if !ops.is_empty() {
            return Step::Run(ops);
        }
        let read = std::mem::take(&mut self.paths)
            .into_iter()
            .zip(std::mem::take(&mut self.state))
            .map(|(path, state)| match state {
                Reading::Done(read) => (path, read),
                _ => (path, Ok(None)),
            })
            .collect();
        Step::Done(Ok(read))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::select::segment::{encode, ToWrite};

    /// Reads the segment `bytes` at `seg` with `step_bytes` a step: the steps' reads, and
    /// the paths of the records read.
    fn read_in_steps(bytes: &[u8], step_bytes: u64) -> (Vec<Vec<(u64, u64)>>, Vec<String>) {
        let mut reading = ReadDirectories::new(vec!["seg".to_owned()], "/ctx");
        reading.step_bytes = step_bytes;
        let (mut steps, mut outcomes) = (Vec::new(), Vec::new());
        loop {
            match reading.step(outcomes) {
                Step::Run(ops) => {
                    let asked: Vec<(u64, u64)> = ops
                        .iter()
                        .map(|op| match op {
                            Op::ReadRange { offset, len, .. } => (*offset, *len),
                            _ => panic!("a range read, not {op:?}"),
                        })
                        .collect();
                    outcomes = asked
                        .iter()
                        .map(|&(offset, len)| {
                            let (from, to) = (offset as usize, (offset + len).min(bytes.len() as u64) as usize);
                            Ok(plan::Outcome::Read(Some(bytes[from..to].to_vec())))
                        })
                        .collect();
                    steps.push(asked);
                }
                Step::Done(read) => {
                    let mut read = read.expect("read");
                    let Some((_, Ok(Some(Ok(Opened::Lazy { records, .. }))))) = read.pop() else {
                        panic!("read by range")
                    };
                    return (steps, records.into_iter().map(|r| r.path).collect());
                }
                _ => panic!("no lock"),
            }
        }
    }

    #[test]
    fn a_large_segment_is_read_a_bounded_run_of_records_blocks_a_step() {
        let terms = crate::select::Terms::default();
        let paths: Vec<String> = (0..1000).map(|i| format!("read_file_{i:04}.json")).collect();
        let header = format!("{{\"toolName\":\"read_file\",\"note\":\"{}\"}}", "x".repeat(200));
        let records: Vec<ToWrite<'_>> = paths.iter().map(|p| ToWrite::from_terms(p, 300, &header, &terms)).collect();
        let bytes = encode(&records);
        assert!(bytes.len() as u64 > 3 * FIRST_READ, "{} bytes", bytes.len());

        let (steps, read) = read_in_steps(&bytes, 40 * 1024);
        assert_eq!(read, paths, "every record, in order");
        let blocks = 1000usize.div_ceil(crate::select::segment::layout::RECORDS_PER_BLOCK);
        assert!(steps.len() >= 4, "the records blocks in several steps: {steps:?}");
        for asked in &steps[1..] {
            let bytes: u64 = asked.iter().map(|(_, len)| len).sum();
            assert!(bytes <= 40 * 1024, "a step asks for at most its bytes: {asked:?}");
        }
        // A block larger than a step's bytes is still read, alone in its step.
        let (steps, read) = read_in_steps(&bytes, 1);
        assert_eq!(read, paths);
        assert!(steps.iter().all(|asked| asked.len() == 1) && steps.len() > blocks, "{steps:?}");
        // With the default, a step takes every block.
        let (steps, read) = read_in_steps(&bytes, READ_STEP_BYTES);
        assert_eq!(read, paths);
        assert!(steps.len() <= 3, "{steps:?}");
    }
}
