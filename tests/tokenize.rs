//! The tokeniser's fast paths give exactly the terms of its plain reference (the
//! implementation before the ASCII fast path, kept here): indexed terms are stored in
//! manifests and matched by queries, so a change in them is a change of behaviour.
//! Runs `PROPTEST_CASES` cases (default 1,000).
#![cfg(not(target_arch = "wasm32"))]

use proptest::prelude::*;
use toolctx::select::{for_each_index_token, is_unspaced_script, stem};

fn config() -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(1000);
    ProptestConfig { cases, ..ProptestConfig::default() }
}

/// The terms and length of `for_each_index_token` as implemented before its fast paths:
/// every character classified by Unicode, every part lowercased on its own.
mod reference {
    use super::is_unspaced_script;

    pub fn index_tokens(text: &str) -> (Vec<String>, usize) {
        let mut out = Vec::new();
        let mut len = 0;
        let mut joined = String::new();
        let mut joined_words = 0;
        let mut joined_end = 0;
        let (mut lower, mut part_lower) = (String::new(), String::new());
        for_each_word_at(text, |start, word| {
            let unspaced = word.chars().next().is_some_and(is_unspaced_script);
            let continues = joined_words > 0
                && !unspaced
                && start == joined_end + 1
                && matches!(text.as_bytes()[joined_end], b'_' | b'-');
            if !continues {
                if joined_words > 1 {
                    out.push(joined.clone());
                }
                joined.clear();
                joined_words = 0;
            }
            let mut parts = 0;
            split_camel(word, &mut |part: &str| {
                lowercase_into(part, &mut part_lower);
                out.push(part_lower.clone());
                parts += 1;
            });
            len += parts;
            if parts > 1 || !unspaced {
                lowercase_into(word, &mut lower);
            }
            if parts > 1 {
                out.push(lower.clone());
            }
            if !unspaced {
                joined.push_str(&lower);
                joined_words += 1;
                joined_end = start + word.len();
            }
        });
        if joined_words > 1 {
            out.push(joined);
        }
        (out, len)
    }

    fn lowercase_into(s: &str, buf: &mut String) {
        buf.clear();
        buf.push_str(&s.to_lowercase());
    }

    fn for_each_word_at(text: &str, mut f: impl FnMut(usize, &str)) {
        let mut run_start: Option<usize> = None;
        for (i, c) in text.char_indices() {
            let word = is_word_char(c);
            if !word || is_unspaced_script(c) {
                if let Some(s) = run_start.take() {
                    f(s, &text[s..i]);
                }
                if word {
                    f(i, &text[i..i + c.len_utf8()]);
                }
            } else if run_start.is_none() {
                run_start = Some(i);
            }
        }
        if let Some(s) = run_start {
            f(s, &text[s..]);
        }
    }

    #[derive(Clone, Copy, PartialEq)]
    enum Case {
        Upper,
        Lower,
        Other,
    }

    fn case(c: char) -> Case {
        if c.is_uppercase() {
            Case::Upper
        } else if c.is_lowercase() || c.is_numeric() {
            Case::Lower
        } else {
            Case::Other
        }
    }

    fn split_camel(word: &str, f: &mut impl FnMut(&str)) {
        let mut start = 0;
        let mut chars = word.char_indices().peekable();
        let mut prev = Case::Other;
        while let Some((i, c)) = chars.next() {
            let cur = case(c);
            let next = chars.peek().map(|&(_, n)| case(n));
            let boundary = i > start
                && ((prev == Case::Lower && cur == Case::Upper)
                    || (prev == Case::Upper && cur == Case::Upper && next == Some(Case::Lower)));
            if boundary {
                f(&word[start..i]);
                start = i;
            }
            prev = cur;
        }
        if start < word.len() {
            f(&word[start..]);
        }
    }

    fn is_word_char(c: char) -> bool {
        c.is_alphanumeric()
            || matches!(c as u32, 0x0300..=0x036F | 0x1AB0..=0x1AFF | 0x1DC0..=0x1DFF | 0x20D0..=0x20FF | 0xFE20..=0xFE2F)
    }
}

fn terms(text: &str) -> (Vec<String>, usize) {
    let mut out = Vec::new();
    let len = for_each_index_token(text, |t| out.push(t.to_owned()));
    (out, len)
}

/// Texts made of what a tokeniser has to tell apart: ASCII identifiers in every case,
/// the separators `_-./:`, digits, and letters outside ASCII: accented, with combining
/// marks, title case, the context-dependent final sigma, expanding case mappings
/// (`İ`, `ß`), non-ASCII digits, CJK and kana (a word each), emoji (separators).
fn text() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        4 => "[a-zA-Z][a-zA-Z0-9]{0,12}",
        2 => "[a-z]{1,6}([A-Z][a-z]{0,5}){0,3}",
        1 => "[A-Z]{1,5}[a-z]{0,4}",
        2 => prop::sample::select(vec!["_", "-", ".", "/", ":", " ", "__", "-_", "\n", "\"", "\\"]).prop_map(str::to_owned),
        1 => "[0-9]{1,5}",
        2 => prop::sample::select(vec![
            "é", "É", "ß", "İ", "Σ", "σ", "ς", "ǅ", "ǈ", "\u{301}", "\u{20D0}", "Ω", "ΣΑΣ", "Straße", "ÜBER", "Größe",
            "٣", "Ⅻ", "ⅻ", "K", "ﬁ", "Ⓐ", "ʰ", "認", "証", "エ", "ー", "々", "ก", "🙂", "Ошибка", "ВХОДА", "\u{00A0}",
        ])
        .prop_map(str::to_owned),
        1 => any::<char>().prop_map(String::from),
    ];
    prop::collection::vec(piece, 0..24).prop_map(|p| p.concat())
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn index_tokens_match_the_reference(s in text()) {
        prop_assert_eq!(terms(&s), reference::index_tokens(&s));
    }

    /// `stem` gives what the Snowball stemmer gives, terms ending in a digit included
    /// (which it passes through unstemmed: no English suffix ends in a digit).
    #[test]
    fn stems_match_the_snowball_stemmer(t in "[a-zy']{0,10}[a-z0-9]{0,3}[0-9]?|[aeiouysl]{0,6}(ies|ied|sses|ing|ly|e|s|y|ll)?[0-9]{1,2}|\\PC{0,6}[0-9]") {
        let snowball = rust_stemmers::Stemmer::create(rust_stemmers::Algorithm::English);
        prop_assert_eq!(stem(&t), snowball.stem(&t).into_owned());
    }

    #[test]
    fn index_tokens_of_any_string_match_the_reference(s in any::<String>()) {
        prop_assert_eq!(terms(&s), reference::index_tokens(&s));
    }
}

#[test]
fn examples_match_the_reference() {
    for s in [
        "readFile HTTPServer AUTH_ERROR v2 認証",
        "read_file search-code get_userName a - b x_認",
        "src/auth/loginHandler.ts:42 validate_user-Token",
        "ΣΑΣ ΌΣΟΣ straße İstanbul ǅemal e\u{301}tat Ⅻth",
        "utf8Decode v2Api ABCdef A1B2c3 9to5",
        "",
    ] {
        assert_eq!(terms(s), reference::index_tokens(s), "{s}");
    }
}
