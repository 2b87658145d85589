//! `selectRelevant` as one plan: what the ranking needs of the index segments read by
//! range (`PrepareQuery`), the first phase (BM25F, hybrid with the query's vector: the
//! ranking of `select.rs`), the second (its first results' records read, each scored again
//! by where the query's words stand together in it and given its passage:
//! `toolctx_core::store::SecondPhase`), then the budgets and the limit, and the answer.
//!
//! The second phase scores again under BM25 only (the overlap strategy is the seed's
//! count) and for a query with a pair of words; then the first phase keeps at least
//! [`RESCORE_WINDOW`] results and the budgets and the limit apply after it, so a limit or
//! a budget keeps the best of the same order. Otherwise the budgets and the limit apply
//! first, and the second phase only gives the results left their passages.

use std::collections::HashMap;

use js_sys::{Array, Object, Reflect};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::select::{SelectOptions, Selection, Source};
use super::JsContextManager;
use crate::interop::args::get;
use crate::interop::selection::{filter_options, listed_slots, query_vector, score_json};
use crate::plans::{self, Reply};
use toolctx_core::error::{Error, Result};
use toolctx_core::plan::Plan;
use toolctx_core::select::{
    estimated_tokens, rescore, Passage, Phrase, Query, Ranking, Scored, Strategy, RESCORE_WINDOW,
};
use toolctx_core::store::{Filter, PrepareQuery, Reread, SecondPhase, Target};

/// What the first phase made: the source ranked, the options read, the ranking, and
/// whether the second phase scores it again.
struct FirstPhase {
    source: Source,
    options: SelectOptions,
    ranking: Ranking,
    rescored: bool,
}

impl JsContextManager {
    /// The first step of `selectRelevant`'s plan: `[{filepath, score, pointer, matched,
    /// passage}]`, best first. Without `pointers`, the pointers of this manager through
    /// the index: every one, or those saved with the `queryId` / `taskId` given (no
    /// pointer object is made to rank them). With `pointers` (their slots in `listed`
    /// where the glue knows them, as the `selectListed` query takes them), `queryId` /
    /// `taskId` narrow that list. `vector`: the query's, for hybrid ranking (the
    /// `queryVector` query made it), or `undefined`. Over this manager's pointers the
    /// answer is the JSON text of the list, which the driver parses once the call has
    /// returned (see `plans::Reply::Json`).
    pub(super) fn select_relevant(
        &self,
        query: &JsValue,
        options: JsValue,
        listed: JsValue,
        vector: JsValue,
    ) -> JsValue {
        let Some(text) = query.as_string() else { return plans::failed(Error::invalid("query must be a string")) };
        let prepare = PrepareQuery::new(self.inner.clone(), &Query::new(&text));
        let this = self.clone();
        let plan = prepare.and_then(move |()| this.phases(text, options, listed, vector));
        plans::start(self.storage.clone(), plan, Ok)
    }

    /// The first phase, and the rest of the plan: the second phase over its first results,
    /// then the answer. Slots may move while the records are read (pointers cleared, the
    /// index rebuilt, the table compacted by a save: the epoch moves); the ranking is then
    /// made again, and answered without the second phase.
    fn phases(
        self,
        text: String,
        options: JsValue,
        listed: JsValue,
        vector: JsValue,
    ) -> Result<impl Plan<Output = Reply>> {
        let first = self.first_phase(&text, &options, &listed, &vector)?;
        let epoch = self.inner.epoch();
        let SelectOptions { max_bytes, max_tokens, .. } = first.options;
        let over_budget = |size: usize| {
            max_bytes.is_some_and(|max| size > max) || max_tokens.is_some_and(|max| estimated_tokens(size) > max)
        };
        // Not read: a result that matched no word (a fallback's, or found by its vector
        // alone), or that no budget could keep.
        let targets = first.ranking.hits[..first.ranking.hits.len().min(RESCORE_WINDOW)]
            .iter()
            .map(|hit| {
                let size = self.size_of(&first.source, hit.index);
                let read = hit.matched != 0 && !over_budget(size);
                Target { path: if read { self.path_of(&first.source, hit.index) } else { None }, size }
            })
            .collect();
        let second = SecondPhase::new(self.inner.clone(), &text, first.rescored, targets)?;
        Ok(second.map(move |mut read| {
            if self.inner.epoch() != epoch {
                let again = self.first_phase(&text, &options, &listed, &vector)?;
                return Ok(self.answer(again, Reread::default()));
            }
            let changed = std::mem::take(&mut read.changed);
            let reply = self.answer(first, read);
            // Records rewritten under their name since they were indexed, indexed as they
            // are now (their slots move: after the answer is made).
            self.inner.index_changed(changed);
            Ok(reply)
        }))
    }

    /// The first phase: the source, the options and the ranking, cut to the budgets and
    /// the limit unless the second phase scores it again first (`rescored`).
    fn first_phase(&self, text: &str, options: &JsValue, listed: &JsValue, vector: &JsValue) -> Result<FirstPhase> {
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
        let options = SelectOptions::read(options, Selection::Scored)?;
        let rescored = options.strategy == Strategy::Bm25 && options.limit != Some(0) && !Phrase::new(text).is_empty();
        let at_least = if rescored { RESCORE_WINDOW } else { 0 };
        let mut ranking = self.rank(text, &source, &options, vector.as_deref(), Selection::Scored, at_least);
        if !rescored {
            self.cut(&mut ranking.hits, &source, &options);
        }
        Ok(FirstPhase { source, options, ranking, rescored })
    }

    /// The answer of `selectRelevant`: the window of the first phase's ranking reordered
    /// by the second phase's scores (when it `rescored`), the budgets and the limit
    /// applied after it, each result read given its passage.
    fn answer(&self, first: FirstPhase, read: Reread) -> Reply {
        let FirstPhase { source, options, mut ranking, rescored } = first;
        let window = read.passages.len();
        let passages: HashMap<usize, Passage> =
            ranking.hits.iter().zip(read.passages).filter_map(|(hit, p)| Some((hit.index, p?))).collect();
        if rescored {
            let scores: Vec<f64> = ranking.hits[..window].iter().map(|hit| hit.score).collect();
            let order: Vec<Scored> = rescore(&scores, &read.shares)
                .into_iter()
                .map(|(at, score)| Scored { score, ..ranking.hits[at] })
                .collect();
            ranking.hits.splice(..window, order);
            self.cut(&mut ranking.hits, &source, &options);
        }
        match &source {
            Source::Slots(_) => Reply::Json(self.slots_json(&ranking, &passages)),
            Source::List { list, listed } => {
                let out = Array::new();
                for hit in &ranking.hits {
                    let it = &listed[hit.index];
                    let o = Object::new();
                    let path = self.path_of(&source, hit.index).unwrap_or_default();
                    let _ = Reflect::set(&o, &"filepath".into(), &path.into());
                    let _ = Reflect::set(&o, &"score".into(), &hit.score.into());
                    let _ = Reflect::set(&o, &"pointer".into(), &list.get(it.position));
                    let matched: Array = ranking.matched(hit).map(JsValue::from).collect();
                    let _ = Reflect::set(&o, &"matched".into(), &matched);
                    if let Some(p) = passages.get(&hit.index) {
                        let passage = Object::new();
                        let _ = Reflect::set(&passage, &"text".into(), &p.text.as_str().into());
                        let _ = Reflect::set(&passage, &"startLine".into(), &(p.start_line as f64).into());
                        let _ = Reflect::set(&passage, &"endLine".into(), &(p.end_line as f64).into());
                        let _ = Reflect::set(&o, &"passage".into(), &passage);
                    }
                    out.push(&o);
                }
                Reply::Value(out.into())
            }
        }
    }

    /// The answer over this manager's pointers, as the JSON text of the list.
    fn slots_json(&self, ranking: &Ranking, passages: &HashMap<usize, Passage>) -> String {
        use toolctx_core::record::push_json_str;
        let (mut json, mut path, mut pointer) = (String::from("["), String::new(), String::new());
        for hit in &ranking.hits {
            path.clear();
            pointer.clear();
            // A slot that holds no pointer any more is left out (the ranking and the answer
            // are made in one step of the plan, so none should be).
            let slot = hit.index as u32;
            if !self.inner.push_filepath(slot, &mut path) || !self.inner.pointer_json_of(slot, &mut pointer) {
                continue;
            }
            if json.len() > 1 {
                json.push(',');
            }
            json.push_str("{\"filepath\":");
            push_json_str(&mut json, &path);
            json.push_str(",\"score\":");
            json.push_str(&score_json(hit.score));
            json.push_str(",\"pointer\":");
            json.push_str(&pointer);
            json.push_str(",\"matched\":[");
            for (i, m) in ranking.matched(hit).enumerate() {
                if i > 0 {
                    json.push(',');
                }
                push_json_str(&mut json, m);
            }
            json.push(']');
            if let Some(p) = passages.get(&hit.index) {
                json.push_str(",\"passage\":{\"text\":");
                push_json_str(&mut json, &p.text);
                json.push_str(&format!(",\"startLine\":{},\"endLine\":{}}}", p.start_line, p.end_line));
            }
            json.push('}');
        }
        json.push(']');
        json
    }

    /// The filepath of hit `i` of `source`.
    fn path_of(&self, source: &Source, i: usize) -> Option<String> {
        match source {
            Source::Slots(_) => self.inner.filepath_of(i as u32),
            Source::List { listed, .. } => {
                let it = &listed[i];
                it.path.clone().or_else(|| it.slot.and_then(|slot| self.inner.filepath_of(slot)))
            }
        }
    }
}
