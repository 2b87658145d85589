//! The second phase of `selectRelevant`: the first results, whose records are read for
//! their passages anyway, scored again by where the query's words stand together in them
//! (issue 36: an exact error message, a heading, a run of Chinese characters should
//! outrank the same words scattered through a long file).
//!
//! The first phase (BM25F, [`crate::Index`]) knows which words a record holds, not where.
//! The second reads the record's text: its phrase share is the part of the query's pairs
//! of adjacent words that the text holds adjacent and in the same order (the ordered
//! window of the sequential dependence model, Metzler and Croft, SIGIR 2005:
//! `toolctx_text::PhraseWords`), each pair weighed by its words as the passage weighs
//! them (a stop word a tenth of another). A result's score becomes
//! `score + PHRASE_WEIGHT × best × share`, `best` the first phase's best score among the
//! results scored again, so a result holding the whole query as written gains half the
//! best score. Rescoring the first results only is how Lucene's and Elasticsearch's
//! rescorers run a phrase query (a `window_size` of the top hits).
//!
//! Measured on bench/eval (36 query sets, MRR@10; bench/eval/README.md): 0.696 → 0.724 as
//! built (MiniSearch 0.691, FTS5 0.640). With a prototype of the phase: the weight 0.25 gave
//! 0.717, 0.5 gave 0.719, 1 gave 0.720 (a plateau: the weight is not tuned to the sets);
//! rescoring the first 10 results gave 0.717, the first 30 gave 0.719. Proximity by
//! distance as BM25TP scores it (Büttcher, Clarke and Lushman, SIGIR 2006) gave 0.710-0.714:
//! it lifts headings, and sinks long sentences of Chinese and Japanese, whose common
//! characters stand near each other everywhere.

use toolctx_text::PhraseWords;

/// How much a result holding every pair of the query gains, in parts of the best score.
pub const PHRASE_WEIGHT: f64 = 0.5;

/// How many of the first results are scored again (and given a passage): a ranking cut to
/// fewer (`limit`) ranks this many, and is cut after the second phase, so a limit keeps
/// the best of the same order.
pub const RESCORE_WINDOW: usize = 20;

/// A query's pairs of adjacent words and their weights.
#[derive(Debug, Clone)]
pub struct Phrase {
    words: PhraseWords,
    /// The weight of pair `k` (words `k` and `k + 1`).
    weights: Vec<u32>,
    total: u32,
}

impl Phrase {
    /// The pairs of `query`.
    pub fn new(query: &str) -> Phrase {
        let words = PhraseWords::of(query);
        let weight = |k: usize| if words.stop_mask & (1 << k) != 0 { 1 } else { 10 };
        let weights: Vec<u32> = (1..words.stems.len()).map(|k| weight(k - 1) + weight(k)).collect();
        let total = weights.iter().sum();
        Phrase { words, weights, total }
    }

    /// Whether the query has no pair (one word, or none): its share is 0 in every text.
    pub fn is_empty(&self) -> bool {
        self.total == 0
    }

    /// The weighted part of the query's pairs that `text` holds adjacent and in order,
    /// from 0 to 1.
    ///
    /// ```
    /// let phrase = toolctx_search::Phrase::new("connection refused by server");
    /// assert_eq!(phrase.share("ERROR: connection refused by server"), 1.0);
    /// assert_eq!(phrase.share("server: refused connection"), 0.0);
    /// let part = phrase.share("connection refused");
    /// assert!(part > 0.0 && part < 0.5, "one pair of three, and `by` is a stop word: {part}");
    /// ```
    pub fn share(&self, text: &str) -> f64 {
        if self.is_empty() {
            return 0.0;
        }
        let found = self.words.adjacent_pairs(text);
        let held: u32 = self.weights.iter().enumerate().filter(|(k, _)| found & (1 << k) != 0).map(|(_, w)| w).sum();
        f64::from(held) / f64::from(self.total)
    }
}

/// The results scored again: `scores` (the first phase's, best first) with each result's
/// phrase share (`shares`, the same length) added as the module's docs say. Their new
/// order, best first (ties keep the first phase's order), each with its new score.
///
/// ```
/// let order = toolctx_search::rescore(&[4.0, 3.5, 1.0], &[0.0, 1.0, 0.0]);
/// assert_eq!(order, [(1, 5.5), (0, 4.0), (2, 1.0)]);
/// ```
pub fn rescore(scores: &[f64], shares: &[f64]) -> Vec<(usize, f64)> {
    debug_assert_eq!(scores.len(), shares.len());
    debug_assert!(scores.len() <= RESCORE_WINDOW);
    let best = scores.iter().copied().fold(0.0, f64::max);
    let mut order: Vec<(usize, f64)> =
        scores.iter().zip(shares).enumerate().map(|(i, (&s, &p))| (i, s + PHRASE_WEIGHT * best * p)).collect();
    order.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    order
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_query_of_one_word_has_no_pair_and_changes_nothing() {
        let phrase = Phrase::new("token");
        assert!(phrase.is_empty());
        assert_eq!(phrase.share("token token"), 0.0);
    }

    #[test]
    fn pairs_of_telling_words_weigh_more_than_pairs_with_a_stop_word() {
        let phrase = Phrase::new("the refresh token");
        let telling = phrase.share("refresh token");
        let stop = phrase.share("the refresh");
        assert!(telling > stop, "{telling} > {stop}");
        assert_eq!(telling + stop, 1.0);
    }

    #[test]
    fn rescoring_keeps_the_first_phases_order_where_no_result_holds_a_pair() {
        let order = rescore(&[3.0, 2.0, 2.0, 0.5], &[0.0; 4]);
        assert_eq!(order.iter().map(|o| o.0).collect::<Vec<_>>(), [0, 1, 2, 3]);
    }

    #[test]
    fn a_result_holding_the_query_as_written_rises_by_half_the_best_score() {
        let order = rescore(&[10.0, 6.0], &[0.0, 1.0]);
        assert_eq!(order, [(1, 11.0), (0, 10.0)]);
        // Scores of 0 (a fallback's results) stay 0.
        assert_eq!(rescore(&[0.0, 0.0], &[1.0, 0.0]), [(0, 0.0), (1, 0.0)]);
    }
}
