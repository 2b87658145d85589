//! The text a record's result contributes to its index entry: the string values of
//! the result's JSON (not its keys, numbers or punctuation), read from at most the
//! first `max_bytes` bytes of the JSON text, so the cost of indexing a record is
//! bounded whatever its size.

/// Calls `f` with every string value (unescaped) found in the first `max_bytes` bytes
/// of the JSON text `json`. A string cut by the bound is passed up to the cut. Object
/// keys are skipped: they name the tool's schema (`path`, `content`), not the record.
pub fn for_each_string_value(json: &str, max_bytes: usize, mut f: impl FnMut(&str)) {
    let mut end = json.len().min(max_bytes);
    while !json.is_char_boundary(end) {
        end -= 1;
    }
    let text = &json[..end];
    let bytes = text.as_bytes();
    let mut buf = String::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'"' {
            i += 1;
            continue;
        }
        // A string without escapes is passed as it is; one with escapes, unescaped into `buf`.
        let start = i + 1;
        let plain = start + bytes[start..].iter().position(|&b| b == b'"' || b == b'\\').unwrap_or(bytes.len() - start);
        let value = if bytes.get(plain) == Some(&b'\\') {
            buf.clear();
            i = read_string(text, start, &mut buf);
            buf.as_str()
        } else {
            i = (plain + 1).min(bytes.len());
            &text[start..plain]
        };
        // A key is followed by a colon.
        let mut j = i;
        while j < bytes.len() && bytes[j].is_ascii_whitespace() {
            j += 1;
        }
        if bytes.get(j) != Some(&b':') {
            f(value);
        }
    }
}

/// Reads the JSON string starting at byte `start` (after its opening quote) into `out`,
/// unescaped; returns the byte after its closing quote (or the end of `text`).
fn read_string(text: &str, start: usize, out: &mut String) -> usize {
    let bytes = text.as_bytes();
    let mut i = start;
    let mut run = start;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                out.push_str(&text[run..i]);
                return i + 1;
            }
            b'\\' => {
                out.push_str(&text[run..i]);
                let (c, next) = unescape(text, i + 1);
                out.push(c);
                i = next;
                run = i;
            }
            _ => i += 1,
        }
    }
    out.push_str(&text[run.min(bytes.len())..]);
    bytes.len()
}

/// The character an escape after `\` stands for (a newline as itself, which ends a
/// line; other control escapes as a space, which separates words as they do), and the
/// byte after it.
fn unescape(text: &str, at: usize) -> (char, usize) {
    let bytes = text.as_bytes();
    match bytes.get(at) {
        Some(b'u') => {
            let hex = |p: usize| text.get(p..p + 4).and_then(|h| u32::from_str_radix(h, 16).ok());
            match hex(at + 1) {
                Some(hi @ 0xD800..=0xDBFF) if text.get(at + 5..at + 7) == Some("\\u") => match hex(at + 7) {
                    Some(lo @ 0xDC00..=0xDFFF) => {
                        let c = 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
                        (char::from_u32(c).unwrap_or(' '), at + 11)
                    }
                    _ => (' ', at + 5),
                },
                Some(c) => (char::from_u32(c).unwrap_or(' '), at + 5),
                None => (' ', (at + 1).min(bytes.len())),
            }
        }
        Some(b'n') => ('\n', at + 1),
        Some(b'"') => ('"', at + 1),
        Some(b'\\') => ('\\', at + 1),
        Some(b'/') => ('/', at + 1),
        // Not a JSON escape (the text is not valid JSON): skip the whole character.
        Some(_) => (' ', at + text[at..].chars().next().map_or(1, char::len_utf8)),
        None => (' ', bytes.len()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(json: &str, max: usize) -> Vec<String> {
        let mut out = Vec::new();
        for_each_string_value(json, max, |s| out.push(s.to_owned()));
        out
    }

    #[test]
    fn string_values_unescaped_keys_and_numbers_skipped() {
        let json = r#"{"path":"src/a.ts","content":"line one\nconst x = \"q\";\u00e9\ud83d\ude00","n":42,"ok":true,"list":["refunds", {"k" : "v"}]}"#;
        assert_eq!(values(json, usize::MAX), ["src/a.ts", "line one\nconst x = \"q\";é😀", "refunds", "v"]);
        assert_eq!(values(r#""just a string""#, usize::MAX), ["just a string"]);
    }

    #[test]
    fn only_the_first_bytes_are_read() {
        let json = r#"{"a":"alpha beta","b":"gamma"}"#;
        assert_eq!(values(json, 14), ["alpha be"]);
        assert_eq!(values(json, 0), Vec::<String>::new());
        // A cut inside a multi-byte character moves back to its start.
        assert_eq!(values("\"é\"", 2), [""]);
    }

    #[test]
    fn a_backslash_before_a_multi_byte_character_does_not_panic() {
        // Not valid JSON, but the core never panics on input.
        assert_eq!(values("\"a\\é b\"", usize::MAX), ["a  b"]);
    }
}
