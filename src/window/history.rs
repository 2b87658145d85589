//! The edit history (the seed's context history and `ContextHistoryStorage`): every
//! edit with its timestamp, and the ranges removed, in one JSON file per conversation
//! at `{contextDir}/window/{id}.json`, replaced whole (atomically, through
//! [`Storage::write`]) on every save.
//!
//! ```json
//! {"v":1,
//!  "edits":[{"ts":1700000000000,"message":5,"block":1,"kind":"fileMention","content":"..."}],
//!  "truncations":[{"ts":1700000000000,"range":[2,9]}]}
//! ```
//!
//! A file that does not parse is a `CORRUPT_RECORD` error naming it: the history is
//! what makes the optimised conversation reproducible, so it is not silently dropped
//! (the caller may remove the file, or open with `discardCorrupt`).

#[cfg(all(doc, feature = "native"))]
use crate::native::Storage;
use serde_json::Value;

use super::json::object;
use super::Edit;
use crate::error::{Error, ErrorKind, Result};

/// Version of the history file.
pub const HISTORY_VERSION: u32 = 1;

/// A range of messages removed at `ts`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Truncation {
    /// Milliseconds since the epoch.
    pub ts: i64,
    /// Inclusive message indices.
    pub range: (usize, usize),
}

impl Truncation {
    fn from_value(value: &Value) -> Option<Truncation> {
        let range = value.get("range")?.as_array()?;
        let index = |i: usize| range.get(i)?.as_u64().and_then(|n| usize::try_from(n).ok());
        let (start, end) = (index(0)?, index(1)?);
        (range.len() == 2 && start <= end).then_some(Truncation { ts: value.get("ts")?.as_i64()?, range: (start, end) })
    }
}

/// Timestamped edits and truncations of one conversation.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct History {
    /// Every edit, oldest first.
    pub edits: Vec<Edit>,
    /// Every truncation, oldest first; each one contains the previous.
    pub truncations: Vec<Truncation>,
}

fn corrupt(message: impl Into<String>) -> Error {
    Error::new(ErrorKind::CorruptRecord, format!("the window history {}", message.into()))
}

impl History {
    /// The range removed by the latest truncation.
    pub fn deleted_range(&self) -> Option<(usize, usize)> {
        self.truncations.last().map(|t| t.range)
    }

    /// Drops the edits and truncations made after `ts`; returns how many were dropped.
    pub fn restore_checkpoint(&mut self, ts: i64) -> usize {
        let before = self.edits.len() + self.truncations.len();
        self.edits.retain(|e| e.ts <= ts);
        self.truncations.retain(|t| t.ts <= ts);
        before - self.edits.len() - self.truncations.len()
    }

    /// `{edits, truncations}` (the file without its version).
    pub fn to_value(&self) -> Value {
        let edits: Vec<Value> = self.edits.iter().map(Edit::to_value).collect();
        let truncations: Vec<Value> =
            self.truncations.iter().map(|t| object(vec![("ts", t.ts.into()), ("range", range(t.range))])).collect();
        object(vec![("edits", Value::Array(edits)), ("truncations", Value::Array(truncations))])
    }

    /// The file's bytes.
    pub fn to_json(&self) -> Vec<u8> {
        let mut value = self.to_value();
        if let Some(o) = value.as_object_mut() {
            o.insert("v".to_owned(), HISTORY_VERSION.into());
        }
        super::message::json_text(&value).into_bytes()
    }

    /// Parses a history file.
    pub fn from_json(bytes: &[u8]) -> Result<History> {
        let text = std::str::from_utf8(bytes).map_err(|_| corrupt("does not parse: it is not UTF-8"))?;
        let value = super::json::parse(text).map_err(|e| corrupt(format!("does not parse: {e}")))?;
        match value.get("v").and_then(Value::as_u64) {
            Some(v) if v == u64::from(HISTORY_VERSION) => {}
            other => return Err(corrupt(format!("has version {other:?}, expected {HISTORY_VERSION}"))),
        }
        let list = |key: &str| match value.get(key) {
            None => Ok(&[][..]),
            Some(Value::Array(items)) => Ok(items.as_slice()),
            Some(_) => Err(corrupt(format!("has a {key} that is not a list"))),
        };
        let edits = list("edits")?
            .iter()
            .map(|e| Edit::from_value(e).ok_or_else(|| corrupt("has a malformed edit")))
            .collect::<Result<Vec<_>>>()?;
        let truncations = list("truncations")?
            .iter()
            .map(|t| Truncation::from_value(t).ok_or_else(|| corrupt("has a malformed truncation")))
            .collect::<Result<Vec<_>>>()?;
        Ok(History { edits, truncations })
    }
}

/// `[start, end]`.
pub(crate) fn range((start, end): (usize, usize)) -> Value {
    Value::Array(vec![start.into(), end.into()])
}

/// Where the history `id` of the store in `context_dir` lives. Ids are 1–128 characters
/// of `[A-Za-z0-9_-]`, so they never form a path.
pub fn history_path(context_dir: &str, id: &str) -> Result<String> {
    let valid =
        !id.is_empty() && id.len() <= 128 && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if !valid {
        return Err(Error::invalid(format!("history id {id:?} must be 1-128 characters of [A-Za-z0-9_-]")));
    }
    Ok(format!("{}/window/{id}.json", context_dir.trim_end_matches('/')))
}

/// The history in the bytes of the file at `path` (`None`: there is no file), as
/// `crate::native::window::load` reads it: empty for no file, `CORRUPT_RECORD` when it does not parse.
pub fn of_file(bytes: Option<&[u8]>, path: &str) -> Result<History> {
    match bytes {
        None => Ok(History::default()),
        Some(bytes) => History::from_json(bytes).map_err(|e| e.with_path(path)),
    }
}
