//! An index segment (SPEC §4): the inverted index of a set of records, written through the
//! host storage beside them so that another process ranks them without reading them.
//!
//! A segment is derived data: the records are the source of truth. It holds, for each
//! record, its path relative to the record folder, its size, its header (the record's
//! JSON without its result, from which its pointer is made again), its metadata length
//! and its passages' lengths; and for each term, the term's posting lists over those
//! records, in the layout the in-memory index keeps them ([`crate::Index`]): the records
//! holding it in their metadata, numbered from 0 in the segment, the passages holding it,
//! numbered from 0 across the segment's records in order, and the number of records
//! holding it at all. Loading a segment is then appending each list with its numbers
//! shifted ([`crate::Index::append_segment`]), as Lucene merges segments by a document
//! base, never tokenising a record nor inverting its terms again; and the terms are those
//! the saving process indexed, so a reader ranks the records as it did.
//!
//! Layout (integers are LEB128 varints unless said otherwise; a string is its byte length
//! and its UTF-8 bytes):
//!
//! ```text
//! magic     8 bytes   "tcxseg" + format version (2 bytes, big-endian)
//! checksum  8 bytes   little-endian, ResultHasher over everything after it
//! engine    8 bytes   little-endian: the terms this build makes of a probe text ([`engine`])
//! terms     n, then n strings, sorted, distinct: the dictionary
//! records   n, then per record: path, size, header, metadata length,
//!           its passage count p, then the p passage lengths
//! postings  per dictionary term, in order: the records holding it (df), then its
//!           metadata list and its content list, each as its posting count, its byte
//!           length and its bytes (per posting: the gap from the previous number, the
//!           first from 0, and the frequency)
//! ```
//!
//! A segment that is torn (its checksum fails), of another format ([`FORMAT`]), written
//! by a build that makes other terms of the same text ([`engine`]: another tokeniser,
//! stemmer, stop list or passage length), or that does not parse whole (a number out of
//! range, a list out of order) is refused ([`Segment::decode`] fails); the caller reads
//! its records instead.
//!
//! Over 600 lines only with its tests (about 100): the encoder and the decoder are one
//! format and stay in one file, so every field is written and read side by side.

use std::cell::OnceCell;
use std::collections::{HashMap, HashSet};

use toolctx_text::ResultHasher;

use crate::postings::{push_varint, Iter};
use crate::terms::{Field, Terms};

/// The format version, with the terms it holds: bump it when the layout changes or when
/// the same text gives other terms (tokeniser, stemmer, stop words, passage length), so
/// an older segment is refused and rebuilt rather than ranked on stale terms.
pub const FORMAT: u16 = 2;

const MAGIC: &[u8; 6] = b"tcxseg";
/// Magic and version, checksum: what the checksum does not cover.
const HEADER: usize = 16;

/// A text that exercises what makes terms: words and identifiers split at case and
/// punctuation, stems, stop words, a script without spaces, and passages (more words than
/// one holds, over lines).
const PROBE: &str = "The readFile handler parses HTTP_HEADERS in src/auth/login.ts; it's running, \
    ran and runs.\nデータベース接続 db io v2 f0.ts\n";

/// The fingerprint of this build's terms: a hash of the terms of `PROBE` (repeated past
/// a passage), metadata and passages. A segment records the one it was written with; a
/// build whose tokeniser, stemmer, stop words or passage length differ refuses it.
pub fn engine() -> u64 {
    static ENGINE: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *ENGINE.get_or_init(|| {
        let text = PROBE.repeat(crate::terms::PASSAGE_WORDS / 8 + 2);
        let json = serde_json::Value::String(text.clone()).to_string();
        let terms = Terms::of_record_with_content(
            PROBE,
            "readFile",
            &serde_json::json!({"path": "src/a.ts"}),
            Some(&json),
            usize::MAX,
        );
        let mut h = ResultHasher::default();
        for field in std::iter::once(terms.metadata()).chain(terms.passages()) {
            h.update(&field.len().to_le_bytes());
            for (t, n) in field.terms() {
                h.update(t.as_bytes());
                h.update(&[0xff]);
                h.update(&n.to_le_bytes());
            }
        }
        h.finish()
    })
}

/// A decoded segment: its dictionary, its records and its terms' posting lists.
#[derive(Debug, Default)]
pub struct Segment {
    /// The terms its records hold, sorted.
    pub dictionary: Vec<Box<str>>,
    /// Its records, in the order their numbers follow.
    pub records: Vec<SegmentRecord>,
    /// Per dictionary term: its lists.
    lists: Vec<TermLists>,
    /// The lists' bytes.
    postings: Vec<u8>,
    /// Each record's terms, read back out of the lists when asked (a merge, a load that
    /// takes only some of the records).
    forward: OnceCell<Vec<Forward>>,
}

/// One record of a segment.
#[derive(Debug, Clone)]
pub struct SegmentRecord {
    /// Its path relative to the record folder.
    pub path: String,
    /// Its file's size in bytes.
    pub size: u64,
    /// Its header: the record's JSON without its result.
    pub header: String,
    /// Its metadata field's length in tokens.
    pub metadata_len: u32,
    /// Its content passages' lengths in tokens, in order.
    pub passages: Vec<u32>,
}

/// A term's lists in a segment.
#[derive(Debug, Default, Clone, Copy)]
struct TermLists {
    df: u32,
    metadata: Block,
    content: Block,
}

/// A posting list in a segment's bytes: how many postings, the last number, where.
#[derive(Debug, Default, Clone, Copy)]
struct Block {
    count: u32,
    last: u32,
    start: usize,
    end: usize,
}

/// A term's lists in a segment, as [`crate::Index::append_segment`] takes them.
pub(crate) struct Lists<'a> {
    /// The records holding the term, in either field.
    pub(crate) df: u32,
    /// The records holding it in their metadata, numbered from 0 in the segment.
    pub(crate) metadata: List<'a>,
    /// The passages holding it, numbered from 0 across the segment's records.
    pub(crate) content: List<'a>,
}

/// A posting list: how many postings, the last number, and its bytes (postings.rs's encoding).
pub(crate) struct List<'a> {
    pub(crate) count: u32,
    pub(crate) last: u32,
    pub(crate) bytes: &'a [u8],
}

/// A record's terms read back out of a segment's lists: its metadata terms, its
/// passages (each its length and how many of `terms` are its own) and their terms, as
/// (dictionary id, frequency), ids ascending within each.
#[derive(Debug, Default, Clone)]
pub struct Forward {
    /// Its metadata terms.
    pub metadata: Vec<(u32, u32)>,
    /// Its passages: length, and how many of `terms` are the passage's.
    pub passages: Vec<(u32, u32)>,
    /// The passages' terms, one passage after the other.
    pub terms: Vec<(u32, u32)>,
}

/// A record to write into a segment: its path, size, header, and its terms: metadata
/// (and its length) and content passages (each its length and its terms), terms sorted
/// and distinct within each, with their frequencies.
pub struct ToWrite<'a> {
    /// Its path relative to the record folder.
    pub path: &'a str,
    /// Its file's size in bytes.
    pub size: u64,
    /// Its header (the record's JSON without its result).
    pub header: &'a str,
    /// Its metadata terms and the field's length.
    pub metadata: (Vec<(&'a str, u32)>, u32),
    /// Its passages: length, and (term, frequency) sorted by term.
    pub passages: Vec<(u32, Vec<(&'a str, u32)>)>,
}

impl<'a> ToWrite<'a> {
    /// A record indexed by `terms` (its metadata and its content passages).
    pub fn from_terms(path: &'a str, size: u64, header: &'a str, terms: &'a Terms) -> ToWrite<'a> {
        let field = |f: &'a Field| f.terms().iter().map(|(t, n)| (t.as_str(), *n)).collect::<Vec<_>>();
        let metadata = (field(terms.metadata()), terms.metadata().len());
        let passages = terms.passages().iter().map(|f| (f.len(), field(f))).collect();
        ToWrite { path, size, header, metadata, passages }
    }

    /// Record `i` of a decoded segment, to write again (a merge).
    pub fn from_segment(segment: &'a Segment, i: usize) -> ToWrite<'a> {
        let record = &segment.records[i];
        let forward = &segment.forward()[i];
        let word = |&(id, n): &(u32, u32)| (&*segment.dictionary[id as usize], n);
        let metadata = (forward.metadata.iter().map(word).collect(), record.metadata_len);
        let passages = forward.passages().map(|(len, terms)| (len, terms.iter().map(word).collect())).collect();
        ToWrite { path: &record.path, size: record.size, header: &record.header, metadata, passages }
    }
}

impl Forward {
    /// Its passages: each its length and its terms.
    pub fn passages(&self) -> impl Iterator<Item = (u32, &[(u32, u32)])> + '_ {
        let mut at = 0;
        self.passages.iter().map(move |&(len, n)| {
            let terms = &self.terms[at..at + n as usize];
            at += n as usize;
            (len, terms)
        })
    }
}

/// The records waiting for the next segment, held compactly: each term once, in the
/// builder's dictionary, and each record's terms as (id, frequency) pairs, so what waits
/// costs a few bytes a term rather than a string (a [`Terms`] per record would hold its
/// words as strings, several times the text's size).
#[derive(Debug, Default)]
pub struct Builder {
    ids: HashMap<Box<str>, u32>,
    words: Vec<Box<str>>,
    records: Vec<Pending>,
}

/// A record waiting in a [`Builder`].
#[derive(Debug)]
struct Pending {
    /// Its filepath (the caller's key: what it drops, and where it is relative to).
    key: String,
    size: u64,
    header: String,
    metadata_len: u32,
    /// Its terms, by ids into the builder's words.
    terms: Forward,
}

impl Builder {
    /// Adds the record at `key` (its filepath), of `size` bytes, with `header` (its JSON
    /// without its result) and indexed by `terms`.
    pub fn add(&mut self, key: &str, size: u64, header: String, terms: &Terms) {
        let mut id = |word: &str| -> u32 {
            if let Some(&id) = self.ids.get(word) {
                return id;
            }
            let id = self.words.len() as u32;
            self.words.push(word.into());
            self.ids.insert(word.into(), id);
            id
        };
        let metadata = terms.metadata().terms().iter().map(|(t, n)| (id(t), *n)).collect();
        let mut passages = Vec::with_capacity(terms.passages().len());
        let mut flat = Vec::new();
        for p in terms.passages() {
            passages.push((p.len(), p.terms().len() as u32));
            flat.extend(p.terms().iter().map(|(t, n)| (id(t), *n)));
        }
        let metadata_len = terms.metadata().len();
        let terms = Forward { metadata, passages, terms: flat };
        self.records.push(Pending { key: key.to_owned(), size, header, metadata_len, terms });
    }

    /// How many records wait.
    pub fn len(&self) -> usize {
        self.records.len()
    }

    /// Whether none waits.
    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    /// Drops the records waiting and their words.
    pub fn clear(&mut self) {
        *self = Builder::default();
    }

    /// Moves every record of `other` in (a write that failed puts its records back).
    pub fn absorb(&mut self, other: Builder) {
        for r in other.records {
            let words =
                |terms: &[(u32, u32)]| terms.iter().map(|&(id, n)| (other.words[id as usize].to_string(), n)).collect();
            let metadata = Field::from_sorted(words(&r.terms.metadata), r.metadata_len);
            let passages = r.terms.passages().map(|(len, terms)| Field::from_sorted(words(terms), len)).collect();
            self.add(&r.key, r.size, r.header, &Terms::from_parts(metadata, passages));
        }
    }

    /// The segment of the records `keep(key)` (and where it is, relative to the record
    /// folder) accepts, each once (the last added); `None` when none is kept. The builder
    /// is left as it was.
    pub fn encode(&self, mut keep: impl FnMut(&str) -> Option<String>) -> Option<(usize, Vec<u8>)> {
        let mut last: HashMap<&str, usize> = HashMap::new();
        for (i, r) in self.records.iter().enumerate() {
            last.insert(r.key.as_str(), i);
        }
        let word = |&(id, n): &(u32, u32)| (&*self.words[id as usize], n);
        let mut kept = Vec::new();
        for (i, r) in self.records.iter().enumerate() {
            if last.get(r.key.as_str()) != Some(&i) {
                continue;
            }
            let Some(path) = keep(&r.key) else { continue };
            kept.push((path, r));
        }
        let records: Vec<ToWrite<'_>> = kept
            .iter()
            .map(|(path, r)| {
                let passages = r.terms.passages().map(|(len, terms)| (len, terms.iter().map(word).collect())).collect();
                let metadata = (r.terms.metadata.iter().map(word).collect(), r.metadata_len);
                ToWrite { path: path.as_str(), size: r.size, header: &r.header, metadata, passages }
            })
            .collect();
        (!records.is_empty()).then(|| (records.len(), encode(&records)))
    }
}

/// Why a segment was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// Not a segment, or one of another format version.
    Foreign,
    /// Its checksum does not match its bytes (a torn or altered file).
    Torn,
    /// It does not parse whole.
    Malformed,
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Refused::Foreign => "not an index segment of this version",
            Refused::Torn => "its checksum does not match (torn or altered)",
            Refused::Malformed => "it does not parse",
        })
    }
}

/// The bytes of a segment holding `records`.
pub fn encode(records: &[ToWrite<'_>]) -> Vec<u8> {
    // The distinct terms, then sorted: sorting every occurrence first (a record's passages
    // repeat their terms) made this sort most of a segment's cost.
    let mut seen: HashSet<&str> = HashSet::new();
    let mut words: Vec<&str> = records
        .iter()
        .flat_map(|r| r.metadata.0.iter().chain(r.passages.iter().flat_map(|p| p.1.iter())).map(|t| t.0))
        .filter(|w| seen.insert(w))
        .collect();
    drop(seen);
    crate::sort::sort(&mut words);
    let ids: HashMap<&str, u32> = words.iter().enumerate().map(|(i, w)| (*w, i as u32)).collect();
    // Invert: per term, its metadata postings (record numbers) and content postings
    // (passage numbers), in ascending order since records and passages are taken in order.
    let mut metadata: Vec<Vec<(u32, u32)>> = vec![Vec::new(); words.len()];
    let mut content: Vec<Vec<(u32, u32)>> = vec![Vec::new(); words.len()];
    let mut df = vec![0u32; words.len()];
    let mut counted = vec![u32::MAX; words.len()];
    let mut passage = 0u32;
    for (i, r) in records.iter().enumerate() {
        let i = i as u32;
        let mut count = |id: usize| {
            if counted[id] != i {
                counted[id] = i;
                df[id] += 1;
            }
        };
        for (t, n) in &r.metadata.0 {
            let id = ids[t] as usize;
            metadata[id].push((i, *n));
            count(id);
        }
        for (_, terms) in &r.passages {
            for (t, n) in terms {
                let id = ids[t] as usize;
                content[id].push((passage, *n));
                count(id);
            }
            passage += 1;
        }
    }
    let mut out = Vec::with_capacity(HEADER + words.len() * 16);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&FORMAT.to_be_bytes());
    out.extend_from_slice(&[0; 8]);
    out.extend_from_slice(&engine().to_le_bytes());
    push(&mut out, words.len() as u64);
    for w in &words {
        push_str(&mut out, w);
    }
    push(&mut out, records.len() as u64);
    for r in records {
        push_str(&mut out, r.path);
        push(&mut out, r.size);
        push_str(&mut out, r.header);
        push(&mut out, u64::from(r.metadata.1));
        push(&mut out, r.passages.len() as u64);
        for (len, _) in &r.passages {
            push(&mut out, u64::from(*len));
        }
    }
    let mut list = Vec::new();
    for id in 0..words.len() {
        push(&mut out, u64::from(df[id]));
        for postings in [&metadata[id], &content[id]] {
            list.clear();
            let mut last = 0;
            for &(number, n) in postings {
                push_varint(&mut list, number - last);
                push_varint(&mut list, n);
                last = number;
            }
            push(&mut out, postings.len() as u64);
            push(&mut out, list.len() as u64);
            out.extend_from_slice(&list);
        }
    }
    let sum = checksum(&out[HEADER..]);
    out[8..HEADER].copy_from_slice(&sum.to_le_bytes());
    out
}

fn checksum(bytes: &[u8]) -> u64 {
    let mut h = ResultHasher::default();
    h.update(bytes);
    h.finish()
}

impl Segment {
    /// The segment in `bytes`, or why it is refused.
    pub fn decode(bytes: &[u8]) -> Result<Segment, Refused> {
        if bytes.len() < HEADER || &bytes[..6] != MAGIC || bytes[6..8] != FORMAT.to_be_bytes() {
            return Err(Refused::Foreign);
        }
        let sum = u64::from_le_bytes(bytes[8..HEADER].try_into().map_err(|_| Refused::Foreign)?);
        if checksum(&bytes[HEADER..]) != sum {
            return Err(Refused::Torn);
        }
        let written_by = bytes.get(HEADER..HEADER + 8).and_then(|b| b.try_into().ok()).map(u64::from_le_bytes);
        if written_by != Some(engine()) {
            return Err(Refused::Foreign);
        }
        let mut r = Reader { bytes, at: HEADER + 8 };
        let n = r.count()?;
        let mut dictionary = Vec::with_capacity(n);
        for _ in 0..n {
            dictionary.push(Box::from(r.str()?));
        }
        if dictionary.windows(2).any(|w| w[0] >= w[1]) {
            return Err(Refused::Malformed);
        }
        let n = r.count()?;
        let mut records = Vec::with_capacity(n);
        let mut passages = 0u64;
        for _ in 0..n {
            let path = r.str()?.to_owned();
            let size = r.varint()?;
            let header = r.str()?.to_owned();
            let metadata_len = r.u32()?;
            let count = r.count()?;
            let mut lens = Vec::with_capacity(count);
            for _ in 0..count {
                lens.push(r.u32()?);
            }
            passages += count as u64;
            records.push(SegmentRecord { path, size, header, metadata_len, passages: lens });
        }
        let passages = u32::try_from(passages).map_err(|_| Refused::Malformed)?;
        let start = r.at;
        let mut lists = Vec::with_capacity(dictionary.len());
        for _ in 0..dictionary.len() {
            let df = r.u32()?;
            let metadata = r.block(start, records.len() as u32)?;
            let content = r.block(start, passages)?;
            if df as usize > records.len() || (metadata.count == 0 && content.count == 0) {
                return Err(Refused::Malformed);
            }
            lists.push(TermLists { df, metadata, content });
        }
        if r.at != bytes.len() {
            return Err(Refused::Malformed);
        }
        Ok(Segment { dictionary, records, lists, postings: bytes[start..].to_vec(), forward: OnceCell::new() })
    }

    /// Term `id`'s lists: the records holding it, and its metadata and content lists.
    pub(crate) fn lists(&self, id: usize) -> Lists<'_> {
        let t = &self.lists[id];
        let list = |b: Block| List { count: b.count, last: b.last, bytes: &self.postings[b.start..b.end] };
        Lists { df: t.df, metadata: list(t.metadata), content: list(t.content) }
    }

    /// Each record's terms, read back out of the lists (once, then kept).
    pub fn forward(&self) -> &[Forward] {
        self.forward.get_or_init(|| {
            // Each passage's record and length, by passage number.
            let mut passage_of = Vec::new();
            let mut per_passage: Vec<Vec<(u32, u32)>> = Vec::new();
            for (i, r) in self.records.iter().enumerate() {
                for &len in &r.passages {
                    passage_of.push((i, len));
                    per_passage.push(Vec::new());
                }
            }
            let mut forward: Vec<Forward> = vec![Forward::default(); self.records.len()];
            for id in 0..self.dictionary.len() {
                let lists = self.lists(id);
                for p in Iter::new(lists.metadata.bytes) {
                    forward[p.slot as usize].metadata.push((id as u32, p.tf));
                }
                for p in Iter::new(lists.content.bytes) {
                    per_passage[p.slot as usize].push((id as u32, p.tf));
                }
            }
            for (terms, (record, len)) in per_passage.into_iter().zip(passage_of) {
                let f = &mut forward[record];
                f.passages.push((len, terms.len() as u32));
                f.terms.extend(terms);
            }
            forward
        })
    }

    /// The terms of record `i` (metadata and content passages), as [`Terms`]: what the
    /// process that saved it indexed.
    pub fn terms_of(&self, i: usize) -> Terms {
        let forward = &self.forward()[i];
        let words =
            |terms: &[(u32, u32)]| terms.iter().map(|&(id, n)| (self.dictionary[id as usize].to_string(), n)).collect();
        let passages = forward.passages().map(|(len, terms)| Field::from_sorted(words(terms), len)).collect();
        Terms::from_parts(Field::from_sorted(words(&forward.metadata), self.records[i].metadata_len), passages)
    }
}

fn push(out: &mut Vec<u8>, mut n: u64) {
    while n >= 0x80 {
        out.push(n as u8 | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}

fn push_str(out: &mut Vec<u8>, s: &str) {
    push(out, s.len() as u64);
    out.extend_from_slice(s.as_bytes());
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn varint(&mut self) -> Result<u64, Refused> {
        let mut n = 0u64;
        for shift in (0..64).step_by(7) {
            let b = *self.bytes.get(self.at).ok_or(Refused::Malformed)?;
            self.at += 1;
            n |= u64::from(b & 0x7f) << shift;
            if b < 0x80 {
                return Ok(n);
            }
        }
        Err(Refused::Malformed)
    }

    fn u32(&mut self) -> Result<u32, Refused> {
        u32::try_from(self.varint()?).map_err(|_| Refused::Malformed)
    }

    /// A count of items still to come: never more than the bytes left (each takes one at least).
    fn count(&mut self) -> Result<usize, Refused> {
        let n = self.varint()?;
        usize::try_from(n).ok().filter(|&n| n <= self.bytes.len() - self.at).ok_or(Refused::Malformed)
    }

    fn str(&mut self) -> Result<&'a str, Refused> {
        let len = self.count()?;
        let s = std::str::from_utf8(&self.bytes[self.at..self.at + len]).map_err(|_| Refused::Malformed)?;
        self.at += len;
        Ok(s)
    }

    /// A posting list of numbers below `limit`, checked whole: as many postings as it
    /// says, numbers ascending, every frequency above 0. Its place is from `base`.
    fn block(&mut self, base: usize, limit: u32) -> Result<Block, Refused> {
        let count = self.u32()?;
        let len = self.count()?;
        let (start, end) = (self.at, self.at + len);
        self.at = end;
        let mut seen = 0u32;
        let mut last = None;
        let mut it = Iter::new(&self.bytes[start..end]);
        for p in it.by_ref() {
            let ascending = last.map_or(true, |l| p.slot > l);
            if !ascending || p.slot >= limit || p.tf == 0 {
                return Err(Refused::Malformed);
            }
            last = Some(p.slot);
            seen += 1;
        }
        if seen != count || !it.is_done() {
            return Err(Refused::Malformed);
        }
        Ok(Block { count, last: last.unwrap_or(0), start: start - base, end: end - base })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn terms(description: &str, text: &str) -> Terms {
        Terms::of_record_with_content(description, "", &json!(null), Some(&json!(text).to_string()), usize::MAX)
    }

    #[test]
    fn a_segment_gives_back_the_terms_it_was_written_with() {
        let a = terms("read file: path=a.rs", "the quick brown fox jumps over the lazy dog\nand again the fox");
        let long: String = (0..400).map(|i| format!("word{}\n", i % 37)).collect();
        let b = terms("grep: pattern=word", &long);
        let empty = Terms::default();
        let bytes = encode(&[
            ToWrite::from_terms("a.json", 10, "{\"toolName\":\"a\"}", &a),
            ToWrite::from_terms("code/b.json", 20_000, "{}", &b),
            ToWrite::from_terms("c.json", 0, "{}", &empty),
        ]);
        let seg = Segment::decode(&bytes).expect("decodes");
        assert_eq!(seg.records.len(), 3);
        assert_eq!(seg.records[1].path, "code/b.json");
        assert_eq!(seg.records[1].size, 20_000);
        assert_eq!(seg.records[0].header, "{\"toolName\":\"a\"}");
        assert!(b.passages().len() > 1);
        for (i, want) in [&a, &b, &empty].into_iter().enumerate() {
            assert_eq!(&seg.terms_of(i), want, "record {i}");
        }
        // Written again from the decoded segment (a merge): the same bytes.
        let again: Vec<ToWrite<'_>> = (0..seg.records.len()).map(|i| ToWrite::from_segment(&seg, i)).collect();
        assert_eq!(encode(&again), bytes);
    }

    #[test]
    fn a_segment_of_a_build_that_makes_other_terms_is_foreign() {
        let a = terms("d", "alpha beta gamma");
        let mut bytes = encode(&[ToWrite::from_terms("a.json", 1, "{}", &a)]);
        assert!(Segment::decode(&bytes).is_ok());
        bytes[HEADER] ^= 1; // another engine fingerprint, the checksum made again
        let sum = checksum(&bytes[HEADER..]);
        bytes[8..HEADER].copy_from_slice(&sum.to_le_bytes());
        assert_eq!(Segment::decode(&bytes).unwrap_err(), Refused::Foreign);
        assert_eq!(engine(), engine(), "the same in one build");
    }

    #[test]
    fn a_builder_writes_what_from_terms_writes_keeping_the_last_copy_of_a_record() {
        let a = terms("read file: path=a.rs", "fn main() {}\nthe main function");
        let b = terms("grep: pattern=main", "a.rs:1: fn main() {}");
        let mut builder = Builder::default();
        builder.add("/ctx/a.json", 10, "{\"a\":1}".into(), &b);
        builder.add("/ctx/a.json", 10, "{\"a\":1}".into(), &a);
        builder.add("/ctx/gone.json", 5, "{}".into(), &b);
        builder.add("/ctx/b.json", 20, "{\"b\":2}".into(), &b);
        let mut moved = Builder::default();
        moved.absorb(builder);
        let keep = |key: &str| (key != "/ctx/gone.json").then(|| key.trim_start_matches("/ctx/").to_owned());
        let (n, bytes) = moved.encode(keep).expect("two kept");
        assert_eq!(n, 2);
        let want = encode(&[
            ToWrite::from_terms("a.json", 10, "{\"a\":1}", &a),
            ToWrite::from_terms("b.json", 20, "{\"b\":2}", &b),
        ]);
        assert_eq!(bytes, want);
        assert!(moved.encode(|_| None).is_none());
    }

    #[test]
    fn a_torn_foreign_or_malformed_segment_is_refused() {
        let a = terms("d", "alpha beta gamma");
        let bytes = encode(&[ToWrite::from_terms("a.json", 1, "{}", &a)]);
        assert_eq!(Segment::decode(&bytes[..bytes.len() - 1]).unwrap_err(), Refused::Torn);
        let mut flipped = bytes.clone();
        let last = flipped.len() - 1;
        flipped[last] ^= 1;
        assert_eq!(Segment::decode(&flipped).unwrap_err(), Refused::Torn);
        let mut other = bytes.clone();
        other[7] = other[7].wrapping_add(1);
        assert_eq!(Segment::decode(&other).unwrap_err(), Refused::Foreign);
        assert_eq!(Segment::decode(b"{\"not\":\"a segment\"}").unwrap_err(), Refused::Foreign);
        assert_eq!(Segment::decode(b"").unwrap_err(), Refused::Foreign);
        // Well summed but not whole: a count past the end.
        let resummed = |mut bad: Vec<u8>| {
            let sum = checksum(&bad[HEADER..]);
            bad[8..HEADER].copy_from_slice(&sum.to_le_bytes());
            bad
        };
        let mut bad = bytes[..HEADER + 8].to_vec();
        bad.push(0x7f);
        assert_eq!(Segment::decode(&resummed(bad)).unwrap_err(), Refused::Malformed);
        // Well summed, whole, but a posting past the passages there are.
        assert!(Segment::decode(&bytes).is_ok());
        let mut past = bytes.clone();
        let tail = past.len() - 2; // the last posting's gap (a one-byte varint), before its frequency
        past[tail] = 0x7e;
        assert_eq!(Segment::decode(&resummed(past)).unwrap_err(), Refused::Malformed);
    }
}
