//! Selection: `selectRelevantContexts` and `selectRelevant` over the manager's index or
//! a list of pointers, embedding vectors, and `selectRelevant`'s second phase (its first
//! results scored again by their records, each given its passage).

use std::collections::HashMap;

use js_sys::{Array, Function, Object, Reflect, JSON};

use serde_json::Value;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::JsContextManager;
use crate::interop::args::{get, opt_size};
use crate::interop::errors::{invalid, IntoJs};
use crate::interop::selection::{
    filter_options, foreign_terms, listed_slots, one_vector, query_vector, score_json, ListedSlots,
};
use crate::plans::Reply;
use toolctx_core::error::{Error, ErrorKind, Result};
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
pub(super) enum Source<'a> {
    Slots(Option<Vec<u32>>),
    /// The array and its usable pointers, in order.
    List {
        list: &'a Array,
        listed: Vec<ListedPointer>,
    },
}

/// A usable pointer of a list given to a selection.
pub(super) struct ListedPointer {
    /// Its place in the array.
    position: u32,
    /// Its slot, when it is this manager's pointer (its terms are indexed).
    slot: Option<u32>,
    /// Its filepath, when it was given by filepath or is no pointer of this manager
    /// (else the slot's).
    path: Option<String>,
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
        let ranking = self.rank(query, &source, options, None, Selection::Seed).js()?;
        let Source::List { listed, .. } = &source else { unreachable!("a list source") };
        Ok(ranking.hits.iter().map(|hit| listed[hit.index].position).collect())
    }

    /// Scored selection: `{filepath, score, pointer, matched}`, best first. Without
    /// `pointers`, the pointers of this manager through the index: every one, or those
    /// saved with the `queryId` / `taskId` given (no pointer object is made to rank
    /// them). With `pointers` (their slots in `listed` where the glue knows them, as
    /// the `selectListed` query takes them), `queryId` / `taskId` narrow that list. `vector`: the
    /// query's, for hybrid ranking (the `queryVector` query made it), or `undefined`.
    /// Over this manager's pointers the answer is the JSON text of the list, which the
    /// driver parses once the call has returned (see `plans::Reply::Json`).
    pub(super) fn select_relevant(
        &self,
        query: &JsValue,
        options: &JsValue,
        listed: &JsValue,
        vector: &JsValue,
    ) -> Result<Reply> {
        self.inner.check_open("selectRelevant")?;
        let (query_id, task_id) = filter_options(options)?;
        let filter = Filter { query_id: query_id.as_deref(), task_id: task_id.as_ref() };
        let vector = query_vector(vector)?;
        let given = get(options, "pointers");
        let source = if given.is_undefined() {
            Source::Slots((!filter.is_all()).then(|| self.inner.slots(filter)))
        } else {
            match given.dyn_ref::<Array>() {
                Some(list) => self.list_source(list, listed_slots(listed)?, filter),
                None => return Err(Error::invalid("pointers must be an array")),
            }
        };
        let ranking = self.rank(query, &source, options, vector.as_deref(), Selection::Scored)?;
        let out = match &source {
            Source::Slots(_) => {
                let (mut json, mut path) = (String::from("["), String::new());
                for hit in &ranking.hits {
                    if json.len() > 1 {
                        json.push(',');
                    }
                    json.push_str("{\"filepath\":");
                    path.clear();
                    self.inner.push_filepath(hit.index as u32, &mut path);
                    toolctx_core::record::push_json_str(&mut json, &path);
                    json.push_str(",\"score\":");
                    json.push_str(&score_json(hit.score));
                    json.push_str(",\"pointer\":");
                    self.inner.pointer_json_of(hit.index as u32, &mut json);
                    json.push_str(",\"matched\":[");
                    for (i, m) in ranking.matched(hit).enumerate() {
                        if i > 0 {
                            json.push(',');
                        }
                        toolctx_core::record::push_json_str(&mut json, m);
                    }
                    json.push_str("]}");
                }
                json.push(']');
                Reply::Json(json)
            }
            Source::List { list, listed } => Reply::Value(JsValue::from(
                ranking
                    .hits
                    .iter()
                    .map(|s| {
                        let o = Object::new();
                        let it = &listed[s.index];
                        let path = match &it.path {
                            Some(path) => path.clone(),
                            None => it.slot.and_then(|slot| self.inner.filepath_of(slot)).unwrap_or_default(),
                        };
                        let _ = Reflect::set(&o, &"filepath".into(), &path.into());
                        let _ = Reflect::set(&o, &"score".into(), &s.score.into());
                        let _ = Reflect::set(&o, &"pointer".into(), &list.get(it.position));
                        let matched: Array = ranking.matched(s).map(JsValue::from).collect();
                        let _ = Reflect::set(&o, &"matched".into(), &matched);
                        JsValue::from(o)
                    })
                    .collect::<Array>(),
            )),
        };
        Ok(out)
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

/// The `strategy` of a selection's options.
fn strategy_of(options: &JsValue) -> Result<Strategy> {
    match get(options, "strategy").as_string().as_deref() {
        None | Some("bm25") => Ok(Strategy::Bm25),
        Some("overlap") => Ok(Strategy::Overlap),
        Some(other) => Err(Error::invalid(format!("unknown strategy {other:?}"))),
    }
}

/// Whether `selectRelevant`'s second phase scores its first results again: under BM25 (the
/// overlap count is the seed's, left as it is) for a query with a pair of words.
fn rescores(strategy: Strategy, query: &str) -> bool {
    strategy == Strategy::Bm25 && !toolctx_core::select::Phrase::new(query).is_empty()
}

/// The query's vector from what the `embed` option returned for it, for
/// `selectRelevant`'s hybrid ranking (the `vector` of a `select` query); throws when that
/// is not one vector.
pub(super) fn query_vector_of(embedded: &JsValue) -> Result<js_sys::Float32Array, JsValue> {
    let vector = one_vector(embedded).js()?;
    Ok(js_sys::Float32Array::from(vector.as_slice()))
}

impl JsContextManager {
    /// `selectRelevant`'s second phase (`toolctx_core::select::rescore`): its first
    /// results, their first-phase `scores` best first, scored again by where the query's
    /// words stand together in their records (`results`: each one's result as JSON text,
    /// `None` where it was not read; `filepaths`, theirs, for onDebug). In their new
    /// order and cut to the `limit` of `options` (without a budget, the first phase kept
    /// at least [`RESCORE_WINDOW`](toolctx_core::select::RESCORE_WINDOW)): `[{at, score,
    /// passage}]`, `at` a place in `scores`, `passage` the record's best-matching lines as
    /// the model reads them (`{text, startLine, endLine}`, undefined where no line holds a
    /// query word). Under the `overlap` strategy, or for a query of one word, the order
    /// stands and only the passages are made. A result that is not JSON gets neither
    /// (onDebug says so).
    pub(super) fn rescore(
        &self,
        query: &str,
        options: &JsValue,
        scores: &[f64],
        filepaths: &[Option<String>],
        results: &[Option<String>],
    ) -> Result<JsValue> {
        if scores.len() != results.len() || filepaths.len() != results.len() {
            return Err(Error::new(ErrorKind::Internal, "rescore: as many scores and filepaths as results"));
        }
        if scores.len() > toolctx_core::select::RESCORE_WINDOW {
            return Err(Error::new(ErrorKind::Internal, "rescore: more results than its window"));
        }
        let words = toolctx_core::select::Query::new(query);
        let phrase = toolctx_core::select::Phrase::new(query);
        let rescored = rescores(strategy_of(options)?, query);
        let mut shares = vec![0.0; scores.len()];
        let mut passages = vec![None; scores.len()];
        for (i, json) in results.iter().enumerate() {
            let Some(json) = json else { continue };
            let result: Value = match toolctx_core::record::from_json(json) {
                Ok(result) => result,
                Err(e) => {
                    let path = filepaths[i].as_deref();
                    self.inner.debug(format!("no passage for {}: {e}", path.unwrap_or("a result")), path);
                    continue;
                }
            };
            let view = toolctx_core::view::lines_of(&result);
            if rescored {
                shares[i] = phrase.share(&view);
            }
            passages[i] = toolctx_core::select::best_passage(&view, &words);
        }
        let limit = opt_size(options, "limit")?.unwrap_or(usize::MAX);
        let out = Array::new();
        for (at, score) in toolctx_core::select::rescore(scores, &shares).into_iter().take(limit) {
            let o = Object::new();
            let _ = Reflect::set(&o, &"at".into(), &(at as f64).into());
            let _ = Reflect::set(&o, &"score".into(), &score.into());
            if let Some(p) = &passages[at] {
                let passage = Object::new();
                let _ = Reflect::set(&passage, &"text".into(), &p.text.as_str().into());
                let _ = Reflect::set(&passage, &"startLine".into(), &(p.start_line as f64).into());
                let _ = Reflect::set(&passage, &"endLine".into(), &(p.end_line as f64).into());
                let _ = Reflect::set(&o, &"passage".into(), &passage);
            }
            out.push(&o);
        }
        Ok(out.into())
    }

    /// The usable pointers of `list` (those with a string filepath that `filter` lets
    /// through, by their own `queryId` and `taskId`), by slot where `given` has a
    /// current one, else by filepath (from `given`, else read from each object).
    pub(super) fn list_source<'a>(&self, list: &'a Array, known: ListedSlots, filter: Filter<'_>) -> Source<'a> {
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
        Source::List { list, listed }
    }

    /// Ranks `source` for `query` with the selection options (strategy, fallback,
    /// limit, budgets, dedupe) as `selection` reads them. Hits index slots
    /// (`Source::Slots`) or `paths` (`Source::List`).
    pub(super) fn rank(
        &self,
        query: &JsValue,
        source: &Source,
        options: &JsValue,
        vector: Option<&[f32]>,
        selection: Selection,
    ) -> Result<toolctx_core::select::Ranking> {
        let query = query.as_string().ok_or_else(|| Error::invalid("query must be a string"))?;
        let dedupe_default = selection == Selection::Scored;
        let fallback = match get(options, "fallback").as_string().as_deref() {
            None | Some("all") => Fallback::All,
            Some("none") => Fallback::None,
            Some(other) => return Err(Error::invalid(format!("unknown fallback {other:?}"))),
        };
        let strategy = strategy_of(options)?;
        let max_bytes = opt_size(options, "maxBytes")?;
        let max_tokens = opt_size(options, "maxTokens")?;
        // selectRelevant's second phase scores its first results again and cuts them to the
        // limit itself (`rescore`): the first phase keeps as many as it reads, when no budget
        // chose them.
        let limit = match opt_size(options, "limit")? {
            Some(limit)
                if selection == Selection::Scored
                    && max_bytes.is_none()
                    && max_tokens.is_none()
                    && limit > 0
                    && rescores(strategy, &query) =>
            {
                Some(limit.max(toolctx_core::select::RESCORE_WINDOW))
            }
            limit => limit,
        };
        let dedupe = match get(options, "dedupe") {
            v if v.is_undefined() || v.is_null() => dedupe_default,
            v => v.as_bool().ok_or_else(|| Error::invalid("dedupe must be a boolean"))?,
        };
        let query = toolctx_core::select::query_for(&query, strategy, selection == Selection::Seed);
        // Without a budget only the best `limit` need sorting.
        let early = if max_bytes.is_none() && max_tokens.is_none() { limit } else { None };
        let mut ranking = self.ranked(&query, source, fallback, strategy, early, vector);
        if dedupe {
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
        let inner = &self.inner;
        let size_of = |i: usize| match source {
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
        };
        if let Some(max) = max_bytes {
            ranking.hits = toolctx_core::select::within_budget(ranking.hits, max, size_of);
        }
        if let Some(max) = max_tokens {
            ranking.hits = toolctx_core::select::within_budget(ranking.hits, max, |i| {
                toolctx_core::select::estimated_tokens(size_of(i))
            });
        }
        if let Some(limit) = limit {
            ranking.hits.truncate(limit);
        }
        Ok(ranking)
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
