//! Reading the pointer table: listing pointers by filter, handles, slots and epochs, ranking
//! and nearest-vector search over the records a manager knows.

use super::terms::terms_of;
use super::{Entry, Manager};
use crate::error::Result;
use crate::handle;
use crate::record::from_json;
use crate::select::{Doc, Fallback, Query, Ranking, Scored, Strategy, Terms};
use serde_json::{Number, Value};
use std::collections::HashMap;

/// Which pointers to list or rank: those saved with this query id and/or task id
/// (every pointer when neither is given).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Filter<'a> {
    /// Only pointers saved with this query id.
    pub query_id: Option<&'a str>,
    /// Only pointers saved with this task id.
    pub task_id: Option<&'a Number>,
}

impl<'a> Filter<'a> {
    /// Every pointer.
    pub const ALL: Filter<'static> = Filter { query_id: None, task_id: None };

    /// The pointers saved with query id `q`.
    pub fn query(q: &'a str) -> Self {
        Filter { query_id: Some(q), task_id: None }
    }

    /// The pointers saved with task id `t`.
    pub fn task(t: &'a Number) -> Self {
        Filter { query_id: None, task_id: Some(t) }
    }

    /// Whether it lets every pointer through.
    pub fn is_all(&self) -> bool {
        self.query_id.is_none() && self.task_id.is_none()
    }

    /// Whether a pointer saved with `query_id` and `task_id` passes.
    pub fn passes(&self, query_id: Option<&str>, task_id: Option<&Number>) -> bool {
        self.query_id.map_or(true, |q| query_id == Some(q)) && self.task_id.map_or(true, |t| task_id == Some(t))
    }
}

/// A pointer of a list, as [`Manager::resolve_slot`] finds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Listed {
    /// This manager's pointer in that slot.
    Slot(u32),
    /// No pointer of this manager any more; its filepath.
    Gone(String),
}

/// A candidate for selection: a pointer of this manager by path, or one described in full.
#[derive(Debug, Clone)]
pub enum Candidate {
    /// A pointer of this manager, by slot: its terms are already indexed.
    Known(u32),
    /// Any other pointer: its indexed text, tokenised now.
    Foreign(Terms),
}

/// What indexing a record costs beyond its text's bytes, in bytes of text: its
/// metadata's terms and its manifest entry (a slice of small results is not one of
/// thousands of records).
const RECORD_COST: usize = 512;

impl Manager {
    /// The pointers matching `filter`, as a JSON array, in save order.
    pub fn pointers_json(&self, filter: Filter<'_>) -> String {
        let state = self.state.borrow();
        let mut out = String::from("[");
        for slot in state.pointers.matching(filter) {
            if out.len() > 1 {
                out.push(',');
            }
            state.pointers.pointer_json(slot, &mut out);
        }
        out.push(']');
        out
    }

    /// The slots of the pointers matching `filter`, in save order. A slot names one
    /// pointer until the pointers are forgotten ([`Manager::epoch`] changes).
    pub fn slots(&self, filter: Filter<'_>) -> Vec<u32> {
        self.state.borrow().pointers.matching(filter).collect()
    }

    /// Frees what evicted pointers still hold once they are as many as the live ones (at
    /// least [`COMPACT_FROM`](super::COMPACT_FROM)): an evicted pointer keeps its slot, so a pointer list
    /// handed out earlier stays valid, until this. Slots change (the epoch moves).
    /// Returns whether it compacted.
    pub fn compact(&self) -> bool {
        let mut state = self.state.borrow_mut();
        // Not while segments read by range hold records: their lists are read by slot.
        if !state.pointers.compaction_due() || !state.live.can_remap() {
            return false;
        }
        state.compact();
        true
    }

    /// Slots held by the pointer table, evicted ones included (memory reports, tests).
    pub fn slots_held(&self) -> usize {
        self.state.borrow().pointers.slots_held()
    }

    /// Changes whenever slots are forgotten (`clear_pointers`, resume, rebuild).
    pub fn epoch(&self) -> u32 {
        self.state.borrow().pointers.epoch()
    }

    /// The pointer in `slot`, as JSON, appended to `out`; `false` when there is none.
    pub fn pointer_json_of(&self, slot: u32, out: &mut String) -> bool {
        self.state.borrow().pointers.pointer_json(slot, out)
    }

    /// The slot of the pointer whose handle is `text` (SPEC §3: `ctx:` and base32, any
    /// case; a long handle or its short form). `Ok(None)`: no such handle here (or
    /// `text` is none). An `INVALID_ARGUMENT` error when a short handle names two records
    /// (their long handles tell them apart).
    pub fn slot_of_handle(&self, text: &str) -> Result<Option<u32>> {
        let Some(body) = handle::parse(text.trim()) else { return Ok(None) };
        self.state.borrow().pointers.slot_of_handle(text, &body)
    }

    /// The filepath of the pointer in `slot`.
    pub fn filepath_of(&self, slot: u32) -> Option<String> {
        let mut out = String::new();
        self.push_filepath(slot, &mut out).then_some(out)
    }

    /// Appends the filepath of the pointer in `slot` to `out`; `false` when there is none.
    pub fn push_filepath(&self, slot: u32, out: &mut String) -> bool {
        self.state.borrow().pointers.push_filepath(slot, out)
    }

    /// The record size of the pointer in `slot`.
    pub fn size_of_slot(&self, slot: u32) -> Option<usize> {
        self.state.borrow().pointers.get(slot).map(Entry::size)
    }

    /// The slot of this manager's pointer at `path`.
    pub fn slot_of(&self, path: &str) -> Option<u32> {
        self.state.borrow().pointers.slot_of(path)
    }

    /// Where the pointer a list taken at `epoch` had in `slot` is now: [`Listed::Slot`]
    /// while it is this manager's, else [`Listed::Gone`] with its filepath (evicted, or
    /// removed by a reconcile; a save that put a pointer back at that path gave it
    /// another slot, which is the one returned). `None` when the epoch moved or there
    /// never was such a slot: the slot may name another pointer, so it says nothing.
    pub fn resolve_slot(&self, epoch: u32, slot: u32) -> Option<Listed> {
        self.state.borrow().resolve_slot(epoch, slot)
    }

    /// Indexes the content of every record saved since the last call (near-real-time,
    /// SPEC §6): a save writes its record and adds its pointer with its metadata; the
    /// tokenising of its result waits for idle time ([`Manager::index_some`]), the next
    /// ranking, a session manifest's or a segment's write, or
    /// [`UNINDEXED_BYTES`](super::UNINDEXED_BYTES) of results waiting. Every ranking calls
    /// it first, so it sees every save acknowledged before it.
    pub fn index_content(&self) {
        self.index_waiting(usize::MAX);
    }

    /// Indexes the content of the records waiting, oldest first, until `bytes` of their
    /// results' text are (at least one record, when one waits): a slice of index work for
    /// idle time, [`INDEX_SLICE_BYTES`](super::INDEX_SLICE_BYTES) as the JavaScript driver
    /// runs it. Whether records still wait. A record whose pointer is gone is passed over.
    pub fn index_some(&self, bytes: usize) -> bool {
        let (indexed, more) = self.index_waiting(bytes);
        if indexed && !more {
            // Idle time caught up with the saves: one that must index again says so again.
            self.indexing_behind.set(false);
        }
        more
    }

    /// Indexes records waiting, oldest first, until `bytes` of their text are (a record
    /// counts [`RECORD_COST`] bytes more: its pointer's terms and manifest entry); whether
    /// it indexed any, and whether some still wait.
    fn index_waiting(&self, bytes: usize) -> (bool, bool) {
        let mut done = 0usize;
        let mut indexed = false;
        while done < bytes {
            let Some((path, json)) = self.state.borrow_mut().live.next_waiting() else { break };
            done = done.saturating_add(json.len() + RECORD_COST);
            self.index_one(&path, &json);
            indexed = true;
        }
        (indexed, self.state.borrow().live.content_waiting() > 0)
    }

    /// Indexes the content `json` of the record saved at `path`.
    fn index_one(&self, path: &str, json: &str) {
        let terms = {
            let mut state = self.state.borrow_mut();
            let Some(slot) = state.pointers.slot_of(path) else { return };
            let Some(entry) = state.pointers.get(slot) else { return };
            let meta = entry.meta();
            let written = entry.written;
            let args: Value = from_json(&meta.args_json).unwrap_or(Value::Null);
            let terms = Terms::of_record_with_content(
                &meta.tool_description,
                &meta.tool_name,
                &args,
                Some(json),
                self.options.content_bytes,
            );
            state.live.add_content(slot, &terms);
            let persisted = !state.held.contains(path);
            (written.then(|| terms.clone()), persisted.then_some(terms))
        };
        if let Some(terms) = terms.0 {
            // The manifest entry gets the record's content terms.
            self.track(path, &terms);
        }
        if let Some(terms) = terms.1 {
            self.to_segment(path, terms);
        }
    }

    /// How many saved records' content waits to be indexed (see
    /// [`Manager::index_content`]).
    pub fn content_waiting(&self) -> usize {
        self.state.borrow().live.content_waiting()
    }

    /// Ranks `candidates` for `query` (seed contract: relevant first, fallback to all).
    /// `Scored::index` is a position in `candidates`; statistics are those of the
    /// candidates. Only the best `limit` are sorted and kept.
    pub fn rank(
        &self,
        query: &Query,
        candidates: &[Candidate],
        fallback: Fallback,
        strategy: Strategy,
        limit: Option<usize>,
    ) -> Ranking {
        self.index_content();
        let state = self.state.borrow();
        // The index ranks a slot once; a pointer given again is ranked from its terms,
        // so every candidate given is ranked, as the seed does.
        let mut seen = vec![false; state.pointers.slots_held()];
        let mut first = |slot: u32| match seen.get_mut(slot as usize) {
            Some(s) => !std::mem::replace(s, true),
            None => true,
        };
        // A record of a segment read by range is ranked by its metadata when the query's
        // lists were not read ([`super::lazy`]: the synchronous seed ranking).
        let unread = !state.live.lazy.is_empty() && !state.live.lazy.prepared(&query.stems);
        let metadata_only = |slot: u32| unread && state.live.lazy.holds(slot);
        let again: Vec<Option<Terms>> = candidates
            .iter()
            .map(|c| match c {
                Candidate::Known(slot) if !first(*slot) || metadata_only(*slot) => {
                    Some(state.pointers.get(*slot).map(|e| terms_of(&e.meta())).unwrap_or_default())
                }
                _ => None,
            })
            .collect();
        let docs: Vec<Doc<'_>> = candidates
            .iter()
            .zip(&again)
            .map(|(c, again)| match (c, again) {
                (_, Some(terms)) | (Candidate::Foreign(terms), None) => Doc::Terms(terms),
                (Candidate::Known(slot), None) => Doc::Slot(*slot),
            })
            .collect();
        let mut ranking = state.live.rank_docs(query, &docs, strategy, limit);
        ranking.apply_fallback(fallback, 0..candidates.len().min(limit.unwrap_or(usize::MAX)));
        ranking
    }

    /// Collapses duplicates among `hits` (the same tool, args hash and result, saved by
    /// this manager): each counts once, at the place of its best-ranked copy, and the
    /// copy kept is the latest saved. `slot_of` gives a hit's slot (`None`: a pointer
    /// of no manager, never collapsed). Returns how many hits were dropped.
    pub fn collapse_duplicates(&self, hits: &mut Vec<Scored>, slot_of: impl Fn(usize) -> Option<u32>) -> usize {
        let state = self.state.borrow();
        let entry = |i: usize| slot_of(i).and_then(|s| state.pointers.get(s).map(|e| (e, state.live.order(s))));
        // Kept hits by result hash (the cheap part of the key), as places in `out`.
        let mut kept: HashMap<u64, Vec<usize>> = HashMap::new();
        let before = hits.len();
        let mut out: Vec<Scored> = Vec::with_capacity(before);
        for hit in hits.drain(..) {
            let Some((e, seq, hash)) = entry(hit.index).and_then(|(e, seq)| e.result_hash().map(|h| (e, seq, h)))
            else {
                out.push(hit);
                continue;
            };
            let places = kept.entry(hash).or_default();
            match places.iter().copied().find(|&p| entry(out[p].index).is_some_and(|(k, _)| k.duplicates(e))) {
                Some(p) => {
                    if entry(out[p].index).is_some_and(|(_, k_seq)| k_seq < seq) {
                        out[p].index = hit.index;
                    }
                }
                None => {
                    places.push(out.len());
                    out.push(hit);
                }
            }
        }
        *hits = out;
        before - hits.len()
    }

    /// Whether a later copy of the pointer at `slot` (same tool, args and result) was
    /// saved: a hint for selection, which then ranks every candidate to keep the latest.
    pub fn has_later_copy(&self, slot: u32) -> bool {
        self.state.borrow().pointers.has_later_copy(slot)
    }

    /// Ranks every pointer for `query` through the index: no text is rescanned.
    /// `Scored::index` is a slot; the fallback lists every slot in save order.
    pub fn rank_all(&self, query: &Query, fallback: Fallback, strategy: Strategy, limit: Option<usize>) -> Ranking {
        self.index_content();
        let state = self.state.borrow();
        if !state.live.lazy.is_empty() && !state.live.lazy.prepared(&query.stems) {
            // Lists of segments read by range not read for this query: each pointer ranked
            // as a candidate (those records by their metadata).
            let slots: Vec<u32> = state.pointers.in_order().to_vec();
            drop(state);
            return self.rank_slots(query, &slots, fallback, strategy, limit);
        }
        let mut ranking = state.live.rank_all(query, strategy, limit);
        let order = state.pointers.in_order().iter().map(|&s| s as usize).take(limit.unwrap_or(usize::MAX));
        ranking.apply_fallback(fallback, order);
        ranking
    }

    /// Ranks the pointers `filter` lets through for `query`, through the index: no text
    /// is rescanned. `Scored::index` is a slot; statistics are those of the pointers
    /// ranked; the fallback lists them in save order.
    pub fn rank_matching(
        &self,
        query: &Query,
        filter: Filter<'_>,
        fallback: Fallback,
        strategy: Strategy,
        limit: Option<usize>,
    ) -> Ranking {
        if filter.is_all() {
            return self.rank_all(query, fallback, strategy, limit);
        }
        self.rank_slots(query, &self.slots(filter), fallback, strategy, limit)
    }

    /// Ranks the pointers in `slots` (as [`Manager::rank`] does); `Scored::index`
    /// is a slot.
    pub fn rank_slots(
        &self,
        query: &Query,
        slots: &[u32],
        fallback: Fallback,
        strategy: Strategy,
        limit: Option<usize>,
    ) -> Ranking {
        let candidates: Vec<Candidate> = slots.iter().map(|&s| Candidate::Known(s)).collect();
        let mut ranking = self.rank(query, &candidates, fallback, strategy, limit);
        ranking.hits.iter_mut().for_each(|h| h.index = slots[h.index] as usize);
        ranking
    }

    /// Gives the pointer at `path` its embedding vector (the host's `embed` hook's),
    /// for hybrid ranking; `false` (nothing kept) when there is no such pointer or the
    /// vector is refused (empty, zero, not finite, or of another dimension than those held).
    pub fn set_vector(&self, path: &str, vector: &[f32]) -> bool {
        let mut state = self.state.borrow_mut();
        let Some(slot) = state.pointers.slot_of(path) else { return false };
        state.live.set_vector(slot, vector)
    }

    /// The best `k` of `candidates` (`(index, slot)` pairs) by the cosine of their
    /// vector with `query`, nearest first, those with a positive cosine only: their indices.
    pub fn nearest(&self, query: &[f32], candidates: impl Iterator<Item = (usize, u32)>, k: usize) -> Vec<usize> {
        self.state.borrow().live.nearest(query, candidates, k)
    }

    /// The description of this manager's pointer at `path`.
    pub fn description_of(&self, path: &str) -> Option<String> {
        self.state.borrow().pointers.entry(path).map(|e| e.description().into_owned())
    }

    /// The record size of this manager's pointer at `path`.
    pub fn size_of(&self, path: &str) -> Option<usize> {
        self.state.borrow().pointers.entry(path).map(Entry::size)
    }

    /// Whether `path` is the filepath of one of this manager's pointers.
    pub fn knows(&self, path: &str) -> bool {
        self.state.borrow().pointers.slot_of(path).is_some()
    }
}
