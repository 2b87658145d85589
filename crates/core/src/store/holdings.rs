//! Which index segment holds each record a manager knows, and how many of each segment's
//! records it has seen go ([`Holdings`]): what the merge policy needs to compact a segment
//! most of whose records are gone (`crates/core/src/segments.rs`).
//!
//! A segment's name says how many records it holds, and a merge drops the records gone
//! from the folder; but a store whose records are evicted or deleted (retention's caps,
//! records removed by another program) keeps their entries in segments that no merge
//! takes: a segment of the top level waits for nine more of its size, and on a storage
//! with a largest value one over half of it takes no merge at all. 6,000 saves under
//! `maxRecords: 500` left 3,000 segment entries for 500 records (96 segments at a 48 KiB
//! limit). A segment at least half of whose records are gone is merged on its own, as
//! Lucene's TieredMergePolicy merges segments by their share of deletions: each record
//! rewritten so is paid for by a record gone, so compaction costs no more than the
//! deletions did.
//!
//! Only what this manager sees go counts: at `open()` or a resume, the records of a
//! segment that it did not restore from it (gone from the folder, or held by a newer
//! segment); then each pointer it drops, and each record it writes into a newer segment.
//! A record another process removes later is not counted until the store is opened again,
//! and a record this manager never knew (a manager made without `open()`, another
//! process's saves) is never counted as gone: a missed compaction at worst, never a merge
//! of live records for nothing. A merge keeps every listed record whatever the counts say.
//!
//! A pointer's entry names its segment ([`SegmentId`]): set when `open()` or a resume
//! restores it from a segment, and when this manager writes or merges the segment that
//! holds it.

use std::collections::HashMap;
use std::num::NonZeroU32;

use crate::segments::segment_records;

/// A segment this manager knows, by its place in [`Holdings`] (from 1: `None` in an entry
/// is "in no segment known").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct SegmentId(NonZeroU32);

impl SegmentId {
    /// Its place in [`Holdings::segments`].
    fn index(self) -> usize {
        self.0.get() as usize - 1
    }
}

/// The segments of a manager's folder it knows, and the records of each it saw go.
#[derive(Default)]
pub(super) struct Holdings {
    /// By id, from 1; `None` once the segment is gone.
    segments: Vec<Option<Holding>>,
    by_name: HashMap<String, SegmentId>,
}

struct Holding {
    name: String,
    /// The records it holds, as its name says.
    records: usize,
    /// Those of them this manager saw go.
    gone: usize,
}

impl Holdings {
    /// The id of the segment named `name` (a file name of the segment folder), known
    /// from now on; `None` when it is no segment's name.
    pub(super) fn register(&mut self, name: &str) -> Option<SegmentId> {
        if let Some(&id) = self.by_name.get(name) {
            return Some(id);
        }
        let records = segment_records(name)?;
        let id = SegmentId(NonZeroU32::new(u32::try_from(self.segments.len() + 1).ok()?)?);
        self.segments.push(Some(Holding { name: name.to_owned(), records, gone: 0 }));
        self.by_name.insert(name.to_owned(), id);
        Some(id)
    }

    /// Segment `id` was read, and `restored` of its records were restored from it: the
    /// others are gone (from the folder, or to a newer segment).
    pub(super) fn restored(&mut self, id: SegmentId, restored: usize) {
        if let Some(h) = self.holding(id) {
            h.gone = h.records.saturating_sub(restored);
        }
    }

    /// A record of segment `from` went (its pointer dropped, or a newer segment holds it).
    pub(super) fn left(&mut self, from: SegmentId) {
        if let Some(h) = self.holding(from) {
            h.gone = (h.gone + 1).min(h.records);
        }
    }

    /// The segments named `names` are gone (merged, replaced or removed).
    pub(super) fn removed<'a>(&mut self, names: impl IntoIterator<Item = &'a String>) {
        for name in names {
            if let Some(id) = self.by_name.remove(name) {
                self.segments[id.index()] = None;
            }
        }
    }

    /// The name of segment `id`, while it is known (until [`Holdings::removed`]).
    pub(super) fn name(&self, id: SegmentId) -> Option<&str> {
        Some(&self.segments.get(id.index())?.as_ref()?.name)
    }

    /// Forgets every segment (the pointers are forgotten).
    pub(super) fn clear(&mut self) {
        self.segments.clear();
        self.by_name.clear();
    }

    /// Of the segments named `listed`, those at least half of whose records this manager
    /// saw go, the emptiest first.
    pub(super) fn sparse(&self, listed: &[String]) -> Vec<String> {
        let mut sparse: Vec<(usize, usize, &String)> = listed
            .iter()
            .filter_map(|name| {
                let h = self.segments[self.by_name.get(name)?.index()].as_ref()?;
                (h.gone > 0 && h.gone * 2 >= h.records).then_some((h.gone, h.records, &h.name))
            })
            .collect();
        // The largest share gone first: gone / records descending, compared as products.
        crate::sort::sort_by(&mut sparse, |a, b| (b.0 * a.1).cmp(&(a.0 * b.1)).then_with(|| a.2.cmp(b.2)));
        sparse.into_iter().map(|(_, _, name)| name.clone()).collect()
    }

    fn holding(&mut self, id: SegmentId) -> Option<&mut Holding> {
        self.segments.get_mut(id.index())?.as_mut()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::segments::segment_name;

    #[test]
    fn a_segment_is_sparse_once_half_its_records_are_seen_going() {
        let mut holdings = Holdings::default();
        let (a, b) = (segment_name(4, 1, "aaaa"), segment_name(2, 2, "bbbb"));
        let ia = holdings.register(&a).unwrap();
        let ib = holdings.register(&b).unwrap();
        assert_eq!(holdings.register(&a), Some(ia), "a name is registered once");
        assert_eq!(holdings.register("x.seg"), None);
        let listed = vec![a.clone(), b.clone()];
        assert!(holdings.sparse(&listed).is_empty(), "none seen going");
        holdings.restored(ia, 3);
        assert!(holdings.sparse(&listed).is_empty(), "1 of 4 gone");
        holdings.left(ia);
        assert_eq!(holdings.sparse(&listed), vec![a.clone()], "2 of 4 gone");
        holdings.left(ib);
        holdings.left(ib);
        holdings.left(ib);
        assert_eq!(holdings.sparse(&listed), vec![b.clone(), a.clone()], "2 of 2 and 2 of 4: the emptiest first");
        assert_eq!(holdings.sparse(std::slice::from_ref(&a)), vec![a.clone()], "only what is listed");
        assert_eq!(holdings.name(ib), Some(b.as_str()));
        holdings.removed([&b]);
        assert_eq!(holdings.name(ib), None);
        assert_eq!(holdings.sparse(&listed), vec![a.clone()]);
        holdings.left(ib); // a record of a segment gone: nothing to count
        let c = segment_name(1, 3, "cccc");
        assert_ne!(holdings.register(&c), Some(ib), "an id is not reused");
    }
}
