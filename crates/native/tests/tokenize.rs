//! The tokeniser's fast paths give exactly the terms of its plain reference (the
//! implementation before the ASCII fast path, kept here): indexed terms are stored in
//! manifests and matched by queries, so a change in them is a change of behaviour.
//! `Terms::of_record_with_content` gives exactly the terms and counts of its reference
//! (the implementation before its tokens were counted in maps and stems remembered).
//! Runs `PROPTEST_CASES` cases (default 1,000).

use proptest::prelude::*;
use serde_json::Value;
use toolctx::select::{
    for_each_index_token, index_tokens, is_unspaced_script, query_words, stem, Terms, MAX_INDEXED_VALUE_BYTES,
};

fn config() -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(1000);
    ProptestConfig { cases, ..ProptestConfig::default() }
}

/// The terms and length of `for_each_index_token` as implemented before its fast paths:
/// every character classified by Unicode, every part lowercased on its own; a pair of
/// Chinese or Japanese characters after the second, where they stand together.
mod reference {
    use super::is_unspaced_script;

    pub fn index_tokens(text: &str) -> (Vec<String>, usize) {
        let mut out = Vec::new();
        let mut len = 0;
        let mut joined = String::new();
        let mut joined_words = 0;
        let mut joined_end = 0;
        let (mut lower, mut part_lower) = (String::new(), String::new());
        // The last character of a script without spaces read, lowercased, and where it ends.
        let mut last_unspaced: Option<(String, usize)> = None;
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
            // Chinese and Japanese pair; Thai, Lao, Myanmar and Khmer do not.
            let paired = unspaced
                && !word.chars().any(|c| matches!(c as u32, 0x0E00..=0x0EFF | 0x1000..=0x109F | 0x1780..=0x17FF));
            if paired {
                let c = word.to_lowercase();
                if let Some((last, end)) = &last_unspaced {
                    if *end == start {
                        out.push(format!("{last}{c}"));
                    }
                }
                last_unspaced = Some((c, start + word.len()));
            } else {
                last_unspaced = None;
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

/// A record's terms as `Terms::of_record_with_content` computed them before its tokens
/// were counted in maps: every token collected, sorted, deduplicated, stemmed with the
/// Snowball stemmer itself, sorted again; every string value unescaped into a buffer.
mod reference_terms {
    use super::*;

    /// `(term, metadata count, content count)` sorted by term, the metadata length and
    /// the content length.
    pub type Fields = (Vec<(String, u32, u32)>, u32, u32);

    pub fn of_record_with_content(desc: &str, tool: &str, args: &Value, json: Option<&str>, bytes: usize) -> Fields {
        let mut tokens = Vec::new();
        let mut len = index_tokens(desc, &mut tokens);
        len += index_tokens(tool, &mut tokens);
        len += collect_values(args, &mut tokens);
        let meta = stems_of(tokens);
        let mut content_tokens = Vec::new();
        let mut content_len = 0;
        if let Some(json) = json {
            for_each_string_value(json, bytes, |s| content_len += index_tokens(s, &mut content_tokens));
        }
        // Every term of the content: none is pruned.
        let content = stems_of(content_tokens);
        let mut all: Vec<(String, u32, u32)> = meta.into_iter().map(|(t, n)| (t, n, 0)).collect();
        for (t, n) in content {
            match all.iter_mut().find(|e| e.0 == t) {
                Some(e) => e.2 = n,
                None => all.push((t, 0, n)),
            }
        }
        all.sort();
        (all, len as u32, content_len as u32)
    }

    fn stems_of(mut tokens: Vec<String>) -> Vec<(String, u32)> {
        let snowball = rust_stemmers::Stemmer::create(rust_stemmers::Algorithm::English);
        tokens.sort();
        let mut out: Vec<(String, u32)> = Vec::new();
        let mut stems: Vec<String> = tokens.iter().map(|t| snowball.stem(t).into_owned()).collect();
        stems.sort();
        for s in stems {
            match out.last_mut() {
                Some((t, n)) if *t == s => *n += 1,
                _ => out.push((s, 1)),
            }
        }
        out
    }

    fn collect_values(value: &Value, out: &mut Vec<String>) -> usize {
        match value {
            Value::String(s) => {
                let mut end = s.len().min(MAX_INDEXED_VALUE_BYTES);
                while !s.is_char_boundary(end) {
                    end -= 1;
                }
                index_tokens(&s[..end], out)
            }
            Value::Array(items) => items.iter().map(|v| collect_values(v, out)).sum(),
            Value::Object(map) => map.values().map(|v| collect_values(v, out)).sum(),
            Value::Number(n) => {
                out.push(n.to_string());
                1
            }
            Value::Bool(_) | Value::Null => 0,
        }
    }

    /// Every string value (not key) of the first `max_bytes` bytes of `json`, unescaped.
    fn for_each_string_value(json: &str, max_bytes: usize, mut f: impl FnMut(&str)) {
        let mut end = json.len().min(max_bytes);
        while !json.is_char_boundary(end) {
            end -= 1;
        }
        let text = &json[..end];
        let bytes = text.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            if bytes[i] != b'"' {
                i += 1;
                continue;
            }
            let mut buf = String::new();
            i = read_string(text, i + 1, &mut buf);
            let mut j = i;
            while j < bytes.len() && bytes[j].is_ascii_whitespace() {
                j += 1;
            }
            if bytes.get(j) != Some(&b':') {
                f(&buf);
            }
        }
    }

    fn read_string(text: &str, start: usize, out: &mut String) -> usize {
        let bytes = text.as_bytes();
        let mut i = start;
        while i < bytes.len() {
            match bytes[i] {
                b'"' => return i + 1,
                b'\\' => {
                    let (c, next) = unescape(text, i + 1);
                    out.push(c);
                    i = next;
                }
                _ => {
                    let c = text[i..].chars().next().unwrap_or(' ');
                    out.push(c);
                    i += c.len_utf8();
                }
            }
        }
        bytes.len()
    }

    fn unescape(text: &str, at: usize) -> (char, usize) {
        let bytes = text.as_bytes();
        let hex = |p: usize| text.get(p..p + 4).and_then(|h| u32::from_str_radix(h, 16).ok());
        match bytes.get(at) {
            Some(b'u') => match hex(at + 1) {
                Some(hi @ 0xD800..=0xDBFF) if text.get(at + 5..at + 7) == Some("\\u") => match hex(at + 7) {
                    Some(lo @ 0xDC00..=0xDFFF) => {
                        (char::from_u32(0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00)).unwrap_or(' '), at + 11)
                    }
                    _ => (' ', at + 5),
                },
                Some(c) => (char::from_u32(c).unwrap_or(' '), at + 5),
                None => (' ', (at + 1).min(bytes.len())),
            },
            Some(b'"') => ('"', at + 1),
            Some(b'\\') => ('\\', at + 1),
            Some(b'/') => ('/', at + 1),
            Some(_) => (' ', at + text[at..].chars().next().map_or(1, char::len_utf8)),
            None => (' ', bytes.len()),
        }
    }
}

fn fields(t: &Terms) -> reference_terms::Fields {
    let all = t.merged().into_iter();
    (all.collect(), t.len(), t.content_len())
}

/// A record: a description, a tool name, arguments and a result, their strings made of
/// [`text`] (so of every kind of word, repeated words and stems shared by several
/// words), the result's JSON with escapes of every kind.
fn record() -> impl Strategy<Value = (String, String, Value, String)> {
    let word = prop_oneof![
        3 => prop::sample::select(vec![
            "refund", "refunds", "refunded", "token", "tokens", "expired", "expiring", "the", "and", "session",
            "verify", "connection", "connections", "connected", "is", "a", "ok", "handler12", "sky", "news",
        ])
        .prop_map(str::to_owned),
        2 => text(),
        1 => prop::sample::select(vec!["\\n", "\\\"", "\\u00e9", "\\ud83d\\ude00", "\\u0041BC", "\\t", "\\/", "\\ud800x", "\\"])
            .prop_map(str::to_owned),
    ];
    let value = prop::collection::vec(word, 0..24).prop_map(|w| w.join(" "));
    (value.clone(), "[a-zA-Z_]{0,12}", prop::collection::vec(value.clone(), 0..3), prop::collection::vec(value, 0..5))
        .prop_map(|(desc, tool, args, values)| {
            let args = Value::Array(args.into_iter().map(Value::String).chain([Value::from(42.5)]).collect());
            // Escapes written into the JSON text as they are, keys among the values.
            let body: Vec<String> =
                values.iter().enumerate().map(|(i, v)| format!("\"k{i}\": \"{}\"", v.replace('"', "'"))).collect();
            let list: Vec<String> = values.iter().map(|v| v.replace('"', "'")).collect();
            (desc, tool, args, format!("{{{}, \"list\": [\"{}\"]}}", body.join(", "), list.join("\", \"")))
        })
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
            "٣", "Ⅻ", "ⅻ", "K", "ﬁ", "Ⓐ", "ʰ", "認", "証", "認証", "友好的", "エ", "ー", "データ", "々", "ก", "ภาษา", "🙂", "Ошибка", "ВХОДА", "\u{00A0}",
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
    fn stems_match_the_snowball_stemmer(t in "[a-zy']{0,10}[a-z0-9]{0,3}[0-9]?|[aeiouysl]{0,6}(ies|ied|sses|ing|ly|e|s|y|ll)?[0-9]{1,2}|\\PC{0,6}[0-9]|\\PC{1,3}|[a-zA-Z]{1,2}") {
        let snowball = rust_stemmers::Stemmer::create(rust_stemmers::Algorithm::English);
        prop_assert_eq!(stem(&t), snowball.stem(&t).into_owned());
    }

    #[test]
    fn record_terms_match_the_reference((desc, tool, args, json) in record(), bytes in prop_oneof![Just(usize::MAX), 0..400usize]) {
        let got = Terms::of_record_with_content(&desc, &tool, &args, Some(&json), bytes);
        prop_assert_eq!(fields(&got), reference_terms::of_record_with_content(&desc, &tool, &args, Some(&json), bytes));
    }

    #[test]
    fn index_tokens_of_any_string_match_the_reference(s in any::<String>()) {
        prop_assert_eq!(terms(&s), reference::index_tokens(&s));
    }

    /// A query finds the text it is taken from by its pairs of characters too: every
    /// pair a query makes is a pair the index holds for the same text.
    #[test]
    fn a_querys_pairs_are_the_index_pairs_of_the_same_text(s in text()) {
        let indexed = terms(&s).0;
        for word in query_words(&s) {
            if word.chars().count() == 2 && word.chars().all(is_unspaced_script) {
                prop_assert!(indexed.contains(&word), "{word:?} of {s:?}: {indexed:?}");
            }
        }
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
        "書写SSR友好的代码 データベース接続、ﾃｽﾄ 々〇 ภาษาไทย 漢ไ字",
        "",
    ] {
        assert_eq!(terms(s), reference::index_tokens(s), "{s}");
    }
}

/// More terms than the stem memo keeps, stemmed twice: the memo, full and emptied, never
/// changes a stem.
#[test]
fn stems_are_the_stemmers_whatever_the_memo_holds() {
    let snowball = rust_stemmers::Stemmer::create(rust_stemmers::Algorithm::English);
    let suffixes = ["", "s", "ing", "ed", "ies", "ly", "ness", "ation", "er"];
    let words: Vec<String> = (0..6000)
        .map(|i| format!("{}{}{}", ["run", "connect", "happy", "argu", "sky"][i % 5], i / 45, suffixes[i % 9]))
        .collect();
    for _ in 0..2 {
        for w in &words {
            let w = w.trim_end_matches(char::is_numeric).replace(char::is_numeric, "x");
            assert_eq!(stem(&w), snowball.stem(&w), "{w}");
        }
    }
}

#[test]
fn record_examples_match_the_reference() {
    let args: Value = serde_json::json!({"path": "src/auth/refunds.ts", "n": 3, "deep": [{"q": "expired tokens"}]});
    for json in [
        r#"{"hits":[{"path":"src/a.ts","text":"const token = await session.verify(req)"}],"total":1}"#,
        r#""the the the cat \u00e9t\u00e9 \ud83d\ude00 refunds REFUNDED""#,
        "\"unterminated refunds",
        "null",
    ] {
        for bytes in [usize::MAX, 16, 0] {
            let got = Terms::of_record_with_content("read file: refunds", "readFile", &args, Some(json), bytes);
            assert_eq!(
                fields(&got),
                reference_terms::of_record_with_content("read file: refunds", "readFile", &args, Some(json), bytes),
                "{json} {bytes}"
            );
        }
    }
}
