//! `open({contextDir})` outside a session ([`Opening`]): the record folder and the
//! segment folder listed, the segments read (`super::opened`), the records no segment
//! holds read whole, every pointer restored (`super::restore`), the refused segments
//! removed.

use super::entry::Interned;
use super::opened::{Covered, Opened, SegmentsReading};
use super::restore::{Content, Made};
use super::stage::Next;
use super::Manager;
use crate::naming::is_record_filename;
use crate::paths;
use crate::plan::{self, Op, Outcomes};

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

impl Manager {
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
                // The listing is let go here, before the pointers are restored (100,000
                // names: about 8 MiB of `open()`'s peak): only the records no segment
                // holds are kept, to be read.
                let files = std::mem::take(&mut l.files);
                l.tail = files.into_iter().filter(|f| !l.covered.contains_key(f)).collect();
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
        let interned = std::mem::take(&mut l.interned);
        self.restore_pointers(&root, records.into_iter().chain(covered), &l.segments, false, interned);
        l.segments = Vec::new();
        for (full, content) in read_tail {
            self.to_segment(&full, content);
        }
        l.phase = OpenPhase::Removing;
        std::mem::take(&mut l.removes).into()
    }
}
