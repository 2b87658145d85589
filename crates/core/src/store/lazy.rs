//! Index segments read by range (SPEC §4: memory does not grow with the store). Where
//! the storage reads ranges of files, `open()` reads of each segment only its directory
//! and its records (the pointers and the lengths ranking needs: `super::opened`), and the
//! index holds those records without their terms ([`Index::append_segment_records`]). A
//! query's lists are read when it is ranked: [`PrepareQuery`] reads, for each of the query's stems and each
//! such segment, the dictionary block that would hold it and then its lists, into a cache
//! bounded by `indexMemory` (least recently used first out); the ranking then merges them
//! with the lists held ([`Index::rank_all_with`]).
//!
//! A ranking that was not prepared (the synchronous `selectRelevantContexts`) ranks these
//! records by their metadata, made again from their pointers, as the seed's contract asks.
//!
//! A segment is immutable, but a writer may merge it away. A segment that this manager
//! merges itself gives its records their terms first, from the bytes the merge read
//! ([`Manager::materialize`]); one merged away by another process is found gone when a
//! query reads it: its records keep their metadata (onDebug says so) until the store is
//! opened again.

use std::collections::HashMap;
use std::ops::Deref;
use std::rc::Rc;

use crate::plan::{self, Op, Outcomes, Plan, Step};
use crate::select::segment::layout::{Directory, ListRef, Span, TermEntry};
use crate::select::segment::{List, Segment};
use crate::select::{Query, SegmentLists, Terms};

use super::terms::terms_of;
use super::Manager;

/// Default `indexMemory`: bytes of segment blocks and lists kept for rankings.
pub const DEFAULT_INDEX_MEMORY: usize = 32 * 1024 * 1024;

/// A segment whose records the index holds without their terms.
struct LazySegment {
    /// Its number among the segments read by range: its cache entries' key, kept while
    /// other segments are dropped (a query in flight may hold it).
    id: u32,
    /// Its path in storage.
    path: String,
    directory: Directory,
    /// The slot of its first record and the number of its first passage in the index.
    first_slot: u32,
    first_passage: u32,
}

/// A term's lists in one segment, as read.
struct OwnedLists {
    df: u32,
    metadata: (u32, u32),
    content: (u32, u32),
    /// The two lists' bytes, one after the other.
    bytes: Vec<u8>,
    split: usize,
}

/// A cached value, its size and when a query last used it.
struct Cached<T> {
    value: T,
    bytes: usize,
    used: u64,
}

/// The segments read by range and what was read of them.
#[derive(Default)]
pub(super) struct LazySegments {
    /// In slot order, and so in `id` order.
    segments: Vec<LazySegment>,
    next_id: u32,
    /// Dictionary blocks, by (segment id, block).
    blocks: HashMap<(u32, usize), Cached<Rc<[TermEntry]>>>,
    /// Lists, by stem and then segment id; `None`: the segment lacks the stem.
    lists: HashMap<Box<str>, HashMap<u32, Cached<Option<OwnedLists>>>>,
    bytes: usize,
    /// Counts the queries prepared; what a query uses is marked with the count then.
    tick: u64,
    /// The ticks at which the preparations in flight began: what they use is not evicted
    /// until they are done (the cache may then hold more than its budget for a while).
    in_flight: Vec<u64>,
}

impl LazySegments {
    /// Whether no segment is read by range.
    pub(super) fn is_empty(&self) -> bool {
        self.segments.is_empty()
    }

    /// Whether `slot` holds a record of a segment read by range.
    pub(super) fn holds(&self, slot: u32) -> bool {
        // Segments are added in slot order (their records appended one segment after the
        // other): the last one starting at or before `slot` is the only one that may hold it.
        let at = self.segments.partition_point(|s| s.first_slot <= slot);
        at.checked_sub(1).is_some_and(|i| slot < self.segments[i].first_slot + self.segments[i].directory.records)
    }

    /// Forgets every segment and what was read of them.
    pub(super) fn clear(&mut self) {
        *self = LazySegments::default();
    }

    /// The segment numbered `id`, while it is read by range.
    fn segment(&self, id: u32) -> Option<&LazySegment> {
        self.segments.binary_search_by_key(&id, |s| s.id).ok().map(|at| &self.segments[at])
    }

    /// Whether every segment's lists of `stems` are in the cache.
    pub(super) fn prepared(&self, stems: &[String]) -> bool {
        stems.iter().all(|t| {
            let of = self.lists.get(t.as_str());
            self.segments.iter().all(|s| of.is_some_and(|of| of.contains_key(&s.id)))
        })
    }

    /// The cached lists of `stem`, per segment that has it.
    pub(super) fn lists_of(&self, stem: &str) -> Vec<SegmentLists<'_>> {
        let Some(of) = self.lists.get(stem) else { return Vec::new() };
        self.segments
            .iter()
            .filter_map(|segment| {
                let lists = of.get(&segment.id)?.value.as_ref()?;
                let (metadata, content) = lists.bytes.split_at(lists.split);
                Some(SegmentLists {
                    first_slot: segment.first_slot,
                    first_passage: segment.first_passage,
                    df: lists.df,
                    metadata: List { count: lists.metadata.0, last: lists.metadata.1, bytes: metadata },
                    content: List { count: lists.content.0, last: lists.content.1, bytes: content },
                })
            })
            .collect()
    }

    /// Adds a segment whose records were added to `index` from slot `first_slot` and
    /// passage `first_passage`.
    pub(super) fn add(&mut self, path: String, directory: Directory, first_slot: u32, first_passage: u32) {
        let id = self.next_id;
        self.next_id += 1;
        self.segments.push(LazySegment { id, path, directory, first_slot, first_passage });
    }

    /// Drops segment `id` (its records now hold their terms, or it is gone), and what was
    /// read of it.
    fn drop_segment(&mut self, id: u32) {
        self.segments.retain(|s| s.id != id);
        self.blocks.retain(|(seg, _), _| *seg != id);
        for of in self.lists.values_mut() {
            of.remove(&id);
        }
        self.lists.retain(|_, of| !of.is_empty());
        let lists = self.lists.values().flat_map(|of| of.values());
        self.bytes = self.blocks.values().map(|c| c.bytes).sum::<usize>() + lists.map(|c| c.bytes).sum::<usize>();
    }

    /// Begins preparing a query: its tick, which [`LazySegments::done`] ends.
    fn begin(&mut self) -> u64 {
        self.tick += 1;
        self.in_flight.push(self.tick);
        self.tick
    }

    /// Ends the preparation begun at `tick`, and evicts what no query in flight uses,
    /// least recently used first, until the cache holds at most `budget` bytes. What
    /// the last step of a preparation used is marked with the newest tick: the ranking
    /// that follows it in the same step finds it there.
    fn done(&mut self, tick: u64, budget: usize) {
        self.in_flight.retain(|&t| t != tick);
        let keep = self.in_flight.iter().copied().min().unwrap_or(self.tick).min(self.tick);
        while self.bytes > budget {
            let block = self
                .blocks
                .iter()
                .filter(|(_, c)| c.used < keep)
                .min_by_key(|(_, c)| c.used)
                .map(|(k, c)| (*k, c.used));
            let list = self
                .lists
                .iter()
                .flat_map(|(stem, of)| of.iter().map(move |(id, c)| ((stem, *id), c)))
                .filter(|(_, c)| c.used < keep)
                .min_by_key(|(_, c)| c.used)
                .map(|((stem, id), c)| ((stem.clone(), id), c.used));
            let freed = match (block, list) {
                (Some((k, b)), Some((_, l))) if b <= l => self.blocks.remove(&k).map(|c| c.bytes),
                (_, Some(((stem, id), _))) => {
                    let of = self.lists.get_mut(&stem).expect("the stem just found");
                    let freed = of.remove(&id).map(|c| c.bytes);
                    if of.is_empty() {
                        self.lists.remove(&stem);
                    }
                    freed
                }
                (Some((k, _)), None) => self.blocks.remove(&k).map(|c| c.bytes),
                (None, None) => return,
            };
            self.bytes -= freed.unwrap_or(0);
        }
    }

    fn put_block(&mut self, key: (u32, usize), entries: Vec<TermEntry>) {
        let bytes = entries.iter().map(|e| e.term.len() + std::mem::size_of::<TermEntry>()).sum();
        self.bytes += bytes;
        self.blocks.insert(key, Cached { value: entries.into(), bytes, used: self.tick });
    }

    fn put_lists(&mut self, id: u32, stem: &str, lists: Option<OwnedLists>) {
        let bytes = stem.len() + lists.as_ref().map_or(0, |l| l.bytes.len()) + 64;
        self.bytes += bytes;
        let cached = Cached { value: lists, bytes, used: self.tick };
        self.lists.entry(stem.into()).or_default().insert(id, cached);
    }
}

/// What preparing a query still needs of one segment for one stem.
enum Need {
    /// Nothing: the segment lacks the stem.
    Nothing,
    /// Its dictionary block.
    Block(usize),
    /// Its lists, at this entry.
    Lists(TermEntry),
}

/// Reads what ranking `query` needs of the segments read by range (see the module docs):
/// dictionary blocks, then lists, into the cache. A segment found gone or refused is
/// dropped, its records left with their metadata (onDebug says so); a read that fails
/// fails the plan. Rank in the step it ends in ([`Plan::map`]): what it read is then in
/// the cache, whatever other queries read after it.
pub struct PrepareQuery<M: Deref<Target = Manager>> {
    manager: M,
    stems: Vec<String>,
    /// The tick it began at, while it is in flight.
    began: Option<u64>,
    /// The ops of the step in flight: for which segment (by id) and block, or segment and stem.
    asked: Vec<(u32, Asked)>,
}

enum Asked {
    Block(usize),
    Lists(Box<str>, TermEntry),
}

impl<M: Deref<Target = Manager>> PrepareQuery<M> {
    /// The plan for `query` over `manager`'s segments.
    pub fn new(manager: M, query: &Query) -> Self {
        PrepareQuery { manager, stems: query.stems.clone(), began: None, asked: Vec::new() }
    }

    /// The reads still needed, as ops; none when every list is cached.
    fn next_reads(&mut self) -> Vec<Op> {
        let mut state = self.manager.state.borrow_mut();
        let lazy = &mut state.live.lazy;
        let tick = lazy.tick;
        let mut needs: Vec<(usize, &str, Need)> = Vec::new();
        for (s, segment) in lazy.segments.iter().enumerate() {
            for stem in &self.stems {
                if let Some(cached) = lazy.lists.get_mut(stem.as_str()).and_then(|of| of.get_mut(&segment.id)) {
                    cached.used = tick;
                    continue;
                }
                let Some(block) = segment.directory.block_of(stem) else {
                    needs.push((s, stem, Need::Nothing));
                    continue;
                };
                let found = lazy.blocks.get_mut(&(segment.id, block)).map(|cached| {
                    cached.used = tick;
                    cached.value.iter().find(|e| *e.term == **stem).cloned()
                });
                needs.push((
                    s,
                    stem,
                    found.map_or(Need::Block(block), |entry| entry.map_or(Need::Nothing, Need::Lists)),
                ));
            }
        }
        self.asked.clear();
        let mut ops = Vec::new();
        for (s, stem, need) in needs {
            let segment = &lazy.segments[s];
            let id = segment.id;
            match need {
                Need::Nothing => lazy.put_lists(id, stem, None),
                Need::Block(block) => {
                    if self.asked.iter().any(|(k, a)| *k == id && matches!(a, Asked::Block(b) if *b == block)) {
                        continue;
                    }
                    let Span { offset, len } = segment.directory.dictionary_span(block);
                    ops.push(Op::ReadRange { path: segment.path.clone(), offset, len });
                    self.asked.push((id, Asked::Block(block)));
                }
                Need::Lists(entry) => {
                    let (offset, end) =
                        (entry.metadata.span.offset, entry.content.span.offset + entry.content.span.len);
                    ops.push(Op::ReadRange { path: segment.path.clone(), offset, len: end - offset });
                    self.asked.push((id, Asked::Lists(stem.into(), entry)));
                }
            }
        }
        ops
    }

    /// Takes in what the last reads gave; the segments found gone or refused, to drop.
    /// What was read of a segment dropped meanwhile (by another query) is let go.
    fn took(&mut self, outcomes: Outcomes) -> crate::error::Result<Vec<u32>> {
        let mut state = self.manager.state.borrow_mut();
        let lazy = &mut state.live.lazy;
        let mut gone = Vec::new();
        for ((id, asked), outcome) in std::mem::take(&mut self.asked).into_iter().zip(outcomes) {
            let bytes = plan::bytes(outcome)?;
            let Some(segment) = lazy.segment(id) else { continue };
            let Some(bytes) = bytes else {
                gone.push(id);
                continue;
            };
            let directory = &segment.directory;
            match asked {
                Asked::Block(block) => match directory.dictionary_block(block, &bytes) {
                    Ok(entries) => lazy.put_block((id, block), entries),
                    Err(_) => gone.push(id),
                },
                Asked::Lists(stem, entry) => match owned_lists(directory, &entry, bytes) {
                    Some(lists) => lazy.put_lists(id, &stem, Some(lists)),
                    None => gone.push(id),
                },
            }
        }
        gone.sort_unstable();
        gone.dedup();
        Ok(gone)
    }

    /// Ends the preparation: what no query in flight uses may be evicted.
    fn end(&mut self) {
        if let Some(began) = self.began.take() {
            let budget = self.manager.options.index_memory;
            self.manager.state.borrow_mut().live.lazy.done(began, budget);
        }
    }
}

impl<M: Deref<Target = Manager>> Drop for PrepareQuery<M> {
    /// A preparation dropped before its end (its plan failed) ends there.
    fn drop(&mut self) {
        self.end();
    }
}

/// A term's two lists from `bytes` (read from its metadata list's start to its content
/// list's end), each checked; `None` when they do not hold what `entry` says.
fn owned_lists(directory: &Directory, entry: &TermEntry, bytes: Vec<u8>) -> Option<OwnedLists> {
    let split = usize::try_from(entry.metadata.span.len).ok()?;
    let check = |list: &ListRef, bytes: &[u8], limit: u32| list.check(bytes, limit).ok();
    let metadata_last = check(&entry.metadata, bytes.get(..split)?, directory.records)?;
    let content_last = check(&entry.content, bytes.get(split..)?, directory.passages)?;
    Some(OwnedLists {
        df: entry.df,
        metadata: (entry.metadata.count, metadata_last),
        content: (entry.content.count, content_last),
        bytes,
        split,
    })
}

impl<M: Deref<Target = Manager>> Plan for PrepareQuery<M> {
    type Output = ();

    fn step(&mut self, outcomes: Outcomes) -> Step<()> {
        if self.began.is_none() {
            self.began = Some(self.manager.state.borrow_mut().live.lazy.begin());
        } else {
            match self.took(outcomes) {
                Ok(gone) => {
                    for id in gone {
                        self.manager.segment_gone(id);
                    }
                }
                Err(e) => return Step::Done(Err(e)),
            }
        }
        let ops = self.next_reads();
        if ops.is_empty() {
            self.end();
            return Step::Done(Ok(()));
        }
        Step::Run(ops)
    }
}

impl Manager {
    /// A segment read by range is gone (merged away by another process) or refused: its
    /// records keep their metadata, made again from their pointers, until the store is
    /// opened again.
    fn segment_gone(&self, id: u32) {
        let (path, records) = {
            let mut state = self.state.borrow_mut();
            let Some(segment) = state.live.lazy.segment(id) else { return };
            let (path, first, n) = (segment.path.clone(), segment.first_slot, segment.directory.records);
            let metas: Vec<(u32, Terms)> = (first..first + n)
                .filter_map(|slot| state.pointers.get(slot).map(|e| (slot, terms_of(&e.meta()))))
                .collect();
            let filled: Vec<(u32, &Terms)> = metas.iter().map(|(slot, t)| (*slot, t)).collect();
            state.live.fill(&filled);
            state.live.lazy.drop_segment(id);
            (path, n)
        };
        self.debug(
            format!("an index segment this manager ranks from is gone (merged by another process?): its {records} records are ranked by their metadata until the store is opened again"),
            Some(&path),
        );
    }

    /// Gives the records of the segments read by range among `merged` (a merge's inputs,
    /// read whole) their terms, from those bytes, before the merge removes them.
    pub(super) fn materialize(&self, merged: &[(String, &Segment)]) {
        let mut state = self.state.borrow_mut();
        for (path, segment) in merged {
            let Some(lazy) = state.live.lazy.segments.iter().find(|l| &l.path == path) else { continue };
            let (id, first) = (lazy.id, lazy.first_slot);
            let terms: Vec<(u32, Terms)> =
                (0..segment.records.len()).map(|i| (first + i as u32, segment.terms_of(i))).collect();
            let filled: Vec<(u32, &Terms)> = terms.iter().map(|(slot, t)| (*slot, t)).collect();
            state.live.fill(&filled);
            state.live.lazy.drop_segment(id);
        }
    }
}
