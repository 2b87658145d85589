//! The one tokeniser, used for queries and indexed texts alike (SPEC §6).
//!
//! Words are runs of Unicode letters, digits and combining marks; everything else
//! (`_`, `-`, `/`, `.`, spaces, other punctuation and symbols) separates them.
//! Characters of scripts written without spaces (Han, Hiragana, Katakana, Thai, Lao,
//! Khmer, Myanmar) are one word each, and the pairs of Chinese and Japanese characters
//! that stand together are indexed and queried too (`super::unspaced`). Everything is
//! lowercased with full case mapping.
//!
//! The case of a word is information in a text (`readFile` is the words `read` and
//! `file`) but never in a query (`READFILE`, `ReadFile` and `readfile` are one query).
//! So one rule serves both:
//!
//! - a text is indexed by each word whole and, when camelCase splits it, by its parts
//!   as well: `readFile` → `readfile`, `read`, `file`; `HTTPServer` → `httpserver`,
//!   `http`, `server` ([`index_tokens`]);
//! - a query is matched by its words whole, case-folded ([`keywords`]): `readFile`,
//!   `ReadFile` and `READFILE` all look for `readfile`, which finds the identifier in
//!   any case, while `read file` finds the words, camelCase ones included.
//!
//! [`tokenize`] gives the parts (`readFile` → `read file`, `AUTH_ERROR` → `auth
//! error`): the words a description is made of.
//!
//! Over 600 lines only with its tests (about 110), which stay beside the rules they pin.

use std::cell::RefCell;
use std::hash::BuildHasherDefault;

use crate::lowercase::to_lowercase;
pub use crate::unspaced::is_unspaced_script;
use crate::unspaced::UnspacedRun;
use crate::TermHasher;

/// The tokens of `text`, in order, lowercased: words, split again at camelCase
/// boundaries.
///
/// ```
/// let t = toolctx_text::tokenize("readFile src/auth/login.ts AUTH_ERROR");
/// assert_eq!(t, ["read", "file", "src", "auth", "login", "ts", "auth", "error"]);
/// ```
pub fn tokenize(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for_each_token(text, |t| out.push(to_lowercase(t)));
    out
}

/// Calls `f` with every token of `text` (see [`tokenize`]), in order, before case folding.
pub fn for_each_token(text: &str, mut f: impl FnMut(&str)) {
    for_each_word(text, |word| split_camel(word, &mut f));
}

/// The terms `text` is indexed by, appended to `out`: every token of [`tokenize`]; after
/// the parts of a word that camelCase split, the word whole; and after an identifier
/// whose words are joined by `_` or `-`, the identifier with its joins removed (all
/// lowercased). So the spellings of one identifier meet: a query for `readFile`,
/// `READFILE` or `readfile` finds `readFile`, `read_file` and `read-file` alike. In
/// Chinese and Japanese (each character a token), after each character that continues a
/// run, the pair it ends (`友好的` → `友 好 友好 的 好的`).
/// Returns how many tokens [`tokenize`] gives (the text's length for BM25: a whole
/// word adds a way to find the text, not more text).
///
/// ```
/// let mut terms = Vec::new();
/// assert_eq!(toolctx_text::index_tokens("readFile AUTH_ERROR", &mut terms), 4);
/// assert_eq!(terms, ["read", "file", "readfile", "auth", "error", "autherror"]);
/// ```
pub fn index_tokens(text: &str, out: &mut Vec<String>) -> usize {
    for_each_index_token(text, |t| out.push(t.to_owned()))
}

/// Calls `f` with every term [`index_tokens`] gives, in the same order, lowercased, from
/// a reused buffer (no allocation per token); returns the same length.
///
/// An ASCII word (most of code and prose) is classified byte by byte, lowercased once,
/// and its camelCase parts are slices of that lowercase copy; a word with any other
/// character takes the Unicode path (full case mapping per part, as `str::to_lowercase`).
pub fn for_each_index_token(text: &str, mut f: impl FnMut(&str)) -> usize {
    let mut len = 0;
    // The identifier being read: its words joined (lowercased, built once a second word
    // joins the first), how many words, where its first word is and where it ends.
    let mut joined = String::new();
    let mut joined_words = 0;
    let mut first_word = 0..0;
    let mut joined_end = 0;
    let (mut lower, mut part_lower) = (String::new(), String::new());
    let mut run = UnspacedRun::default();
    for_each_word_at(text, |start, word, ascii| {
        let unspaced = !ascii && word.chars().next().is_some_and(is_unspaced_script);
        let continues = joined_words > 0
            && !unspaced
            && start == joined_end + 1
            && matches!(text.as_bytes()[joined_end], b'_' | b'-');
        if !continues {
            if joined_words > 1 {
                f(&joined);
            }
            joined.clear();
            joined_words = 0;
        }
        let mut parts = 0;
        // An ASCII word without a capital is lowercase already and one part (camelCase
        // needs a capital): the word itself, with no copy.
        let lowercase = ascii && !word.bytes().any(|b| b.is_ascii_uppercase());
        if lowercase {
            f(word);
            parts = 1;
        } else if ascii {
            lower.clear();
            lower.push_str(word);
            lower.make_ascii_lowercase();
            split_camel_ascii(word.as_bytes(), |from, to| {
                f(&lower[from..to]);
                parts += 1;
            });
        } else {
            // Lowercasing maps each character on its own but for `Σ`, whose form depends
            // on its neighbours: without it, the word lowercased is its parts lowercased.
            lower.clear();
            split_camel(word, &mut |part: &str| {
                lowercase_into(part, &mut part_lower);
                f(&part_lower);
                lower.push_str(&part_lower);
                parts += 1;
            });
            if word.contains('Σ') {
                lowercase_into(word, &mut lower);
            }
        }
        len += parts;
        if parts > 1 {
            f(&lower);
        }
        if unspaced {
            run.next(start, word.len(), &part_lower, &mut f);
        }
        if !unspaced {
            match joined_words {
                0 => first_word = start..start + word.len(),
                _ => {
                    if joined_words == 1 {
                        // The first word lowercased as above: whole, as `lower` is.
                        lowercase_into(&text[first_word.clone()], &mut part_lower);
                        joined.push_str(&part_lower);
                    }
                    joined.push_str(if lowercase { word } else { &lower });
                }
            }
            joined_words += 1;
            joined_end = start + word.len();
        }
    });
    if joined_words > 1 {
        f(&joined);
    }
    len
}

/// `buf` = `s` lowercased (full case mapping, as `str::to_lowercase`).
fn lowercase_into(s: &str, buf: &mut String) {
    buf.clear();
    if s.is_ascii() {
        buf.push_str(s);
        buf.make_ascii_lowercase();
    } else {
        buf.push_str(&to_lowercase(s));
    }
}

/// Calls `f` with every word of `text`, in order, before case folding.
fn for_each_word(text: &str, mut f: impl FnMut(&str)) {
    for_each_word_at(text, |_, word, _| f(word));
}

/// Calls `f` with the byte offset and the text of every word of `text`, in order, and
/// whether the word is ASCII. ASCII bytes are classified as bytes (a word byte is a
/// letter or digit); other characters are decoded and classified by Unicode.
fn for_each_word_at(text: &str, mut f: impl FnMut(usize, &str, bool)) {
    let bytes = text.as_bytes();
    let mut run_start: Option<usize> = None;
    let mut ascii = true;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b.is_ascii_alphanumeric() {
            // A run of ASCII letters and digits (most of a text), skipped in one loop.
            if run_start.is_none() {
                run_start = Some(i);
                ascii = true;
            }
            i += 1;
            while i < bytes.len() && bytes[i].is_ascii_alphanumeric() {
                i += 1;
            }
            continue;
        }
        let (word, unspaced, width) = if b.is_ascii() {
            (b.is_ascii_alphanumeric(), false, 1)
        } else {
            let Some(c) = text[i..].chars().next() else { break };
            (is_word_char(c), is_unspaced_script(c), c.len_utf8())
        };
        if !word || unspaced {
            if let Some(s) = run_start.take() {
                f(s, &text[s..i], ascii);
            }
            if word {
                f(i, &text[i..i + width], false);
            }
        } else {
            if run_start.is_none() {
                run_start = Some(i);
                ascii = true;
            }
            ascii &= b.is_ascii();
        }
        i += width;
    }
    if let Some(s) = run_start {
        f(s, &text[s..], ascii);
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

/// The distinct keywords of a query, in first-seen order: its words whole, lowercased,
/// that [`is_keyword`] accepts. The query's case never changes them.
///
/// ```
/// assert_eq!(toolctx_text::keywords("ReadFile the AUTH_ERROR"), ["readfile", "the", "auth", "error"]);
/// assert_eq!(toolctx_text::keywords("READFILE"), toolctx_text::keywords("readFile"));
/// ```
pub fn keywords(query: &str) -> Vec<String> {
    let mut out = query_words(query);
    out.retain(|w| is_keyword(w));
    out
}

/// The distinct words of a query, in first-seen order: whole, lowercased, of every
/// length (`db`, `io`, `v2`), and after them the pairs of Chinese and Japanese
/// characters that stand together, as the index holds them ([`index_tokens`]). The
/// query's case never changes them.
///
/// ```
/// assert_eq!(toolctx_text::query_words("open db.ts IO"), ["open", "db", "ts", "io"]);
/// ```
pub fn query_words(query: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut seen: std::collections::HashSet<String, BuildHasherDefault<TermHasher>> = Default::default();
    let mut add = |word: &str, out: &mut Vec<String>| {
        if !seen.contains(word) {
            seen.insert(word.to_owned());
            out.push(word.to_owned());
        }
    };
    // The pairs after every word: a query's words past `MAX_QUERY_WORDS` are dropped, and
    // a long sentence of characters must not crowd out the identifier after it.
    let (mut run, mut pairs) = (UnspacedRun::default(), Vec::new());
    for_each_word_at(query, |start, word, ascii| {
        let lower = to_lowercase(word);
        add(&lower, &mut out);
        if !ascii && word.chars().next().is_some_and(is_unspaced_script) {
            run.next(start, word.len(), &lower, &mut |pair: &str| pairs.push(pair.to_owned()));
        }
    });
    for pair in &pairs {
        add(pair, &mut out);
    }
    out
}

/// The form a term is indexed and looked up by: an English Snowball stem
/// (`refunds` → `refund`, `expired` → `expir`). Applied to index terms and query
/// keywords alike, after case folding, so words meet whatever their inflection.
///
/// ```
/// assert_eq!(toolctx_text::stem("refunds"), toolctx_text::stem("refund"));
/// ```
pub fn stem(term: &str) -> String {
    stem_owned(term.to_owned())
}

/// [`stem`] of an owned term: a term that is its own stem is returned as it is, with no
/// allocation.
pub fn stem_owned(term: String) -> String {
    if is_own_stem(&term) {
        return term;
    }
    thread_local! {
        static STEMMER: rust_stemmers::Stemmer = rust_stemmers::Stemmer::create(rust_stemmers::Algorithm::English);
        static MEMO: RefCell<StemMemo> = RefCell::default();
    }
    let known = MEMO.with(|m| m.borrow().get(&term).map(|s| s.map(str::to_owned)));
    let stemmed = known.unwrap_or_else(|| {
        // The stemmer borrows its input back when it changed nothing.
        let stemmed = STEMMER.with(|s| match s.stem(&term) {
            std::borrow::Cow::Owned(stemmed) => Some(stemmed),
            std::borrow::Cow::Borrowed(_) => None,
        });
        MEMO.with(|m| m.borrow_mut().insert(&term, stemmed.as_deref()));
        stemmed
    });
    stemmed.unwrap_or(term)
}

/// The stems of the terms stemmed last (`None`: the term is its own stem). Tool outputs
/// share most of their words, record after record, and the English algorithm costs a
/// few hundred nanoseconds a term; a lookup, a few dozen. Bounded: emptied when full.
#[derive(Default)]
struct StemMemo(std::collections::HashMap<Box<str>, Option<Box<str>>, BuildHasherDefault<TermHasher>>);

impl StemMemo {
    /// Terms remembered at most (about 150 KB).
    const CAPACITY: usize = 2048;

    fn get(&self, term: &str) -> Option<Option<&str>> {
        self.0.get(term).map(Option::as_deref)
    }

    fn insert(&mut self, term: &str, stem: Option<&str>) {
        if self.0.len() >= Self::CAPACITY {
            self.0.clear();
        }
        self.0.insert(term.into(), stem.map(Into::into));
    }
}

/// Whether the English algorithm leaves `term` as it is, known without running it:
/// - a term of one or two characters (the algorithm's `not hop 3`: shorter words are
///   left alone, before anything else is done to them);
/// - a term ending in a digit: every suffix the algorithm removes or replaces ends in a
///   letter, unless the term starts with an apostrophe (removed first; never in an
///   index token).
fn is_own_stem(term: &str) -> bool {
    let mut chars = term.chars();
    let short = chars.next().is_none() || chars.next().is_none() || chars.next().is_none();
    short || (term.as_bytes().last().is_some_and(u8::is_ascii_digit) && !term.starts_with('\''))
}

/// The Snowball English stop words (snowballstem.org) without their contractions: the
/// least telling terms of a text.
const STOP_WORDS: &[&str] = &[
    "i",
    "me",
    "my",
    "we",
    "he",
    "it",
    "is",
    "am",
    "be",
    "do",
    "a",
    "an",
    "if",
    "or",
    "as",
    "of",
    "at",
    "by",
    "to",
    "up",
    "in",
    "on",
    "no",
    "so",
    "myself",
    "our",
    "ours",
    "ourselves",
    "you",
    "your",
    "yours",
    "yourself",
    "yourselves",
    "him",
    "his",
    "himself",
    "she",
    "her",
    "hers",
    "herself",
    "its",
    "itself",
    "they",
    "them",
    "their",
    "theirs",
    "themselves",
    "what",
    "which",
    "who",
    "whom",
    "this",
    "that",
    "these",
    "those",
    "are",
    "was",
    "were",
    "been",
    "being",
    "have",
    "has",
    "had",
    "having",
    "does",
    "did",
    "doing",
    "would",
    "should",
    "could",
    "ought",
    "cannot",
    "the",
    "and",
    "but",
    "because",
    "until",
    "while",
    "for",
    "with",
    "about",
    "against",
    "between",
    "into",
    "through",
    "during",
    "before",
    "after",
    "above",
    "below",
    "from",
    "down",
    "out",
    "off",
    "over",
    "under",
    "again",
    "further",
    "then",
    "once",
    "here",
    "there",
    "when",
    "where",
    "why",
    "how",
    "all",
    "any",
    "both",
    "each",
    "few",
    "more",
    "most",
    "other",
    "some",
    "such",
    "nor",
    "not",
    "only",
    "own",
    "same",
    "than",
    "too",
    "very",
];

/// Whether `term` (a stem, see [`stem`]) is the stem of an English stop word.
pub fn is_stop_stem(term: &str) -> bool {
    thread_local! {
        static STOPS: std::collections::HashSet<String> = STOP_WORDS.iter().map(|w| stem(w)).collect();
    }
    STOPS.with(|s| s.contains(term))
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

/// [`split_camel`] for an ASCII word (letters and digits), by byte ranges.
fn split_camel_ascii(word: &[u8], mut f: impl FnMut(usize, usize)) {
    let case = |b: u8| {
        if b.is_ascii_uppercase() {
            Case::Upper
        } else if b.is_ascii_lowercase() || b.is_ascii_digit() {
            Case::Lower
        } else {
            Case::Other
        }
    };
    let mut start = 0;
    let mut prev = Case::Other;
    for (i, &b) in word.iter().enumerate() {
        let cur = case(b);
        let boundary = i > start
            && ((prev == Case::Lower && cur == Case::Upper)
                || (prev == Case::Upper
                    && cur == Case::Upper
                    && word.get(i + 1).map(|&n| case(n)) == Some(Case::Lower)));
        if boundary {
            f(start, i);
            start = i;
        }
        prev = cur;
    }
    if start < word.len() {
        f(start, word.len());
    }
}

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || is_combining_mark(c)
}

fn is_combining_mark(c: char) -> bool {
    matches!(c as u32, 0x0300..=0x036F | 0x1AB0..=0x1AFF | 0x1DC0..=0x1DFF | 0x20D0..=0x20FF | 0xFE20..=0xFE2F)
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

    #[test]
    fn keywords_are_whole_words_whatever_the_case() {
        for q in ["readFile", "ReadFile", "READFILE", "readfile", "rEaDfIlE"] {
            assert_eq!(keywords(q), ["readfile"], "{q}");
        }
        assert_eq!(keywords("AUTH_ERROR HTTPServer"), ["auth", "error", "httpserver"]);
        assert_eq!(keywords("ÜBER Größe"), keywords("über größe"));
    }

    #[test]
    fn indexed_texts_hold_camel_case_words_whole_and_in_parts() {
        let mut terms = Vec::new();
        assert_eq!(index_tokens("readFile HTTPServer AUTH_ERROR v2 認証", &mut terms), 9);
        assert_eq!(
            terms,
            [
                "read",
                "file",
                "readfile",
                "http",
                "server",
                "httpserver",
                "auth",
                "error",
                "autherror",
                "v2",
                "認",
                "証",
                "認証"
            ]
        );
    }

    #[test]
    fn chinese_and_japanese_characters_that_stand_together_are_a_term_in_pairs() {
        let mut terms = Vec::new();
        assert_eq!(index_tokens("書写 SSR 友好的代码", &mut terms), 8, "a pair is no more text");
        assert_eq!(terms, ["書", "写", "書写", "ssr", "友", "好", "友好", "的", "好的", "代", "的代", "码", "代码"]);
        // Apart (a space, punctuation, another script between them), two characters are
        // no pair.
        terms.clear();
        index_tokens("認 証、認a証", &mut terms);
        assert_eq!(terms, ["認", "証", "認", "a", "証"]);
        // A query pairs its characters the same way, after its single characters.
        assert_eq!(query_words("友好的 db"), ["友", "好", "的", "db", "友好", "好的"], "pairs after every word");
        assert_eq!(query_words("認 証"), ["認", "証"]);
        // A pair is no seed keyword (two characters): the seed's relevance is unchanged.
        assert_eq!(keywords("友好"), ["友", "好"]);
        // Thai's characters are code points (vowel signs, tone marks): not paired.
        terms.clear();
        index_tokens("ภาษา", &mut terms);
        assert_eq!(terms, ["ภ", "า", "ษ", "า"]);
        // A long sentence keeps the identifier after it among a query's first words.
        let words = query_words(&format!("{} parseHeader", "当查询很长时后面的标识符仍然要被找到".repeat(2)));
        let at = words.iter().position(|w| w == "parseheader").expect("the identifier");
        assert!(at < 40, "{at}: the pairs come after it");
    }

    #[test]
    fn identifiers_joined_by_underscores_or_hyphens_are_indexed_whole_too() {
        let mut terms = Vec::new();
        assert_eq!(index_tokens("read_file search-code get_userName a - b x_認", &mut terms), 11);
        assert_eq!(
            terms,
            [
                "read",
                "file",
                "readfile",
                "search",
                "code",
                "searchcode",
                "get",
                "user",
                "name",
                "username",
                "getusername",
                "a",
                "b",
                "x",
                "認"
            ]
        );
    }
}
