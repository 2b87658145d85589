//! The inverted index: term → the documents holding it, maintained incrementally as
//! records are saved, so a query reads only the posting lists of its keywords and
//! never rescans any text.
//!
//! Documents are numbered by slot, in the order they were added. A posting packs the
//! slot and the term's frequency in each of the document's two fields, metadata and
//! content (each capped at [`MAX_TF`]; BM25 saturates long before), into one `u32`;
//! lists are held compact ([`Postings`]: the gap from the previous slot and one byte of
//! frequencies), so a pointer costs two to four bytes per distinct term.
//!
//! Scores are BM25F (Robertson, Zaragoza and Taylor, "Simple BM25 extension to
//! multiple weighted fields", 2004; Zaragoza et al., TREC 2004): each field's term
//! frequency is normalised by that field's length against its average, the fields are
//! summed with their weights, and the sum is saturated once with k1 = 1.2 (b = 0.75
//! for both fields). The metadata field (description, tool name, argument values: the
//! record's title, written to name it) weighs 1, so a store without content ranks as
//! plain BM25 does; the content field (the body) weighs 0.5. These are the usual
//! title-over-body proportions, not values fitted to any labelled set.

use std::collections::HashMap;

use super::postings::Postings;
use super::{keywords, stem, Strategy, Terms};
use crate::paged::Paged;
use crate::sort;

/// Bits of a posting that hold the term frequency of one field.
const TF_BITS: u32 = 4;
/// Bits of a posting below the slot (the two fields' frequencies).
pub(super) const SLOT_SHIFT: u32 = 2 * TF_BITS;
/// Term frequencies above this count as this.
pub const MAX_TF: u32 = (1 << TF_BITS) - 1;
/// Slots above this cannot be indexed (2^24, far beyond any store held in memory).
pub const MAX_SLOTS: usize = 1 << (32 - SLOT_SHIFT);
/// Keywords past this many in one query are ignored.
pub const MAX_KEYWORDS: usize = 64;

const BM25_K1: f64 = 1.2;
const BM25_B: f64 = 0.75;
/// BM25F weight of the metadata field.
const WEIGHT_METADATA: f64 = 1.0;
/// BM25F weight of the content field.
const WEIGHT_CONTENT: f64 = 0.5;

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
    postings: Vec<Postings>,
    /// Each document's field lengths, as [`Short`]; those too long for it in `long`.
    lengths: Paged<Short>,
    long: HashMap<u32, Lengths>,
    order: Paged<u64>,
    total: Lengths64,
    /// Removed documents: their slots stay and their postings are skipped, until
    /// [`Index::remap`] drops them.
    gone: Paged<bool>,
    gone_count: usize,
}

/// A document's two field lengths.
#[derive(Debug, Default, Clone, Copy)]
struct Lengths {
    metadata: u32,
    content: u32,
}

/// A document's two field lengths when both are under `u16::MAX` (nearly every
/// document: content is indexed up to `content_bytes`); else [`Short::LONG`], and the
/// lengths are in [`Index::long`]. Half the bytes of [`Lengths`], for the same scores.
#[derive(Debug, Default, Clone, Copy)]
struct Short([u16; 2]);

impl Short {
    const LONG: Short = Short([u16::MAX; 2]);

    fn of(l: Lengths) -> Option<Short> {
        let short = |n: u32| u16::try_from(n).ok().filter(|&n| n != u16::MAX);
        Some(Short([short(l.metadata)?, short(l.content)?]))
    }
}

#[derive(Debug, Default, Clone, Copy)]
struct Lengths64 {
    metadata: u64,
    content: u64,
}

impl Lengths64 {
    fn add(&mut self, l: Lengths) {
        self.metadata += u64::from(l.metadata);
        self.content += u64::from(l.content);
    }

    fn sub(&mut self, l: Lengths) {
        self.metadata -= u64::from(l.metadata);
        self.content -= u64::from(l.content);
    }

    /// The average field lengths over `n` documents.
    fn average(&self, n: usize) -> (f64, f64) {
        let n = n.max(1) as f64;
        (self.metadata as f64 / n, self.content as f64 / n)
    }
}

/// A term's frequency in each field of one document.
#[derive(Debug, Clone, Copy)]
struct Tf {
    metadata: u32,
    content: u32,
}

impl Tf {
    fn of_posting(p: u32) -> Tf {
        Tf { metadata: (p >> TF_BITS) & MAX_TF, content: p & MAX_TF }
    }
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
        for ((term, &count), &content) in terms.as_slice().iter().zip(terms.counts()).zip(terms.content_counts()) {
            let id = match self.ids.get(term.as_str()) {
                Some(&id) => id,
                None => {
                    let id = self.postings.len() as u32;
                    self.ids.insert(term.as_str().into(), id);
                    self.postings.push(Postings::default());
                    id
                }
            };
            self.postings[id as usize].push(slot, (count.min(MAX_TF) << TF_BITS | content.min(MAX_TF)) as u8);
        }
        let lengths = Lengths { metadata: terms.len(), content: terms.content_len() };
        self.push_lengths(slot, lengths);
        self.order.push(order);
        self.gone.push(false);
        self.total.add(lengths);
        Some(slot)
    }

    /// The field lengths of the document in `slot`.
    fn lengths(&self, slot: usize) -> Lengths {
        match self.lengths[slot] {
            Short([metadata, content]) if metadata != u16::MAX => {
                Lengths { metadata: u32::from(metadata), content: u32::from(content) }
            }
            _ => self.long.get(&(slot as u32)).copied().unwrap_or_default(),
        }
    }

    /// Appends the lengths of the document in `slot` (the next one).
    fn push_lengths(&mut self, slot: u32, lengths: Lengths) {
        match Short::of(lengths) {
            Some(short) => self.lengths.push(short),
            None => {
                self.lengths.push(Short::LONG);
                self.long.insert(slot, lengths);
            }
        }
    }

    /// The `order` the document in `slot` was added with.
    pub fn order(&self, slot: u32) -> u64 {
        self.order[slot as usize]
    }

    /// Removes the document in `slot`: it is ranked no more. Its slot stays (taken) until
    /// [`Index::remap`]. The content terms a document was indexed with are not kept, so
    /// its postings are skipped rather than searched for.
    pub fn remove(&mut self, slot: u32) {
        let slot = slot as usize;
        if slot >= self.gone.len() || self.gone[slot] {
            return;
        }
        self.gone[slot] = true;
        self.gone_count += 1;
        self.total.sub(self.lengths(slot));
    }

    /// Whether the document in `slot` is indexed (added and not removed).
    pub fn holds(&self, slot: u32) -> bool {
        self.gone.get(slot as usize).is_some_and(|gone| !gone)
    }

    /// Gives the documents new slots: `new_slot[old]` is a document's new slot, `None`
    /// to drop it. The new slots must be `0..n` without gaps. Postings keep every field's
    /// term counts, so nothing is re-tokenised and the content indexed at save time stays.
    pub fn remap(&mut self, new_slot: &[Option<u32>]) {
        let n = new_slot.iter().flatten().count();
        let mut lengths = vec![Lengths::default(); n];
        let mut order = vec![0; n];
        let mut total = Lengths64::default();
        for (old, new) in new_slot.iter().enumerate() {
            if let (Some(new), true) = (new, old < self.lengths.len()) {
                let len = self.lengths(old);
                lengths[*new as usize] = len;
                order[*new as usize] = self.order[old];
                total.add(len);
            }
        }
        let keep = (1u32 << SLOT_SHIFT) - 1;
        for list in &mut self.postings {
            let mut moved: Vec<u32> = list
                .iter()
                .filter_map(|p| {
                    new_slot
                        .get((p >> SLOT_SHIFT) as usize)
                        .copied()
                        .flatten()
                        .map(|new| new << SLOT_SHIFT | (p & keep))
                })
                .collect();
            sort::sort_by_key(&mut moved, |p| p >> SLOT_SHIFT);
            *list = Postings::from_packed(moved);
        }
        // Terms no document holds any more are forgotten, so the vocabulary shrinks with
        // the documents (retention keeps memory bounded only if this does).
        let mut new_id: Vec<Option<u32>> = Vec::with_capacity(self.postings.len());
        let mut kept = Vec::new();
        for list in std::mem::take(&mut self.postings) {
            if list.is_empty() {
                new_id.push(None);
            } else {
                new_id.push(Some(kept.len() as u32));
                kept.push(list);
            }
        }
        self.postings = kept;
        self.ids.retain(|_, id| match new_id[*id as usize] {
            Some(new) => {
                *id = new;
                true
            }
            None => false,
        });
        self.lengths = Paged::default();
        self.long.clear();
        for (slot, len) in lengths.into_iter().enumerate() {
            self.push_lengths(slot as u32, len);
        }
        self.order = order.into_iter().collect();
        self.total = total;
        self.gone = std::iter::repeat(false).take(n).collect();
        self.gone_count = 0;
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

    /// Counts the index's allocations (see [`crate::store::footprint`]).
    #[cfg(test)]
    pub(crate) fn footprint(&self, m: &mut crate::store::footprint::Meter) {
        m.map("index: ids table", &self.ids);
        for k in self.ids.keys() {
            m.alloc("index: ids texts", k.len());
        }
        m.vec("index: postings list (Vec headers)", &self.postings);
        for list in &self.postings {
            m.part("index: postings used", list.used());
            m.part("index: postings slack", list.capacity() - list.used());
            m.overhead("index: postings allocator overhead", list.capacity());
        }
        m.map("index: lengths too long for u16", &self.long);
        for (name, pages, size) in [
            ("index: lengths", self.lengths.pages().len(), std::mem::size_of::<Short>()),
            ("index: order", self.order.pages().len(), 8),
            ("index: gone", self.gone.pages().len(), 1),
        ] {
            for _ in 0..pages {
                m.alloc(name, crate::paged::PAGE * size);
            }
        }
    }

    /// Bytes held by the index (capacity, not just length), for memory reports.
    pub fn heap_bytes(&self) -> usize {
        let postings: usize = self.postings.iter().map(|p| p.capacity() + 32).sum();
        let ids: usize = self.ids.keys().map(|k| k.len() + 16 + 4 + 8).sum();
        postings + ids + self.lengths.len().next_multiple_of(crate::paged::PAGE) * 13
    }

    /// Ranks every document for `query`: documents holding one of its keywords, best
    /// first, ties in save order. Only the best `limit` are sorted and returned. No
    /// fallback: an empty ranking means nothing matched.
    pub fn rank_all(&self, query: &str, strategy: Strategy, limit: Option<usize>) -> Ranking {
        let (keywords, stems) = query_keywords(query);
        let n = self.len() - self.gone_count;
        let avg = self.total.average(n);
        let mut acc = Accumulator::new(self.len());
        let live = |p: &u32| !self.gone[(*p >> SLOT_SHIFT) as usize];
        for (k, keyword) in stems.iter().enumerate() {
            let Some(postings) = self.ids.get(keyword.as_str()).map(|&id| &self.postings[id as usize]) else {
                continue;
            };
            let df = if self.gone_count == 0 { postings.len() } else { postings.iter().filter(live).count() };
            let idf = idf(n, df);
            for p in postings.iter().filter(live) {
                let slot = (p >> SLOT_SHIFT) as usize;
                let weight = term_weight(strategy, idf, Tf::of_posting(p), self.lengths(slot), avg);
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
        let (keywords, stems) = query_keywords(query);
        let n = docs.len();
        // Position of each indexed slot among the candidates; a slot given twice is
        // ranked at its first position only.
        let mut position = vec![u32::MAX; self.len()];
        let mut foreign: Vec<(usize, &Terms)> = Vec::new();
        let mut total = Lengths64::default();
        for (i, doc) in docs.iter().enumerate() {
            match doc {
                Doc::Slot(s) => {
                    if let Some(p) = position.get_mut(*s as usize) {
                        if *p == u32::MAX {
                            *p = i as u32;
                        }
                        total.add(self.lengths(*s as usize));
                    }
                }
                Doc::Terms(t) => {
                    foreign.push((i, t));
                    total.add(Lengths { metadata: t.len(), content: t.content_len() });
                }
            }
        }
        let avg = total.average(n);
        let mut acc = Accumulator::new(n);
        for (k, keyword) in stems.iter().enumerate() {
            let none = Postings::default();
            let postings = self.ids.get(keyword.as_str()).map_or(&none, |&id| &self.postings[id as usize]);
            let in_docs = |p: &u32| position[(*p >> SLOT_SHIFT) as usize] != u32::MAX;
            let df =
                postings.iter().filter(in_docs).count() + foreign.iter().filter(|(_, t)| t.contains(keyword)).count();
            if df == 0 {
                continue;
            }
            let idf = idf(n, df);
            for p in postings.iter().filter(in_docs) {
                let slot = (p >> SLOT_SHIFT) as usize;
                let weight = term_weight(strategy, idf, Tf::of_posting(p), self.lengths(slot), avg);
                acc.add(position[slot] as usize, k, weight);
            }
            for &(i, terms) in &foreign {
                let (metadata, content) = terms.field_counts(keyword);
                if metadata + content > 0 {
                    let tf = Tf { metadata: metadata.min(MAX_TF), content: content.min(MAX_TF) };
                    let lengths = Lengths { metadata: terms.len(), content: terms.content_len() };
                    acc.add(i, k, term_weight(strategy, idf, tf, lengths, avg));
                }
            }
        }
        let hits = acc.into_hits(limit, |i| i as u64);
        Ranking { keywords, hits }
    }
}

/// The query's keywords as written (for `matched`) and the stems they are looked up
/// by; keywords with the same stem count once (the first one is kept).
fn query_keywords(query: &str) -> (Vec<String>, Vec<String>) {
    let (mut words, mut stems) = (Vec::new(), Vec::new());
    for word in keywords(query) {
        let s = stem(&word);
        if !stems.contains(&s) {
            words.push(word);
            stems.push(s);
        }
        if stems.len() == MAX_KEYWORDS {
            break;
        }
    }
    (words, stems)
}

fn idf(n: usize, df: usize) -> f64 {
    let (n, df) = (n as f64, df as f64);
    (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
}

/// BM25F: the fields' length-normalised, weighted frequencies summed, then saturated.
fn term_weight(strategy: Strategy, idf: f64, tf: Tf, len: Lengths, avg: (f64, f64)) -> f64 {
    match strategy {
        Strategy::Overlap => 1.0,
        Strategy::Bm25 => {
            let field = |tf: u32, len: u32, avg: f64| {
                if tf == 0 {
                    return 0.0;
                }
                f64::from(tf) / (1.0 - BM25_B + BM25_B * f64::from(len) / avg.max(1.0))
            };
            let tf = WEIGHT_METADATA * field(tf.metadata, len.metadata, avg.0)
                + WEIGHT_CONTENT * field(tf.content, len.content, avg.1);
            idf * tf * (BM25_K1 + 1.0) / (tf + BM25_K1)
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
            Some(k) => sort::top_by(&mut hits, k, cmp),
            None => sort::sort_by(&mut hits, cmp),
        }
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

    #[test]
    fn remap_forgets_the_terms_of_removed_documents_and_keeps_ranking_the_rest() {
        let mut index = Index::new();
        for i in 0..100 {
            index.add(i, &terms(&format!("grep: pattern=word{i} common"))).unwrap();
        }
        let before = index.terms();
        for slot in 0..90 {
            index.remove(slot);
        }
        let new_slot: Vec<Option<u32>> = (0..100).map(|s| (s >= 90).then(|| s - 90)).collect();
        index.remap(&new_slot);
        assert_eq!(index.len(), 10);
        assert_eq!(before - index.terms(), 90, "the 90 words only removed documents held are gone");
        let hits = index.rank_all("word95", Strategy::Bm25, None).hits;
        assert_eq!(hits.iter().map(|h| h.index).collect::<Vec<_>>(), [5]);
        assert_eq!(index.rank_all("common", Strategy::Bm25, None).hits.len(), 10);
        assert!(index.rank_all("word3", Strategy::Bm25, None).hits.is_empty());
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
    fn a_document_too_long_for_the_short_lengths_ranks_as_a_scan_does() {
        // 70,000 words: more than a u16 holds, so its lengths are kept apart.
        let long = format!("read file: login {}", "word ".repeat(70_000));
        let mut texts: Vec<String> = TEXTS.iter().map(|t| t.to_string()).collect();
        texts.insert(1, long);
        let all: Vec<Terms> = texts.iter().map(|t| terms(t)).collect();
        assert!(all[1].len() > u32::from(u16::MAX), "{}", all[1].len());
        let mut index = Index::new();
        for (i, t) in all.iter().enumerate() {
            index.add(i as u64, t);
        }
        assert_eq!(index.long.len(), 1);
        let check = |index: &Index, all: &[&Terms]| {
            for query in ["read login", "word", "login file", "src readme"] {
                let scan = rank(query, all, Fallback::None, Strategy::Bm25);
                assert_eq!(index.rank_all(query, Strategy::Bm25, None).hits, scan.hits, "{query}");
            }
        };
        check(&index, &all.iter().collect::<Vec<_>>());
        // Moved to another slot by a remap, it keeps its lengths.
        index.remove(0);
        let new_slot: Vec<Option<u32>> = (0..all.len() as u32).map(|s| s.checked_sub(1)).collect();
        index.remap(&new_slot);
        assert_eq!(index.long.keys().copied().collect::<Vec<_>>(), [0]);
        check(&index, &all[1..].iter().collect::<Vec<_>>());
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
