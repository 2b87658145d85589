//! Selection: the ranking of `selectRelevantContexts` and of `selectRelevant`'s first
//! phase (`relevant.rs` runs the rest) over the manager's index or a list of pointers,
//! their options, and embedding vectors.

use std::collections::HashMap;

use js_sys::{Array, Function, JSON};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::JsContextManager;
use crate::interop::args::{get, opt_size};
use crate::interop::errors::{invalid, IntoJs};
use crate::interop::selection::{filter_options, foreign_terms, listed_slots, one_vector, ListedSlots};
use toolctx_core::error::{Error, Result};
use toolctx_core::record::task_id_from_f64;
use toolctx_core::select::{Fallback, Strategy};
use toolctx_core::store::{Candidate, Filter, Listed};

/// Which selection ranks: `selectRelevantContexts` (the seed's contract: only its
/// keywords make a pointer relevant, duplicates kept unless asked) or `selectRelevant`.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Selection {
    Seed,
    Scored,
}

/// What a selection ranks: this manager's pointers by slot (all of them when `None`),
/// or an array of pointer objects from anywhere.
pub(super) enum Source {
    Slots(Option<Vec<u32>>),
    /// The array and its usable pointers, in order.
    List {
        list: Array,
        listed: Vec<ListedPointer>,
    },
}

/// A usable pointer of a list given to a selection.
pub(super) struct ListedPointer {
    /// Its place in the array.
    pub(super) position: u32,
    /// Its slot, when it is this manager's pointer (its terms are indexed).
    pub(super) slot: Option<u32>,
    /// Its filepath, when it was given by filepath or is no pointer of this manager
    /// (else the slot's).
    pub(super) path: Option<String>,
}

impl JsContextManager {
    /// `selectRelevantContexts` (pkg-template/context-manager.js exports it under that name):
    /// the places in `pointers` of the relevant ones, best first, all of them when none
    /// match (the glue maps them to the filepaths it read). `listed`: the slots of the
    /// pointers this manager listed itself ([`ListedSlots`]); the others are read from
    /// their objects.
    pub(super) fn select_listed(
        &self,
        query: &JsValue,
        pointers: &JsValue,
        options: &JsValue,
        listed: &JsValue,
    ) -> Result<Vec<u32>, JsValue> {
        let list: &Array = pointers.dyn_ref().ok_or_else(|| invalid("pointers must be an array"))?;
        let (query_id, task_id) = filter_options(options).js()?;
        let filter = Filter { query_id: query_id.as_deref(), task_id: task_id.as_ref() };
        let source = self.list_source(list, listed_slots(listed).js()?, filter);
        let query = query.as_string().ok_or_else(|| invalid("query must be a string"))?;
        let options = SelectOptions::read(options, Selection::Seed).js()?;
        let mut ranking = self.rank(&query, &source, &options, None, Selection::Seed, 0);
        self.cut(&mut ranking.hits, &source, &options);
        let Source::List { listed, .. } = &source else { unreachable!("a list source") };
        Ok(ranking.hits.iter().map(|hit| listed[hit.index].position).collect())
    }

    /// The `embed` option (texts to vectors), while the manager is open: the JS glue
    /// calls it (with a saved record's text, or the query of `selectRelevant`).
    pub(super) fn embed_option(&self) -> Option<Function> {
        self.embed.clone().filter(|_| self.inner.check_open("embed").is_ok())
    }

    /// Gives the record saved at `filepath` the vector in `embedded` (what the `embed`
    /// option returned for its text); throws when that is not one vector, and tells
    /// `onDebug` when the vector is refused (the record is then ranked by BM25 alone).
    pub(super) fn set_vector(&self, filepath: &str, embedded: &JsValue) -> Result<(), JsValue> {
        let vector = one_vector(embedded).js()?;
        // A pointer gone while `embed` ran (cleared, evicted) needs no vector.
        if self.inner.description_of(filepath).is_some() && !self.inner.set_vector(filepath, &vector) {
            self.inner.debug(
                "embed gave a vector that was refused (empty, zero, not finite or of another dimension)",
                Some(filepath),
            );
        }
        Ok(())
    }

    /// The slots of the pointers `getAllPointers` (`filter` undefined),
    /// `getPointersForQuery` (`{queryId}`) or `getPointersForTask` (`{taskId}`) list, in
    /// order (the JS glue makes the lists). A filter of the wrong type matches nothing,
    /// as the seed's does.
    pub(super) fn slots(&self, filter: &JsValue) -> Vec<u32> {
        match filter_options(filter) {
            Ok((query_id, task_id)) => {
                self.inner.slots(Filter { query_id: query_id.as_deref(), task_id: task_id.as_ref() })
            }
            Err(_) => Vec::new(),
        }
    }

    /// The pointers in `slots`, as the JSON text of an array, in one crossing. The JS
    /// glue parses it once the call has returned: objects made (and field representations
    /// changed) while a wasm call is on the stack can crash Node 20's V8 when it
    /// deoptimises the caller, which inlined the call.
    pub(super) fn pointers(&self, slots: &[u32]) -> String {
        let mut json = String::from("[");
        for &slot in slots {
            if json.len() > 1 {
                json.push(',');
            }
            if !self.inner.pointer_json_of(slot, &mut json) {
                json.push_str("null");
            }
        }
        json.push(']');
        json
    }
}

/// The options of a selection, read once where they enter.
#[derive(Clone, Copy)]
pub(super) struct SelectOptions {
    pub(super) fallback: Fallback,
    pub(super) strategy: Strategy,
    pub(super) limit: Option<usize>,
    pub(super) max_bytes: Option<usize>,
    pub(super) max_tokens: Option<usize>,
    pub(super) dedupe: bool,
}

impl SelectOptions {
    /// `options` as `selection` reads them (`dedupe` is on by default for `selectRelevant`).
    pub(super) fn read(options: &JsValue, selection: Selection) -> Result<SelectOptions> {
        let fallback = match get(options, "fallback").as_string().as_deref() {
            None | Some("all") => Fallback::All,
            Some("none") => Fallback::None,
            Some(other) => return Err(Error::invalid(format!("unknown fallback {other:?}"))),
        };
        let strategy = match get(options, "strategy").as_string().as_deref() {
            None | Some("bm25") => Strategy::Bm25,
            Some("overlap") => Strategy::Overlap,
            Some(other) => return Err(Error::invalid(format!("unknown strategy {other:?}"))),
        };
        let dedupe = match get(options, "dedupe") {
            v if v.is_undefined() || v.is_null() => selection == Selection::Scored,
            v => v.as_bool().ok_or_else(|| Error::invalid("dedupe must be a boolean"))?,
        };
        Ok(SelectOptions {
            fallback,
            strategy,
            limit: opt_size(options, "limit")?,
            max_bytes: opt_size(options, "maxBytes")?,
            max_tokens: opt_size(options, "maxTokens")?,
            dedupe,
        })
    }

    /// Whether a budget (`maxBytes`, `maxTokens`) chooses the hits.
    pub(super) fn budgeted(&self) -> bool {
        self.max_bytes.is_some() || self.max_tokens.is_some()
    }
}

/// The query's vector from what the `embed` option returned for it, for
/// `selectRelevant`'s hybrid ranking (the `vector` of a `select` query); throws when that
/// is not one vector.
pub(super) fn query_vector_of(embedded: &JsValue) -> Result<js_sys::Float32Array, JsValue> {
    let vector = one_vector(embedded).js()?;
    Ok(js_sys::Float32Array::from(vector.as_slice()))
}

impl JsContextManager {
    /// The usable pointers of `list` (those with a string filepath that `filter` lets
    /// through, by their own `queryId` and `taskId`), by slot where `given` has a
    /// current one, else by filepath (from `given`, else read from each object).
    pub(super) fn list_source(&self, list: &Array, known: ListedSlots, filter: Filter<'_>) -> Source {
        let mut known_slots = known.positions.iter().zip(&known.slots).peekable();
        let mut listed = Vec::new();
        for i in 0..list.length() {
            let slot = known_slots.next_if(|(&position, _)| position == i).map(|(_, &slot)| slot);
            let (slot, path) = match slot.and_then(|slot| self.inner.resolve_slot(known.epoch, slot)) {
                Some(Listed::Slot(slot)) => (Some(slot), None),
                Some(Listed::Gone(path)) => (None, Some(path)),
                None => {
                    let path = get(&list.get(i), "filepath").as_string();
                    let Some(path) = path.filter(|p| !p.is_empty()) else { continue };
                    (self.inner.slot_of(&path), Some(path))
                }
            };
            if !filter.is_all() {
                let pointer = list.get(i);
                let task = get(&pointer, "taskId").as_f64().and_then(|t| task_id_from_f64(t).ok());
                if !filter.passes(get(&pointer, "queryId").as_string().as_deref(), task.as_ref()) {
                    continue;
                }
            }
            listed.push(ListedPointer { position: i, slot, path });
        }
        Source::List { list: list.clone(), listed }
    }

    /// Ranks `source` for `query` with `options` (strategy, fallback, dedupe) as
    /// `selection` reads them: without a budget, the best `limit` (at least `at_least`)
    /// are sorted; with one, every hit. Hits index slots (`Source::Slots`) or `listed`
    /// (`Source::List`). Budgets and the limit are applied by [`Self::cut`].
    pub(super) fn rank(
        &self,
        query: &str,
        source: &Source,
        options: &SelectOptions,
        vector: Option<&[f32]>,
        selection: Selection,
        at_least: usize,
    ) -> toolctx_core::select::Ranking {
        let SelectOptions { fallback, strategy, .. } = *options;
        let query = toolctx_core::select::query_for(query, strategy, selection == Selection::Seed);
        let early = if options.budgeted() { None } else { options.limit.map(|limit| limit.max(at_least)) };
        let mut ranking = self.ranked(&query, source, fallback, strategy, early, vector);
        if options.dedupe {
            let inner = &self.inner;
            let slot_of = |i: usize| match source {
                Source::Slots(_) => Some(i as u32),
                Source::List { listed, .. } => listed[i].slot,
            };
            let full = ranking.hits.len();
            let superseded = early.is_some()
                && ranking.hits.iter().any(|h| slot_of(h.index).is_some_and(|s| inner.has_later_copy(s)));
            let dropped = inner.collapse_duplicates(&mut ranking.hits, slot_of);
            if superseded || (dropped > 0 && early.is_some_and(|k| full >= k)) {
                // Duplicates took places in the best `limit`, or a later copy may lie
                // beyond it: rank every candidate.
                ranking = self.ranked(&query, source, fallback, strategy, None, vector);
                inner.collapse_duplicates(&mut ranking.hits, slot_of);
            }
        }
        ranking
    }

    /// The size in bytes of the record of hit `i` of `source` (as its pointer gives it).
    pub(super) fn size_of(&self, source: &Source, i: usize) -> usize {
        let inner = &self.inner;
        match source {
            Source::Slots(_) => inner.size_of_slot(i as u32).unwrap_or(0),
            Source::List { list, listed } => {
                if let Some(size) = listed[i].slot.and_then(|slot| inner.size_of_slot(slot)) {
                    return size;
                }
                let pointer = list.get(listed[i].position);
                match get(&pointer, "size").as_f64() {
                    Some(n) if n >= 0.0 => n as usize,
                    _ => JSON::stringify(&pointer).ok().and_then(|s| s.as_string()).map_or(0, |s| s.len()),
                }
            }
        }
    }

    /// `hits` within the budgets of `options` (the best set whose records fit, in rank
    /// order), then cut to its limit.
    pub(super) fn cut(&self, hits: &mut Vec<toolctx_core::select::Scored>, source: &Source, options: &SelectOptions) {
        use toolctx_core::select::{estimated_tokens, within_budget};
        if let Some(max) = options.max_bytes {
            *hits = within_budget(std::mem::take(hits), max, |i| self.size_of(source, i));
        }
        if let Some(max) = options.max_tokens {
            *hits = within_budget(std::mem::take(hits), max, |i| estimated_tokens(self.size_of(source, i)));
        }
        if let Some(limit) = options.limit {
            hits.truncate(limit);
        }
    }

    /// The ranking of `source` for `query`, the best `early` of it when given. With the
    /// query's `vector`: hybrid, the keyword ranking and the [`VECTOR_DEPTH`] nearest
    /// pointers by cosine fused by reciprocal rank (the score is the fused one; a pointer
    /// found by its vector alone matched no keyword); the fallback applies when neither
    /// finds anything.
    ///
    /// [`VECTOR_DEPTH`]: toolctx_core::select::VECTOR_DEPTH
    pub(super) fn ranked(
        &self,
        query: &toolctx_core::select::Query,
        source: &Source,
        fallback: Fallback,
        strategy: Strategy,
        early: Option<usize>,
        vector: Option<&[f32]>,
    ) -> toolctx_core::select::Ranking {
        let inner = &self.inner;
        if let Some(vector) = vector {
            let candidates: Vec<(usize, u32)> = match source {
                Source::Slots(None) => inner.slots(Filter::ALL).into_iter().map(|s| (s as usize, s)).collect(),
                Source::Slots(Some(slots)) => slots.iter().map(|&s| (s as usize, s)).collect(),
                Source::List { listed, .. } => {
                    listed.iter().enumerate().filter_map(|(i, it)| it.slot.map(|s| (i, s))).collect()
                }
            };
            let depth = toolctx_core::select::VECTOR_DEPTH.max(early.unwrap_or(0));
            let near = inner.nearest(vector, candidates.into_iter(), depth);
            if !near.is_empty() {
                let lexical = self.ranked(query, source, Fallback::None, strategy, None, None);
                let keyword_hits: Vec<usize> = lexical.hits.iter().map(|h| h.index).collect();
                let matched: HashMap<usize, u64> = lexical.hits.iter().map(|h| (h.index, h.matched)).collect();
                let mut hits: Vec<toolctx_core::select::Scored> = toolctx_core::select::fuse(&[&keyword_hits, &near])
                    .into_iter()
                    .map(|(index, score)| toolctx_core::select::Scored {
                        index,
                        score,
                        matched: matched.get(&index).copied().unwrap_or(0),
                    })
                    .collect();
                if let Some(k) = early {
                    hits.truncate(k);
                }
                return toolctx_core::select::Ranking { keywords: lexical.keywords, hits };
            }
        }
        match source {
            Source::Slots(None) => inner.rank_all(query, fallback, strategy, early),
            Source::Slots(Some(slots)) => inner.rank_slots(query, slots, fallback, strategy, early),
            Source::List { list, listed } => {
                let candidates: Vec<Candidate> = listed
                    .iter()
                    .map(|it| match it.slot {
                        Some(slot) => Candidate::Known(slot),
                        None => foreign_terms(&list.get(it.position)),
                    })
                    .collect();
                inner.rank(query, &candidates, fallback, strategy, early)
            }
        }
    }
}
