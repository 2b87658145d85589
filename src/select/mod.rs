//! Relevance (SPEC §6): the tokeniser, each pointer's indexed terms, and ranking.
//!
//! `select_relevant` keeps the seed's contract: a pointer is relevant when one of the
//! query's keywords is among its terms; relevant pointers come first, best first, and
//! when nothing matches every candidate is returned in the order given.

mod index;
mod postings;
mod vectors;

pub use index::{Doc, Index, Ranking, Scored, MAX_TF};
pub use vectors::{fuse, Vectors, RRF_K, VECTOR_DEPTH};

// The text path, compiled for speed in wasm (see the crate's docs).
pub use toolctx_text::{
    for_each_index_token, for_each_string_value, for_each_token, index_tokens, is_keyword, is_stop_stem,
    is_unspaced_script, keywords, stem, tokenize,
};

use std::collections::BTreeMap;

use serde_json::Value;

use toolctx_text::{count_content, count_tokens, stem_counts, TermCounts};

use crate::sort;

/// Longest part of one argument value that is indexed, in bytes.
pub const MAX_INDEXED_VALUE_BYTES: usize = 4096;

/// Most distinct content terms indexed per record: those that occur most often (stop
/// words last), as in document-centric static index pruning (Büttcher and Clarke,
/// 2006). The content field keeps its full length, so BM25F normalises as before; a
/// record's postings, hence its memory, are bounded whatever its text.
pub const MAX_INDEXED_CONTENT_TERMS: usize = 64;

/// Bytes of a result's JSON text that are read for its index entry, by default
/// (SPEC §6: a bounded part of the content is indexed).
pub const DEFAULT_CONTENT_BYTES: usize = 16 * 1024;

/// The distinct, sorted terms a pointer is found by, stemmed ([`stem`]), with how
/// often each occurs in its two fields: the metadata (description, tool name and
/// argument values) and the content (the string values of a bounded part of its
/// result).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Terms {
    terms: Vec<String>,
    counts: Vec<u32>,
    content: Vec<u32>,
    len: u32,
    content_len: u32,
}

impl Terms {
    /// The terms of a record's metadata (see [`index_tokens`]), without content.
    pub fn of_record(description: &str, tool_name: &str, args: &Value) -> Terms {
        Terms::of_record_with_content(description, tool_name, args, None, 0)
    }

    /// The terms of a record: its metadata and the string values found in the first
    /// `content_bytes` bytes of its result's JSON text (`result_json`).
    pub fn of_record_with_content(
        description: &str,
        tool_name: &str,
        args: &Value,
        result_json: Option<&str>,
        content_bytes: usize,
    ) -> Terms {
        // Each field's distinct tokens counted as read (one allocation per new token),
        // then stemmed once per distinct token.
        let mut tokens = TermCounts::default();
        let len = count_metadata(description, tool_name, args, &mut tokens);
        let mut meta = stem_counts(tokens);
        sort::sort_by(&mut meta, |a, b| a.0.cmp(&b.0));
        let mut counts = TermCounts::default();
        let mut content_len = 0;
        if let Some(json) = result_json {
            content_len = count_content(json, content_bytes, &mut counts);
        }
        let mut content = stem_counts(counts);
        if content.len() > MAX_INDEXED_CONTENT_TERMS {
            // Whether each is a stop word, looked up once per term rather than per comparison.
            let mut keyed: Vec<(bool, (String, u32))> = content.into_iter().map(|t| (is_stop_stem(&t.0), t)).collect();
            sort::top_by(&mut keyed, MAX_INDEXED_CONTENT_TERMS, |(a_stop, a), (b_stop, b)| {
                telling_first((*a_stop, &a.0, a.1), (*b_stop, &b.0, b.1))
            });
            content = keyed.into_iter().map(|(_, t)| t).collect();
        }
        // Sorted once kept: at most MAX_INDEXED_CONTENT_TERMS of them.
        sort::sort_by(&mut content, |a, b| a.0.cmp(&b.0));
        Terms::merge(len, content_len, meta.into_iter(), content.into_iter())
    }

    /// The `n` terms that occur most often in the content, with their counts (stop
    /// words last, ties broken by the term): what a session manifest keeps of a
    /// record's content.
    pub fn top_content(&self, n: usize) -> BTreeMap<String, u32> {
        let mut found: Vec<(&String, u32)> =
            self.terms.iter().zip(&self.content).filter(|(_, &c)| c > 0).map(|(t, &c)| (t, c)).collect();
        if found.len() > n {
            sort::top_by(&mut found, n, |a, b| {
                telling_first((is_stop_stem(a.0), a.0, a.1), (is_stop_stem(b.0), b.0, b.1))
            });
        }
        // Inserted one by one: collecting into a map would compile another sort in.
        let mut top = BTreeMap::new();
        for (t, c) in found {
            top.insert(t.clone(), c);
        }
        top
    }

    /// These terms with `content` (terms already stemmed, with their counts) as their
    /// content field, of `content_len` tokens: a record's terms restored from what its
    /// manifest entry keeps. Content held before is replaced.
    pub fn with_content(self, content: &BTreeMap<String, u32>, content_len: u32) -> Terms {
        let meta = self.terms.into_iter().zip(self.counts).filter(|(_, n)| *n > 0);
        let content = content.iter().filter(|(_, &n)| n > 0).map(|(t, &n)| (t.clone(), n));
        Terms::merge(self.len as usize, content_len as usize, meta, content)
    }

    /// The terms of two fields, each a sorted list of distinct terms with their counts.
    fn merge(
        len: usize,
        content_len: usize,
        meta: impl Iterator<Item = (String, u32)>,
        content: impl Iterator<Item = (String, u32)>,
    ) -> Terms {
        let mut out = Terms {
            len: u32::try_from(len).unwrap_or(u32::MAX),
            content_len: u32::try_from(content_len).unwrap_or(u32::MAX),
            ..Terms::default()
        };
        let (mut m, mut c) = (meta.peekable(), content.peekable());
        loop {
            let order = match (m.peek(), c.peek()) {
                (None, None) => break,
                (Some(_), None) => std::cmp::Ordering::Less,
                (None, Some(_)) => std::cmp::Ordering::Greater,
                (Some(a), Some(b)) => a.0.cmp(&b.0),
            };
            let (term, in_meta, in_content) = match order {
                std::cmp::Ordering::Less => m.next().map(|(t, n)| (t, n, 0)),
                std::cmp::Ordering::Greater => c.next().map(|(t, n)| (t, 0, n)),
                std::cmp::Ordering::Equal => m.next().zip(c.next()).map(|((t, a), (_, b))| (t, a, b)),
            }
            .unwrap_or_default();
            out.terms.push(term);
            out.counts.push(in_meta);
            out.content.push(in_content);
        }
        out
    }

    /// How often `word` occurs (by its stem), in both fields (0 when it does not).
    pub fn count(&self, word: &str) -> u32 {
        self.position(&stem(&toolctx_text::to_lowercase(word))).map_or(0, |i| self.counts[i] + self.content[i])
    }

    /// How often `term` (a stem) occurs in the metadata and in the content.
    pub fn field_counts(&self, term: &str) -> (u32, u32) {
        self.position(term).map_or((0, 0), |i| (self.counts[i], self.content[i]))
    }

    fn position(&self, term: &str) -> Option<usize> {
        self.terms.binary_search_by(|t| t.as_str().cmp(term)).ok()
    }

    /// How often each term of [`Terms::as_slice`] occurs in the metadata, in the same order.
    pub fn counts(&self) -> &[u32] {
        &self.counts
    }

    /// How often each term of [`Terms::as_slice`] occurs in the content, in the same order.
    pub fn content_counts(&self) -> &[u32] {
        &self.content
    }

    /// Whether `word` (by its stem) is one of them.
    pub fn contains(&self, word: &str) -> bool {
        self.count(word) > 0
    }

    /// The distinct terms, sorted.
    pub fn as_slice(&self) -> &[String] {
        &self.terms
    }

    /// Number of metadata tokens (the metadata field's length for BM25F).
    pub fn len(&self) -> u32 {
        self.len
    }

    /// Number of content tokens (the content field's length for BM25F).
    pub fn content_len(&self) -> u32 {
        self.content_len
    }

    /// Whether there are no tokens.
    pub fn is_empty(&self) -> bool {
        self.len == 0 && self.content_len == 0
    }
}

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

/// The order of content terms by how telling they are: stop words last, then the most
/// frequent first, then by the term.
/// Each is `(is_stop_stem(term), term, count)`.
fn telling_first(a: (bool, &str, u32), b: (bool, &str, u32)) -> std::cmp::Ordering {
    a.0.cmp(&b.0).then(b.2.cmp(&a.2)).then_with(|| a.1.cmp(b.1))
}

/// Counts the index tokens of a record's metadata (description, tool name, argument
/// values); returns their length.
fn count_metadata(description: &str, tool_name: &str, args: &Value, counts: &mut TermCounts) -> usize {
    count_tokens(description, counts) + count_tokens(tool_name, counts) + collect_values(args, counts)
}

/// Counts the indexed terms of every value in `value`; returns their length.
fn collect_values(value: &Value, counts: &mut TermCounts) -> usize {
    match value {
        Value::String(s) => {
            let mut end = s.len().min(MAX_INDEXED_VALUE_BYTES);
            while !s.is_char_boundary(end) {
                end -= 1;
            }
            count_tokens(&s[..end], counts)
        }
        Value::Array(items) => items.iter().map(|v| collect_values(v, counts)).sum(),
        Value::Object(map) => map.values().map(|v| collect_values(v, counts)).sum(),
        Value::Number(n) => {
            toolctx_text::count(counts, &n.to_string());
            1
        }
        Value::Bool(_) | Value::Null => 0,
    }
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
    /// Okapi BM25 (k1 = 1.2, b = 0.75) over the candidates given.
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

/// Ranks `candidates` for `query`. Whatever the strategy, a candidate is relevant when
/// it holds one of the query's keywords, relevant candidates come first (best first,
/// ties in the order given), and `fallback` decides what comes back when none is.
/// `Scored::index` is a position in `candidates`.
pub fn rank(query: &str, candidates: &[&Terms], fallback: Fallback, strategy: Strategy) -> Ranking {
    let docs: Vec<Doc<'_>> = candidates.iter().map(|t| Doc::Terms(t)).collect();
    let mut ranking = Index::new().rank_docs(query, &docs, strategy, None);
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
    fn a_record_indexes_its_most_telling_content_terms_only() {
        let mut text: Vec<String> = (0..200).map(|i| format!("word{i}")).collect();
        text.extend(["the"; 9].map(str::to_owned));
        text.extend(["kubernetes"; 3].map(str::to_owned));
        let json = serde_json::to_string(&text.join(" ")).unwrap();
        let t = Terms::of_record_with_content("d", "t", &Value::Null, Some(&json), usize::MAX);
        let indexed = t.content_counts().iter().filter(|&&c| c > 0).count();
        assert_eq!(indexed, 64, "bounded");
        assert_eq!(t.content_len(), 212, "the field keeps its length");
        assert_eq!(t.field_counts("kubernet"), (0, 3), "the most frequent is kept");
        assert_eq!(t.field_counts("the"), (0, 0), "a stop word goes first");
        let top = t.top_content(16);
        assert_eq!(top.len(), 16);
        assert_eq!(top.get("kubernet"), Some(&3));
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
