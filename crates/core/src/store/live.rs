//! The live index ([`LiveIndex`]): the pointers' terms and embedding vectors by slot, the
//! saved records whose content waits to be indexed, and the records indexed since the
//! last segment, which the next segment holds (SPEC §4, §6). It hands out the slots the
//! pointer table ([`super::table`]) keeps its pointers in, and knows each slot's save
//! order; it knows nothing of the pointers themselves.

use super::lazy::LazySegments;
use super::unindexed::Unindexed;
use crate::select::segment::layout::Directory;
use crate::select::segment::{Builder, Forward, Segment, SegmentRecord};
use crate::select::{Doc, Index, Query, Ranking, Strategy, Terms, Vectors};

/// The index a manager ranks with, and what waits to enter it or a segment.
#[derive(Default)]
pub(super) struct LiveIndex {
    /// The pointers' terms, by slot.
    index: Index,
    /// The pointers' embedding vectors (the `embed` hook's), by slot.
    vectors: Vectors,
    /// Saved records whose content is not indexed yet ([`super::Manager::index_content`]).
    unindexed: Unindexed,
    /// Persisted records whose content is indexed but in no segment this manager wrote
    /// or read: filepath and content terms, for the next segment (SPEC §4).
    unsegmented: Builder,
    /// The segments whose records the index holds without their terms, and what was read
    /// of them ([`super::lazy`]).
    pub(super) lazy: LazySegments,
}

impl LiveIndex {
    // -- slots

    /// Indexes a record's `terms` in a new slot, `seq` in save order; `None` when the
    /// index is full.
    pub(super) fn add(&mut self, seq: u64, terms: &Terms) -> Option<u32> {
        self.index.add(seq, terms)
    }

    /// Appends the records of `segment` whole, in new slots, with save orders `orders`:
    /// the first slot, `None` when the index has no room for them.
    pub(super) fn append_segment(&mut self, segment: &Segment, orders: &[u64]) -> Option<u32> {
        self.index.append_segment(segment, orders)
    }

    /// Appends the records of the segment at `path` (its `directory` and `records`) without
    /// their terms, in new slots, with save orders `orders`: their lists are read by
    /// range for each query. The first slot; `None` when the index has no room for them.
    pub(super) fn append_lazy(
        &mut self,
        path: &str,
        directory: Directory,
        records: &[SegmentRecord],
        orders: &[u64],
    ) -> Option<u32> {
        let (first_slot, first_passage) = self.index.append_segment_records(records, orders)?;
        self.lazy.add(path.to_owned(), directory, first_slot, first_passage);
        Some(first_slot)
    }

    /// Gives records held without their terms their lists (see [`Index::fill`]).
    pub(super) fn fill(&mut self, records: &[(u32, &Terms)]) {
        self.index.fill(records);
    }

    /// The save order of `slot` (an evicted one's too, until compaction).
    pub(super) fn order(&self, slot: u32) -> u64 {
        self.index.order(slot)
    }

    /// Whether `slot` holds a live record.
    pub(super) fn holds(&self, slot: u32) -> bool {
        self.index.holds(slot)
    }

    /// Takes `slot` out of ranking (its slot stays until [`LiveIndex::remap`]).
    pub(super) fn remove(&mut self, slot: u32) {
        self.index.remove(slot);
        self.vectors.remove(slot);
    }

    /// Whether records may move to new slots ([`LiveIndex::remap`]): not while segments
    /// read by range hold some (their lists are read by slot).
    pub(super) fn can_remap(&self) -> bool {
        self.lazy.is_empty()
    }

    /// Moves the records to new slots: `new_slot[old]`, `None` to drop one.
    pub(super) fn remap(&mut self, new_slot: &[Option<u32>]) {
        self.index.remap(new_slot);
        self.vectors.remap(new_slot);
    }

    /// Forgets every record, and what waited to be indexed or written into a segment.
    pub(super) fn clear(&mut self) {
        self.index.clear();
        self.vectors.clear();
        self.unindexed.clear();
        self.unsegmented.clear();
        self.lazy.clear();
    }

    // -- content

    /// Adds the content terms of the record in `slot` (its metadata's are there already).
    pub(super) fn add_content(&mut self, slot: u32, terms: &Terms) {
        self.index.add_content(slot, terms);
    }

    /// Adds the content of the record in `slot` as a segment stored it (`record`, over
    /// the segment's `dictionary`; `ids`: the dictionary's ids in the index, as met).
    pub(super) fn add_stored_content(
        &mut self,
        slot: u32,
        terms: &Terms,
        dictionary: &[Box<str>],
        record: &Forward,
        ids: &mut [u32],
    ) {
        self.index.add_stored_content(slot, terms, dictionary, record, ids);
    }

    /// The record at `path`, whose result's text is `json`, waits for its content to be
    /// indexed.
    pub(super) fn wait_for_content(&mut self, path: String, json: String) {
        self.unindexed.push(path, json);
    }

    /// The record at `path` no longer waits for its content to be indexed.
    pub(super) fn forget_waiting(&mut self, path: &str) {
        self.unindexed.forget(path);
    }

    /// The oldest record whose content waits (filepath, result text), no longer waiting.
    pub(super) fn next_waiting(&mut self) -> Option<(String, String)> {
        self.unindexed.pop()
    }

    /// How many records' content waits to be indexed.
    pub(super) fn content_waiting(&self) -> usize {
        self.unindexed.len()
    }

    /// The bytes of result text waiting to be indexed.
    pub(super) fn content_waiting_bytes(&self) -> usize {
        self.unindexed.bytes()
    }

    // -- the next segment

    /// The persisted record at `path` (`size` bytes, `header` its header) waits for the
    /// next segment, with its `terms`.
    pub(super) fn wait_for_segment(&mut self, path: &str, size: u64, header: String, terms: &Terms) {
        self.unsegmented.add(path, size, header, terms);
    }

    /// The records waiting for a segment, or to be indexed first (what makes a segment due).
    pub(super) fn segment_waiting(&self) -> usize {
        self.unsegmented.len() + self.unindexed.len()
    }

    /// The records waiting for a segment, taken for one being written.
    pub(super) fn take_unsegmented(&mut self) -> Builder {
        std::mem::take(&mut self.unsegmented)
    }

    /// The records a segment write took, back with those waiting (its write failed).
    pub(super) fn put_back(&mut self, taken: Builder) {
        self.unsegmented.absorb(taken);
    }

    // -- ranking

    /// Ranks `docs` for `query` (see [`Index::rank_docs`]).
    pub(super) fn rank_docs(
        &self,
        query: &Query,
        docs: &[Doc<'_>],
        strategy: Strategy,
        limit: Option<usize>,
    ) -> Ranking {
        self.index.rank_docs_with(query, docs, strategy, limit, &|stem| self.lazy.lists_of(stem))
    }

    /// Ranks every live record for `query` (see [`Index::rank_all`]).
    pub(super) fn rank_all(&self, query: &Query, strategy: Strategy, limit: Option<usize>) -> Ranking {
        self.index.rank_all_with(query, strategy, limit, &|stem| self.lazy.lists_of(stem))
    }

    /// Gives `slot` its embedding vector; `false` when it is refused.
    pub(super) fn set_vector(&mut self, slot: u32, vector: &[f32]) -> bool {
        self.vectors.set(slot, vector)
    }

    /// The best `k` of `candidates` (`(index, slot)` pairs) by the cosine of their vector
    /// with `query` (see [`Vectors::top_k`]).
    pub(super) fn nearest(
        &self,
        query: &[f32],
        candidates: impl Iterator<Item = (usize, u32)>,
        k: usize,
    ) -> Vec<usize> {
        self.vectors.top_k(query, candidates, k)
    }

    /// Number of distinct terms indexed (memory reports).
    #[cfg(test)]
    pub(super) fn terms(&self) -> usize {
        self.index.terms()
    }

    /// Where the index's memory goes (see `super::footprint`).
    #[cfg(test)]
    pub(super) fn footprint(&self, m: &mut super::footprint::Meter) {
        self.index.footprint(m);
        self.vectors.footprint(m);
    }
}
