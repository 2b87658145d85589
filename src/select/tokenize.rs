//! The one tokeniser, used for queries and indexed texts alike (SPEC §6).
//!
//! Words are runs of Unicode letters, digits and combining marks; everything else
//! (`_`, `-`, `/`, `.`, spaces, other punctuation and symbols) separates them. Words
//! are split again at camelCase boundaries (`readFile` → `read file`,
//! `HTTPServer` → `http server`) and lowercased with full case mapping. Characters of
//! scripts written without spaces (Han, Hiragana, Katakana, Thai, Lao, Khmer,
//! Myanmar) are one token each.

/// The tokens of `text`, in order, lowercased.
///
/// ```
/// let t = toolctx::tokenize("readFile src/auth/login.ts AUTH_ERROR");
/// assert_eq!(t, ["read", "file", "src", "auth", "login", "ts", "auth", "error"]);
/// ```
pub fn tokenize(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for_each_token(text, |t| out.push(t.to_lowercase()));
    out
}

/// Calls `f` with every token of `text`, in order, before case folding.
pub fn for_each_token(text: &str, mut f: impl FnMut(&str)) {
    let mut run_start: Option<usize> = None;
    for (i, c) in text.char_indices() {
        let word = is_word_char(c);
        if !word || is_unspaced_script(c) {
            if let Some(s) = run_start.take() {
                split_camel(&text[s..i], &mut f);
            }
            if word {
                f(&text[i..i + c.len_utf8()]);
            }
        } else if run_start.is_none() {
            run_start = Some(i);
        }
    }
    if let Some(s) = run_start {
        split_camel(&text[s..], &mut f);
    }
}

/// Whether a token counts as a query keyword: longer than 2 characters, or a
/// character of a script written without spaces.
pub fn is_keyword(token: &str) -> bool {
    let mut chars = token.chars();
    match (chars.next(), chars.next(), chars.next()) {
        (Some(_), Some(_), Some(_)) => true,
        (Some(c), None, None) => is_unspaced_script(c),
        _ => false,
    }
}

/// The distinct keywords of a query, in first-seen order.
pub fn keywords(query: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for token in tokenize(query) {
        if is_keyword(&token) && !out.contains(&token) {
            out.push(token);
        }
    }
    out
}

#[derive(Clone, Copy, PartialEq)]
enum Case {
    Upper,
    /// Lowercase letters and digits: both end a word before a capital (`v2Api`).
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

/// Splits one word at camelCase boundaries: `readFile` → `read`, `File`;
/// `HTTPServer` → `HTTP`, `Server`.
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
    c.is_alphanumeric() || is_combining_mark(c)
}

fn is_combining_mark(c: char) -> bool {
    matches!(c as u32, 0x0300..=0x036F | 0x1AB0..=0x1AFF | 0x1DC0..=0x1DFF | 0x20D0..=0x20FF | 0xFE20..=0xFE2F)
}

/// Characters of scripts written without spaces between words.
pub fn is_unspaced_script(c: char) -> bool {
    matches!(c as u32,
        0x0E00..=0x0EFF     // Thai, Lao
        | 0x1000..=0x109F   // Myanmar
        | 0x1780..=0x17FF   // Khmer
        | 0x3005..=0x3007   // 々 〆 〇
        | 0x3040..=0x30FF   // Hiragana, Katakana
        | 0x31F0..=0x31FF   // Katakana extensions
        | 0x3400..=0x4DBF   // CJK extension A
        | 0x4E00..=0x9FFF   // CJK unified ideographs
        | 0xF900..=0xFAFF   // CJK compatibility ideographs
        | 0xFF66..=0xFF9F   // halfwidth Katakana
        | 0x20000..=0x3134F // CJK extensions B–G
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(s: &str) -> Vec<String> {
        tokenize(s)
    }

    #[test]
    fn splits_case_paths_and_punctuation() {
        assert_eq!(toks("readFile"), ["read", "file"]);
        assert_eq!(toks("HTTPServer parseJSON"), ["http", "server", "parse", "json"]);
        assert_eq!(toks("src/auth/login.ts"), ["src", "auth", "login", "ts"]);
        assert_eq!(toks("AUTH_ERROR search-code"), ["auth", "error", "search", "code"]);
        assert_eq!(toks("utf8Decode v2"), ["utf8", "decode", "v2"]);
        assert_eq!(toks("  ...  "), Vec::<String>::new());
    }

    #[test]
    fn unicode_words_and_unspaced_scripts() {
        assert_eq!(toks("Größe ÜBER café"), ["größe", "über", "café"]);
        assert_eq!(toks("e\u{301}tat"), ["e\u{301}tat"]);
        assert_eq!(toks("認証エラー"), ["認", "証", "エ", "ラ", "ー"]);
        assert_eq!(toks("login失败"), ["login", "失", "败"]);
        assert_eq!(toks("Ошибка входа"), ["ошибка", "входа"]);
    }

    #[test]
    fn keywords_are_long_or_unspaced() {
        assert_eq!(keywords("an auth error in 認証 of auth"), ["auth", "error", "認", "証"]);
    }
}
