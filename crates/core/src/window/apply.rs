//! Applying edits and a removed range to messages (the seed's
//! `ContextUpdateApplicator`). Edits address the original messages (message index,
//! block index); they are applied in order, so the latest edit of a block wins. The
//! input is never modified: the result is a new list.

use serde_json::Value;

use super::json::object;
use super::{Edit, EditKind};

/// The messages with `edits` applied and `range` (inclusive) removed. An edit whose
/// message or block does not exist (or does not fit its kind) is skipped.
pub fn apply(messages: &[Value], edits: &[Edit], range: Option<(usize, usize)>) -> Vec<Value> {
    let mut out = apply_edits(messages.to_vec(), edits);
    if let Some((start, end)) = range {
        if start < out.len() {
            out.drain(start..=end.min(out.len() - 1));
        }
    }
    out
}

/// `messages` with `edits` applied.
pub fn apply_edits(mut messages: Vec<Value>, edits: &[Edit]) -> Vec<Value> {
    apply_edits_in_place(&mut messages, edits);
    messages
}

/// Applies `edits` to `messages`.
pub fn apply_edits_in_place(messages: &mut [Value], edits: &[Edit]) {
    for edit in edits {
        if let Some(message) = messages.get_mut(edit.message) {
            apply_one(message, edit);
        }
    }
}

fn text_block(text: &str) -> Value {
    object(vec![("type", "text".into()), ("text", text.into())])
}

fn apply_one(message: &mut Value, edit: &Edit) {
    let Some(content) = message.get_mut("content") else { return };
    if let Value::String(s) = content {
        match (edit.block, edit.kind) {
            (0, EditKind::TruncationNotice) => {}
            (0, _) => *s = edit.content.clone(),
            // A notice after a string content: the string becomes the first text block.
            (1, EditKind::TruncationNotice) => *content = Value::Array(vec![text_block(s), text_block(&edit.content)]),
            _ => {}
        }
        return;
    }
    let Value::Array(blocks) = content else { return };
    if edit.block == blocks.len() && edit.kind == EditKind::TruncationNotice {
        blocks.push(text_block(&edit.content));
        return;
    }
    let Some(block) = blocks.get_mut(edit.block) else { return };
    let Some(fields) = block.as_object_mut() else { return };
    match fields.get("type").and_then(Value::as_str) {
        Some("text") => {
            fields.insert("text".to_owned(), Value::String(edit.content.clone()));
        }
        Some("tool_result") if edit.kind != EditKind::TruncationNotice => {
            fields.insert("content".to_owned(), Value::String(edit.content.clone()));
        }
        Some("tool_use") if edit.kind == EditKind::WriteFile => {
            if let Some(input) = fields.get_mut("input").and_then(Value::as_object_mut) {
                if input.get("content").is_some_and(Value::is_string) {
                    input.insert("content".to_owned(), Value::String(edit.content.clone()));
                }
            }
        }
        _ => {}
    }
}
