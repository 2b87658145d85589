//! Ranking over the index's tables and lists (see [`super::Index`]).
//!
//! Scores: a record is scored by its best passage, the passage read with the record's
//! metadata as BM25F reads two fields (Robertson, Zaragoza and Taylor, "Simple BM25
//! extension to multiple weighted fields", CIKM 2004): each field's term frequency
//! normalised by that field's length against its average (metadata against the
//! records', a passage against the passages'), the fields summed (both weigh 1), and the
//! sum saturated once. k1 = 0.9 and b = 0.4 are the defaults Anserini ranks passages
//! with (Yang, Fang and Lin, "Anserini: Enabling the use of Lucene for information
//! retrieval research", SIGIR 2017). Document frequencies are counted in records.
//!
//! Measured on bench/eval (MRR over 20 query sets of real tool outputs, MiniSearch
//! 0.580): records scored whole 0.532; by passages 0.582; adding BM25+'s lower bound
//! (δ = 1) or Lucene's coordination factor changed nothing (0.580, 0.581); k1 = 0.9,
//! b = 0.4 gave 0.589 where the textbook k1 = 1.2, b = 0.75 gave 0.582.
//!
//! The sum splits in two, so a query never pairs every term with every passage: a
//! record's metadata-only part (`base`, from the metadata lists) and each passage's gain
//! over it (`gain`, from the passage lists, reading the record's metadata frequency).

use super::{Doc, Index, Ranking, Scored, Scratch, SegmentLists, Totals};
use crate::query::Query;
use crate::{sort, Strategy, Terms};

/// BM25's term-frequency saturation (see the module's docs).
const K1: f64 = 0.9;
/// BM25's length normalisation, for both fields.
const B: f64 = 0.4;

/// BM25's saturation of a summed, normalised frequency (0 for none).
fn saturate(tf: f64) -> f64 {
    tf * (K1 + 1.0) / (tf + K1)
}

/// A frequency normalised by its field's length against the field's average.
fn normalise(tf: u32, len: u32, avg: f64) -> f64 {
    f64::from(tf) / (1.0 - B + B * f64::from(len) / avg.max(1.0))
}

impl Index {
    /// Ranks every record for `query`: records holding one of its relevant words, best
    /// first, ties in save order. Only the best `limit` are sorted and returned. No
    /// fallback: an empty ranking means nothing matched.
    pub fn rank_all(&self, query: &Query, strategy: Strategy, limit: Option<usize>) -> Ranking {
        self.rank_all_with(query, strategy, limit, &|_| Vec::new())
    }

    /// [`Index::rank_all`] over records some of which were added without their terms
    /// ([`Index::append_segment_records`]): `read(stem)` gives each such segment's lists
    /// of a query's stem (none where the segment lacks it). Ranks as if every list had
    /// been appended ([`Index::append_segment`]).
    pub fn rank_all_with<'r>(
        &self,
        query: &Query,
        strategy: Strategy,
        limit: Option<usize>,
        read: &dyn Fn(&str) -> Vec<SegmentLists<'r>>,
    ) -> Ranking {
        let member = |slot: u32| (!self.records[slot as usize].gone).then_some(slot as usize);
        let set = Candidates { member: &member, positions: self.len(), foreign: &[], total: self.total, read };
        let all = self.gone_count == 0;
        let hits = self.rank_set(query, strategy, &set, all, limit, |slot| self.records[slot].order);
        Ranking { keywords: query.words.clone(), hits }
    }

    /// Ranks `docs` for `query` with the seed's contract (relevant first, best first,
    /// ties in the order given). Statistics (record count, lengths, document
    /// frequencies) are those of `docs`. `Scored::index` is a position in `docs`.
    pub fn rank_docs(&self, query: &Query, docs: &[Doc<'_>], strategy: Strategy, limit: Option<usize>) -> Ranking {
        self.rank_docs_with(query, docs, strategy, limit, &|_| Vec::new())
    }

    /// [`Index::rank_docs`] over records some of which were added without their terms:
    /// `read(stem)` gives each such segment's lists (see [`Index::rank_all_with`]).
    pub fn rank_docs_with<'r>(
        &self,
        query: &Query,
        docs: &[Doc<'_>],
        strategy: Strategy,
        limit: Option<usize>,
        read: &dyn Fn(&str) -> Vec<SegmentLists<'r>>,
    ) -> Ranking {
        // Position of each indexed slot among the candidates; a slot given twice is
        // ranked at its first position only.
        let mut position = vec![u32::MAX; self.len()];
        let mut foreign: Vec<(usize, &Terms)> = Vec::new();
        let mut total = Totals::default();
        for (i, doc) in docs.iter().enumerate() {
            let (metadata_len, passages, content_len) = match doc {
                Doc::Slot(s) => match position.get_mut(*s as usize) {
                    Some(p) => {
                        if *p == u32::MAX {
                            *p = i as u32;
                        }
                        let r = &self.records[*s as usize];
                        (r.metadata_len, r.passages as usize, self.content_len(r))
                    }
                    None => continue,
                },
                Doc::Terms(t) => {
                    foreign.push((i, t));
                    (t.len(), t.passages().len(), u64::from(t.content_len()))
                }
            };
            total.records += 1;
            total.metadata_len += u64::from(metadata_len);
            total.passages += passages;
            total.content_len += content_len;
        }
        total.records = docs.len();
        let member = |slot: u32| position.get(slot as usize).filter(|&&p| p != u32::MAX).map(|&p| p as usize);
        let set = Candidates { member: &member, positions: docs.len(), foreign: &foreign, total, read };
        let hits = self.rank_set(query, strategy, &set, false, limit, |i| i as u64);
        Ranking { keywords: query.words.clone(), hits }
    }

    /// Scores the records of `set` for `query` (see the module's docs); the relevant
    /// ones, best first, ties by `order`. `all`: the set is every record of the index, none
    /// removed, so the document frequencies kept are exact.
    fn rank_set(
        &self,
        query: &Query,
        strategy: Strategy,
        set: &Candidates<'_, '_>,
        all: bool,
        limit: Option<usize>,
        order: impl Fn(usize) -> u64,
    ) -> Vec<Scored> {
        let (avg_metadata, avg_passage) = set.total.averages();
        let n = set.total.records;
        let mut acc = Accumulator::new(set.positions);
        let mut scratch = self.scratch.borrow_mut();
        let Scratch { gain, touched } = &mut *scratch;
        if gain.len() < self.passages.len() {
            gain.resize(self.passages.len(), 0.0);
            touched.resize(self.passages.len(), false);
        }
        let mut touched_passages: Vec<u32> = Vec::new();
        // The metadata frequency of the current term in each record, by position.
        let mut metadata_tf = vec![0u32; set.positions];
        // Per record, the last query word it was counted for (document frequencies).
        let mut seen = if all { Vec::new() } else { vec![0u32; set.positions] };
        let mut foreign_gain: Vec<Vec<f64>> = set.foreign.iter().map(|(_, t)| vec![0.0; t.passages().len()]).collect();
        for (k, stem) in query.stems.iter().enumerate() {
            let bit = 1u64 << k;
            let lists = self.lists_of(stem, &(set.read)(stem));
            let lists = lists.as_deref();
            let found_foreign = set.foreign.iter().filter(|(_, t)| t.field_counts(stem) != (0, 0)).count();
            let df = match lists {
                Some(l) if all => l.df as usize,
                Some(l) => {
                    // Records counted once: a passage's record may come before or after
                    // another's (content is indexed after the save), so they are marked.
                    let tag = k as u32 + 1;
                    let mut count = |pos: usize| {
                        let counted = seen[pos] == tag;
                        seen[pos] = tag;
                        usize::from(!counted)
                    };
                    let in_metadata: usize =
                        l.metadata.iter().filter_map(|p| (set.member)(p.slot)).map(&mut count).sum();
                    let owners = l.content.iter().filter_map(|p| (set.member)(self.passages[p.slot as usize].record));
                    in_metadata + owners.map(count).sum::<usize>()
                }
                None => 0,
            } + found_foreign;
            if df == 0 {
                continue;
            }
            let idf = idf(n, df);
            let weight = |metadata: f64, content: f64| match strategy {
                Strategy::Overlap => 1.0,
                Strategy::Bm25 => idf * (saturate(metadata + content) - saturate(metadata)),
            };
            if let Some(lists) = lists {
                let mut touched_records: Vec<usize> = Vec::new();
                for p in lists.metadata.iter() {
                    let Some(pos) = (set.member)(p.slot) else { continue };
                    let len = self.records[p.slot as usize].metadata_len;
                    acc.add(pos, bit, weight(0.0, normalise(p.tf, len, avg_metadata)));
                    metadata_tf[pos] = p.tf;
                    touched_records.push(pos);
                }
                for p in lists.content.iter() {
                    let passage = self.passages[p.slot as usize];
                    let Some(pos) = (set.member)(passage.record) else { continue };
                    let record = &self.records[passage.record as usize];
                    let m = normalise(metadata_tf[pos], record.metadata_len, avg_metadata);
                    let c = normalise(p.tf, passage.len, avg_passage);
                    let number = p.slot as usize;
                    if !touched[number] {
                        touched[number] = true;
                        touched_passages.push(p.slot);
                    }
                    gain[number] += weight(m, c);
                    acc.touch(pos, bit);
                }
                for pos in touched_records {
                    metadata_tf[pos] = 0;
                }
            }
            for (f, (pos, terms)) in set.foreign.iter().enumerate() {
                let tf = terms.metadata().count(stem);
                let m = normalise(tf, terms.len(), avg_metadata);
                if tf > 0 {
                    acc.add(*pos, bit, weight(0.0, m));
                }
                for (i, passage) in terms.passages().iter().enumerate() {
                    let tf = passage.count(stem);
                    if tf > 0 {
                        let c = normalise(tf, passage.len(), avg_passage);
                        foreign_gain[f][i] += weight(m, c);
                        acc.touch(*pos, bit);
                    }
                }
            }
        }
        // Each record at its best: its metadata alone, or with one of its passages.
        acc.start_best();
        for &number in &touched_passages {
            let passage = self.passages[number as usize];
            if let Some(pos) = (set.member)(passage.record) {
                acc.offer(pos, gain[number as usize]);
            }
            gain[number as usize] = 0.0;
            touched[number as usize] = false;
        }
        for (f, (pos, _)) in set.foreign.iter().enumerate() {
            // A passage that holds no word offers no gain: it changes nothing.
            for &g in &foreign_gain[f] {
                acc.offer(*pos, g);
            }
        }
        acc.into_hits(strategy, query.relevant_mask, limit, order)
    }
}

/// The records a ranking reads: `member(slot)` is an indexed record's position among
/// them (`None`: not one of them); `foreign` are the others, by position and terms;
/// `read(stem)`, the lists of segments whose records are held without them.
struct Candidates<'a, 'r> {
    read: &'a dyn Fn(&str) -> Vec<SegmentLists<'r>>,
    member: &'a dyn Fn(u32) -> Option<usize>,
    positions: usize,
    foreign: &'a [(usize, &'a Terms)],
    total: Totals,
}

fn idf(n: usize, df: usize) -> f64 {
    let (n, df) = (n as f64, df as f64);
    (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
}

/// Per record (by position), dense (a query touches a large share of a store as often
/// as not): the metadata-only score, the words matched anywhere, and the best score
/// found; with the list of records touched so only those are read.
struct Accumulator {
    base: Vec<f64>,
    matched: Vec<u64>,
    best: Vec<f64>,
    touched: Vec<u32>,
}

impl Accumulator {
    fn new(n: usize) -> Self {
        Accumulator { base: vec![0.0; n], matched: vec![0; n], best: Vec::new(), touched: Vec::new() }
    }

    /// Notes that the record at `pos` holds word `bit` (in some passage).
    fn touch(&mut self, pos: usize, bit: u64) {
        if self.matched[pos] == 0 {
            self.touched.push(pos as u32);
        }
        self.matched[pos] |= bit;
    }

    /// Adds `weight` for word `bit` to the metadata score of the record at `pos`.
    fn add(&mut self, pos: usize, bit: u64, weight: f64) {
        self.touch(pos, bit);
        self.base[pos] += weight;
    }

    /// Each record's score from its metadata alone, before its passages are offered.
    fn start_best(&mut self) {
        self.best = self.base.clone();
    }

    /// A passage of the record at `pos`, with its gain over the metadata alone.
    fn offer(&mut self, pos: usize, gain: f64) {
        let score = self.base[pos] + gain;
        if score > self.best[pos] {
            self.best[pos] = score;
        }
    }

    /// The touched records holding one of the `relevant` words, best first, ties by
    /// `order`; only the best `limit` sorted. Overlap scores the words matched.
    fn into_hits(
        self,
        strategy: Strategy,
        relevant: u64,
        limit: Option<usize>,
        order: impl Fn(usize) -> u64,
    ) -> Vec<Scored> {
        let mut hits: Vec<(Scored, u64)> = self
            .touched
            .iter()
            .map(|&d| d as usize)
            .filter(|&d| self.matched[d] & relevant != 0)
            .map(|d| {
                let matched = self.matched[d];
                let score = match strategy {
                    Strategy::Overlap => f64::from(matched.count_ones()),
                    Strategy::Bm25 => self.best[d],
                };
                (Scored { index: d, score, matched }, order(d))
            })
            .collect();
        let cmp = |a: &(Scored, u64), b: &(Scored, u64)| b.0.score.total_cmp(&a.0.score).then(a.1.cmp(&b.1));
        match limit {
            Some(k) => sort::top_by(&mut hits, k, cmp),
            None => sort::sort_by(&mut hits, cmp),
        }
        hits.into_iter().map(|(s, _)| s).collect()
    }
}
