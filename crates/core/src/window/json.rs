//! The optimiser's JSON: messages and history files read into `serde_json::Value`s and
//! written back as compact text, by a reader and a writer of its own.
//!
//! They accept, build and write exactly what serde_json does (this crate's features:
//! objects keep their key order, floats are read correctly rounded), which the tests
//! check against serde_json itself. serde_json's reader is generic over serde's data model
//! and compiles to some 30 KB of wasm for the one type read here; this one is a few KB.
//! Numbers are written by `serde_json::Number`'s `Display`, which is serde_json's own
//! writer of them.
//!
//! Over 600 lines only with its tests (about 200): the reader and the writer are one
//! concept, checked together against `serde_json` byte for byte.

use std::fmt::Write as _;

use serde_json::{Map, Number, Value};

use crate::record::push_json_str;

/// How deep arrays and objects may nest: serde_json's limit (it refuses the 128th level).
const MAX_DEPTH: usize = 127;

/// The value of JSON text, or why it is not JSON (`… at line L column C`, as serde_json
/// says it).
pub fn parse(text: &str) -> Result<Value, String> {
    let mut reader = Reader { bytes: text.as_bytes(), at: 0, text };
    let out = reader.value(0).and_then(|value| {
        reader.skip_space();
        if reader.at < reader.bytes.len() {
            Err("trailing characters")
        } else {
            Ok(value)
        }
    });
    out.map_err(|message| reader.located(message))
}

/// An object of `fields`, in their order (what `json!({...})` builds, without serde's
/// serializer).
pub fn object(fields: Vec<(&str, Value)>) -> Value {
    Value::Object(fields.into_iter().map(|(key, value)| (key.to_owned(), value)).collect())
}

/// Compact JSON text of `value`, byte for byte what `serde_json::to_string` writes.
pub fn text(value: &Value) -> String {
    let mut out = String::new();
    write(&mut out, value);
    out
}

/// Appends the compact JSON text of `value` to `out`.
pub fn write(out: &mut String, value: &Value) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => {
            // Writing to a String cannot fail.
            let _ = write!(out, "{n}");
        }
        Value::String(s) => push_json_str(out, s),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write(out, item);
            }
            out.push(']');
        }
        Value::Object(fields) => {
            out.push('{');
            for (i, (key, item)) in fields.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                push_json_str(out, key);
                out.push(':');
                write(out, item);
            }
            out.push('}');
        }
    }
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
    text: &'a str,
}

type Step<T> = Result<T, &'static str>;

impl Reader<'_> {
    /// `message at line L column C` of the current position (1-based, columns in bytes).
    fn located(&self, message: &str) -> String {
        let before = &self.bytes[..self.at.min(self.bytes.len())];
        let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
        let column = before.iter().rev().take_while(|&&b| b != b'\n').count();
        format!("{message} at line {line} column {column}")
    }

    #[inline(always)]
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    #[inline]
    fn skip_space(&mut self) {
        while let Some(b' ' | b'\n' | b'\t' | b'\r') = self.peek() {
            self.at += 1;
        }
    }

    /// Consumes `word` (the rest of `null`, `true` or `false`).
    fn word(&mut self, word: &[u8]) -> Step<()> {
        for &expected in word {
            match self.peek() {
                Some(b) if b == expected => self.at += 1,
                Some(_) => {
                    self.at += 1;
                    return Err("expected ident");
                }
                None => return Err("EOF while parsing a value"),
            }
        }
        Ok(())
    }

    fn value(&mut self, depth: usize) -> Step<Value> {
        self.skip_space();
        let Some(b) = self.peek() else { return Err("EOF while parsing a value") };
        match b {
            b'n' => {
                self.at += 1;
                self.word(b"ull").map(|()| Value::Null)
            }
            b't' => {
                self.at += 1;
                self.word(b"rue").map(|()| Value::Bool(true))
            }
            b'f' => {
                self.at += 1;
                self.word(b"alse").map(|()| Value::Bool(false))
            }
            b'"' => {
                self.at += 1;
                self.string().map(Value::String)
            }
            b'-' | b'0'..=b'9' => self.number().map(Value::Number),
            b'[' | b'{' if depth >= MAX_DEPTH => {
                self.at += 1;
                Err("recursion limit exceeded")
            }
            b'[' => {
                self.at += 1;
                self.array(depth + 1).map(Value::Array)
            }
            b'{' => {
                self.at += 1;
                self.object(depth + 1).map(Value::Object)
            }
            _ => {
                self.at += 1;
                Err("expected value")
            }
        }
    }

    /// After `[`.
    fn array(&mut self, depth: usize) -> Step<Vec<Value>> {
        let mut items = Vec::new();
        self.skip_space();
        if self.peek() == Some(b']') {
            self.at += 1;
            return Ok(items);
        }
        loop {
            items.push(self.value(depth)?);
            self.skip_space();
            match self.peek() {
                Some(b',') => {
                    self.at += 1;
                    self.skip_space();
                    if self.peek() == Some(b']') {
                        self.at += 1;
                        return Err("trailing comma");
                    }
                }
                Some(b']') => {
                    self.at += 1;
                    return Ok(items);
                }
                Some(_) => {
                    self.at += 1;
                    return Err("expected `,` or `]`");
                }
                None => return Err("EOF while parsing a list"),
            }
        }
    }

    /// After `{`.
    fn object(&mut self, depth: usize) -> Step<Map<String, Value>> {
        let mut fields = Map::new();
        self.skip_space();
        if self.peek() == Some(b'}') {
            self.at += 1;
            return Ok(fields);
        }
        loop {
            match self.peek() {
                Some(b'"') => self.at += 1,
                Some(_) => {
                    self.at += 1;
                    return Err("key must be a string");
                }
                None => return Err("EOF while parsing an object"),
            }
            let key = self.string()?;
            self.skip_space();
            match self.peek() {
                Some(b':') => self.at += 1,
                Some(_) => {
                    self.at += 1;
                    return Err("expected `:`");
                }
                None => return Err("EOF while parsing an object"),
            }
            let value = self.value(depth)?;
            // A repeated key keeps its place and takes the later value, as in serde_json.
            fields.insert(key, value);
            self.skip_space();
            match self.peek() {
                Some(b',') => {
                    self.at += 1;
                    self.skip_space();
                    if self.peek() == Some(b'}') {
                        self.at += 1;
                        return Err("trailing comma");
                    }
                }
                Some(b'}') => {
                    self.at += 1;
                    return Ok(fields);
                }
                Some(_) => {
                    self.at += 1;
                    return Err("expected `,` or `}`");
                }
                None => return Err("EOF while parsing an object"),
            }
        }
    }

    /// Moves to the next `"`, `\` or control character (or the end), 8 bytes at a time
    /// (as serde_json does): strings are most of the bytes of messages.
    #[inline]
    fn skip_plain(&mut self) {
        const ONES: u64 = u64::MAX / 255;
        let rest = &self.bytes[self.at..];
        for (i, chunk) in rest.chunks_exact(8).enumerate() {
            // A chunk of `chunks_exact(8)` is 8 bytes.
            let x = u64::from_le_bytes(chunk.try_into().unwrap_or_default());
            let quote = x ^ (ONES * u64::from(b'"'));
            let backslash = x ^ (ONES * u64::from(b'\\'));
            let found = (x.wrapping_sub(ONES * 0x20) & !x)
                | (quote.wrapping_sub(ONES) & !quote)
                | (backslash.wrapping_sub(ONES) & !backslash);
            // The lowest byte flagged is the first one sought (a borrow only flags bytes
            // above one that is).
            let found = found & (ONES << 7);
            if found != 0 {
                self.at += 8 * i + found.trailing_zeros() as usize / 8;
                return;
            }
        }
        self.at += rest.len() / 8 * 8;
        while let Some(b) = self.peek() {
            if b == b'"' || b == b'\\' || b < 0x20 {
                return;
            }
            self.at += 1;
        }
    }

    /// After the opening `"`: the string up to its closing one.
    fn string(&mut self) -> Step<String> {
        let mut out = String::new();
        let mut start = self.at;
        loop {
            self.skip_plain();
            let Some(b) = self.peek() else { return Err("EOF while parsing a string") };
            match b {
                b'"' => {
                    let end = self.at;
                    self.at += 1;
                    if out.is_empty() {
                        return Ok(self.text[start..end].to_owned());
                    }
                    out.push_str(&self.text[start..end]);
                    return Ok(out);
                }
                b'\\' => {
                    out.push_str(&self.text[start..self.at]);
                    self.at += 1;
                    self.escape(&mut out)?;
                    start = self.at;
                }
                0..=0x1f => {
                    self.at += 1;
                    return Err("control character (\\u0000-\\u001F) found while parsing a string");
                }
                _ => self.at += 1,
            }
        }
    }

    /// After a `\` in a string.
    fn escape(&mut self, out: &mut String) -> Step<()> {
        let Some(b) = self.peek() else { return Err("EOF while parsing a string") };
        self.at += 1;
        let c = match b {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\x08',
            b'f' => '\x0c',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => return self.unicode_escape(out),
            _ => return Err("invalid escape"),
        };
        out.push(c);
        Ok(())
    }

    /// After `\u`: a character, or a surrogate pair as two escapes (a lone surrogate is
    /// an error, as serde_json reads into a `String`).
    fn unicode_escape(&mut self, out: &mut String) -> Step<()> {
        let first = self.hex4()?;
        let code = match first {
            0xDC00..=0xDFFF => return Err("lone leading surrogate in hex escape"),
            0xD800..=0xDBFF => {
                for expected in [b'\\', b'u'] {
                    match self.peek() {
                        Some(b) if b == expected => self.at += 1,
                        Some(_) => {
                            self.at += 1;
                            return Err("unexpected end of hex escape");
                        }
                        None => return Err("EOF while parsing a string"),
                    }
                }
                let second = self.hex4()?;
                if !(0xDC00..=0xDFFF).contains(&second) {
                    return Err("lone leading surrogate in hex escape");
                }
                (((first - 0xD800) << 10) | (second - 0xDC00)) + 0x1_0000
            }
            n => n,
        };
        // Every code outside the surrogates is a char.
        out.push(char::from_u32(code).unwrap_or(char::REPLACEMENT_CHARACTER));
        Ok(())
    }

    fn hex4(&mut self) -> Step<u32> {
        let mut n = 0;
        for _ in 0..4 {
            let Some(b) = self.peek() else { return Err("EOF while parsing a string") };
            self.at += 1;
            let digit = (b as char).to_digit(16).ok_or("invalid escape")?;
            n = n * 16 + digit;
        }
        Ok(n)
    }

    /// A number: an integer that fits a `u64` (or an `i64` when negative) as one, else
    /// the correctly rounded `f64` (`-0` is `-0.0`), as serde_json reads it.
    fn number(&mut self) -> Step<Number> {
        let start = self.at;
        let negative = self.peek() == Some(b'-');
        if negative {
            self.at += 1;
        }
        match self.peek() {
            Some(b'0') => {
                self.at += 1;
                if let Some(b'0'..=b'9') = self.peek() {
                    return Err("invalid number");
                }
            }
            Some(b'1'..=b'9') => self.digits(),
            Some(_) => {
                self.at += 1;
                return Err("invalid number");
            }
            None => return Err("EOF while parsing a value"),
        }
        let integer_end = self.at;
        if self.peek() == Some(b'.') {
            self.at += 1;
            self.some_digits()?;
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.at += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.at += 1;
            }
            self.some_digits()?;
        }
        let token = &self.text[start..self.at];
        if self.at == integer_end {
            let digits = &self.text[start + usize::from(negative)..self.at];
            if let Ok(magnitude) = digits.parse::<u64>() {
                if !negative {
                    return Ok(Number::from(magnitude));
                }
                let n = (magnitude as i64).wrapping_neg();
                if n < 0 {
                    return Ok(Number::from(n));
                }
            }
        }
        // A finite value always parses; an infinite one is out of range.
        token.parse::<f64>().ok().and_then(Number::from_f64).ok_or("number out of range")
    }

    fn digits(&mut self) {
        while let Some(b'0'..=b'9') = self.peek() {
            self.at += 1;
        }
    }

    /// At least one digit.
    fn some_digits(&mut self) -> Step<()> {
        match self.peek() {
            Some(b'0'..=b'9') => {
                self.digits();
                Ok(())
            }
            Some(_) => {
                self.at += 1;
                Err("invalid number")
            }
            None => Err("EOF while parsing a value"),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    use super::{parse, text};

    /// Our reading of `input` against serde_json's: the same value, or both refuse it.
    fn same(input: &str) {
        let ours = parse(input);
        let theirs = serde_json::from_str::<Value>(input);
        match (&ours, &theirs) {
            (Ok(a), Ok(b)) => {
                assert_eq!(a, b, "{input:?}");
                assert_eq!(text(a), serde_json::to_string(b).unwrap(), "{input:?}");
            }
            (Err(_), Err(_)) => {}
            _ => panic!("{input:?}: ours {ours:?}, serde_json {theirs:?}"),
        }
    }

    #[test]
    fn reads_and_writes_what_serde_json_does() {
        let cases = [
            "null",
            "true",
            "false",
            " [ ] ",
            "{}",
            "0",
            "-0",
            "-0.0",
            "1",
            "-1",
            "1.5",
            "1e3",
            "1E+3",
            "1e-3",
            "18446744073709551615",
            "18446744073709551616",
            "-9223372036854775808",
            "-9223372036854775809",
            "123456789012345678901234567890",
            "1.7976931348623157e308",
            "1e309",
            "-1e309",
            "5e-324",
            "1e-400",
            "0.1",
            "2.2250738585072011e-308",
            "9007199254740993",
            "1.00000000000000011102230246251565404236316680908203125",
            "[1,2,[3,{\"a\":null}]]",
            "{\"b\":1,\"a\":2,\"b\":3}",
            "\"a\\\"\\\\\\/\\b\\f\\n\\r\\t\\u0001\\u00e9\\ud83d\\ude00\"",
            "\"é😀\u{2028}\u{7f}\"",
            "[1,]",
            "{\"a\":1,}",
            "01",
            "1.",
            ".5",
            "+1",
            "1e",
            "1e+",
            "-",
            "--1",
            "nul",
            "tru",
            "[",
            "{",
            "{\"a\"",
            "{\"a\":",
            "{1:2}",
            "\"\\ud800\"",
            "\"\\udc00\"",
            "\"\\ud800\\u0041\"",
            "\"\\ud800x\"",
            "\"\\x\"",
            "\"\\u12\"",
            "\"\\u12g4\"",
            "\"\u{1}\"",
            "\"abc",
            "[1 2]",
            "{\"a\" 1}",
            "1 2",
            "",
            "  ",
            "[]]",
            "NaN",
            "Infinity",
            "[1e400]",
            "0e99999999999",
            "1e-99999999999",
            "[-0,0.0,-1e-400]",
        ];
        for case in cases {
            same(case);
        }
        // Every place of a quote, an escape or a control character in a long string (the
        // reader skips plain bytes 8 at a time).
        for at in 0..40 {
            for special in ["\\\"", "\"", "\\n", "\u{1}", "\u{1f}", "\u{e9}", "\u{7f}", " "] {
                let text = format!("\"{}{special}{}\"", "a".repeat(at), "b\u{e9}".repeat(40 - at));
                same(&text);
                same(&text[..text.len() - 1]);
            }
        }
        let deep = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        for n in [126, 127, 128, 129] {
            same(&deep(n));
            same(&format!("{}1{}", "{\"a\":".repeat(n), "}".repeat(n)));
        }
    }

    #[test]
    fn errors_say_where() {
        assert_eq!(parse("[1,\n  x]").unwrap_err(), "expected value at line 2 column 3");
        assert_eq!(parse("[1").unwrap_err(), "EOF while parsing a list at line 1 column 2");
    }

    #[test]
    fn writes_keys_in_their_order_and_floats_as_serde_json() {
        let value =
            json!({"z": [1.0, -0.0, 1e21, 1.5e-7, 0.1, 123456789.125], "a": "\u{0}\u{1f}\"\\", "m": {"n": null}});
        assert_eq!(text(&value), serde_json::to_string(&value).unwrap());
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod properties {
    use proptest::prelude::*;
    use serde_json::{Map, Number, Value};

    use super::{parse, text};

    fn values() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<u64>().prop_map(|n| Value::Number(n.into())),
            any::<i64>().prop_map(|n| Value::Number(n.into())),
            any::<f64>().prop_filter_map("finite", |f| Number::from_f64(f).map(Value::Number)),
            "(?s).{0,12}".prop_map(Value::String),
            "[\u{0}-\u{1f}\"\\\\a\u{7f}\u{e9}\u{2028}\u{1f600}]{0,8}".prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 48, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                prop::collection::vec(("[a-c\u{e9}\"]{0,3}", inner), 0..6)
                    .prop_map(|fields| Value::Object(fields.into_iter().collect::<Map<_, _>>())),
            ]
        })
    }

    proptest! {
        #[test]
        fn what_serde_json_writes_reads_back_the_same(value in values()) {
            let written = serde_json::to_string(&value).unwrap();
            prop_assert_eq!(text(&value), written.clone());
            let ours = parse(&written).unwrap();
            prop_assert_eq!(&ours, &serde_json::from_str::<Value>(&written).unwrap());
            let pretty = serde_json::to_string_pretty(&value).unwrap();
            prop_assert_eq!(parse(&pretty).unwrap(), ours);
        }

        #[test]
        fn bytes_are_read_or_refused_as_serde_json_does(value in values(), cut in 0usize..64, byte in "[\\[\\]{}:,\"\\\\0-9eE.+\\- a-z]") {
            let mut written = serde_json::to_string(&value).unwrap();
            let at = (0..=written.len()).filter(|i| written.is_char_boundary(*i)).nth(cut % (written.len() + 1)).unwrap_or(0);
            written.insert_str(at, &byte);
            let ours = parse(&written).ok();
            let theirs = serde_json::from_str::<Value>(&written).ok();
            prop_assert_eq!(ours, theirs, "{}", written);
        }
    }
}

#[cfg(test)]
mod speed {
    /// `cargo test --release -p toolctx-core --lib window::json::speed -- --ignored --nocapture`: this reader
    /// and writer against serde_json's on 2,000 messages (a few MB).
    #[test]
    #[ignore]
    fn against_serde_json() {
        let block = |i: usize| {
            serde_json::json!({"role": if i % 2 == 0 { "user" } else { "assistant" }, "content": [
                {"type": "text", "text": format!("message {i} \u{e9}\"quoted\"\n").repeat(20)},
                {"type": "tool_use", "id": format!("t{i}"), "name": "read_file", "input": {"path": "src/a.rs", "n": 1.25, "k": i}},
                {"type": "tool_result", "tool_use_id": format!("t{i}"), "content": "fn main() {}\n\t// \u{1f600}\n".repeat(60)},
            ]})
        };
        let messages = serde_json::Value::Array((0..2000).map(block).collect());
        let text = serde_json::to_string(&messages).unwrap();
        let time = |name: &str, f: &dyn Fn() -> usize| {
            let start = std::time::Instant::now();
            let mut n = 0;
            for _ in 0..5 {
                n += f();
            }
            println!("{name}: {:?} per run ({} bytes, {n} in all)", start.elapsed() / 5, text.len());
        };
        time("serde_json parse", &|| {
            serde_json::from_str::<serde_json::Value>(&text).unwrap().as_array().unwrap().len()
        });
        time("window::json parse", &|| super::parse(&text).unwrap().as_array().unwrap().len());
        time("serde_json write", &|| serde_json::to_string(&messages).unwrap().len());
        time("window::json write", &|| super::text(&messages).len());
    }
}
