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
//! The bytes are laid out to be read by range ([`layout`]): a directory at the start of the
//! file says where each block of the dictionary and of the records is, so that a reader
//! finds one term's lists with two reads of a few kilobytes, whatever the segment's size.
//!
//! A segment that is torn (a checksum fails, or it ends before its blocks), of another
//! format ([`FORMAT`]), written by a build that makes other terms of the same text
//! ([`engine`]: another tokeniser, stemmer, stop list or passage length), or that does not
//! parse whole (a number out of range, a list out of order) is refused
//! ([`Segment::decode`] fails); the caller reads its records instead.
//!
//! Over 600 lines only with its tests (about 240: the format's refusals, a read by range
//! against a whole read): the code is about 500.

use std::cell::OnceCell;
use std::collections::{HashMap, HashSet};
use std::ops::Range;

use toolctx_text::ResultHasher;

use crate::postings::{push_varint, Iter};

pub mod layout;

use crate::terms::{Field, Terms};
use layout::{Directory, Encoded, EncodedTerm, Head, ListRef};

/// The format version, with the terms it holds: bump it when the layout changes or when
/// the same text gives other terms (tokeniser, stemmer, stop words, passage length), so
/// an older segment is refused and rebuilt rather than ranked on stale terms.
/// Format 3: read by range (a directory of blocks; format 2 was read whole).
pub const FORMAT: u16 = 3;

const MAGIC: &[u8; 6] = b"tcxseg";

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
pub struct List<'a> {
    /// Postings.
    pub count: u32,
    /// The last number.
    pub last: u32,
    /// The postings, numbers from 0.
    pub bytes: &'a [u8],
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

    /// The segments of the records `keep(key)` (and where it is, relative to the record
    /// folder) accepts, each once (the last added), cut to be `max_bytes` long at most
    /// ([`encode_within`]): each with the keys of its records. None when none is kept. The
    /// builder is left as it was.
    pub fn encode(
        &self,
        mut keep: impl FnMut(&str) -> Option<String>,
        max_bytes: usize,
    ) -> Vec<(Vec<String>, Vec<u8>)> {
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
        let mut parts = Vec::new();
        encode_within(&records, max_bytes, &mut parts);
        let keys = |range: Range<usize>| kept[range].iter().map(|(_, r)| r.key.clone()).collect();
        parts.into_iter().map(|(range, bytes)| (keys(range), bytes)).collect()
    }

    /// Keeps only the records whose key `keep` accepts (a write that failed in part puts
    /// back the records of its failed parts alone).
    pub fn retain(&mut self, mut keep: impl FnMut(&str) -> bool) {
        self.records.retain(|r| keep(&r.key));
    }
}

/// The segments of `records`, in order, each `max_bytes` long at most (a storage's largest
/// value: D1's and a Durable Object's rows hold 2 MB), pushed to `parts` as the range of
/// `records` each holds and its bytes: their segment if it fits, else the segments of each
/// half. A record whose segment alone is over `max_bytes` is a part of its own, over it
/// (its index can be larger than its text: base64, hashes, identifiers): the caller
/// leaves it out.
pub fn encode_within(records: &[ToWrite<'_>], max_bytes: usize, parts: &mut Vec<(Range<usize>, Vec<u8>)>) {
    fn from(at: usize, records: &[ToWrite<'_>], max_bytes: usize, parts: &mut Vec<(Range<usize>, Vec<u8>)>) {
        let bytes = encode(records);
        if bytes.len() <= max_bytes || records.len() == 1 {
            parts.push((at..at + records.len(), bytes));
            return;
        }
        let half = records.len() / 2;
        from(at, &records[..half], max_bytes, parts);
        from(at + half, &records[half..], max_bytes, parts);
    }
    if !records.is_empty() {
        from(0, records, max_bytes, parts);
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

/// The bytes of a segment holding `records` (see [`layout`]).
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
    // Every list in postings.rs's encoding, one after the other.
    let mut lists = Vec::new();
    let mut ends = Vec::with_capacity(words.len() * 2);
    for postings in metadata.iter().zip(&content).flat_map(|(m, c)| [m, c]) {
        let mut last = 0;
        for &(number, n) in postings {
            push_varint(&mut lists, number - last);
            push_varint(&mut lists, n);
            last = number;
        }
        ends.push(lists.len());
    }
    let list = |k: usize, postings: &[(u32, u32)]| {
        let start = if k == 0 { 0 } else { ends[k - 1] };
        (postings.len() as u32, &lists[start..ends[k]])
    };
    let terms: Vec<EncodedTerm<'_>> = words
        .iter()
        .enumerate()
        .map(|(id, term)| EncodedTerm {
            term,
            df: df[id],
            metadata: list(2 * id, &metadata[id]),
            content: list(2 * id + 1, &content[id]),
        })
        .collect();
    let records: Vec<Encoded<'_>> = records
        .iter()
        .map(|r| Encoded {
            path: r.path,
            size: r.size,
            header: r.header,
            metadata_len: r.metadata.1,
            passages: r.passages.iter().map(|p| p.0).collect(),
        })
        .collect();
    layout::encode(&records, &terms)
}

impl Segment {
    /// The segment in `bytes`, read whole and checked whole (every block and the
    /// postings against their checksums, every list for its structure), or why it is
    /// refused.
    pub fn decode(bytes: &[u8]) -> Result<Segment, Refused> {
        let head = Head::decode(bytes)?;
        let directory = Directory::decode(&head, head.directory.of(bytes)?)?;
        let region = directory.postings_span();
        let postings = directory.check_postings(region.of(bytes)?)?;
        let mut dictionary: Vec<Box<str>> = Vec::new();
        let mut lists = Vec::new();
        let block = |list: ListRef, limit: u32| -> Result<Block, Refused> {
            let start = list.span.offset.checked_sub(region.offset).and_then(|s| usize::try_from(s).ok());
            let len = usize::try_from(list.span.len).ok();
            let (start, end) =
                start.zip(len).and_then(|(s, l)| Some((s, s.checked_add(l)?))).ok_or(Refused::Malformed)?;
            let bytes = postings.get(start..end).ok_or(Refused::Malformed)?;
            let last = list.check(bytes, limit)?;
            Ok(Block { count: list.count, last, start, end })
        };
        for b in 0..directory.dictionary_blocks() {
            for entry in directory.dictionary_block(b, directory.dictionary_span(b).of(bytes)?)? {
                if dictionary.last().is_some_and(|last| *last >= entry.term) {
                    return Err(Refused::Malformed);
                }
                let metadata = block(entry.metadata, directory.records)?;
                let content = block(entry.content, directory.passages)?;
                lists.push(TermLists { df: entry.df, metadata, content });
                dictionary.push(entry.term);
            }
        }
        let mut records = Vec::new();
        for b in 0..directory.records_blocks() {
            records.extend(directory.records_block(b, directory.records_span(b).of(bytes)?)?);
        }
        if dictionary.len() != directory.terms as usize || records.len() != directory.records as usize {
            return Err(Refused::Malformed);
        }
        if directory.end() != bytes.len() as u64 {
            return Err(Refused::Torn);
        }
        Ok(Segment { dictionary, records, lists, postings: postings.to_vec(), forward: OnceCell::new() })
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

    /// `bytes` with its directory changed by `change` and summed again (the head's checksum).
    fn with_directory(bytes: &[u8], change: impl FnOnce(&mut [u8])) -> Vec<u8> {
        let mut bytes = bytes.to_vec();
        let head = Head::decode(&bytes).expect("a head");
        let at = head.directory.offset as usize..(head.directory.offset + head.directory.len) as usize;
        change(&mut bytes[at.clone()]);
        let sum = layout::hash(&bytes[at]);
        bytes[12..layout::HEAD].copy_from_slice(&sum.to_le_bytes());
        bytes
    }

    #[test]
    fn a_segment_of_a_build_that_makes_other_terms_is_foreign() {
        let a = terms("d", "alpha beta gamma");
        let bytes = encode(&[ToWrite::from_terms("a.json", 1, "{}", &a)]);
        assert!(Segment::decode(&bytes).is_ok());
        // Another engine fingerprint (the directory's first 8 bytes), the checksum made again.
        let other = with_directory(&bytes, |directory| directory[0] ^= 1);
        assert_eq!(Segment::decode(&other).unwrap_err(), Refused::Foreign);
        assert_eq!(engine(), engine(), "the same in one build");
    }

    /// A segment of `n` records, each a few words of its own and some shared: its bytes
    /// and its records' paths.
    fn many(n: usize) -> (Vec<u8>, Vec<String>) {
        let (terms, paths) = many_terms(n);
        let records: Vec<ToWrite<'_>> =
            terms.iter().zip(&paths).map(|(t, p)| ToWrite::from_terms(p, 100, "{}", t)).collect();
        let bytes = encode(&records);
        (bytes, paths)
    }

    /// The terms and paths of [`many`]'s records.
    fn many_terms(n: usize) -> (Vec<Terms>, Vec<String>) {
        let terms: Vec<Terms> = (0..n)
            .map(|i| {
                let words: String = (0..30).map(|k| format!("w{} ", (i * 7 + k * 13) % 997)).collect();
                super::tests::terms(&format!("read file: path=f{i}.rs"), &format!("{words}\nfile{i} shared"))
            })
            .collect();
        (terms, (0..n).map(|i| format!("f{i}.json")).collect())
    }

    #[test]
    fn a_term_read_by_range_has_the_lists_a_whole_read_gives() {
        let (bytes, paths) = many(300);
        let whole = Segment::decode(&bytes).expect("decodes");
        assert!(whole.dictionary.len() > 10 * layout::TERMS_PER_BLOCK, "{} terms", whole.dictionary.len());
        // A reader with the head and directory only: one block of the dictionary a term.
        let head = Head::decode(&bytes[..layout::HEAD]).expect("head");
        let directory = Directory::decode(&head, head.directory.of(&bytes).unwrap()).expect("directory");
        assert_eq!((directory.records, directory.terms as usize), (300, whole.dictionary.len()));
        for (id, term) in whole.dictionary.iter().enumerate() {
            let block = directory.block_of(term).expect("a block");
            let entries =
                directory.dictionary_block(block, directory.dictionary_span(block).of(&bytes).unwrap()).unwrap();
            let entry = entries.iter().find(|e| e.term == *term).expect("in its block");
            let want = whole.lists(id);
            assert_eq!(entry.df, want.df);
            for (list, want, limit) in
                [(entry.metadata, want.metadata, directory.records), (entry.content, want.content, directory.passages)]
            {
                let got = list.span.of(&bytes).unwrap();
                assert_eq!((list.count, got), (want.count, want.bytes), "{term}");
                assert_eq!(list.check(got, limit), Ok(want.last));
            }
        }
        // A term before the first, or between two, is in no block or not in its block.
        assert_eq!(directory.block_of(""), None);
        let block = directory.block_of("w5000").expect("after some");
        let entries = directory.dictionary_block(block, directory.dictionary_span(block).of(&bytes).unwrap()).unwrap();
        assert!(entries.iter().all(|e| &*e.term != "w5000"));
        // The records, block by block.
        let records: Vec<SegmentRecord> = (0..directory.records_blocks())
            .flat_map(|b| directory.records_block(b, directory.records_span(b).of(&bytes).unwrap()).unwrap())
            .collect();
        assert_eq!(records.iter().map(|r| &r.path).collect::<Vec<_>>(), paths.iter().collect::<Vec<_>>());
        assert!(directory.records_blocks() > 2);
    }

    #[test]
    fn terms_that_share_more_bytes_than_their_block_has_left_decode() {
        // A term that shares a long prefix with the one before it, last in its block: the
        // bytes it shares are more than the bytes left after it (real text: a failed merge).
        let letters = |i: usize| format!("{}{}", (b'a' + (i / 26) as u8) as char, (b'a' + (i % 26) as u8) as char);
        let words: Vec<String> =
            (0..300).map(|i| format!("interoperabilityframeworkconfiguration{}", letters(i))).collect();
        let a = terms("d", &words.join(" "));
        let bytes = encode(&[ToWrite::from_terms("a.json", 1, "{}", &a)]);
        let segment = Segment::decode(&bytes).expect("decodes");
        assert_eq!(segment.terms_of(0), a);
        assert!(segment.dictionary.len() > 2 * layout::TERMS_PER_BLOCK);
    }

    #[test]
    fn a_block_read_by_range_is_checked_against_its_checksum() {
        let (bytes, _) = many(200);
        let head = Head::decode(&bytes).unwrap();
        let directory = Directory::decode(&head, head.directory.of(&bytes).unwrap()).unwrap();
        let span = directory.dictionary_span(1);
        let mut block = span.of(&bytes).unwrap().to_vec();
        block[3] ^= 0x20;
        assert_eq!(directory.dictionary_block(1, &block).unwrap_err(), Refused::Torn);
        assert_eq!(directory.dictionary_block(1, &block[1..]).unwrap_err(), Refused::Torn, "a short read");
        let mut records = directory.records_span(0).of(&bytes).unwrap().to_vec();
        records[0] ^= 1;
        assert_eq!(directory.records_block(0, &records).unwrap_err(), Refused::Torn);
        // A list read by range whose bytes are not what the dictionary says.
        let whole = Segment::decode(&bytes).unwrap();
        let id = (0..whole.dictionary.len()).find(|&id| whole.lists(id).content.count > 1).expect("a shared term");
        let term = &whole.dictionary[id];
        let b = directory.block_of(term).expect("its block");
        let entries = directory.dictionary_block(b, directory.dictionary_span(b).of(&bytes).unwrap()).unwrap();
        let list = entries.iter().find(|e| e.term == *term).expect("in its block").content;
        let got = list.span.of(&bytes).unwrap();
        assert_eq!(list.check(&got[..got.len() - 1], directory.passages), Err(Refused::Malformed));
        assert_eq!(list.check(got, 0), Err(Refused::Malformed), "numbers past the bound");
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
        let parts = moved.encode(keep, usize::MAX);
        let want = encode(&[
            ToWrite::from_terms("a.json", 10, "{\"a\":1}", &a),
            ToWrite::from_terms("b.json", 20, "{\"b\":2}", &b),
        ]);
        assert_eq!(parts, vec![(vec!["/ctx/a.json".to_owned(), "/ctx/b.json".to_owned()], want)]);
        assert!(moved.encode(|_| None, usize::MAX).is_empty());
    }

    #[test]
    fn segments_over_a_storage_s_largest_value_are_cut_in_parts_that_hold_every_record_once() {
        let (whole, _) = many(300);
        let (terms, paths) = many_terms(300);
        let records: Vec<ToWrite<'_>> =
            terms.iter().zip(&paths).map(|(t, p)| ToWrite::from_terms(p, 100, "{}", t)).collect();
        let limit = whole.len() / 5;
        let mut parts = Vec::new();
        encode_within(&records, limit, &mut parts);
        assert!(parts.len() >= 5, "{} parts", parts.len());
        let mut held = Vec::new();
        for (range, bytes) in &parts {
            assert!(bytes.len() <= limit, "{} bytes over {limit}", bytes.len());
            let segment = Segment::decode(bytes).unwrap();
            assert_eq!(segment.records.iter().map(|r| r.path.as_str()).collect::<Vec<_>>(), paths[range.clone()]);
            held.extend(segment.records.iter().map(|r| r.path.clone()));
        }
        assert_eq!(held, paths, "every record once, in order");
        let mut within = Vec::new();
        encode_within(&records, whole.len(), &mut within);
        assert_eq!(within, vec![(0..300, whole)], "a segment within the limit is one");
        let mut alone = Vec::new();
        encode_within(&records[..3], 1, &mut alone);
        let ranges: Vec<_> = alone.iter().map(|(r, b)| (r.clone(), b.len() > 1)).collect();
        assert_eq!(
            ranges,
            vec![(0..1, true), (1..2, true), (2..3, true)],
            "a record over the limit is a part of its own, over it"
        );
    }

    #[test]
    fn a_directory_changed_anywhere_and_summed_again_is_refused_or_decodes_never_panics() {
        // A well-summed directory whose numbers lie (the checksum cannot tell): any byte
        // changed to any of a few values decodes or is refused, and a segment that decodes
        // gives back its records' terms without a panic.
        let (bytes, _) = many(140);
        let directory_len = Head::decode(&bytes).unwrap().directory.len as usize;
        for at in 0..directory_len {
            for value in [0x00, 0x01, 0x7f, 0x80, 0xff] {
                let changed = with_directory(&bytes, |directory| directory[at] = value);
                if let Ok(segment) = Segment::decode(changed.as_slice()) {
                    for i in 0..segment.records.len() {
                        segment.terms_of(i);
                    }
                }
            }
        }
        // Passages numbered from 1 in the records block and counted one more: refused.
        let a = super::tests::terms("d", "alpha beta gamma");
        let one = encode(&[ToWrite::from_terms("a.json", 1, "{}", &a)]);
        let shifted = with_directory(&one, |directory| {
            directory[9] += 1; // the passages there are (after 8 bytes of engine and 1 of records)
            let last = directory.len() - 1; // the records block's first passage
            directory[last] = 1;
        });
        assert_eq!(Segment::decode(shifted.as_slice()).unwrap_err(), Refused::Malformed);
    }

    #[test]
    fn a_torn_foreign_or_malformed_segment_is_refused() {
        let a = terms("d", "alpha beta gamma");
        let bytes = encode(&[ToWrite::from_terms("a.json", 1, "{}", &a)]);
        assert_eq!(Segment::decode(&bytes[..bytes.len() - 1]).unwrap_err(), Refused::Torn);
        let mut longer = bytes.clone();
        longer.push(0);
        assert_eq!(Segment::decode(&longer).unwrap_err(), Refused::Torn);
        let mut flipped = bytes.clone();
        let last = flipped.len() - 1;
        flipped[last] ^= 1;
        assert_eq!(Segment::decode(&flipped).unwrap_err(), Refused::Torn);
        let mut directory = bytes.clone();
        directory[layout::HEAD + 9] ^= 1;
        assert_eq!(Segment::decode(&directory).unwrap_err(), Refused::Torn);
        let mut other = bytes.clone();
        other[7] = other[7].wrapping_add(1);
        assert_eq!(Segment::decode(&other).unwrap_err(), Refused::Foreign);
        assert_eq!(Segment::decode(b"{\"not\":\"a segment\"}").unwrap_err(), Refused::Foreign);
        assert_eq!(Segment::decode(b"").unwrap_err(), Refused::Foreign);
        // Well summed but not whole: the directory counts a record more than it has.
        let counted = with_directory(&bytes, |directory| directory[8] += 1);
        assert_eq!(Segment::decode(&counted).unwrap_err(), Refused::Malformed);
        // Well summed, whole, but a posting past the passages there are.
        let past = layout::encode(
            &[Encoded { path: "a.json", size: 1, header: "{}", metadata_len: 1, passages: vec![3] }],
            &[EncodedTerm { term: "alpha", df: 1, metadata: (0, &[]), content: (1, &[1, 1]) }],
        );
        assert_eq!(Segment::decode(&past).unwrap_err(), Refused::Malformed);
        let within = layout::encode(
            &[Encoded { path: "a.json", size: 1, header: "{}", metadata_len: 1, passages: vec![3] }],
            &[EncodedTerm { term: "alpha", df: 1, metadata: (0, &[]), content: (1, &[0, 1]) }],
        );
        assert!(Segment::decode(&within).is_ok());
    }
}
