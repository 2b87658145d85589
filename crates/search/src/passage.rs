//! The passage of a selected record: its best-matching lines, as the model reads them
//! (the core's `view`), so a search result shows why it was found (SPEC §6).
//!
//! Every line is scored by the query words it holds, each counted once and weighed by
//! how telling it is (a stop word a tenth of another word); the passage is the run of
//! at most [`PASSAGE_LINES`] consecutive lines holding the most distinct query words
//! (the earliest of equals, the shortest of those), its text cut to [`PASSAGE_CHARS`]
//! characters around its first match.

use super::query::Query;
use toolctx_text::line_word_masks;

/// Most lines in a passage.
pub const PASSAGE_LINES: usize = 3;
/// Most characters of a passage's text.
pub const PASSAGE_CHARS: usize = 300;

/// Lines of a result, numbered from 1, that best match a query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Passage {
    /// The lines, joined by `\n`, cut to [`PASSAGE_CHARS`] characters (`…` marks a cut).
    pub text: String,
    /// The first line's number (1-based).
    pub start_line: usize,
    /// The last line's number (1-based, inclusive).
    pub end_line: usize,
}

/// The passage of `view` (a result's lines, see `toolctx::view::lines_of`) for `query`;
/// `None` when no line holds a query word.
///
/// ```
/// use toolctx_search::{best_passage, Query};
/// let view = "path: a.ts\ncontent:\nimport x\nexport function refreshToken() {\n  return rotate();\n}";
/// let p = best_passage(view, &Query::new("refresh token rotate")).unwrap();
/// assert_eq!((p.start_line, p.end_line), (4, 5));
/// assert_eq!(p.text, "export function refreshToken() {\n  return rotate();");
/// ```
pub fn best_passage(view: &str, query: &Query) -> Option<Passage> {
    if query.is_empty() {
        return None;
    }
    let lines: Vec<&str> = view.split('\n').collect();
    let masks = line_word_masks(view, &query.stems, query.stop_mask);
    debug_assert_eq!(masks.len(), lines.len());
    let weight = |mask: u64| -> u32 {
        (0..query.len())
            .filter(|k| mask & (1 << k) != 0)
            .map(|k| if query.stop_mask & (1 << k) != 0 { 1 } else { 10 })
            .sum()
    };
    // The best run: the highest score, then the fewest lines, then the earliest. A run
    // begins and ends on a line that holds a query word.
    let mut best: Option<(u32, usize, usize)> = None;
    for start in 0..lines.len() {
        if masks[start] == 0 {
            continue;
        }
        let mut mask = 0;
        for (end, &line_mask) in masks.iter().enumerate().skip(start).take(PASSAGE_LINES) {
            if line_mask == 0 {
                continue;
            }
            mask |= line_mask;
            let score = weight(mask);
            let better = best.map_or(true, |(s, from, to)| score > s || (score == s && end - start < to - from));
            if better {
                best = Some((score, start, end));
            }
        }
    }
    let (_, start, end) = best?;
    let text = lines[start..=end].join("\n");
    Some(Passage { text: cut_around_match(&text, query), start_line: start + 1, end_line: end + 1 })
}

/// `text` cut to [`PASSAGE_CHARS`] characters: whole when it fits, else a window
/// beginning a little before its first query word, `…` where it was cut.
fn cut_around_match(text: &str, query: &Query) -> String {
    let chars = text.chars().count();
    if chars <= PASSAGE_CHARS {
        return text.to_owned();
    }
    // The first character of the first line part holding a query word.
    let mut first = 0;
    let mut offset = 0;
    for part in text.split_inclusive([' ', '\n', '\t']) {
        if line_word_masks(part, &query.stems, query.stop_mask)[0] != 0 {
            first = text[..offset].chars().count();
            break;
        }
        offset += part.len();
    }
    let from = first.saturating_sub(PASSAGE_CHARS / 5).min(chars - PASSAGE_CHARS);
    let mut out: String = text.chars().skip(from).take(PASSAGE_CHARS).collect();
    if from > 0 {
        out.insert(0, '…');
    }
    if from + PASSAGE_CHARS < chars {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lines_with_the_most_query_words_win_and_the_earliest_of_equals() {
        let view = "alpha\nnothing here\nbeta gamma\nalpha beta\nbeta gamma";
        let p = best_passage(view, &Query::new("alpha beta gamma")).unwrap();
        assert_eq!((p.start_line, p.end_line), (3, 4), "three words over two lines");
        assert_eq!(p.text, "beta gamma\nalpha beta");
        let p = best_passage(view, &Query::new("gamma")).unwrap();
        assert_eq!((p.start_line, p.end_line), (3, 3), "one line, the first that has it");
        assert!(best_passage(view, &Query::new("zebra")).is_none());
        assert!(best_passage(view, &Query::new("")).is_none());
    }

    #[test]
    fn stop_words_weigh_less_than_telling_words() {
        let view = "the cat is not here\nfoo\nbar\nkubernetes deploy";
        let p = best_passage(view, &Query::new("the not kubernetes")).unwrap();
        assert_eq!((p.start_line, p.end_line), (4, 4));
    }

    #[test]
    fn a_long_line_is_cut_around_its_first_match() {
        let line = format!("{} needle {}", "hay ".repeat(200), "straw ".repeat(200));
        let p = best_passage(&line, &Query::new("needle")).unwrap();
        assert_eq!((p.start_line, p.end_line), (1, 1));
        assert!(p.text.contains("needle"), "{}", p.text);
        assert!(p.text.starts_with('…') && p.text.ends_with('…'));
        assert!(p.text.chars().count() <= PASSAGE_CHARS + 2);
    }
}
