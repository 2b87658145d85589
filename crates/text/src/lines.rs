//! Which query words the lines of a text hold: what a passage is chosen by (the core's
//! `select::best_passage`). It runs over whole records at query time, so it lives in
//! this crate, compiled for speed.

use std::collections::HashMap;
use std::hash::BuildHasherDefault;

use crate::{for_each_index_token, stem, to_lowercase, TermHasher};

/// For each line of `text` (split at `\n`), the query words it holds, as a bit set (bit
/// `k`: the word whose stem is `stems[k]`). `stop_mask` marks the stop words.
///
/// Only lines that may hold a word are tokenised: those holding, in any ASCII case, the
/// beginning of the stem of one of the query's telling words (its stop words only where
/// it has no other): all of the stem but its last character, which the stemmer may have
/// rewritten (`happi` from `happy`), at most 4 characters. So a record costs a few
/// substring searches, not a tokenisation. A word whose stem begins otherwise (`dying`
/// is stemmed `die`) is not found; a stem that is not ASCII makes every line a
/// candidate.
///
/// ```
/// let stems = ["refresh".to_owned(), "token".to_owned()];
/// let masks = toolctx_text::line_word_masks("a\nrefreshTokens()\nthe token", &stems, 0);
/// assert_eq!(masks, [0, 0b11, 0b10]);
/// ```
pub fn line_word_masks(text: &str, stems: &[String], stop_mask: u64) -> Vec<u64> {
    let starts = line_starts(text);
    let candidates = candidate_lines(text, &starts, stems, stop_mask);
    let mut words = Words::new(stems);
    let mut masks = Vec::with_capacity(starts.len());
    for (i, &start) in starts.iter().enumerate() {
        let end = starts.get(i + 1).map_or(text.len(), |&next| next - 1);
        masks.push(if candidates[i] { words.of(&text[start..end]) } else { 0 });
    }
    masks
}

/// Where each line of `text` (split at `\n`) begins.
pub(crate) fn line_starts(text: &str) -> Vec<usize> {
    std::iter::once(0).chain(text.bytes().enumerate().filter(|&(_, b)| b == b'\n').map(|(i, _)| i + 1)).collect()
}

/// Which lines (beginning at `starts`) may hold a query word (see [`line_word_masks`]).
pub(crate) fn candidate_lines(text: &str, starts: &[usize], stems: &[String], stop_mask: u64) -> Vec<bool> {
    let telling: Vec<usize> = (0..stems.len()).filter(|&k| stop_mask & (1 << k) == 0).collect();
    let words: Vec<usize> = if telling.is_empty() { (0..stems.len()).collect() } else { telling };
    let needles: Vec<&str> = words
        .iter()
        .map(|&k| {
            let s = &stems[k];
            let keep = if s.len() > 2 { (s.len() - 1).min(4) } else { s.len() };
            s.get(..keep).unwrap_or(s)
        })
        .collect();
    if needles.iter().any(|n| n.is_empty() || !n.is_ascii()) {
        return vec![true; starts.len()];
    }
    let lower = text.to_ascii_lowercase();
    let mut may = vec![false; starts.len()];
    for needle in needles {
        let mut from = 0;
        while let Some(at) = lower.get(from..).and_then(|rest| rest.find(needle)) {
            let line = starts.partition_point(|&s| s <= from + at) - 1;
            may[line] = true;
            // One hit a line is enough: go on from the next line.
            match starts.get(line + 1) {
                Some(&next) => from = next,
                None => break,
            }
        }
    }
    may
}

/// Which query words the tokens of a text are, each distinct token stemmed once: the
/// passage's lines (`line_word_masks`) and the phrase's pairs (`phrase.rs`) read them.
pub(crate) struct Words<'q> {
    stems: &'q [String],
    /// The first byte of each stem: a token's stem begins as the token does, lowercased
    /// (the stemmer rewrites only suffixes), so a token beginning otherwise is no query word.
    first_bytes: [bool; 256],
    seen: HashMap<String, u64, BuildHasherDefault<TermHasher>>,
}

impl<'q> Words<'q> {
    pub(crate) fn new(stems: &'q [String]) -> Self {
        let mut first_bytes = [false; 256];
        for s in stems {
            if let Some(&b) = s.as_bytes().first() {
                first_bytes[b as usize] = true;
            }
        }
        Words { stems, first_bytes, seen: HashMap::default() }
    }

    /// The query words `text` holds, as a bit set.
    fn of(&mut self, text: &str) -> u64 {
        let mut mask = 0u64;
        for_each_index_token(text, |token| mask |= self.bits(token));
        mask
    }

    /// Where `token` (in any case) stands among the stems, as a bit set: bit `k` when its
    /// stem is `stems[k]` (several bits where the stems repeat one).
    pub(crate) fn bits(&mut self, token: &str) -> u64 {
        let first = token.as_bytes()[0];
        if first.is_ascii() && !self.first_bytes[first.to_ascii_lowercase() as usize] {
            return 0;
        }
        if let Some(&bits) = self.seen.get(token) {
            return bits;
        }
        let s = stem(&to_lowercase(token));
        let bits = self.stems.iter().enumerate().filter(|(_, q)| **q == s).fold(0, |bits, (k, _)| bits | 1 << k);
        self.seen.insert(token.to_owned(), bits);
        bits
    }
}
