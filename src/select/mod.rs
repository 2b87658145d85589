//! Relevance (SPEC §6): the tokeniser, each pointer's indexed terms, and ranking.
//!
//! `select_relevant` keeps the seed's contract: a pointer is relevant when one of the
//! query's keywords is among its terms; relevant pointers come first, best first, and
//! when nothing matches every candidate is returned in the order given.

mod tokenize;

pub use tokenize::{for_each_token, is_keyword, is_unspaced_script, keywords, tokenize};

use serde_json::Value;

/// Longest part of one argument value that is indexed, in bytes.
pub const MAX_INDEXED_VALUE_BYTES: usize = 4096;

/// The distinct, sorted terms a pointer is found by: the tokens of its description,
/// its tool name and its argument values.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Terms(Vec<String>);

impl Terms {
    /// The terms of a record's indexed text.
    pub fn of_record(description: &str, tool_name: &str, args: &Value) -> Terms {
        let mut terms = tokenize(description);
        terms.extend(tokenize(tool_name));
        collect_values(args, &mut terms);
        terms.sort_unstable();
        terms.dedup();
        Terms(terms)
    }

    /// Whether `term` is one of them.
    pub fn contains(&self, term: &str) -> bool {
        self.0.binary_search_by(|t| t.as_str().cmp(term)).is_ok()
    }

    /// The terms, sorted.
    pub fn as_slice(&self) -> &[String] {
        &self.0
    }
}

fn collect_values(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(s) => {
            let mut end = s.len().min(MAX_INDEXED_VALUE_BYTES);
            while !s.is_char_boundary(end) {
                end -= 1;
            }
            out.extend(tokenize(&s[..end]));
        }
        Value::Array(items) => items.iter().for_each(|v| collect_values(v, out)),
        Value::Object(map) => map.values().for_each(|v| collect_values(v, out)),
        Value::Number(n) => out.push(n.to_string()),
        Value::Bool(_) | Value::Null => {}
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

/// One ranked candidate.
#[derive(Debug, Clone, PartialEq)]
pub struct Scored {
    /// Index of the candidate in the slice given.
    pub index: usize,
    /// Higher is better; 0 for fallback results.
    pub score: f64,
    /// The query keywords the candidate matched, in query order.
    pub matched: Vec<String>,
}

/// Ranks `candidates` for `query` by keyword overlap (the seed's strategy): the score
/// is the number of distinct query keywords among a candidate's terms. Ties keep the
/// order given.
pub fn rank_overlap(query: &str, candidates: &[&Terms], fallback: Fallback) -> Vec<Scored> {
    let keywords = keywords(query);
    let mut hits: Vec<Scored> = candidates
        .iter()
        .enumerate()
        .filter_map(|(index, terms)| {
            let matched: Vec<String> = keywords.iter().filter(|k| terms.contains(k)).cloned().collect();
            (!matched.is_empty()).then_some(Scored { index, score: matched.len() as f64, matched })
        })
        .collect();
    if hits.is_empty() {
        return match fallback {
            Fallback::All => {
                (0..candidates.len()).map(|index| Scored { index, score: 0.0, matched: Vec::new() }).collect()
            }
            Fallback::None => Vec::new(),
        };
    }
    // Stable: equal scores keep the order given.
    hits.sort_by(|a, b| b.score.total_cmp(&a.score));
    hits
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
        let order: Vec<usize> = ranked.iter().map(|s| s.index).collect();
        assert_eq!(order, [1, 2]);
        assert_eq!(ranked[0].matched, ["auth", "error"]);
    }

    #[test]
    fn fallback_returns_all_in_order_or_nothing() {
        let a = terms("list dir: path=.");
        let b = terms("read file: path=x");
        let all = rank_overlap("zebra", &[&a, &b], Fallback::All);
        assert_eq!(all.iter().map(|s| s.index).collect::<Vec<_>>(), [0, 1]);
        assert!(rank_overlap("zebra", &[&a, &b], Fallback::None).is_empty());
        assert_eq!(rank_overlap("", &[&a], Fallback::All).len(), 1);
    }

    #[test]
    fn short_words_are_not_keywords_but_cjk_is() {
        let a = terms("fs ls");
        assert!(rank_overlap("ls", &[&a], Fallback::None).is_empty());
        let b = terms("検索 ログイン");
        assert_eq!(rank_overlap("検", &[&b], Fallback::None).len(), 1);
    }

    #[test]
    fn argument_values_are_indexed() {
        let t = Terms::of_record("custom text", "readFile", &json!({"path": "src/authService.ts", "n": 42}));
        for term in ["custom", "read", "file", "src", "auth", "service", "ts", "42"] {
            assert!(t.contains(term), "{term}");
        }
    }
}
