//! A record's result as the model reads it: lines of text, numbered from 1.
//!
//! Passages (`selectRelevant`) and the model's tools (read and grep by line) speak of
//! the same lines, so they are made in one place:
//!
//! - a string is its own lines (a file read reads as the file);
//! - an object gives each field a line, `key: value`; a string value of several lines
//!   gives `key:` and then its lines as they are (`{path, content}` reads as the path,
//!   then the file); an array value gives a line per element, `key[i]: element`;
//! - an array gives a line per element;
//! - anything deeper is compact JSON on its line, so one grep hit (`{file, line, text}`)
//!   stays on one line with all its fields.
//!
//! ```
//! use serde_json::json;
//! let view = toolctx_core::view::lines_of(&json!({
//!     "path": "src/a.ts",
//!     "content": "line one\nline two",
//!     "matches": [{"file": "b.ts", "line": 3, "text": "hit"}],
//! }));
//! assert_eq!(view, "path: src/a.ts\ncontent:\nline one\nline two\nmatches[0]: {\"file\":\"b.ts\",\"line\":3,\"text\":\"hit\"}");
//! assert_eq!(toolctx_core::view::lines_of(&json!("a\nb")), "a\nb");
//! ```

use serde_json::Value;

/// The text of `result` as the model reads it (see the module's docs); lines are
/// separated by `\n`.
pub fn lines_of(result: &Value) -> String {
    let mut out = Lines::default();
    match result {
        Value::String(s) => out.text.push_str(s),
        Value::Array(items) => {
            for item in items {
                out.line("");
                push_inline(&mut out.text, item);
            }
        }
        Value::Object(map) => {
            for (key, value) in map {
                match value {
                    Value::String(s) if s.contains('\n') => {
                        out.line(key);
                        out.text.push(':');
                        for l in s.split('\n') {
                            out.line(l);
                        }
                    }
                    Value::Array(items) => {
                        for (i, item) in items.iter().enumerate() {
                            out.line(key);
                            out.text.push('[');
                            out.text.push_str(&i.to_string());
                            out.text.push_str("]: ");
                            push_inline(&mut out.text, item);
                        }
                    }
                    _ => {
                        out.line(key);
                        out.text.push_str(": ");
                        push_inline(&mut out.text, value);
                    }
                }
            }
        }
        other => push_inline(&mut out.text, other),
    }
    out.text
}

/// The view being written: its text, and whether a line was begun (an empty line is one).
#[derive(Default)]
struct Lines {
    text: String,
    begun: bool,
}

impl Lines {
    /// Starts a line (after a newline unless it is the first) holding `text`.
    fn line(&mut self, text: &str) {
        if self.begun {
            self.text.push('\n');
        }
        self.begun = true;
        self.text.push_str(text);
    }
}

/// A value on one line: a string as it is (its newlines escaped), anything else as
/// compact JSON.
fn push_inline(out: &mut String, value: &Value) {
    match value {
        Value::String(s) if !s.contains('\n') => out.push_str(s),
        other => out.push_str(&other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_shape_reads_as_lines() {
        assert_eq!(lines_of(&json!(["a", 1, {"x": [1, 2]}])), "a\n1\n{\"x\":[1,2]}");
        assert_eq!(
            lines_of(&json!({"n": 3, "ok": true, "nested": {"a": "b"}})),
            "n: 3\nok: true\nnested: {\"a\":\"b\"}"
        );
        assert_eq!(lines_of(&json!(null)), "null");
        assert_eq!(lines_of(&json!(["two\nlines"])), "\"two\\nlines\"");
        assert_eq!(lines_of(&json!({"entries": []})), "");
        assert_eq!(lines_of(&json!(["", "", "match"])), "\n\nmatch", "empty lines count");
        // A file read: its line k is line k + 1 of the view, after the path.
        let view = lines_of(&json!({"path": "a.py", "content": "import os\n\ndef main():\n    pass\n"}));
        let lines: Vec<&str> = view.split('\n').collect();
        assert_eq!(lines[..5], ["path: a.py", "content:", "import os", "", "def main():"]);
    }
}
