//! The inverted index: term → the records and passages holding it, maintained
//! incrementally as records are saved, so a query reads only the posting lists of its
//! words and never rescans any text.
//!
//! A record is indexed as its metadata field (description, tool name, argument values)
//! and its content in passages of about a hundred words ([`super::terms`]). Each term
//! has two posting lists: the records holding it in their metadata (by slot, in the
//! order records were added) and the passages holding it (numbered in the same order,
//! so a record's passages are consecutive). Lists are compact ([`Postings`]: varints of
//! the gap and the frequency): a posting costs two to four bytes.
//!
//! The scoring is [`rank`]'s, over these tables and lists. Over 600 lines only with its
//! tests, which check that the index ranks as a scan of the same terms does.

use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::HashMap;

use super::postings::{Posting, Postings};
use super::segment::{Forward, List, Segment, SegmentRecord};
use super::Terms;
use crate::paged::Paged;
use crate::sort;

mod rank;

/// One ranked record.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scored {
    /// The record: its slot when ranking the whole index, else its position in the
    /// candidates given.
    pub index: usize,
    /// Higher is better; 0 for fallback results.
    pub score: f64,
    /// Bit `k` is set when word `k` of the [`Ranking`] is among the record's terms.
    pub matched: u64,
}

/// Ranked records, best first (ties in the order given), with the query's words.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Ranking {
    /// The query's distinct words, in query order.
    pub keywords: Vec<String>,
    /// The records, best first.
    pub hits: Vec<Scored>,
}

impl Ranking {
    /// The words `hit` matched, in query order.
    pub fn matched<'a>(&'a self, hit: &Scored) -> impl Iterator<Item = &'a str> + 'a {
        let mask = hit.matched;
        self.keywords.iter().enumerate().filter(move |(k, _)| mask & (1 << k) != 0).map(|(_, w)| w.as_str())
    }
}

/// A candidate record: an indexed slot, or one given by its terms.
#[derive(Debug, Clone)]
pub enum Doc<'a> {
    /// A record of the index.
    Slot(u32),
    /// Any other record.
    Terms(&'a Terms),
}

/// Term → postings; each record's and each passage's lengths.
#[derive(Debug, Default)]
pub struct Index {
    ids: HashMap<Box<str>, u32>,
    terms: Vec<TermLists>,
    records: Paged<Record>,
    passages: Paged<Passage>,
    total: Totals,
    gone_count: usize,
    /// Per-passage accumulators, kept between queries (reset as they are read).
    scratch: RefCell<Scratch>,
}

/// A term's lists in one segment, read by range, for a ranking over an index that holds
/// the segment's records without their terms ([`Index::append_segment_records`]).
pub struct SegmentLists<'a> {
    /// The slot of the segment's first record in the index.
    pub first_slot: u32,
    /// The number of its first passage in the index.
    pub first_passage: u32,
    /// The segment's records holding the term.
    pub df: u32,
    /// The records holding it in their metadata, numbered from 0 in the segment.
    pub metadata: List<'a>,
    /// The passages holding it, numbered from 0 in the segment.
    pub content: List<'a>,
}

/// A term's posting lists.
#[derive(Debug, Default, Clone)]
struct TermLists {
    /// Records holding the term in their metadata, by slot; the frequency there.
    metadata: Postings,
    /// Passages holding it, by number; the frequency there.
    content: Postings,
    /// Records holding it (either field), removed ones included until [`Index::remap`].
    df: u32,
}

/// What the index keeps of a record.
#[derive(Debug, Clone, Copy, Default)]
struct Record {
    order: u64,
    metadata_len: u32,
    first_passage: u32,
    passages: u32,
    gone: bool,
}

/// What the index keeps of a passage.
#[derive(Debug, Clone, Copy, Default)]
struct Passage {
    record: u32,
    len: u32,
}

/// Sums over the records not removed.
#[derive(Debug, Default, Clone, Copy)]
struct Totals {
    records: usize,
    metadata_len: u64,
    passages: usize,
    content_len: u64,
}

impl Totals {
    /// Average metadata length per record and content length per passage.
    fn averages(&self) -> (f64, f64) {
        (self.metadata_len as f64 / self.records.max(1) as f64, self.content_len as f64 / self.passages.max(1) as f64)
    }
}

/// Per-passage gains over the metadata alone, and whether a passage is among those
/// touched, by passage number.
#[derive(Debug, Default)]
struct Scratch {
    gain: Vec<f64>,
    touched: Vec<bool>,
}

impl Index {
    /// An empty index.
    pub fn new() -> Self {
        Index::default()
    }

    /// Adds a record; returns its slot. `order` sorts records of equal score (the save
    /// order); `None` once slots or passage numbers would pass `u32::MAX`, far beyond any
    /// store held in memory.
    pub fn add(&mut self, order: u64, terms: &Terms) -> Option<u32> {
        let slot = u32::try_from(self.records.len()).ok()?;
        u32::try_from(self.passages.len() + terms.passages().len()).ok()?;
        // A record's metadata terms are distinct: each counts once in its frequency.
        for (term, count) in terms.metadata().terms() {
            let id = self.id(term);
            let lists = &mut self.terms[id as usize];
            lists.metadata.push(slot, *count);
            lists.df += 1;
        }
        let metadata_len = terms.metadata().len();
        let first_passage = self.passages.len() as u32;
        self.records.push(Record { order, metadata_len, first_passage, passages: 0, gone: false });
        self.total.records += 1;
        self.total.metadata_len += u64::from(metadata_len);
        self.add_content(slot, terms);
        Some(slot)
    }

    /// Adds the content of the record in `slot`, added before with its metadata alone:
    /// the passages of `terms` (whose metadata is the record's, as added). Indexing the
    /// content after the record's save keeps the tokenising of a large result off the
    /// save path (SPEC §6: near-real-time). Nothing is done for a record removed, or one
    /// whose content is indexed already.
    pub fn add_content(&mut self, slot: u32, terms: &Terms) {
        let passages: Vec<(u32, u32)> = terms.passages().iter().map(|p| (p.len(), p.terms().len() as u32)).collect();
        let mut flat = Vec::with_capacity(passages.iter().map(|p| p.1 as usize).sum());
        for passage in terms.passages() {
            for (t, n) in passage.terms() {
                flat.push((self.id(t), *n));
            }
        }
        self.add_passages(slot, terms, &passages, &flat);
    }

    /// [`Index::add_content`] for a record read out of an index segment one by one (a
    /// segment whose records are not all taken): its passages with their terms as ids
    /// into `dictionary` (the segment's), `ids` mapping those to this index's ids as they
    /// are met (`u32::MAX`: not yet; one map per segment, as long as its dictionary).
    /// `terms` holds the record's metadata.
    pub fn add_stored_content(
        &mut self,
        slot: u32,
        terms: &Terms,
        dictionary: &[Box<str>],
        record: &Forward,
        ids: &mut [u32],
    ) {
        let flat: Vec<(u32, u32)> = record
            .terms
            .iter()
            .map(|&(d, n)| {
                let d = d as usize;
                if ids[d] == u32::MAX {
                    ids[d] = self.id(&dictionary[d]);
                }
                (ids[d], n)
            })
            .collect();
        self.add_passages(slot, terms, &record.passages, &flat);
    }

    /// Adds the passages `passages` (each its length and how many of `flat` are its
    /// terms, by id with their frequencies) as the content of the record in `slot`, whose
    /// metadata is that of `terms`.
    fn add_passages(&mut self, slot: u32, terms: &Terms, passages: &[(u32, u32)], flat: &[(u32, u32)]) {
        let Some(record) = self.records.get(slot as usize).copied() else { return };
        let first = self.passages.len();
        if record.gone || record.passages > 0 || passages.is_empty() {
            return;
        }
        if u32::try_from(first + passages.len()).is_err() {
            return;
        }
        let mut metadata: Vec<u32> =
            terms.metadata().terms().iter().filter_map(|(t, _)| self.ids.get(t.as_str()).copied()).collect();
        sort::sort(&mut metadata);
        let mut content_len = 0u64;
        let mut flat = flat.iter();
        for (i, &(len, n)) in passages.iter().enumerate() {
            let number = (first + i) as u32;
            for &(id, tf) in flat.by_ref().take(n as usize) {
                let lists = &mut self.terms[id as usize];
                // The record's passages are numbered from `first`, the highest numbers
                // yet: a term whose last passage is one of them was counted already.
                let counted = lists.content.last().is_some_and(|last| last >= first as u32);
                if !counted && metadata.binary_search(&id).is_err() {
                    lists.df += 1;
                }
                lists.content.push(number, tf);
            }
            self.passages.push(Passage { record: slot, len });
            content_len += u64::from(len);
        }
        let count = passages.len() as u32;
        let r = &mut self.records[slot as usize];
        (r.first_passage, r.passages) = (first as u32, count);
        self.total.passages += count as usize;
        self.total.content_len += content_len;
    }

    /// Adds every record of `segment`, record `i` with `orders[i]` (see [`Index::add`]),
    /// in the segment's order; returns the slot of its first (the others follow). Each
    /// term's lists are appended as they are, their numbers shifted past those held (a
    /// segment's lists are the index's own layout, see [`crate::segment`]): nothing is
    /// tokenised or inverted again. `None`, and nothing added, once slots or passage
    /// numbers would pass `u32::MAX`.
    pub fn append_segment(&mut self, segment: &Segment, orders: &[u64]) -> Option<u32> {
        let (first_slot, first_passage) = self.append_segment_records(&segment.records, orders)?;
        for (term, word) in segment.dictionary.iter().enumerate() {
            let id = self.id(word) as usize;
            let from = segment.lists(term);
            let lists = &mut self.terms[id];
            lists.metadata.append_shifted(from.metadata.bytes, from.metadata.count, from.metadata.last, first_slot);
            lists.content.append_shifted(from.content.bytes, from.content.count, from.content.last, first_passage);
            lists.df += from.df;
        }
        Some(first_slot)
    }

    /// Adds the records of a segment, record `i` with `orders[i]`, without their terms:
    /// their lists stay in the segment and are read by range for each query
    /// ([`SegmentLists`], [`Index::rank_all_with`]). Returns the first slot and the first
    /// passage number they were given (the others follow); `None`, and nothing added, once
    /// slots or passage numbers would pass `u32::MAX`.
    pub fn append_segment_records(&mut self, records: &[SegmentRecord], orders: &[u64]) -> Option<(u32, u32)> {
        debug_assert_eq!(orders.len(), records.len());
        let first_slot = u32::try_from(self.records.len()).ok()?;
        let first_passage = u32::try_from(self.passages.len()).ok()?;
        let passages: usize = records.iter().map(|r| r.passages.len()).sum();
        u32::try_from(self.records.len() + records.len()).ok()?;
        u32::try_from(self.passages.len() + passages).ok()?;
        for (i, record) in records.iter().enumerate() {
            let slot = first_slot + i as u32;
            let first = self.passages.len() as u32;
            for &len in &record.passages {
                self.passages.push(Passage { record: slot, len });
                self.total.content_len += u64::from(len);
            }
            let (count, metadata_len) = (record.passages.len() as u32, record.metadata_len);
            self.records.push(Record {
                order: orders[i],
                metadata_len,
                first_passage: first,
                passages: count,
                gone: false,
            });
            self.total.records += 1;
            self.total.metadata_len += u64::from(metadata_len);
            self.total.passages += count as usize;
        }
        Some((first_slot, first_passage))
    }

    /// Gives records held without their terms ([`Index::append_segment_records`]) their
    /// lists, as if they had been appended with them: `records` are (slot, terms) of such
    /// records, the terms those the segment holds (their passages, one for each the record
    /// was added with) or their metadata alone (no passage: their content is not ranked).
    /// The lists are merged into those held, by slot. A record given that is not held
    /// without its terms, or whose passages are not those it was added with, is skipped.
    pub fn fill(&mut self, records: &[(u32, &Terms)]) {
        let mut records = records.to_vec();
        records.sort_by_key(|r| r.0);
        records.dedup_by_key(|r| r.0);
        let mut added: HashMap<u32, (Vec<Posting>, Vec<Posting>, u32)> = HashMap::new();
        let mut counted: HashMap<u32, u32> = HashMap::new();
        for &(slot, terms) in &records {
            let Some(record) = self.records.get(slot as usize).copied() else { continue };
            let with_content = terms.passages().len() == record.passages as usize;
            let mut count = |id: u32, added: &mut HashMap<u32, (Vec<Posting>, Vec<Posting>, u32)>| {
                if counted.insert(id, slot) != Some(slot) {
                    added.entry(id).or_default().2 += 1;
                }
            };
            for (t, n) in terms.metadata().terms() {
                let id = self.id(t);
                added.entry(id).or_default().0.push(Posting { slot, tf: *n });
                count(id, &mut added);
            }
            if !with_content {
                continue;
            }
            for (i, passage) in terms.passages().iter().enumerate() {
                let number = record.first_passage + i as u32;
                for (t, n) in passage.terms() {
                    let id = self.id(t);
                    added.entry(id).or_default().1.push(Posting { slot: number, tf: *n });
                    count(id, &mut added);
                }
            }
        }
        for (id, (mut metadata, mut content, df)) in added {
            metadata.sort_by_key(|p| p.slot);
            content.sort_by_key(|p| p.slot);
            let lists = &mut self.terms[id as usize];
            lists.metadata = Postings::merged(&lists.metadata, &Postings::from_postings(metadata));
            lists.content = Postings::merged(&lists.content, &Postings::from_postings(content));
            lists.df += df;
        }
    }

    /// A term's lists for a ranking: those held, and those read from segments whose
    /// records were added without them (`read`); `None` when none holds the term.
    fn lists_of(&self, term: &str, read: &[SegmentLists<'_>]) -> Option<Cow<'_, TermLists>> {
        let held = self.ids.get(term).map(|&id| &self.terms[id as usize]);
        if read.is_empty() {
            return held.map(Cow::Borrowed);
        }
        let mut pieces: Vec<&SegmentLists<'_>> = read.iter().collect();
        pieces.sort_by_key(|p| p.first_slot);
        let mut lists = TermLists::default();
        for p in pieces {
            lists.metadata.append_shifted(p.metadata.bytes, p.metadata.count, p.metadata.last, p.first_slot);
            lists.content.append_shifted(p.content.bytes, p.content.count, p.content.last, p.first_passage);
            lists.df += p.df;
        }
        if let Some(held) = held {
            lists.metadata = Postings::merged(&lists.metadata, &held.metadata);
            lists.content = Postings::merged(&lists.content, &held.content);
            lists.df += held.df;
        }
        Some(Cow::Owned(lists))
    }

    /// The id of `term`, a new one when it is new.
    fn id(&mut self, term: &str) -> u32 {
        if let Some(&id) = self.ids.get(term) {
            return id;
        }
        let id = self.terms.len() as u32;
        self.ids.insert(term.into(), id);
        self.terms.push(TermLists::default());
        id
    }

    /// The `order` the record in `slot` was added with.
    pub fn order(&self, slot: u32) -> u64 {
        self.records[slot as usize].order
    }

    /// The content length of a record's passages.
    fn content_len(&self, record: &Record) -> u64 {
        let from = record.first_passage as usize;
        (from..from + record.passages as usize).map(|p| u64::from(self.passages[p].len)).sum()
    }

    /// Removes the record in `slot`: it is ranked no more. Its slot stays (taken) until
    /// [`Index::remap`]; its postings are skipped rather than searched for.
    pub fn remove(&mut self, slot: u32) {
        let Some(record) = self.records.get(slot as usize).copied() else { return };
        if record.gone {
            return;
        }
        self.records[slot as usize].gone = true;
        self.gone_count += 1;
        self.total.records -= 1;
        self.total.metadata_len -= u64::from(record.metadata_len);
        self.total.passages -= record.passages as usize;
        self.total.content_len -= self.content_len(&record);
    }

    /// Whether the record in `slot` is indexed (added and not removed).
    pub fn holds(&self, slot: u32) -> bool {
        self.records.get(slot as usize).is_some_and(|r| !r.gone)
    }

    /// Gives the records new slots: `new_slot[old]` is a record's new slot, `None` to
    /// drop it. The new slots must be `0..n` without gaps. Postings keep their
    /// frequencies, so nothing is re-tokenised and the content indexed at save time stays.
    pub fn remap(&mut self, new_slot: &[Option<u32>]) {
        let n = new_slot.iter().flatten().count();
        let mut old_of = vec![u32::MAX; n];
        for (old, new) in new_slot.iter().enumerate() {
            if let (Some(new), true) = (new, old < self.records.len()) {
                old_of[*new as usize] = old as u32;
            }
        }
        // Passages renumbered in the new order of their records.
        let mut new_passage = vec![u32::MAX; self.passages.len()];
        let mut records = Paged::default();
        let mut passages = Paged::default();
        let mut total = Totals::default();
        for (new, &old) in old_of.iter().enumerate() {
            let Some(r) = self.records.get(old as usize).copied() else { continue };
            let first = passages.len() as u32;
            for p in r.first_passage..r.first_passage + r.passages {
                new_passage[p as usize] = passages.len() as u32;
                passages.push(Passage { record: new as u32, len: self.passages[p as usize].len });
            }
            records.push(Record { first_passage: first, gone: false, ..r });
            total.records += 1;
            total.metadata_len += u64::from(r.metadata_len);
            total.passages += r.passages as usize;
            total.content_len += self.content_len(&r);
        }
        let moved = |list: &Postings, map: &dyn Fn(u32) -> Option<u32>| {
            let mut moved: Vec<Posting> =
                list.iter().filter_map(|p| map(p.slot).map(|slot| Posting { slot, tf: p.tf })).collect();
            sort::sort_by_key(&mut moved, |p| p.slot);
            Postings::from_postings(moved)
        };
        let record_map = |s: u32| new_slot.get(s as usize).copied().flatten();
        let passage_map = |p: u32| new_passage.get(p as usize).copied().filter(|&n| n != u32::MAX);
        // Terms no record holds any more are forgotten, so the vocabulary shrinks with
        // the records (retention keeps memory bounded only if this does).
        let mut new_id: Vec<Option<u32>> = Vec::with_capacity(self.terms.len());
        let mut kept = Vec::new();
        for lists in std::mem::take(&mut self.terms) {
            let metadata = moved(&lists.metadata, &record_map);
            let content = moved(&lists.content, &passage_map);
            if metadata.is_empty() && content.is_empty() {
                new_id.push(None);
                continue;
            }
            let df = distinct_records(
                metadata.iter().map(|p| p.slot),
                content.iter().map(|p| passages[p.slot as usize].record),
            );
            new_id.push(Some(kept.len() as u32));
            kept.push(TermLists { metadata, content, df: df as u32 });
        }
        self.terms = kept;
        self.ids.retain(|_, id| match new_id[*id as usize] {
            Some(new) => {
                *id = new;
                true
            }
            None => false,
        });
        self.records = records;
        self.passages = passages;
        self.total = total;
        self.gone_count = 0;
        self.scratch = RefCell::default();
    }

    /// Forgets every record.
    pub fn clear(&mut self) {
        *self = Index::default();
    }

    /// Number of records (removed ones included until [`Index::remap`]).
    pub fn len(&self) -> usize {
        self.records.len()
    }

    /// Whether there are no records.
    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    /// Number of distinct terms.
    pub fn terms(&self) -> usize {
        self.terms.len()
    }

    /// Number of passages (removed records' included until [`Index::remap`]).
    pub fn passages(&self) -> usize {
        self.passages.len()
    }

    /// Counts the index's allocations (the core's memory report).
    #[doc(hidden)]
    pub fn footprint(&self, m: &mut crate::footprint::Meter) {
        m.map("index: ids table", &self.ids);
        for k in self.ids.keys() {
            m.alloc("index: ids texts", k.len());
        }
        m.vec("index: term lists (headers)", &self.terms);
        for lists in &self.terms {
            for list in [&lists.metadata, &lists.content] {
                m.part("index: postings used", list.used());
                m.part("index: postings slack", list.capacity() - list.used());
                m.overhead("index: postings allocator overhead", list.capacity());
            }
        }
        for (name, pages, size) in [
            ("index: records", self.records.pages().len(), std::mem::size_of::<Record>()),
            ("index: passages", self.passages.pages().len(), std::mem::size_of::<Passage>()),
        ] {
            for _ in 0..pages {
                m.alloc(name, crate::paged::PAGE * size);
            }
        }
        let scratch = self.scratch.borrow();
        m.alloc("index: query scratch", scratch.gain.capacity() * 8 + scratch.touched.capacity());
    }

    /// Bytes held by the index (capacity, not just length), for memory reports.
    pub fn heap_bytes(&self) -> usize {
        let postings: usize =
            self.terms.iter().map(|l| l.metadata.capacity() + l.content.capacity() + 2 * 32 + 4).sum();
        let ids: usize = self.ids.keys().map(|k| k.len() + 16 + 4 + 8).sum();
        let scratch = self.scratch.borrow();
        postings
            + ids
            + self.records.len().next_multiple_of(crate::paged::PAGE) * std::mem::size_of::<Record>()
            + self.passages.len().next_multiple_of(crate::paged::PAGE) * std::mem::size_of::<Passage>()
            + scratch.gain.capacity() * 8
            + scratch.touched.capacity()
    }
}

/// How many distinct records two ascending lists of record slots name.
fn distinct_records(a: impl Iterator<Item = u32>, b: impl Iterator<Item = u32>) -> usize {
    let (mut a, mut b) = (a.peekable(), b.peekable());
    let mut count = 0;
    let mut last = None;
    loop {
        let next = match (a.peek(), b.peek()) {
            (Some(&x), Some(&y)) if x <= y => a.next(),
            (Some(_), Some(_)) | (None, Some(_)) => b.next(),
            (Some(_), None) => a.next(),
            (None, None) => break,
        };
        if next != last {
            count += 1;
            last = next;
        }
    }
    count
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Strategy;
    use crate::{query_for, rank, Fallback, Query};
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
        let hits = index.rank_all(&query_for("word95", Strategy::Bm25, true), Strategy::Bm25, None).hits;
        assert_eq!(hits.iter().map(|h| h.index).collect::<Vec<_>>(), [5]);
        assert_eq!(index.rank_all(&query_for("common", Strategy::Bm25, true), Strategy::Bm25, None).hits.len(), 10);
        assert!(index.rank_all(&query_for("word3", Strategy::Bm25, true), Strategy::Bm25, None).hits.is_empty());
    }

    #[test]
    fn content_read_from_a_segment_ranks_as_content_indexed_from_its_text() {
        use crate::segment::{encode, Segment, ToWrite};
        let texts = [
            ("read file: path=src/a.rs", "fn parse_header(bytes: &[u8]) {}\nthe header parser\n"),
            ("grep: pattern=header", "src/a.rs:1: fn parse_header\nsrc/b.rs:9: header = None\n"),
            ("read file: path=README.md", "# Parsing\nHeaders are parsed lazily, the body never.\n"),
        ];
        let all: Vec<Terms> = texts
            .iter()
            .map(|(d, t)| Terms::of_record_with_content(d, "", &json!({}), Some(&json!(t).to_string()), usize::MAX))
            .collect();
        let mut direct = Index::new();
        for (i, t) in all.iter().enumerate() {
            direct.add(i as u64, t).unwrap();
        }
        let bytes = encode(&all.iter().map(|t| ToWrite::from_terms("r.json", 1, "{}", t)).collect::<Vec<_>>());
        let seg = Segment::decode(&bytes).unwrap();
        // One by one, out of the forward view (a segment whose records are not all taken).
        let mut stored = Index::new();
        let mut ids = vec![u32::MAX; seg.dictionary.len()];
        for (i, (record, (d, _))) in seg.forward().iter().zip(texts).enumerate() {
            let meta = terms(d);
            let slot = stored.add(i as u64, &meta).unwrap();
            stored.add_stored_content(slot, &meta, &seg.dictionary, record, &mut ids);
        }
        // Whole, its lists appended after a record already held (their numbers shifted).
        let mut appended = Index::new();
        let before = terms("list directory: path=src");
        appended.add(100, &before).unwrap();
        direct.add(100, &before).unwrap();
        stored.add(100, &before).unwrap();
        assert_eq!(appended.append_segment(&seg, &[0, 1, 2]), Some(1));
        // The same record removed from each: ranked by none.
        direct.remove(0);
        stored.remove(0);
        appended.remove(1);
        // Slots differ (the appended index holds `before` first): hits compared by order.
        let by_order = |index: &Index, r: Ranking| -> Vec<(u64, u64)> {
            r.hits.iter().map(|h| (index.order(h.index as u32), h.score.to_bits())).collect()
        };
        for q in ["header parser", "parsed lazily", "src a rs", "the body", "list directory src"] {
            let query = query_for(q, Strategy::Bm25, false);
            let ranked = direct.rank_all(&query, Strategy::Bm25, None);
            assert_eq!(ranked, stored.rank_all(&query, Strategy::Bm25, None), "{q}");
            let appended_ranked = appended.rank_all(&query, Strategy::Bm25, None);
            assert!(!ranked.hits.is_empty(), "{q}");
            assert_eq!(by_order(&direct, ranked), by_order(&appended, appended_ranked), "{q}");
        }
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
                let indexed = index.rank_all(&query_for(query, strategy, true), strategy, None);
                assert_eq!(scan.hits, indexed.hits, "{query} {strategy:?}");
                let docs: Vec<Doc> = (0..all.len() as u32).map(Doc::Slot).collect();
                assert_eq!(
                    index.rank_docs(&query_for(query, strategy, true), &docs, strategy, None).hits,
                    scan.hits,
                    "{query}"
                );
            }
        }
    }

    /// Records with content in several passages, one of them long.
    fn with_content() -> Vec<Terms> {
        let long = format!(
            "{}\nthe refresh token is rotated here\n{}",
            "filler words\n".repeat(400),
            "more text\n".repeat(300)
        );
        let texts = [
            ("readFile", "src/auth/refresh.ts", long.as_str()),
            ("grep", "token", "src/a.ts:1: token\nsrc/b.ts:2: the token"),
            ("readFile", "README.md", "# Auth\nTokens are refreshed by the server."),
            ("listDirectory", "src/auth", "refresh.ts\nlogin.ts"),
        ];
        texts
            .iter()
            .map(|(tool, arg, body)| {
                let json = serde_json::to_string(body).unwrap();
                Terms::of_record_with_content(
                    &format!("{tool}: {arg}"),
                    tool,
                    &json!({ "p": arg }),
                    Some(&json),
                    usize::MAX,
                )
            })
            .collect()
    }

    #[test]
    fn records_with_passages_rank_alike_indexed_or_given_by_their_terms() {
        let all = with_content();
        assert!(all[0].passages().len() > 5, "{}", all[0].passages().len());
        let mut index = Index::new();
        for (i, t) in all.iter().enumerate() {
            index.add(i as u64, t);
        }
        let refs: Vec<&Terms> = all.iter().collect();
        for query in ["the refresh token is rotated", "token", "refresh", "filler", "auth readme", "zebra"] {
            for strategy in [Strategy::Bm25, Strategy::Overlap] {
                let scan = rank(query, &refs, Fallback::None, strategy);
                let q = query_for(query, strategy, true);
                assert_eq!(index.rank_all(&q, strategy, None).hits, scan.hits, "{query} {strategy:?}");
            }
        }
        // The long file holds the sentence in one passage: it comes first.
        let q = Query::new("the refresh token is rotated");
        assert_eq!(index.rank_all(&q, Strategy::Bm25, None).hits[0].index, 0);
        // Removed, then remapped: the others rank as a scan of them does.
        index.remove(0);
        let q = query_for("refresh token", Strategy::Bm25, true);
        let scan_rest = rank("refresh token", &refs[1..], Fallback::None, Strategy::Bm25);
        let hits: Vec<(usize, String)> = index
            .rank_all(&q, Strategy::Bm25, None)
            .hits
            .iter()
            .map(|h| (h.index - 1, format!("{:.9}", h.score)))
            .collect();
        let want: Vec<(usize, String)> = scan_rest.hits.iter().map(|h| (h.index, format!("{:.9}", h.score))).collect();
        assert_eq!(hits, want);
        index.remap(&[None, Some(0), Some(1), Some(2)]);
        assert_eq!(index.passages(), all[1..].iter().map(|t| t.passages().len()).sum::<usize>());
        assert_eq!(index.rank_all(&q, Strategy::Bm25, None).hits, scan_rest.hits);
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
        let got = index.rank_docs(&query_for("src login", Strategy::Bm25, true), &docs, Strategy::Bm25, None);
        let scan = rank("src login", &[&all[3], &all[0], &foreign], Fallback::None, Strategy::Bm25);
        assert_eq!(got.hits, scan.hits);
        let order: Vec<usize> = got.hits.iter().map(|h| h.index).collect();
        assert_eq!(order.len(), 3);
        // Overlap: 0 and the foreign one match both keywords, 3 one; ties keep the order given.
        let overlap = index.rank_docs(&query_for("src login", Strategy::Overlap, true), &docs, Strategy::Overlap, None);
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
        let full = index.rank_all(&query_for("auth", Strategy::Bm25, true), Strategy::Bm25, None);
        for k in [0, 1, 5, 99, 100, 200] {
            let top = index.rank_all(&query_for("auth", Strategy::Bm25, true), Strategy::Bm25, Some(k));
            assert_eq!(top.hits, full.hits[..k.min(100)], "k={k}");
        }
        assert_eq!(full.hits.len(), 100);
        index.clear();
        assert!(index.rank_all(&query_for("auth", Strategy::Bm25, true), Strategy::Bm25, None).hits.is_empty());
    }
}
