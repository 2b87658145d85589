//! A record's indexed terms: its metadata field (description, tool name, argument
//! values: the words that name the record) and its content in passages (the string
//! values of its result, every word of them, about [`PASSAGE_WORDS`] words a passage).
//!
//! Why passages: one record may be a 100-byte grep hit or a 150 KB file. Scored whole,
//! the file's length normalisation buries the one sentence a query quotes under short
//! records sharing two of its words. Scored by its best passage, the file competes with
//! a passage as long as a grep hit, and the sentence's passage holds every word of it
//! (passage-level evidence: Callan, "Passage-level evidence in document retrieval",
//! SIGIR 1994; fixed-length passages: Kaszkiel and Zobel, SIGIR 1997).

use std::collections::BTreeMap;

use serde_json::Value;
use toolctx_text::{count_passages, count_tokens, stem_counts, TermCounts};

use super::{is_stop_stem, stem, MAX_INDEXED_VALUE_BYTES};
use crate::sort;

/// Words a content passage holds before it ends at the end of a line. Measured on
/// bench/eval (MRR over 20 query sets of real tool outputs): passages of 100 words 0.582,
/// 250 words 0.567, 500 words 0.571, 60 lines 0.577, whole records 0.532.
pub const PASSAGE_WORDS: usize = 100;

/// Distinct stems, sorted, each with how often it occurs, and the field's length in
/// tokens.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Field {
    terms: Vec<(String, u32)>,
    len: u32,
}

impl Field {
    /// The field of the tokens counted in `tokens` (see [`toolctx_text::count`]), `len`
    /// tokens long: stemmed, counts of one stem summed, sorted.
    fn of(tokens: TermCounts, len: usize) -> Field {
        let mut terms = stem_counts(tokens);
        sort::sort_by(&mut terms, |a, b| a.0.cmp(&b.0));
        Field { terms, len: u32::try_from(len).unwrap_or(u32::MAX) }
    }

    /// A field of `terms` (distinct stems, sorted, with their counts), `len` tokens long:
    /// as a segment gives it back.
    pub(crate) fn from_sorted(terms: Vec<(String, u32)>, len: u32) -> Field {
        Field { terms, len }
    }

    /// The distinct stems with their counts, sorted.
    pub fn terms(&self) -> &[(String, u32)] {
        &self.terms
    }

    /// The field's length in tokens (for BM25's length normalisation).
    pub fn len(&self) -> u32 {
        self.len
    }

    /// Whether the field holds no token.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// How often `term` (a stem) occurs.
    pub fn count(&self, term: &str) -> u32 {
        self.terms.binary_search_by(|(t, _)| t.as_str().cmp(term)).map_or(0, |i| self.terms[i].1)
    }
}

/// The terms a record is found by: its metadata, and its content in passages.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Terms {
    metadata: Field,
    passages: Vec<Field>,
}

impl Terms {
    /// The terms of a record's metadata (see [`super::index_tokens`]), without content.
    pub fn of_record(description: &str, tool_name: &str, args: &Value) -> Terms {
        Terms::of_record_with_content(description, tool_name, args, None, 0)
    }

    /// The terms of a record: its metadata, and every string value found in the first
    /// `content_bytes` bytes of its result's JSON text (`result_json`), in passages. No
    /// term is left out: a word a query uses may be any word of the record.
    pub fn of_record_with_content(
        description: &str,
        tool_name: &str,
        args: &Value,
        result_json: Option<&str>,
        content_bytes: usize,
    ) -> Terms {
        let mut tokens = TermCounts::default();
        let len = count_metadata(description, tool_name, args, &mut tokens);
        let mut passages = Vec::new();
        if let Some(json) = result_json {
            count_passages(json, content_bytes, PASSAGE_WORDS, |tokens, len| passages.push(Field::of(tokens, len)));
        }
        Terms { metadata: Field::of(tokens, len), passages }
    }

    /// Terms of `metadata` and `passages` (a segment's record).
    pub(crate) fn from_parts(metadata: Field, passages: Vec<Field>) -> Terms {
        Terms { metadata, passages }
    }

    /// The metadata field.
    pub fn metadata(&self) -> &Field {
        &self.metadata
    }

    /// The content's passages, in order.
    pub fn passages(&self) -> &[Field] {
        &self.passages
    }

    /// The `n` terms that occur most often in the content, with their counts (stop
    /// words last, ties broken by the term): what a session manifest keeps of a
    /// record's content.
    pub fn top_content(&self, n: usize) -> BTreeMap<String, u32> {
        let mut all: BTreeMap<&str, u32> = BTreeMap::new();
        for passage in &self.passages {
            for (t, c) in &passage.terms {
                *all.entry(t.as_str()).or_insert(0) += c;
            }
        }
        let mut found: Vec<(&str, u32)> = all.into_iter().collect();
        if found.len() > n {
            sort::top_by(&mut found, n, |a, b| {
                telling_first((is_stop_stem(a.0), a.0, a.1), (is_stop_stem(b.0), b.0, b.1))
            });
        }
        // Inserted one by one: collecting into a map would compile another sort in.
        let mut top = BTreeMap::new();
        for (t, c) in found {
            top.insert(t.to_owned(), c);
        }
        top
    }

    /// These terms with `content` (terms already stemmed, with their counts) as their
    /// content, one passage of `content_len` tokens: a record's terms restored from what
    /// its manifest entry keeps. Content held before is replaced.
    pub fn with_content(mut self, content: &BTreeMap<String, u32>, content_len: u32) -> Terms {
        let terms: Vec<(String, u32)> = content.iter().filter(|(_, &n)| n > 0).map(|(t, &n)| (t.clone(), n)).collect();
        self.passages = if terms.is_empty() { Vec::new() } else { vec![Field { terms, len: content_len }] };
        self
    }

    /// These terms with the content passages of `content` (a record's content terms
    /// read apart from its metadata). Content held before is replaced.
    pub fn with_passages_of(mut self, content: Terms) -> Terms {
        self.passages = content.passages;
        self
    }

    /// How often `word` occurs (by its stem), in the metadata and the content.
    pub fn count(&self, word: &str) -> u32 {
        let (m, c) = self.field_counts(&stem(&toolctx_text::to_lowercase(word)));
        m + c
    }

    /// How often `term` (a stem) occurs in the metadata and in the content.
    pub fn field_counts(&self, term: &str) -> (u32, u32) {
        (self.metadata.count(term), self.passages.iter().map(|p| p.count(term)).sum())
    }

    /// Whether `word` (by its stem) is one of them.
    pub fn contains(&self, word: &str) -> bool {
        self.count(word) > 0
    }

    /// Every distinct term, sorted, with how often it occurs in the metadata and in the
    /// content (over every passage).
    pub fn merged(&self) -> Vec<(String, u32, u32)> {
        let mut all: BTreeMap<&str, (u32, u32)> = BTreeMap::new();
        for (t, c) in &self.metadata.terms {
            all.entry(t).or_default().0 += c;
        }
        for passage in &self.passages {
            for (t, c) in &passage.terms {
                all.entry(t).or_default().1 += c;
            }
        }
        all.into_iter().map(|(t, (m, c))| (t.to_owned(), m, c)).collect()
    }

    /// Number of metadata tokens.
    pub fn len(&self) -> u32 {
        self.metadata.len
    }

    /// Number of content tokens, over every passage.
    pub fn content_len(&self) -> u32 {
        self.passages.iter().map(|p| p.len).fold(0, u32::saturating_add)
    }

    /// Whether there are no tokens.
    pub fn is_empty(&self) -> bool {
        self.metadata.is_empty() && self.passages.is_empty()
    }
}

/// The order of content terms by how telling they are: stop words last, then the most
/// frequent first, then by the term. Each is `(is_stop_stem(term), term, count)`.
fn telling_first(a: (bool, &str, u32), b: (bool, &str, u32)) -> std::cmp::Ordering {
    a.0.cmp(&b.0).then(b.2.cmp(&a.2)).then_with(|| a.1.cmp(b.1))
}

/// Counts the index tokens of a record's metadata (description, tool name, argument
/// values); returns their length.
pub(super) fn count_metadata(description: &str, tool_name: &str, args: &Value, counts: &mut TermCounts) -> usize {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_is_cut_into_passages_at_line_ends() {
        // 30 lines of 10 words: a passage closes at the line that reaches 100 words.
        let line = "alpha beta gamma delta epsilon zeta eta theta iota kappa";
        let text: Vec<String> = (0..30).map(|i| format!("{line} line{i}")).collect();
        let json = serde_json::to_string(&text.join("\n")).unwrap();
        let t = Terms::of_record_with_content("d", "t", &Value::Null, Some(&json), usize::MAX);
        let lens: Vec<u32> = t.passages().iter().map(Field::len).collect();
        assert_eq!(lens, [110, 110, 110]);
        assert_eq!(t.passages()[0].count("line9"), 1);
        assert_eq!(t.passages()[1].count("line10"), 1, "line 10 begins the second passage");
        assert_eq!(t.field_counts("alpha"), (0, 30));
        assert_eq!(t.content_len(), 330);
        // Each string value ends a line too; a line longer than a passage is one passage.
        let json = format!(r#"{{"a":"{}","b":"tail"}}"#, "w ".repeat(250));
        let t = Terms::of_record_with_content("d", "t", &Value::Null, Some(&json), usize::MAX);
        assert_eq!(t.passages().iter().map(Field::len).collect::<Vec<_>>(), [250, 1]);
        assert!(Terms::of_record_with_content("d", "t", &Value::Null, Some("null"), usize::MAX).passages().is_empty());
    }
}
