//! An index segment (SPEC §4): the indexed content of a set of records, written through
//! the host storage beside them so that another process ranks them without reading them.
//!
//! A segment is derived data: the records are the source of truth. It holds, for each
//! record, its path relative to the record folder, its size, its header (the record's
//! JSON without its result, from which the pointer and the metadata terms are made again)
//! and the terms of its content passages, exactly as the process that saved it indexed
//! them ([`crate::Terms`]), so a reader ranks the record as that process did.
//!
//! Layout (integers are LEB128 varints unless said otherwise):
//!
//! ```text
//! magic     8 bytes   "tcxseg" + format version (2 bytes, big-endian)
//! checksum  8 bytes   little-endian, ResultHasher over everything after it
//! terms     n, then n strings (varint length + UTF-8), sorted, distinct: the dictionary
//! records   n, then per record:
//!   path    string
//!   size    varint (u64)
//!   header  string (JSON)
//!   passages n, then per passage: its length in tokens, its term count m, then m pairs
//!           (gap between dictionary ids, ascending; frequency)
//! ```
//!
//! A segment that is torn (its checksum fails), of another format or engine version
//! ([`FORMAT`]), or that does not parse whole is refused ([`Segment::decode`] fails);
//! the caller rebuilds its records from their files.

use std::collections::HashMap;

use toolctx_text::ResultHasher;

use crate::terms::{Field, Terms};

/// The format version, with the terms it holds: bump it when the layout changes or when
/// the same text gives other terms (tokeniser, stemmer, stop words, passage length), so
/// an older segment is refused and rebuilt rather than ranked on stale terms.
pub const FORMAT: u16 = 1;

const MAGIC: &[u8; 6] = b"tcxseg";
const HEADER: usize = 16;

/// A decoded segment: its dictionary and its records.
#[derive(Debug, Default)]
pub struct Segment {
    /// The terms its records' passages hold, sorted.
    pub dictionary: Vec<Box<str>>,
    /// Its records, in the order written.
    pub records: Vec<SegmentRecord>,
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
    /// Its content passages, in order: each its length in tokens and how many of
    /// `terms` are its own (one allocation a record, not one a passage).
    pub passages: Vec<(u32, u32)>,
    /// The passages' terms, one passage after the other: (dictionary id, frequency), ids
    /// ascending within a passage.
    pub terms: Vec<(u32, u32)>,
}

impl SegmentRecord {
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

/// A record to write into a segment: its path, size, header and content passages (each
/// its length and its terms, sorted, distinct, with their frequencies).
pub struct ToWrite<'a> {
    /// Its path relative to the record folder.
    pub path: &'a str,
    /// Its file's size in bytes.
    pub size: u64,
    /// Its header (the record's JSON without its result).
    pub header: &'a str,
    /// Its passages: length, and (term, frequency) sorted by term.
    pub passages: Vec<(u32, Vec<(&'a str, u32)>)>,
}

impl<'a> ToWrite<'a> {
    /// A record whose content passages are those of `content` (terms as indexed).
    pub fn from_terms(path: &'a str, size: u64, header: &'a str, content: &'a Terms) -> ToWrite<'a> {
        let passages = content
            .passages()
            .iter()
            .map(|f| (f.len(), f.terms().iter().map(|(t, n)| (t.as_str(), *n)).collect()))
            .collect();
        ToWrite { path, size, header, passages }
    }

    /// A record of a decoded segment, to write again (a merge).
    pub fn from_segment(segment: &'a Segment, record: &'a SegmentRecord) -> ToWrite<'a> {
        let passages = record
            .passages()
            .map(|(len, terms)| (len, terms.iter().map(|&(id, n)| (&*segment.dictionary[id as usize], n)).collect()))
            .collect();
        ToWrite { path: &record.path, size: record.size, header: &record.header, passages }
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
    let mut words: Vec<&str> =
        records.iter().flat_map(|r| r.passages.iter().flat_map(|p| p.1.iter().map(|t| t.0))).collect();
    crate::sort::sort(&mut words);
    words.dedup();
    let ids: HashMap<&str, u32> = words.iter().enumerate().map(|(i, w)| (*w, i as u32)).collect();
    let mut out = Vec::with_capacity(HEADER + words.len() * 8);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&FORMAT.to_be_bytes());
    out.extend_from_slice(&[0; 8]);
    push(&mut out, words.len() as u64);
    for w in &words {
        push_str(&mut out, w);
    }
    push(&mut out, records.len() as u64);
    for r in records {
        push_str(&mut out, r.path);
        push(&mut out, r.size);
        push_str(&mut out, r.header);
        push(&mut out, r.passages.len() as u64);
        for (len, terms) in &r.passages {
            push(&mut out, u64::from(*len));
            push(&mut out, terms.len() as u64);
            let mut last = 0;
            for (i, (t, n)) in terms.iter().enumerate() {
                let id = ids[t];
                push(&mut out, u64::from(if i == 0 { id } else { id - last }));
                push(&mut out, u64::from(*n));
                last = id;
            }
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
        let mut r = Reader { bytes, at: HEADER };
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
        for _ in 0..n {
            let path = r.str()?.to_owned();
            let size = r.varint()?;
            let header = r.str()?.to_owned();
            let count = r.count()?;
            let mut passages = Vec::with_capacity(count);
            let mut terms = Vec::new();
            for _ in 0..count {
                let len = r.u32()?;
                let m = r.count()?;
                terms.reserve(m);
                let mut id = 0u32;
                for i in 0..m {
                    let gap = r.u32()?;
                    id =
                        if i == 0 { gap } else { id.checked_add(gap).filter(|_| gap > 0).ok_or(Refused::Malformed)? };
                    if id as usize >= dictionary.len() {
                        return Err(Refused::Malformed);
                    }
                    terms.push((id, r.u32()?));
                }
                passages.push((len, m as u32));
            }
            records.push(SegmentRecord { path, size, header, passages, terms });
        }
        if r.at != bytes.len() {
            return Err(Refused::Malformed);
        }
        Ok(Segment { dictionary, records })
    }

    /// The content terms of `record` (one of this segment's), as [`Terms`] with no
    /// metadata: what the process that saved it indexed.
    pub fn terms_of(&self, record: &SegmentRecord) -> Terms {
        let passages = record
            .passages()
            .map(|(len, terms)| {
                Field::from_sorted(
                    terms.iter().map(|&(id, n)| (self.dictionary[id as usize].to_string(), n)).collect(),
                    len,
                )
            })
            .collect();
        Terms::from_passages(passages)
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn terms(text: &str) -> Terms {
        Terms::of_record_with_content("", "", &json!(null), Some(&json!(text).to_string()), usize::MAX)
    }

    #[test]
    fn a_segment_gives_back_the_terms_it_was_written_with() {
        let a = terms("the quick brown fox jumps over the lazy dog\nand again the fox");
        let long: String = (0..400).map(|i| format!("word{}\n", i % 37)).collect();
        let b = terms(&long);
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
        for (record, want) in seg.records.iter().zip([&a, &b, &empty]) {
            assert_eq!(seg.terms_of(record).passages(), want.passages());
        }
        // Written again from the decoded segment (a merge): the same bytes.
        let again: Vec<ToWrite<'_>> = seg.records.iter().map(|r| ToWrite::from_segment(&seg, r)).collect();
        assert_eq!(encode(&again), bytes);
    }

    #[test]
    fn a_torn_foreign_or_malformed_segment_is_refused() {
        let a = terms("alpha beta gamma");
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
        let mut bad = bytes[..HEADER].to_vec();
        bad.extend_from_slice(&[0x7f]);
        let sum = checksum(&bad[HEADER..]);
        bad[8..HEADER].copy_from_slice(&sum.to_le_bytes());
        assert_eq!(Segment::decode(&bad).unwrap_err(), Refused::Malformed);
    }
}
