//! toolctx's search engine (SPEC §6): a record's terms, its metadata and its content in
//! passages ([`terms`]); the inverted index and its ranking by best passage ([`Index`]);
//! a query's words ([`Query`]); the lines to show for a hit ([`best_passage`]); the second
//! phase, where a query's words stand together in a result ([`Phrase`], [`rescore`]); embedding
//! vectors for hybrid ranking ([`Vectors`]). Pure: no I/O, no clock. The core
//! (`toolctx`) re-exports it as `toolctx::select`.
//!
//! It is a crate of its own, beside the text path (`toolctx-text`), for one reason: the
//! package's wasm modules are built for size, and a ranking reads every posting of its
//! words, so the wasm build compiles this crate for speed.
//!
//! The seed's contract ([`rank`]): a pointer is relevant when one of the query's keywords
//! is among its terms; relevant pointers come first, best first, and when nothing
//! matches every candidate is returned in the order given.

#![deny(missing_docs)]

#[doc(hidden)]
pub mod footprint;
mod index;
pub mod paged;
mod passage;
mod phrase;
mod postings;
mod query;
pub mod segment;
pub mod sort;
pub mod terms;
mod varint;
mod vectors;

pub use index::{Doc, Index, Ranking, Scored, SegmentLists};
pub use passage::{best_passage, Passage, PASSAGE_CHARS, PASSAGE_LINES};
pub use phrase::{rescore, Phrase, PHRASE_WEIGHT, RESCORE_WINDOW};
pub use postings::Posting;
pub use query::{Query, MAX_QUERY_WORDS};
pub use terms::{Field, Terms, PASSAGE_WORDS};
pub use vectors::{fuse, Vectors, RRF_K, VECTOR_DEPTH};

// The text path, compiled for speed in wasm (see the crate's docs).
pub use toolctx_text::{
    for_each_index_token, for_each_string_value, for_each_token, index_tokens, is_keyword, is_stop_stem,
    is_unspaced_script, keywords, query_words, stem, tokenize,
};

use serde_json::Value;

use toolctx_text::TermCounts;

use terms::count_metadata;

/// Longest part of one argument value that is indexed, in bytes.
pub const MAX_INDEXED_VALUE_BYTES: usize = 4096;

/// Bytes of a result's JSON text that are read for its index entry, by default: a
/// safety bound per record (8 MiB), far above what a tool returns, so every word of
/// every record is indexed (SPEC §6). The `indexContentBytes` option lowers it.
pub const DEFAULT_CONTENT_BYTES: usize = 8 * 1024 * 1024;

/// The text a record is indexed by, for an embedding model: its description, then the
/// string values found in the first `content_bytes` bytes of its result's JSON text,
/// each on its own line.
pub fn indexed_text(description: &str, result_json: Option<&str>, content_bytes: usize) -> String {
    let mut text = description.to_owned();
    if let Some(json) = result_json {
        for_each_string_value(json, content_bytes, |s| {
            text.push('\n');
            text.push_str(s);
        });
    }
    text
}

/// The distinct index tokens of a record's metadata, sorted, not stemmed: the words a
/// session manifest lists for it.
pub fn metadata_words(description: &str, tool_name: &str, args: &Value) -> Vec<String> {
    let mut counts = TermCounts::default();
    count_metadata(description, tool_name, args, &mut counts);
    let mut tokens: Vec<String> = counts.into_keys().collect();
    sort::sort(&mut tokens);
    tokens
}

/// What to do when no candidate matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Fallback {
    /// Return every candidate in the order given (the seed's behaviour).
    #[default]
    All,
    /// Return nothing.
    None,
}

/// How candidates are scored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Strategy {
    /// BM25F over each record's metadata and its best passage (see [`Index`]), with the
    /// statistics of the candidates given.
    #[default]
    Bm25,
    /// The seed's plain count of matched keywords.
    Overlap,
}

/// Ranks `candidates` for `query` by keyword overlap (the seed's strategy): the score
/// is the number of distinct query keywords among a candidate's terms. Ties keep the
/// order given.
pub fn rank_overlap(query: &str, candidates: &[&Terms], fallback: Fallback) -> Ranking {
    rank(query, candidates, fallback, Strategy::Overlap)
}

/// The query a ranking reads: the seed's keywords alone for the seed's overlap count;
/// for BM25 every word, with the seed's keywords alone deciding relevance when
/// `seed_relevance` is set (`selectRelevantContexts`).
pub fn query_for(text: &str, strategy: Strategy, seed_relevance: bool) -> Query {
    match (strategy, seed_relevance) {
        (Strategy::Overlap, _) => Query::keywords(text),
        (Strategy::Bm25, true) => Query::seed(text),
        (Strategy::Bm25, false) => Query::new(text),
    }
}

/// Ranks `candidates` for `query` with the seed's contract: a candidate is relevant
/// when it holds one of the query's keywords ([`is_keyword`]), relevant candidates come
/// first (best first, by every word of the query, ties in the order given), and
/// `fallback` decides what comes back when none is. `Scored::index` is a position in
/// `candidates`.
pub fn rank(query: &str, candidates: &[&Terms], fallback: Fallback, strategy: Strategy) -> Ranking {
    let query = query_for(query, strategy, true);
    let docs: Vec<Doc<'_>> = candidates.iter().map(|t| Doc::Terms(t)).collect();
    let mut ranking = Index::new().rank_docs(&query, &docs, strategy, None);
    ranking.apply_fallback(fallback, 0..candidates.len());
    ranking
}

impl Ranking {
    /// When nothing matched: every document of `order` (with `Fallback::All`).
    pub fn apply_fallback(&mut self, fallback: Fallback, order: impl Iterator<Item = usize>) {
        if self.hits.is_empty() && fallback == Fallback::All {
            self.hits = order.map(|index| Scored { index, score: 0.0, matched: 0 }).collect();
        }
    }
}

/// Keeps, in rank order, the candidates that fit in `budget` (their sizes from
/// `size_of(index)`): the best set whose records fit. A candidate too large for what is
/// left is passed over and smaller ones after it may still fit.
pub fn within_budget(scored: Vec<Scored>, budget: usize, mut size_of: impl FnMut(usize) -> usize) -> Vec<Scored> {
    let mut left = budget;
    scored
        .into_iter()
        .filter(|s| {
            let size = size_of(s.index);
            let fits = size <= left;
            if fits {
                left -= size;
            }
            fits
        })
        .collect()
}

/// Tokens a record of `bytes` bytes costs a model, estimated at 4 bytes a token.
pub fn estimated_tokens(bytes: usize) -> usize {
    bytes.div_ceil(4)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn terms(desc: &str) -> Terms {
        Terms::of_record(desc, "", &json!({}))
    }

    #[test]
    fn relevant_first_best_first_ties_in_order() {
        let a = terms("read file: path=README.md");
        let b = terms("grep: pattern=auth error");
        let c = terms("read file: path=src/auth/login.ts");
        let ranked = rank_overlap("auth error", &[&a, &b, &c], Fallback::All);
        let order: Vec<usize> = ranked.hits.iter().map(|s| s.index).collect();
        assert_eq!(order, [1, 2]);
        assert_eq!(ranked.matched(&ranked.hits[0]).collect::<Vec<_>>(), ["auth", "error"]);
    }

    #[test]
    fn fallback_returns_all_in_order_or_nothing() {
        let a = terms("list dir: path=.");
        let b = terms("read file: path=x");
        let all = rank_overlap("zebra", &[&a, &b], Fallback::All);
        assert_eq!(all.hits.iter().map(|s| s.index).collect::<Vec<_>>(), [0, 1]);
        assert!(rank_overlap("zebra", &[&a, &b], Fallback::None).hits.is_empty());
        assert_eq!(rank_overlap("", &[&a], Fallback::All).hits.len(), 1);
    }

    #[test]
    fn short_words_are_not_keywords_but_cjk_is() {
        let a = terms("fs ls");
        assert!(rank_overlap("ls", &[&a], Fallback::None).hits.is_empty());
        let b = terms("検索 ログイン");
        assert_eq!(rank_overlap("検", &[&b], Fallback::None).hits.len(), 1);
    }

    #[test]
    fn bm25_prefers_rare_terms_and_keeps_the_seed_contract() {
        let a = terms("read file: path=src/auth/login.ts");
        let b = terms("grep: pattern=login login login");
        let c = terms("read file: path=README.md");
        let d = terms("list directory: path=src");
        let cands = [&a, &b, &c, &d];
        // Two distinct keywords beat one repeated (BM25 saturates term frequency).
        let ranked = rank("read login", &cands, Fallback::All, Strategy::Bm25);
        assert_eq!(ranked.hits.iter().map(|s| s.index).collect::<Vec<_>>(), [0, 1, 2]);
        assert!(ranked.hits.iter().all(|s| s.score > 0.0));
        // A rare keyword outweighs a common one: "src" is in 2 of 4, "readme" in 1.
        let ranked = rank("src readme", &cands, Fallback::All, Strategy::Bm25);
        // ...and of the two "src" matches the shorter text (d) comes first.
        assert_eq!(ranked.hits.iter().map(|s| s.index).collect::<Vec<_>>(), [2, 3, 0]);
        // Overlap counts keywords only: ties keep the order given.
        let overlap = rank("src readme", &cands, Fallback::All, Strategy::Overlap);
        assert_eq!(overlap.hits.iter().map(|s| s.index).collect::<Vec<_>>(), [0, 2, 3]);
        let none = rank("zebra", &cands, Fallback::All, Strategy::Bm25);
        assert_eq!(none.hits.iter().map(|s| s.index).collect::<Vec<_>>(), [0, 1, 2, 3]);
        assert_eq!(a.count("login"), 1);
        assert_eq!(b.count("login"), 3);
    }

    #[test]
    fn budgets_keep_the_best_set_that_fits() {
        let scored: Vec<Scored> = (0..4).map(|index| Scored { index, score: 4.0 - index as f64, matched: 0 }).collect();
        let sizes = [60, 50, 30, 10];
        let kept = within_budget(scored, 100, |i| sizes[i]);
        assert_eq!(kept.iter().map(|s| s.index).collect::<Vec<_>>(), [0, 2, 3]);
        assert_eq!(estimated_tokens(9), 3);
    }

    #[test]
    fn the_case_of_a_query_never_changes_the_list() {
        let docs = [
            Terms::of_record("read file: path=src/auth/login.ts", "readFile", &json!({"path": "src/auth/login.ts"})),
            Terms::of_record("write file: path=src/auth/login.ts", "writeFile", &json!({"path": "src/auth/login.ts"})),
            Terms::of_record("grep: pattern=AuthError", "grep", &json!({"pattern": "AuthError"})),
            Terms::of_record("read config: name=auth", "read_config", &json!({"name": "auth error"})),
            Terms::of_record("fetch: url=x", "fetch", &json!({"url": "READFILE.md"})),
        ];
        let cands: Vec<&Terms> = docs.iter().collect();
        for family in [
            ["readFile", "ReadFile", "READFILE", "readfile", "rEaDfIlE"],
            ["AuthError", "authError", "AUTHERROR", "autherror", "AUTHerror"],
            ["read file", "READ FILE", "Read File", "read FILE", "rEaD fIlE"],
        ] {
            for strategy in [Strategy::Bm25, Strategy::Overlap] {
                let lists: Vec<Vec<(usize, String)>> = family
                    .iter()
                    .map(|q| {
                        let r = rank(q, &cands, Fallback::None, strategy);
                        r.hits.iter().map(|s| (s.index, format!("{:.6}", s.score))).collect()
                    })
                    .collect();
                assert!(!lists[0].is_empty(), "{family:?} finds something");
                for (q, list) in family.iter().zip(&lists) {
                    assert_eq!(list, &lists[0], "{q:?} ranks as {:?} does ({strategy:?})", family[0]);
                }
            }
        }
        // The identifier, in any case: readFile's record and the value READFILE.md.
        let ids =
            |q: &str| rank(q, &cands, Fallback::None, Strategy::Bm25).hits.iter().map(|s| s.index).collect::<Vec<_>>();
        let mut found = ids("readfile");
        found.sort_unstable();
        assert_eq!(found, [0, 4]);
        // The words, in any case: every text that has them, camelCase ones included.
        let mut found = ids("READ FILE");
        found.sort_unstable();
        assert_eq!(found, [0, 1, 3]);
        let mut found = ids("autherror");
        found.sort_unstable();
        assert_eq!(found, [2]);
    }

    #[test]
    fn an_identifier_is_found_whatever_its_convention() {
        let docs = [
            Terms::of_record("read file: path=a.ts", "readFile", &json!({"path": "a.ts"})),
            Terms::of_record("read file: path=b.ts", "read_file", &json!({"path": "b.ts"})),
            Terms::of_record("read file: path=c.ts", "read-file", &json!({"path": "c.ts"})),
            Terms::of_record("grep: pattern=AUTH_ERROR", "grep", &json!({"pattern": "AUTH_ERROR"})),
            Terms::of_record("list files: dir=read", "listFiles", &json!({"dir": "read"})),
        ];
        let cands: Vec<&Terms> = docs.iter().collect();
        for strategy in [Strategy::Bm25, Strategy::Overlap] {
            let ids = |q: &str| {
                let mut found: Vec<usize> =
                    rank(q, &cands, Fallback::None, strategy).hits.iter().map(|s| s.index).collect();
                found.sort_unstable();
                found
            };
            for q in ["readFile", "READ_FILE", "read-file", "ReadFile"] {
                let want: &[usize] = if q.contains(['_', '-']) { &[0, 1, 2, 4] } else { &[0, 1, 2] };
                assert_eq!(ids(q), want, "{q} ({strategy:?})");
            }
            assert_eq!(ids("authError"), [3], "{strategy:?}");
        }
    }

    #[test]
    fn content_is_a_second_field_weighted_below_the_metadata() {
        let with = |json: &str| {
            Terms::of_record_with_content(
                "read file: path=a.ts",
                "readFile",
                &json!({"path": "a.ts"}),
                Some(json),
                4096,
            )
        };
        let named = Terms::of_record("grep: pattern=refresh", "grep", &json!({"pattern": "refresh"}));
        let body = with(r#"{"path":"a.ts","content":"export function refresh() { return tokens; }"}"#);
        assert_eq!(body.field_counts(&stem("refresh")), (0, 1));
        assert_eq!(body.field_counts(&stem("tokens")), (0, 1));
        assert!(body.contains("token") && !body.contains("content"), "string values, not keys");
        let meta = Terms::of_record("read file: path=a.ts", "readFile", &json!({"path": "a.ts"}));
        assert_eq!((body.len(), body.content_len()), (meta.len(), 7), "the fields have their own lengths");
        // The same term once in the metadata outweighs it once in a content as long.
        let ranked = rank("refresh", &[&body, &named], Fallback::None, Strategy::Bm25);
        assert_eq!(ranked.hits.iter().map(|s| s.index).collect::<Vec<_>>(), [1, 0]);
        // Without content the ranking is plain BM25 (metadata weight 1).
        let none = with("null");
        assert_eq!(none.content_len(), 0);
    }

    #[test]
    fn terms_and_queries_are_stemmed_alike() {
        let t = Terms::of_record(
            "read file: path=src/billing/refunds.ts",
            "readFile",
            &json!({"path": "src/billing/refunds.ts"}),
        );
        let e = Terms::of_record("search: query=expired tokens", "search", &json!({"query": "expired tokens"}));
        for q in ["refund", "Refunds", "REFUNDED"] {
            assert_eq!(rank(q, &[&t, &e], Fallback::None, Strategy::Bm25).hits.len(), 1, "{q}");
        }
        let r = rank("expiring token", &[&t, &e], Fallback::None, Strategy::Overlap);
        assert_eq!(r.hits.iter().map(|s| s.index).collect::<Vec<_>>(), [1]);
        assert_eq!(r.matched(&r.hits[0]).collect::<Vec<_>>(), ["expiring", "token"], "words as written");
        // One stem, one keyword: "refund refunds" is not counted twice.
        let once = rank("refund", &[&t], Fallback::None, Strategy::Bm25).hits[0].score;
        let twice = rank("refund refunds", &[&t], Fallback::None, Strategy::Bm25).hits[0].score;
        assert_eq!(once, twice);
    }

    #[test]
    fn a_record_indexes_every_content_term() {
        let mut text: Vec<String> = (0..200).map(|i| format!("word{i}")).collect();
        text.extend(["the"; 9].map(str::to_owned));
        text.extend(["kubernetes"; 3].map(str::to_owned));
        text.extend(["db", "io", "v2"].map(str::to_owned));
        let json = serde_json::to_string(&text.join(" ")).unwrap();
        let t = Terms::of_record_with_content("d", "t", &Value::Null, Some(&json), usize::MAX);
        let indexed = t.merged().iter().filter(|(_, _, c)| *c > 0).count();
        assert_eq!(indexed, 200 + 5, "every distinct term, none pruned");
        assert_eq!(t.content_len(), 215);
        assert_eq!(t.field_counts("word199"), (0, 1), "a word seen once");
        assert_eq!(t.field_counts("the"), (0, 9), "a stop word too");
        for short in ["db", "io", "v2"] {
            assert_eq!(t.field_counts(short), (0, 1), "{short}: tokens of every length");
        }
        // What a session manifest keeps of it: the most telling terms, stop words last.
        let top = t.top_content(16);
        assert_eq!(top.len(), 16);
        assert_eq!(top.get("kubernet"), Some(&3));
        assert_eq!(top.get("the"), None);
        let short = Terms::of_record_with_content("d", "t", &Value::Null, Some("\"the the cat\""), usize::MAX);
        assert_eq!(short.top_content(16).len(), 2, "stop words are kept while there is room");
    }

    #[test]
    fn argument_values_are_indexed() {
        let t = Terms::of_record("custom text", "readFile", &json!({"path": "src/authService.ts", "n": 42}));
        for term in ["custom", "read", "file", "src", "auth", "service", "ts", "42"] {
            assert!(t.contains(term), "{term}");
        }
    }
}
