//! The bytes of a segment, laid out to be read by range: a reader holding only a
//! segment's directory finds a term's dictionary block by the blocks' first terms, reads
//! that block, and then reads the term's posting lists alone (tantivy and Lucene read a
//! term dictionary and its postings the same way: a block index in memory, blocks on
//! storage). [`super::Segment::decode`] reads a whole segment through the same parts.
//!
//! ```text
//! head        20 bytes   "tcxseg", the format version (2 bytes, big-endian), the
//!                        directory's length (4 bytes) and checksum (8 bytes), little-endian
//! directory              the engine fingerprint (8 bytes, little-endian, [`super::engine`]);
//!                        the records, passages and terms there are; the postings region
//!                        (offset, length, checksum); the dictionary blocks' count, then per
//!                        block its first term, offset, length, checksum and where its first
//!                        term's postings start; the records blocks' count, then per block
//!                        its offset, length, checksum and first passage
//! postings               per term, in dictionary order: its metadata list, then its
//!                        content list (postings.rs's encoding, numbers from 0)
//! dictionary             blocks of [`TERMS_PER_BLOCK`] terms, sorted; per term: the bytes it
//!                        shares with the term before it in the block, the rest, the records
//!                        holding it (df), then per list its posting count and byte length
//! records                blocks of [`RECORDS_PER_BLOCK`] records; per record: path, size,
//!                        header, metadata length, its passage count p, the p lengths
//! ```
//!
//! Integers are LEB128 varints unless said otherwise; a string is its byte length and its
//! UTF-8 bytes; offsets in the directory count from the end of the directory, checksums are
//! [`ResultHasher`]'s (8 bytes each). The directory comes first, after the head, so that
//! one read from the start of the file (the head and directory are about 30 bytes per 64
//! terms) finds everything without knowing the file's size (Lucene and tantivy put theirs
//! at the end, as a footer, which a reader finds from the file's length). Each block is
//! checked against its checksum when read; the postings region as a whole when the
//! segment is read whole (a merge, a load), and each list read by range is checked for its
//! structure (its count, ascending numbers below the bound, no zero frequency) as Lucene
//! checks postings only when merging.

use std::ops::Range;

use toolctx_text::ResultHasher;

use super::{engine, Refused, SegmentRecord, FORMAT, MAGIC};
use crate::postings::Iter;
use crate::varint::{self, push};

/// Terms a dictionary block holds: what a reader reads to find one term (about 1 KB);
/// the directory holds one first term for each.
pub const TERMS_PER_BLOCK: usize = 64;

/// Records a records block holds.
pub const RECORDS_PER_BLOCK: usize = 128;

/// The head's length: magic and version, the directory's length and checksum.
pub const HEAD: usize = 20;

/// A byte range of a segment file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Span {
    /// Its first byte.
    pub offset: u64,
    /// Its length in bytes.
    pub len: u64,
}

impl Span {
    /// Its bytes in `bytes`, the whole file; [`Refused::Torn`] when the file ends before.
    pub fn of(self, bytes: &[u8]) -> Result<&[u8], Refused> {
        bytes.get(self.range().ok_or(Refused::Torn)?).ok_or(Refused::Torn)
    }

    fn range(self) -> Option<Range<usize>> {
        let start = usize::try_from(self.offset).ok()?;
        Some(start..start.checked_add(usize::try_from(self.len).ok()?)?)
    }

    fn end(self) -> u64 {
        self.offset.saturating_add(self.len)
    }
}

/// A segment's head: where its directory is.
#[derive(Debug, Clone, Copy)]
pub struct Head {
    /// The directory's bytes.
    pub directory: Span,
    checksum: u64,
}

impl Head {
    /// The head at the start of `bytes` (the first [`HEAD`] bytes of the file at least).
    pub fn decode(bytes: &[u8]) -> Result<Head, Refused> {
        if bytes.len() < HEAD || &bytes[..6] != MAGIC || bytes[6..8] != FORMAT.to_be_bytes() {
            return Err(Refused::Foreign);
        }
        let len = u32::from_le_bytes(fixed(&bytes[8..12]));
        let checksum = u64::from_le_bytes(fixed(&bytes[12..HEAD]));
        Ok(Head { directory: Span { offset: HEAD as u64, len: u64::from(len) }, checksum })
    }
}

/// A segment's directory: its counts and where each of its blocks is.
#[derive(Debug, Clone)]
pub struct Directory {
    /// Records the segment holds.
    pub records: u32,
    /// Passages its records hold.
    pub passages: u32,
    /// Distinct terms.
    pub terms: u32,
    postings: Checked,
    dictionary: Vec<DictionaryBlock>,
    record_blocks: Vec<RecordsBlock>,
}

/// A span and the checksum of its bytes.
#[derive(Debug, Clone, Copy)]
struct Checked {
    span: Span,
    checksum: u64,
}

impl Checked {
    fn check<'a>(&self, bytes: &'a [u8]) -> Result<&'a [u8], Refused> {
        if bytes.len() as u64 != self.span.len || hash(bytes) != self.checksum {
            return Err(Refused::Torn);
        }
        Ok(bytes)
    }
}

#[derive(Debug, Clone)]
struct DictionaryBlock {
    first: Box<str>,
    at: Checked,
    /// Where its first term's postings start.
    postings: u64,
}

#[derive(Debug, Clone, Copy)]
struct RecordsBlock {
    at: Checked,
    first_passage: u32,
}

impl Directory {
    /// The directory in `bytes` (the span `head` names), checked against its checksum and
    /// the engine it was written by.
    pub fn decode(head: &Head, bytes: &[u8]) -> Result<Directory, Refused> {
        Checked { span: head.directory, checksum: head.checksum }.check(bytes)?;
        let base = head.directory.end();
        let mut r = Reader { bytes, at: 8 };
        if bytes.len() < 8 || u64::from_le_bytes(fixed(&bytes[..8])) != engine() {
            return Err(Refused::Foreign);
        }
        let (records, passages, terms) = (r.u32()?, r.u32()?, r.u32()?);
        let postings = r.checked(base)?;
        let mut dictionary = Vec::with_capacity(r.count()?);
        for _ in 0..dictionary.capacity() {
            let first = Box::from(r.str()?);
            let at = r.checked(base)?;
            let postings = base.checked_add(r.varint()?).ok_or(Refused::Malformed)?;
            dictionary.push(DictionaryBlock { first, at, postings });
        }
        let mut record_blocks = Vec::with_capacity(r.count()?);
        for _ in 0..record_blocks.capacity() {
            let at = r.checked(base)?;
            record_blocks.push(RecordsBlock { at, first_passage: r.u32()? });
        }
        let ordered = dictionary.windows(2).all(|w| w[0].first < w[1].first);
        // Passages are numbered from 0 across the records blocks, in order: each block's
        // lengths then sum to the next one's first ([`Directory::records_block`]) and the
        // last's to the count, so a list never names a passage no record holds.
        let firsts = record_blocks.iter().map(|b| b.first_passage);
        let numbered = match record_blocks.first() {
            None => passages == 0,
            Some(first) => first.first_passage == 0 && firsts.clone().zip(firsts.skip(1)).all(|(a, b)| a <= b),
        } && record_blocks.last().map_or(true, |b| b.first_passage <= passages);
        let enough = |blocks: usize, per: usize, n: u32| blocks == (n as usize).div_ceil(per);
        if r.at != bytes.len()
            || !ordered
            || !numbered
            || !enough(dictionary.len(), TERMS_PER_BLOCK, terms)
            || !enough(record_blocks.len(), RECORDS_PER_BLOCK, records)
        {
            return Err(Refused::Malformed);
        }
        Ok(Directory { records, passages, terms, postings, dictionary, record_blocks })
    }

    /// The dictionary block that holds `term` if the segment has it: the last whose
    /// first term is not after it.
    pub fn block_of(&self, term: &str) -> Option<usize> {
        self.dictionary.partition_point(|b| &*b.first <= term).checked_sub(1)
    }

    /// Dictionary blocks.
    pub fn dictionary_blocks(&self) -> usize {
        self.dictionary.len()
    }

    /// Where dictionary block `block` is.
    ///
    /// # Panics
    /// When there is no such block (blocks are numbered below the counts given).
    pub fn dictionary_span(&self, block: usize) -> Span {
        self.dictionary[block].at.span
    }

    /// Records blocks.
    pub fn records_blocks(&self) -> usize {
        self.record_blocks.len()
    }

    /// Where records block `block` is.
    ///
    /// # Panics
    /// When there is no such block (blocks are numbered below the counts given).
    pub fn records_span(&self, block: usize) -> Span {
        self.record_blocks[block].at.span
    }

    /// Where the segment's last block ends: its file's length.
    pub fn end(&self) -> u64 {
        let blocks = self.dictionary.iter().map(|b| b.at).chain(self.record_blocks.iter().map(|b| b.at));
        blocks.chain([self.postings]).map(|c| c.span.end()).max().unwrap_or(0)
    }

    /// Where the postings are (read whole only to check them all).
    pub fn postings_span(&self) -> Span {
        self.postings.span
    }

    /// The postings region's bytes, checked against their checksum.
    pub fn check_postings<'a>(&self, bytes: &'a [u8]) -> Result<&'a [u8], Refused> {
        self.postings.check(bytes)
    }

    /// The terms of dictionary block `block`, from its bytes.
    ///
    /// # Panics
    /// When there is no such block (blocks are numbered below the counts given).
    pub fn dictionary_block(&self, block: usize, bytes: &[u8]) -> Result<Vec<TermEntry>, Refused> {
        let b = &self.dictionary[block];
        b.at.check(bytes)?;
        let mut r = Reader { bytes, at: 0 };
        let mut entries: Vec<TermEntry> = Vec::new();
        let mut at = b.postings;
        let mut term = String::new();
        while r.at < bytes.len() {
            // Bytes of the term before (not a count of bytes to come: it may pass the block's end).
            let shared = usize::try_from(r.varint()?).map_err(|_| Refused::Malformed)?;
            let rest = r.str()?;
            if shared > term.len() || !term.is_char_boundary(shared) {
                return Err(Refused::Malformed);
            }
            term.truncate(shared);
            term.push_str(rest);
            let df = r.u32()?;
            let mut list = || -> Result<ListRef, Refused> {
                let count = r.u32()?;
                let span = Span { offset: at, len: r.varint()? };
                at = span.end();
                Ok(ListRef { count, span })
            };
            let (metadata, content) = (list()?, list()?);
            let after = entries.last().map_or(true, |e| *e.term < *term);
            if !after || df == 0 || df > self.records || (metadata.count == 0 && content.count == 0) {
                return Err(Refused::Malformed);
            }
            entries.push(TermEntry { term: term.as_str().into(), df, metadata, content });
        }
        let first = entries.first().is_some_and(|e| e.term == b.first);
        let in_postings = at <= self.postings.span.end();
        let last_block = block + 1 == self.dictionary.len();
        let full = entries.len() == TERMS_PER_BLOCK || last_block;
        if !first || !in_postings || !full {
            return Err(Refused::Malformed);
        }
        Ok(entries)
    }

    /// The records of records block `block`, from its bytes.
    ///
    /// # Panics
    /// When there is no such block (blocks are numbered below the counts given).
    pub fn records_block(&self, block: usize, bytes: &[u8]) -> Result<Vec<SegmentRecord>, Refused> {
        self.record_blocks[block].at.check(bytes)?;
        let mut r = Reader { bytes, at: 0 };
        let mut records = Vec::new();
        let mut passages = u64::from(self.record_blocks[block].first_passage);
        while r.at < bytes.len() {
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
        let next = self.record_blocks.get(block + 1).map_or(self.passages, |b| b.first_passage);
        let whole = records.len() == RECORDS_PER_BLOCK || block + 1 == self.record_blocks.len();
        if passages != u64::from(next) || !whole {
            return Err(Refused::Malformed);
        }
        Ok(records)
    }
}

/// A term of a dictionary block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TermEntry {
    /// The term.
    pub term: Box<str>,
    /// The segment's records holding it, in either field.
    pub df: u32,
    /// Its metadata list: the records holding it in their metadata.
    pub metadata: ListRef,
    /// Its content list: the passages holding it.
    pub content: ListRef,
}

/// Where a posting list is, and how many postings it holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListRef {
    /// Postings.
    pub count: u32,
    /// Its bytes.
    pub span: Span,
}

impl ListRef {
    /// The last number of the list in `bytes` (its span's bytes), checked whole: as many
    /// postings as it says, numbers ascending and below `limit`, no frequency of 0.
    pub fn check(&self, bytes: &[u8], limit: u32) -> Result<u32, Refused> {
        let mut seen = 0u32;
        let mut last = None;
        let mut it = Iter::new(bytes);
        for p in it.by_ref() {
            if last.is_some_and(|l| p.slot <= l) || p.slot >= limit || p.tf == 0 {
                return Err(Refused::Malformed);
            }
            last = Some(p.slot);
            seen += 1;
        }
        if seen != self.count || !it.is_done() || bytes.len() as u64 != self.span.len {
            return Err(Refused::Malformed);
        }
        Ok(last.unwrap_or(0))
    }
}

/// A record as the encoder takes it: its stored fields and its inverted lists' parts.
pub(super) struct Encoded<'a> {
    pub(super) path: &'a str,
    pub(super) size: u64,
    pub(super) header: &'a str,
    pub(super) metadata_len: u32,
    pub(super) passages: Vec<u32>,
}

/// A term as the encoder takes it: the term, the records holding it, and its two lists
/// in postings.rs's encoding with their posting counts.
pub(super) struct EncodedTerm<'a> {
    pub(super) term: &'a str,
    pub(super) df: u32,
    pub(super) metadata: (u32, &'a [u8]),
    pub(super) content: (u32, &'a [u8]),
}

/// The bytes of a segment of `records` and `terms` (sorted, distinct).
pub(super) fn encode(records: &[Encoded<'_>], terms: &[EncodedTerm<'_>]) -> Vec<u8> {
    // The body first, its offsets from 0; then the directory that says where its parts are.
    let mut body = Vec::new();
    for t in terms {
        body.extend_from_slice(t.metadata.1);
        body.extend_from_slice(t.content.1);
    }
    let postings = Span { offset: 0, len: body.len() as u64 };
    let mut directory = Vec::new();
    directory.extend_from_slice(&engine().to_le_bytes());
    let passages: usize = records.iter().map(|r| r.passages.len()).sum();
    for n in [records.len(), passages, terms.len()] {
        push(&mut directory, n as u64);
    }
    push_checked(&mut directory, postings, &body);
    push(&mut directory, terms.len().div_ceil(TERMS_PER_BLOCK) as u64);
    let mut first_postings = 0u64;
    for block in terms.chunks(TERMS_PER_BLOCK) {
        let start = body.len();
        let mut previous: &str = "";
        let mut postings_len = 0u64;
        for t in block {
            let shared = shared_prefix(previous, t.term);
            push(&mut body, shared as u64);
            push_str(&mut body, &t.term[shared..]);
            push(&mut body, u64::from(t.df));
            for (count, bytes) in [t.metadata, t.content] {
                push(&mut body, u64::from(count));
                push(&mut body, bytes.len() as u64);
                postings_len += bytes.len() as u64;
            }
            previous = t.term;
        }
        push_str(&mut directory, block[0].term);
        push_checked(&mut directory, Span { offset: start as u64, len: (body.len() - start) as u64 }, &body[start..]);
        push(&mut directory, first_postings);
        first_postings += postings_len;
    }
    push(&mut directory, records.len().div_ceil(RECORDS_PER_BLOCK) as u64);
    let mut first_passage = 0u64;
    for block in records.chunks(RECORDS_PER_BLOCK) {
        let start = body.len();
        for r in block {
            push_str(&mut body, r.path);
            push(&mut body, r.size);
            push_str(&mut body, r.header);
            push(&mut body, u64::from(r.metadata_len));
            push(&mut body, r.passages.len() as u64);
            for &len in &r.passages {
                push(&mut body, u64::from(len));
            }
        }
        push_checked(&mut directory, Span { offset: start as u64, len: (body.len() - start) as u64 }, &body[start..]);
        push(&mut directory, first_passage);
        first_passage += block.iter().map(|r| r.passages.len() as u64).sum::<u64>();
    }
    let mut out = Vec::with_capacity(HEAD + directory.len() + body.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&FORMAT.to_be_bytes());
    out.extend_from_slice(&(directory.len() as u32).to_le_bytes());
    out.extend_from_slice(&hash(&directory).to_le_bytes());
    out.extend_from_slice(&directory);
    out.extend_from_slice(&body);
    out
}

/// The bytes `a` and `b` begin with alike, at a character boundary.
fn shared_prefix(a: &str, b: &str) -> usize {
    a.char_indices()
        .zip(b.chars())
        .take_while(|((_, x), y)| x == y)
        .map(|((i, x), _)| i + x.len_utf8())
        .last()
        .unwrap_or(0)
}

pub(super) fn hash(bytes: &[u8]) -> u64 {
    let mut h = ResultHasher::default();
    h.update(bytes);
    h.finish()
}

fn fixed<const N: usize>(bytes: &[u8]) -> [u8; N] {
    let mut out = [0; N];
    out.copy_from_slice(&bytes[..N]);
    out
}

fn push_str(out: &mut Vec<u8>, s: &str) {
    push(out, s.len() as u64);
    out.extend_from_slice(s.as_bytes());
}

fn push_checked(out: &mut Vec<u8>, span: Span, bytes: &[u8]) {
    push(out, span.offset);
    push(out, span.len);
    out.extend_from_slice(&hash(bytes).to_le_bytes());
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn varint(&mut self) -> Result<u64, Refused> {
        let (n, rest) = varint::split(&self.bytes[self.at..]).ok_or(Refused::Malformed)?;
        self.at = self.bytes.len() - rest.len();
        Ok(n)
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

    fn fixed_u64(&mut self) -> Result<u64, Refused> {
        let bytes = self.bytes.get(self.at..self.at + 8).ok_or(Refused::Malformed)?;
        self.at += 8;
        Ok(u64::from_le_bytes(fixed(bytes)))
    }

    /// A span counted from `base`, and its checksum.
    fn checked(&mut self, base: u64) -> Result<Checked, Refused> {
        let (offset, len) = (self.varint()?, self.varint()?);
        let offset = base.checked_add(offset).ok_or(Refused::Malformed)?;
        Ok(Checked { span: Span { offset, len }, checksum: self.fixed_u64()? })
    }
}
