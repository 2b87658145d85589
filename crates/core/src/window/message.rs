//! The message model: Anthropic-style lists, `{role, content}` where `content` is a
//! string or a list of blocks (`text`, `tool_use`, `tool_result`; any other block is
//! kept verbatim). Messages stay `serde_json::Value`s, so fields and blocks this module
//! does not know survive every edit untouched; the functions here are typed views.

use serde_json::Value;

use crate::error::{Error, Result};

/// A block of a message, as the optimiser sees it.
#[derive(Debug, Clone, Copy)]
pub enum Block<'a> {
    /// A string `content` (block 0) or a `text` block.
    Text(&'a str),
    /// `tool_use {id, name, input}`.
    ToolUse {
        /// The tool call id.
        id: &'a str,
        /// The tool name.
        name: &'a str,
        /// The arguments.
        input: &'a Value,
    },
    /// `tool_result {tool_use_id, content, is_error?}`.
    ToolResult {
        /// The id of the call it answers.
        tool_use_id: &'a str,
        /// The result.
        content: &'a Value,
        /// The call failed.
        is_error: bool,
    },
    /// Anything else (images, thinking, documents...), kept verbatim.
    Other(&'a Value),
}

/// Checks the shape every function of this module relies on: an array of objects with a
/// string `role` and a `content` that is a string or an array.
pub fn validate(messages: &[Value]) -> Result<()> {
    for (i, m) in messages.iter().enumerate() {
        let ok = m.get("role").is_some_and(Value::is_string)
            && m.get("content").is_some_and(|c| c.is_string() || c.is_array());
        if !ok {
            return Err(Error::invalid(format!(
                "message {i} must be an object with a string role and a string or array content"
            )));
        }
    }
    Ok(())
}

/// The message's role (`""` when missing).
pub fn role(message: &Value) -> &str {
    message.get("role").and_then(Value::as_str).unwrap_or("")
}

/// Whether the message is from the user.
pub fn is_user(message: &Value) -> bool {
    role(message) == "user"
}

/// Number of blocks: 1 for a string content.
pub fn block_count(message: &Value) -> usize {
    match message.get("content") {
        Some(Value::Array(blocks)) => blocks.len(),
        Some(Value::String(_)) => 1,
        _ => 0,
    }
}

/// The blocks of a message, in order.
pub fn blocks(message: &Value) -> Vec<Block<'_>> {
    match message.get("content") {
        Some(Value::String(s)) => vec![Block::Text(s)],
        Some(Value::Array(items)) => items.iter().map(block).collect(),
        _ => Vec::new(),
    }
}

fn str_field<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

/// The typed view of one block.
pub fn block(v: &Value) -> Block<'_> {
    match str_field(v, "type") {
        Some("text") => match str_field(v, "text") {
            Some(t) => Block::Text(t),
            None => Block::Other(v),
        },
        Some("tool_use") => match (str_field(v, "id"), str_field(v, "name")) {
            (Some(id), Some(name)) => Block::ToolUse { id, name, input: v.get("input").unwrap_or(&Value::Null) },
            _ => Block::Other(v),
        },
        Some("tool_result") => match (str_field(v, "tool_use_id"), v.get("content")) {
            (Some(tool_use_id), content) => Block::ToolResult {
                tool_use_id,
                content: content.unwrap_or(&Value::Null),
                is_error: v.get("is_error").and_then(Value::as_bool).unwrap_or(false),
            },
            _ => Block::Other(v),
        },
        _ => Block::Other(v),
    }
}

/// The text of a `tool_result` content when it is all text: the string itself, or the
/// text blocks joined with `\n` (`None` when it holds images or other blocks).
pub fn result_text(content: &Value) -> Option<String> {
    match content {
        Value::String(s) => Some(s.clone()),
        Value::Null => Some(String::new()),
        Value::Array(items) => {
            let mut texts = Vec::with_capacity(items.len());
            for item in items {
                match block(item) {
                    Block::Text(t) => texts.push(t),
                    _ => return None,
                }
            }
            Some(texts.join("\n"))
        }
        _ => None,
    }
}

/// Ids of the `tool_use` blocks of a message.
pub fn tool_use_ids(message: &Value) -> impl Iterator<Item = &str> {
    blocks(message).into_iter().filter_map(|b| match b {
        Block::ToolUse { id, .. } => Some(id),
        _ => None,
    })
}

/// Ids a message's `tool_result` blocks answer.
pub fn tool_result_ids(message: &Value) -> impl Iterator<Item = &str> {
    blocks(message).into_iter().filter_map(|b| match b {
        Block::ToolResult { tool_use_id, .. } => Some(tool_use_id),
        _ => None,
    })
}

/// Size of a message as a model reads it: UTF-16 code units (JavaScript's `length`)
/// and UTF-8 bytes of its text, its tool inputs (as JSON), its tool results and any
/// other block (as JSON).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Size {
    /// UTF-16 code units.
    pub chars: usize,
    /// UTF-8 bytes.
    pub bytes: usize,
}

impl Size {
    fn add_str(&mut self, s: &str) {
        self.bytes += s.len();
        self.chars += if s.is_ascii() { s.len() } else { s.chars().map(char::len_utf16).sum() };
    }

    fn add(&mut self, other: Size) {
        self.chars += other.chars;
        self.bytes += other.bytes;
    }
}

/// The [`Size`] of one message.
pub fn size(message: &Value) -> Size {
    let mut out = Size::default();
    for b in blocks(message) {
        match b {
            Block::Text(t) => out.add_str(t),
            Block::ToolUse { input, .. } => out.add_str(&json_text(input)),
            Block::ToolResult { content, .. } => out.add(content_size(content)),
            Block::Other(v) => out.add_str(&json_text(v)),
        }
    }
    out
}

fn content_size(content: &Value) -> Size {
    let mut out = Size::default();
    match content {
        Value::String(s) => out.add_str(s),
        Value::Array(items) => {
            for item in items {
                match block(item) {
                    Block::Text(t) => out.add_str(t),
                    _ => out.add_str(&json_text(item)),
                }
            }
        }
        Value::Null => {}
        other => out.add_str(&json_text(other)),
    }
    out
}

/// The [`Size`] of a list of messages.
pub fn total_size(messages: &[Value]) -> Size {
    let mut out = Size::default();
    for m in messages {
        out.add(size(m));
    }
    out
}

/// Compact JSON text of a value, as `serde_json::to_string` writes it (`window/json.rs`).
pub fn json_text(value: &Value) -> String {
    super::json::text(value)
}
