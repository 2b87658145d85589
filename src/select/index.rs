//! The inverted index: term → the documents holding it, maintained incrementally as
//! records are saved, so a query reads only the posting lists of its keywords and
//! never rescans any text.
//!
//! Documents are numbered by slot, in the order they were added. A posting packs the
//! slot and the term's frequency in the document (capped at [`MAX_TF`]; BM25 saturates
//! long before) into one `u32`, so a pointer costs four bytes per distinct term.

use std::collections::HashMap;

use super::{keywords, Strategy, Terms};

/// Bits of a posting that hold the term frequency.
const TF_BITS: u32 = 4;
/// Term frequencies above this count as this.
pub const MAX_TF: u32 = (1 << TF_BITS) - 1;
/// Slots above this cannot be indexed (2^28, far beyond any store held in memory).
pub const MAX_SLOTS: usize = 1 << (32 - TF_BITS);
/// Keywords past this many in one query are ignored.
pub const MAX_KEYWORDS: usize = 64;

const BM25_K1: f64 = 1.2;
const BM25_B: f64 = 0.75;

/// One ranked document.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scored {
    /// The document: its slot when ranking the whole index, else its position in the
    /// candidates given.
    pub index: usize,
    /// Higher is better; 0 for fallback results.
    pub score: f64,
    /// Bit `k` is set when keyword `k` of the [`Ranking`] matched.
    pub matched: u64,
}

/// Ranked documents, best first (ties in the order given), with the query's keywords.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Ranking {
    /// The query's distinct keywords, in query order.
    pub keywords: Vec<String>,
    /// The documents, best first.
    pub hits: Vec<Scored>,
}

impl Ranking {
    /// The keywords `hit` matched, in query order.
    pub fn matched<'a>(&'a self, hit: &Scored) -> impl Iterator<Item = &'a str> + 'a {
        let mask = hit.matched;
        self.keywords.iter().enumerate().filter(move |(k, _)| mask & (1 << k) != 0).map(|(_, w)| w.as_str())
    }
}

/// A candidate document: an indexed slot, or one given by its terms.
#[derive(Debug, Clone)]
pub enum Doc<'a> {
    /// A document of the index.
    Slot(u32),
    /// Any other document.
    Terms(&'a Terms),
}

/// Term → postings, and each document's length and order.
#[derive(Debug, Default)]
pub struct Index {
    ids: HashMap<Box<str>, u32>,
    postings: Vec<Vec<u32>>,
    lengths: Vec<u32>,
    order: Vec<u64>,
    total_len: u64,
    /// Documents removed (their slots stay, empty).
    removed: usize,
}

impl Index {
    /// An empty index.
    pub fn new() -> Self {
        Index::default()
    }

    /// Adds a document; returns its slot. `order` sorts documents of equal score (the
    /// save order); `None` once the index holds [`MAX_SLOTS`] documents.
    pub fn add(&mut self, order: u64, terms: &Terms) -> Option<u32> {
        let slot = self.lengths.len();
        if slot >= MAX_SLOTS {
            return None;
        }
        let slot = slot as u32;
        for (term, &count) in terms.as_slice().iter().zip(terms.counts()) {
            let id = match self.ids.get(term.as_str()) {
                Some(&id) => id,
                None => {
                    let id = self.postings.len() as u32;
                    self.ids.insert(term.as_str().into(), id);
                    self.postings.push(Vec::new());
                    id
                }
            };
            self.postings[id as usize].push(slot << TF_BITS | count.min(MAX_TF));
        }
        self.lengths.push(terms.len());
        self.order.push(order);
        self.total_len += u64::from(terms.len());
        Some(slot)
    }

    /// Removes the document in `slot`, indexed with `terms`: it is ranked no more. The
    /// slot is not reused.
    pub fn remove(&mut self, slot: u32, terms: &Terms) {
        let Some(len) = self.lengths.get_mut(slot as usize) else { return };
        for term in terms.as_slice() {
            if let Some(&id) = self.ids.get(term.as_str()) {
                // Postings are in slot order: documents are added with growing slots.
                let list = &mut self.postings[id as usize];
                if let Ok(i) = list.binary_search_by_key(&slot, |p| p >> TF_BITS) {
                    list.remove(i);
                }
            }
        }
        self.total_len -= u64::from(*len);
        *len = 0;
        self.removed += 1;
    }

    /// Forgets every document.
    pub fn clear(&mut self) {
        *self = Index::default();
    }

    /// Number of documents.
    pub fn len(&self) -> usize {
        self.lengths.len()
    }

    /// Whether there are no documents.
    pub fn is_empty(&self) -> bool {
        self.lengths.is_empty()
    }

    /// Number of distinct terms.
    pub fn terms(&self) -> usize {
        self.postings.len()
    }

    /// Bytes held by the index (capacity, not just length), for memory reports.
    pub fn heap_bytes(&self) -> usize {
        let postings: usize = self.postings.iter().map(|p| p.capacity() * 4 + 24).sum();
        let ids: usize = self.ids.keys().map(|k| k.len() + 16 + 4 + 8).sum();
        postings + ids + self.lengths.capacity() * 4 + self.order.capacity() * 8
    }

    /// Ranks every document for `query`: documents holding one of its keywords, best
    /// first, ties in save order. Only the best `limit` are sorted and returned. No
    /// fallback: an empty ranking means nothing matched.
    pub fn rank_all(&self, query: &str, strategy: Strategy, limit: Option<usize>) -> Ranking {
        let keywords = query_keywords(query);
        let n = self.len() - self.removed;
        let avg = self.total_len as f64 / n.max(1) as f64;
        let mut acc = Accumulator::new(self.len());
        for (k, keyword) in keywords.iter().enumerate() {
            let Some(postings) = self.ids.get(keyword.as_str()).map(|&id| &self.postings[id as usize]) else {
                continue;
            };
            let idf = idf(n, postings.len());
            for &p in postings {
                let slot = (p >> TF_BITS) as usize;
                let weight = term_weight(strategy, idf, p & MAX_TF, self.lengths[slot], avg);
                acc.add(slot, k, weight);
            }
        }
        let hits = acc.into_hits(limit, |slot| self.order[slot]);
        Ranking { keywords, hits }
    }

    /// Ranks `docs` for `query` with the seed's contract (relevant first, best first,
    /// ties in the order given). Statistics (document count, lengths, document
    /// frequencies) are those of `docs`. `Scored::index` is a position in `docs`.
    pub fn rank_docs(&self, query: &str, docs: &[Doc<'_>], strategy: Strategy, limit: Option<usize>) -> Ranking {
        let keywords = query_keywords(query);
        let n = docs.len();
        // Position of each indexed slot among the candidates; a slot given twice is
        // ranked at its first position only.
        let mut position = vec![u32::MAX; self.len()];
        let mut foreign: Vec<(usize, &Terms)> = Vec::new();
        let mut total_len = 0u64;
        for (i, doc) in docs.iter().enumerate() {
            match doc {
                Doc::Slot(s) => {
                    if let Some(p) = position.get_mut(*s as usize) {
                        if *p == u32::MAX {
                            *p = i as u32;
                        }
                        total_len += u64::from(self.lengths[*s as usize]);
                    }
                }
                Doc::Terms(t) => {
                    foreign.push((i, t));
                    total_len += u64::from(t.len());
                }
            }
        }
        let avg = total_len as f64 / n.max(1) as f64;
        let mut acc = Accumulator::new(n);
        for (k, keyword) in keywords.iter().enumerate() {
            let postings: &[u32] =
                self.ids.get(keyword.as_str()).map_or(&[], |&id| self.postings[id as usize].as_slice());
            let in_docs = |p: &&u32| position[(**p >> TF_BITS) as usize] != u32::MAX;
            let df =
                postings.iter().filter(in_docs).count() + foreign.iter().filter(|(_, t)| t.contains(keyword)).count();
            if df == 0 {
                continue;
            }
            let idf = idf(n, df);
            for &p in postings.iter().filter(in_docs) {
                let slot = (p >> TF_BITS) as usize;
                let weight = term_weight(strategy, idf, p & MAX_TF, self.lengths[slot], avg);
                acc.add(position[slot] as usize, k, weight);
            }
            for &(i, terms) in &foreign {
                let tf = terms.count(keyword).min(MAX_TF);
                if tf > 0 {
                    acc.add(i, k, term_weight(strategy, idf, tf, terms.len(), avg));
                }
            }
        }
        let hits = acc.into_hits(limit, |i| i as u64);
        Ranking { keywords, hits }
    }
}

fn query_keywords(query: &str) -> Vec<String> {
    let mut keywords = keywords(query);
    keywords.truncate(MAX_KEYWORDS);
    keywords
}

fn idf(n: usize, df: usize) -> f64 {
    let (n, df) = (n as f64, df as f64);
    (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
}

fn term_weight(strategy: Strategy, idf: f64, tf: u32, len: u32, avg: f64) -> f64 {
    match strategy {
        Strategy::Overlap => 1.0,
        Strategy::Bm25 => {
            let tf = f64::from(tf);
            let norm = 1.0 - BM25_B + BM25_B * f64::from(len) / avg.max(1.0);
            idf * tf * (BM25_K1 + 1.0) / (tf + BM25_K1 * norm)
        }
    }
}

/// Scores per document, dense (a query touches a large share of a store as often as
/// not), with the list of documents touched so only those are read back.
struct Accumulator {
    score: Vec<f64>,
    matched: Vec<u64>,
    touched: Vec<u32>,
}

impl Accumulator {
    fn new(n: usize) -> Self {
        Accumulator { score: vec![0.0; n], matched: vec![0; n], touched: Vec::new() }
    }

    fn add(&mut self, doc: usize, keyword: usize, weight: f64) {
        if self.matched[doc] == 0 {
            self.touched.push(doc as u32);
        }
        self.matched[doc] |= 1 << keyword;
        self.score[doc] += weight;
    }

    /// The touched documents, best first, ties by `order`; only the best `limit` sorted.
    fn into_hits(self, limit: Option<usize>, order: impl Fn(usize) -> u64) -> Vec<Scored> {
        let mut hits: Vec<(Scored, u64)> = self
            .touched
            .iter()
            .map(|&d| {
                let d = d as usize;
                (Scored { index: d, score: self.score[d], matched: self.matched[d] }, order(d))
            })
            .collect();
        let cmp = |a: &(Scored, u64), b: &(Scored, u64)| b.0.score.total_cmp(&a.0.score).then(a.1.cmp(&b.1));
        match limit {
            Some(k) if k < hits.len() => {
                if k > 0 {
                    hits.select_nth_unstable_by(k - 1, cmp);
                }
                hits.truncate(k);
            }
            _ => {}
        }
        hits.sort_unstable_by(cmp);
        hits.into_iter().map(|(s, _)| s).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::select::{rank, Fallback};
    use serde_json::json;

    fn terms(desc: &str) -> Terms {
        Terms::of_record(desc, "", &json!({}))
    }

    const TEXTS: [&str; 5] = [
        "read file: path=src/auth/login.ts",
        "grep: pattern=login login login",
        "read file: path=README.md",
        "list directory: path=src",
        "fetch page: url=https://example.com/auth/token",
    ];

    #[test]
    fn the_index_ranks_like_a_scan_of_every_document() {
        let all: Vec<Terms> = TEXTS.iter().map(|t| terms(t)).collect();
        let mut index = Index::new();
        for (i, t) in all.iter().enumerate() {
            assert_eq!(index.add(i as u64, t), Some(i as u32));
        }
        let refs: Vec<&Terms> = all.iter().collect();
        for query in ["read login", "src readme", "auth token", "zebra", "login", ""] {
            for strategy in [Strategy::Bm25, Strategy::Overlap] {
                let scan = rank(query, &refs, Fallback::None, strategy);
                let indexed = index.rank_all(query, strategy, None);
                assert_eq!(scan.hits, indexed.hits, "{query} {strategy:?}");
                let docs: Vec<Doc> = (0..all.len() as u32).map(Doc::Slot).collect();
                assert_eq!(index.rank_docs(query, &docs, strategy, None).hits, scan.hits, "{query}");
            }
        }
    }

    #[test]
    fn subsets_have_their_own_statistics_and_order() {
        let all: Vec<Terms> = TEXTS.iter().map(|t| terms(t)).collect();
        let mut index = Index::new();
        all.iter().enumerate().for_each(|(i, t)| {
            index.add(i as u64, t);
        });
        // Candidates 3, 0 and a foreign document, in that order.
        let foreign = terms("search code: query=src login handler");
        let docs = [Doc::Slot(3), Doc::Slot(0), Doc::Terms(&foreign)];
        let got = index.rank_docs("src login", &docs, Strategy::Bm25, None);
        let scan = rank("src login", &[&all[3], &all[0], &foreign], Fallback::None, Strategy::Bm25);
        assert_eq!(got.hits, scan.hits);
        let order: Vec<usize> = got.hits.iter().map(|h| h.index).collect();
        assert_eq!(order.len(), 3);
        // Overlap: 0 and the foreign one match both keywords, 3 one; ties keep the order given.
        let overlap = index.rank_docs("src login", &docs, Strategy::Overlap, None);
        assert_eq!(overlap.hits.iter().map(|h| h.index).collect::<Vec<_>>(), [1, 2, 0]);
        assert_eq!(overlap.matched(&overlap.hits[0]).collect::<Vec<_>>(), ["src", "login"]);
    }

    #[test]
    fn limits_keep_the_best_in_order() {
        let mut index = Index::new();
        for i in 0..100u64 {
            let text = format!("grep: pattern={}", "auth ".repeat(1 + (i % 7) as usize));
            index.add(i, &Terms::of_record(&text, "", &json!({"n": i})));
        }
        let full = index.rank_all("auth", Strategy::Bm25, None);
        for k in [0, 1, 5, 99, 100, 200] {
            let top = index.rank_all("auth", Strategy::Bm25, Some(k));
            assert_eq!(top.hits, full.hits[..k.min(100)], "k={k}");
        }
        assert_eq!(full.hits.len(), 100);
        index.clear();
        assert!(index.rank_all("auth", Strategy::Bm25, None).hits.is_empty());
    }
}
