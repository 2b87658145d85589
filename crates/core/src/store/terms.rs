//! What the index and a session manifest take from a record: the terms of its metadata
//! and of its content, and the words a manifest lists for it.

use crate::record::{from_json, parse_record, RecordMeta};
use crate::select::Terms;
use serde_json::Value;

/// The words a manifest lists for a record (the seed's `keywords`): its metadata's
/// index tokens, distinct and sorted, as written (not stemmed).
pub(super) fn manifest_words(meta: &RecordMeta) -> Vec<String> {
    let args: Value = from_json(&meta.args_json).unwrap_or(Value::Null);
    crate::select::metadata_words(&meta.tool_description, &meta.tool_name, &args)
}

/// The terms of the content of a record file (its bytes): the string values of the
/// first `content_bytes` bytes of its result (none when it does not parse).
pub(super) fn content_terms(bytes: &[u8], content_bytes: usize) -> Terms {
    let view = parse_record(bytes).ok();
    let result = view.as_ref().and_then(|v| v.result).map(|r| r.get());
    Terms::of_record_with_content("", "", &Value::Null, result, content_bytes)
}

/// The indexed terms of a record's metadata.
pub(super) fn terms_of(meta: &RecordMeta) -> Terms {
    let args: Value = from_json(&meta.args_json).unwrap_or(Value::Null);
    Terms::of_record(&meta.tool_description, &meta.tool_name, &args)
}
