//! Where a query's words stand together in a text: which of the query's pairs of adjacent
//! words the text holds adjacent and in the same order (the ordered-window feature of the
//! sequential dependence model: Metzler and Croft, "A Markov random field model for term
//! dependencies", SIGIR 2005). The search crate's second phase reads it (`phrase.rs`
//! there); it runs over whole records at query time, so it lives in this crate, compiled
//! for speed.
//!
//! Words are [`for_each_token`]'s: words split at camelCase, each Chinese or Japanese
//! character one word. So `refresh token` stands together in `refreshToken()`, and a
//! heading of characters stands together wherever it is written.

use crate::lines::{candidate_lines, line_starts, Words};
use crate::{for_each_token, is_stop_stem, stem, to_lowercase};

/// Words past this many in a query are not paired (a pair is a bit of a `u64`).
pub const MAX_PHRASE_WORDS: usize = 64;

/// A query's words in order (see the module's docs), stemmed, and which are stop words.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PhraseWords {
    /// The stems, in the query's order, repeated where the query repeats a word.
    pub stems: Vec<String>,
    /// Bit `k`: `stems[k]` is a stop word.
    pub stop_mask: u64,
}

impl PhraseWords {
    /// The words of `query`, at most [`MAX_PHRASE_WORDS`].
    ///
    /// ```
    /// let w = toolctx_text::PhraseWords::of("Refresh the tokens");
    /// assert_eq!(w.stems, ["refresh", "the", "token"]);
    /// assert_eq!(w.stop_mask, 0b010);
    /// ```
    pub fn of(query: &str) -> PhraseWords {
        let mut words = PhraseWords::default();
        for_each_token(query, |token| {
            if words.stems.len() == MAX_PHRASE_WORDS {
                return;
            }
            let s = stem(&to_lowercase(token));
            if is_stop_stem(&s) {
                words.stop_mask |= 1 << words.stems.len();
            }
            words.stems.push(s);
        });
        words
    }

    /// Which pairs of adjacent words of the query `text` holds adjacent and in the same
    /// order: bit `k` for the pair `stems[k]`, `stems[k + 1]`.
    ///
    /// Only the lines that may hold one of the query's telling words are tokenised (the
    /// passage's filter, `line_word_masks`: its stop words only where it has no other); a
    /// line that holds none parts the words around it, as any word that is not the
    /// query's does, so does a line holding only a stop word of the query
    /// (`refused\nby\npeer` holds no pair of `refused by peer`).
    ///
    /// ```
    /// let w = toolctx_text::PhraseWords::of("connection refused by server");
    /// let found = w.adjacent_pairs("error: Connection refused\nrefused by the server");
    /// assert_eq!(found, 0b011, "connection refused, refused by; not by server");
    /// ```
    pub fn adjacent_pairs(&self, text: &str) -> u64 {
        if self.stems.len() < 2 {
            return 0;
        }
        let pairs = (1u64 << (self.stems.len() - 1)) - 1;
        let starts = line_starts(text);
        let candidates = candidate_lines(text, &starts, &self.stems, self.stop_mask);
        let mut words = Words::new(&self.stems);
        let (mut found, mut before) = (0u64, 0u64);
        for (i, &start) in starts.iter().enumerate() {
            if !candidates[i] {
                before = 0;
                continue;
            }
            let end = starts.get(i + 1).map_or(text.len(), |&next| next - 1);
            for_each_token(&text[start..end], |token| {
                let now = words.bits(token);
                found |= before & (now >> 1);
                before = now;
            });
            if found == pairs {
                break;
            }
        }
        found & pairs
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(query: &str, text: &str) -> u64 {
        PhraseWords::of(query).adjacent_pairs(text)
    }

    #[test]
    fn words_stand_together_across_case_and_camel_case_but_not_out_of_order() {
        assert_eq!(pairs("refresh token", "fn refreshToken()"), 1);
        assert_eq!(pairs("refresh token", "REFRESH TOKENS"), 1, "stems meet");
        assert_eq!(pairs("refresh token", "token refresh"), 0, "out of order");
        assert_eq!(pairs("refresh token", "refresh the token"), 0, "a word between");
    }

    #[test]
    fn a_pair_may_span_a_line_break_but_not_a_line_without_query_words() {
        assert_eq!(pairs("connection refused", "connection\nrefused"), 1);
        assert_eq!(pairs("connection refused", "connection\n\nrefused"), 0);
        assert_eq!(pairs("connection refused", "connection\nxyz\nrefused"), 0);
    }

    #[test]
    fn characters_written_without_spaces_stand_together_one_by_one() {
        let w = PhraseWords::of("组合式API");
        assert_eq!(w.stems, ["组", "合", "式", "api"]);
        assert_eq!(w.adjacent_pairs("使用组合式 API 的时候"), 0b111);
        assert_eq!(w.adjacent_pairs("方式组成合"), 0, "each character, none beside the next");
    }

    #[test]
    fn a_repeated_query_word_pairs_at_each_place() {
        // "a b a": pairs (a, b) and (b, a).
        assert_eq!(pairs("cat dog cat", "dog cat"), 0b10);
        assert_eq!(pairs("cat dog cat", "cat dog"), 0b01);
    }

    #[test]
    fn a_query_of_one_word_or_none_has_no_pair() {
        assert_eq!(pairs("token", "token token"), 0);
        assert_eq!(pairs("", "anything"), 0);
        assert_eq!(pairs("a b", ""), 0);
    }

    #[test]
    fn words_past_the_limit_are_not_paired() {
        let query: Vec<String> = (0..100).map(|i| format!("w{i}")).collect();
        let w = PhraseWords::of(&query.join(" "));
        assert_eq!(w.stems.len(), MAX_PHRASE_WORDS);
        assert_eq!(w.adjacent_pairs(&query.join(" ")), u64::MAX >> 1);
    }
}
