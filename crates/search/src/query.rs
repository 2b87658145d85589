//! A query as the index reads it: its distinct words, each with the stem it is looked
//! up by, and what the ranking needs to know of each (SPEC §6).
//!
//! Every word counts, whatever its length (`db`, `io`, `v2`): the index holds tokens of
//! every length, so a query for `db.ts` finds the file. The seed's rule that a keyword
//! is longer than 2 characters ([`is_keyword`]) decides only which records
//! `selectRelevantContexts` calls relevant ([`Query::seed`]); it never changes the
//! scores.

use super::{is_keyword, is_stop_stem, query_words, stem};

/// Words past this many in one query are ignored (a match is a bit of a `u64`).
pub const MAX_QUERY_WORDS: usize = 64;

/// The words of a query, with their stems.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Query {
    /// The distinct words, lowercased, in query order (what `matched` lists); words
    /// with the same stem count once (the first one is kept).
    pub words: Vec<String>,
    /// The stem of each word: what the index is searched for.
    pub stems: Vec<String>,
    /// Bit `k` is set when word `k` makes a document that holds it relevant: every word,
    /// or the seed's keywords only ([`Query::seed`]).
    pub relevant_mask: u64,
    /// Bit `k` is set when word `k` is a stop word ("the", "not", "is").
    pub stop_mask: u64,
}

impl Query {
    /// The query `text`: every word ranks, and a document holding any is relevant.
    ///
    /// ```
    /// let q = toolctx_search::Query::new("Open the db.ts files");
    /// assert_eq!(q.words, ["open", "the", "db", "ts", "files"]);
    /// assert_eq!(q.stems[4], "file");
    /// assert_eq!(q.relevant_mask, 0b11111);
    /// assert_eq!(q.stop_mask, 0b00010, "the");
    /// ```
    pub fn new(text: &str) -> Query {
        Query::of_words(text, |_| true)
    }

    /// The query of `selectRelevantContexts`: every word ranks, but only the seed's
    /// keywords ([`is_keyword`]) make a document relevant, so a record matching nothing
    /// but a short word is left to the fallback, as the seed leaves it.
    ///
    /// ```
    /// let q = toolctx_search::Query::seed("Open the db.ts files");
    /// assert_eq!(q.words.len(), 5);
    /// assert_eq!(q.relevant_mask, 0b10011, "open, the, files: longer than 2 characters");
    /// ```
    pub fn seed(text: &str) -> Query {
        let mut query = Query::new(text);
        query.relevant_mask = 0;
        for (k, word) in query.words.iter().enumerate() {
            if is_keyword(word) {
                query.relevant_mask |= 1 << k;
            }
        }
        query
    }

    /// The seed's keywords alone: what the seed's plain overlap count reads.
    pub fn keywords(text: &str) -> Query {
        Query::of_words(text, is_keyword)
    }

    fn of_words(text: &str, keep: impl Fn(&str) -> bool) -> Query {
        let mut query = Query::default();
        for word in query_words(text) {
            let s = stem(&word);
            if !keep(&word) || query.stems.contains(&s) {
                continue;
            }
            let bit = 1u64 << query.words.len();
            query.relevant_mask |= bit;
            if is_stop_stem(&s) {
                query.stop_mask |= bit;
            }
            query.words.push(word);
            query.stems.push(s);
            if query.words.len() == MAX_QUERY_WORDS {
                break;
            }
        }
        query
    }

    /// Number of words.
    pub fn len(&self) -> usize {
        self.words.len()
    }

    /// Whether the query has no word.
    pub fn is_empty(&self) -> bool {
        self.words.is_empty()
    }
}
