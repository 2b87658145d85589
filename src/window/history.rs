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

use serde::{Deserialize, Serialize};

use super::Edit;
use crate::error::{Error, ErrorKind, Result};
use crate::storage::{Storage, WriteOptions};

/// Version of the history file.
pub const HISTORY_VERSION: u32 = 1;

/// A range of messages removed at `ts`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Truncation {
    /// Milliseconds since the epoch.
    pub ts: i64,
    /// Inclusive message indices.
    pub range: (usize, usize),
}

/// Timestamped edits and truncations of one conversation.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct History {
    /// Every edit, oldest first.
    #[serde(default)]
    pub edits: Vec<Edit>,
    /// Every truncation, oldest first; each one contains the previous.
    #[serde(default)]
    pub truncations: Vec<Truncation>,
}

#[derive(Serialize)]
struct FileOut<'a> {
    v: u32,
    #[serde(flatten)]
    history: &'a History,
}

#[derive(Deserialize)]
struct FileIn {
    v: u32,
    #[serde(flatten)]
    history: History,
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

    /// The file's bytes.
    pub fn to_json(&self) -> Vec<u8> {
        // Serialising plain structs of strings and numbers cannot fail.
        serde_json::to_vec(&FileOut { v: HISTORY_VERSION, history: self }).unwrap_or_default()
    }

    /// Parses a history file.
    pub fn from_json(bytes: &[u8]) -> Result<History> {
        let file: FileIn = serde_json::from_slice(bytes)
            .map_err(|e| Error::new(ErrorKind::CorruptRecord, format!("the window history does not parse: {e}")))?;
        if file.v != HISTORY_VERSION {
            return Err(Error::new(
                ErrorKind::CorruptRecord,
                format!("the window history has version {}, expected {HISTORY_VERSION}", file.v),
            ));
        }
        Ok(file.history)
    }
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

/// Reads the history at `path`: empty when the file does not exist, `CORRUPT_RECORD` when
/// it does not parse.
pub async fn load<S: Storage>(storage: &S, path: &str) -> Result<History> {
    match storage.read(path).await? {
        None => Ok(History::default()),
        Some(bytes) => History::from_json(&bytes).map_err(|e| e.with_path(path)),
    }
}

/// Writes the history to `path`, replacing the file whole.
pub async fn save<S: Storage>(storage: &S, path: &str, history: &History) -> Result<()> {
    storage.write(path, &history.to_json(), WriteOptions::default()).await
}
