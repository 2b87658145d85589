//! Human-readable tool descriptions, built without a model (SPEC §3).
//!
//! `readFile` with `{"path": "src/auth/login.ts"}` becomes
//! `read file: path=src/auth/login.ts`, so keyword search finds a record by its
//! tool and by its arguments.

use serde_json::Value;

/// Longest argument value kept whole, in characters; longer ones are shortened.
pub const MAX_VALUE_CHARS: usize = 120;
/// Most arguments listed; the rest are counted.
pub const MAX_ARGS: usize = 12;

/// Splits a tool name into lowercase words: `readFile`, `read_file` and
/// `read-file` all give `read file`.
///
/// ```
/// assert_eq!(toolctx_core::tool_words("searchCode"), "search code");
/// assert_eq!(toolctx_core::tool_words("HTTPGet_v2"), "http get v2");
/// ```
pub fn tool_words(tool_name: &str) -> String {
    crate::select::tokenize(tool_name).join(" ")
}

/// The description of a call of `tool_name` with `args`.
///
/// ```
/// use serde_json::json;
/// let d = toolctx_core::describe("readFile", &json!({"path": "src/auth/login.ts", "limit": 10}));
/// assert_eq!(d, "read file: path=src/auth/login.ts, limit=10");
/// ```
pub fn describe(tool_name: &str, args: &Value) -> String {
    let mut out = cached_tool_words(tool_name);
    if out.is_empty() {
        out.push_str("tool");
    }
    let Some(map) = args.as_object() else {
        return out;
    };
    let mut first = true;
    for (key, value) in map.iter().take(MAX_ARGS) {
        out.push_str(if first { ": " } else { ", " });
        first = false;
        out.push_str(key);
        out.push('=');
        push_shortened(&mut out, &value_text(value));
    }
    if map.len() > MAX_ARGS {
        out.push_str(&format!(", … {} more", map.len() - MAX_ARGS));
    }
    out
}

/// Tool names split at most this many at a time by [`cached_tool_words`].
const CACHED_TOOLS: usize = 256;

thread_local! {
    /// Tool names' words: an agent has a few tools, and the pointer table rebuilds the
    /// generated descriptions when it lists pointers (it does not keep them), so each
    /// tool name is split once. Cleared when full.
    static TOOL_WORDS: std::cell::RefCell<std::collections::HashMap<Box<str>, Box<str>>> = Default::default();
}

/// [`tool_words`], memoised for the last [`CACHED_TOOLS`] tool names.
fn cached_tool_words(tool_name: &str) -> String {
    TOOL_WORDS.with(|cache| {
        let mut cache = cache.borrow_mut();
        if let Some(words) = cache.get(tool_name) {
            return words.to_string();
        }
        let words = tool_words(tool_name);
        if cache.len() >= CACHED_TOOLS {
            cache.clear();
        }
        cache.insert(tool_name.into(), words.as_str().into());
        words
    })
}

fn value_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Array(items) => items.iter().map(value_text).collect::<Vec<_>>().join(" "),
        other => other.to_string(),
    }
}

fn push_shortened(out: &mut String, text: &str) {
    let text = text.trim();
    if text.chars().count() <= MAX_VALUE_CHARS {
        out.push_str(text);
    } else {
        out.extend(text.chars().take(MAX_VALUE_CHARS - 1));
        out.push('…');
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn long_values_are_shortened_and_many_args_counted() {
        let long = "word ".repeat(100);
        let d = describe("grep", &json!({"pattern": long}));
        assert!(d.chars().count() < 140, "{d}");
        assert!(d.ends_with('…'));
        let many: serde_json::Map<_, _> = (0..20).map(|i| (format!("k{i}"), json!(i))).collect();
        assert!(describe("t", &Value::Object(many)).ends_with("… 8 more"));
    }

    #[test]
    fn tool_words_are_the_same_from_the_cache_past_its_bound() {
        for round in 0..2 {
            for i in 0..CACHED_TOOLS + 3 {
                let tool = format!("readFile{i}_v{round}");
                assert_eq!(describe(&tool, &json!({})), tool_words(&tool), "{tool}");
            }
        }
        assert_eq!(describe("", &json!({})), "tool");
    }

    #[test]
    fn arrays_and_nested_values_are_searchable_text() {
        let d = describe("search-code", &json!({"terms": ["auth", "login"], "opts": {"case": true}}));
        assert_eq!(d, r#"search code: terms=auth login, opts={"case":true}"#);
    }
}
