//! The text path of toolctx's index (SPEC §6): the tokeniser, lowercasing, stemming, and
//! the counting of a text's terms.
//!
//! It is a crate of its own for one reason: the package's wasm modules are built for
//! size (`opt-level = "z"`), which leaves the small functions of a tight loop out of line,
//! and V8 does not inline them back. Every save runs this code over up to 16 KiB of its
//! result, so the wasm build compiles this crate, and only it, for speed (the root
//! Cargo.toml's `[profile.wasm.package.toolctx-text]`). Its entry points are plain
//! functions, not generic ones: a generic function is compiled in the crate that calls
//! it, with that crate's settings.

#![deny(missing_docs)]

pub mod content;
pub mod fxhash;
pub mod lines;
pub mod lowercase;
pub mod phrase;
pub mod tokenize;
mod unspaced;

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

pub use content::for_each_string_value;
pub use fxhash::ResultHasher;
pub use lines::line_word_masks;
pub use lowercase::to_lowercase;
pub use phrase::PhraseWords;
pub use tokenize::{
    for_each_index_token, for_each_token, index_tokens, is_keyword, is_stop_stem, is_unspaced_script, keywords,
    query_words, stem, stem_owned, tokenize,
};

/// The hasher of the maps of terms (a record's tokens and stems, the stem memo):
/// FxHash (as in rustc), a multiply-rotate over 8-byte words. Tokens are short and
/// hashed once each; SipHash's resistance to chosen collisions costs more than a
/// record's own text could make it worth (at most 16 KiB or so of tokens per map).
#[derive(Default)]
pub struct TermHasher(u64);

impl TermHasher {
    fn add(&mut self, word: u64) {
        self.0 = fxhash::step(self.0, word);
    }
}

impl Hasher for TermHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.add(u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]));
        }
        let mut last = 0u64;
        for (i, &b) in chunks.remainder().iter().enumerate() {
            last |= u64::from(b) << (8 * i);
        }
        self.add(last);
    }

    fn write_u8(&mut self, b: u8) {
        self.add(u64::from(b));
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// Distinct tokens (or stems) and how often each occurs.
pub type TermCounts = HashMap<String, u32, BuildHasherDefault<TermHasher>>;

/// Counts the index tokens of `text` (see [`for_each_index_token`]); returns their length.
pub fn count_tokens(text: &str, counts: &mut TermCounts) -> usize {
    for_each_index_token(text, |t| count(counts, t))
}

/// Counts the index tokens of the string values in the first `max_bytes` bytes of the
/// JSON text `json` (see [`for_each_string_value`]); returns their length.
pub fn count_content(json: &str, max_bytes: usize, counts: &mut TermCounts) -> usize {
    let mut len = 0;
    for_each_string_value(json, max_bytes, |s| len += count_tokens(s, counts));
    len
}

/// Counts the index tokens of the string values in the first `max_bytes` bytes of the
/// JSON text `json` in passages: a passage ends at the end of a line (a newline in a
/// string, or the end of a string value) once it holds `words` tokens or more. Calls
/// `passage(counts, len)` for each, in order, the last one included; none when the
/// content holds no token. A line longer than `words` tokens is a passage of its own.
pub fn count_passages(json: &str, max_bytes: usize, words: usize, mut passage: impl FnMut(TermCounts, usize)) {
    let mut counts = TermCounts::default();
    let mut len = 0;
    for_each_string_value(json, max_bytes, |value| {
        for line in value.split('\n') {
            len += count_tokens(line, &mut counts);
            if len >= words {
                passage(std::mem::take(&mut counts), len);
                len = 0;
            }
        }
    });
    if len > 0 {
        passage(counts, len);
    }
}

/// Counts one more `token`.
pub fn count(counts: &mut TermCounts, token: &str) {
    match counts.get_mut(token) {
        Some(n) => *n += 1,
        None => {
            counts.insert(token.to_owned(), 1);
        }
    }
}

/// The stems of distinct tokens with their counts, counts of one stem summed, in no
/// particular order. A token its own stem keeps its allocation.
pub fn stem_counts(tokens: TermCounts) -> Vec<(String, u32)> {
    let mut stems = TermCounts::with_capacity_and_hasher(tokens.len(), BuildHasherDefault::default());
    for (token, n) in tokens {
        *stems.entry(stem_owned(token)).or_insert(0) += n;
    }
    stems.into_iter().collect()
}
