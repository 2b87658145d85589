//! The edit history (the seed's context history and `ContextHistoryStorage`): every
//! edit with its timestamp, and the ranges removed, in one JSON file per conversation
//! at `{contextDir}/window/{id}.json`, replaced whole (atomically, through
//! `Storage::write`) on every save.
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
//!
//! Loading and writing the file are [plans](crate::plan) ([`load`], [`save`]): one op
//! each, run natively by the `toolctx` crate's runner (`toolctx::window_history`) and in wasm by
//! the JavaScript driver (`ContextHistory` in `crates/wasm/src/window.rs`).

use serde_json::Value;

use super::json::object;
use super::Edit;
use crate::error::{Error, ErrorKind, Result};
use crate::plan::{self, Op};

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

/// `[start, end]`, as the history file and the wasm boundary write a range.
#[doc(hidden)] // the wasm crate's, not part of the API
pub fn range((start, end): (usize, usize)) -> Value {
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
/// [`load`] reads it: empty for no file, `CORRUPT_RECORD` when it does not parse.
pub fn of_file(bytes: Option<&[u8]>, path: &str) -> Result<History> {
    match bytes {
        None => Ok(History::default()),
        Some(bytes) => History::from_json(bytes).map_err(|e| e.with_path(path)),
    }
}

/// What [`load`] gave.
#[derive(Debug)]
pub struct Loaded {
    /// The history the file holds (empty: no file, or a corrupt one discarded).
    pub history: History,
    /// Why the file was discarded (`discard_corrupt`, and it did not parse).
    pub discarded: Option<Error>,
}

/// Loading the history at `path` as a plan: one read of the file. No file: an empty
/// history. A file that does not parse: `CORRUPT_RECORD` naming it, unless
/// `discard_corrupt`, then an empty history and the error in [`Loaded::discarded`]. A
/// read that fails fails the load, whatever `discard_corrupt` says.
pub fn load(path: &str, discard_corrupt: bool) -> impl plan::Plan<Output = Loaded> {
    let path = path.to_owned();
    plan::batch(vec![Op::Read(path.clone())], move |outcomes| {
        let bytes = plan::bytes(plan::only(outcomes))?;
        match of_file(bytes.as_deref(), &path) {
            Ok(history) => Ok(Loaded { history, discarded: None }),
            Err(e) if discard_corrupt => Ok(Loaded { history: History::default(), discarded: Some(e) }),
            Err(e) => Err(e),
        }
    })
}

/// Writing `history` to `path` as a plan: one write replacing the file whole (atomically
/// where the storage allows), of what the history holds when the plan is made.
pub fn save(path: &str, history: &History) -> impl plan::Plan<Output = ()> {
    let write = Op::Write { path: path.to_owned(), bytes: history.to_json(), exclusive: false };
    plan::batch(vec![write], |outcomes| plan::only(outcomes).map(drop))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{Outcome, Plan, Step};
    use crate::window::EditKind;

    const PATH: &str = "/ctx/window/c.json";

    fn sample() -> History {
        let edit = Edit { ts: 7, message: 3, block: 1, kind: EditKind::ReadFile, content: "[NOTE] gone".into() };
        History { edits: vec![edit], truncations: vec![Truncation { ts: 9, range: (2, 4) }] }
    }

    /// The ops of `plan`'s first step (a plan of one `Run`).
    fn ops<P: Plan>(plan: &mut P) -> Vec<Op> {
        match plan.step(Vec::new()) {
            Step::Run(ops) => ops,
            _ => panic!("the first step is not a run"),
        }
    }

    /// The result of `plan` given `outcome` for its one op.
    fn result<P: Plan>(mut plan: P, outcome: Result<Outcome>) -> Result<P::Output> {
        assert_eq!(ops(&mut plan).len(), 1);
        match plan.step(vec![outcome]) {
            Step::Done(result) => result,
            _ => panic!("a plan of one op did not finish after it"),
        }
    }

    #[test]
    fn a_load_reads_the_file_once_and_gives_what_it_holds_or_an_empty_history() {
        assert_eq!(ops(&mut load(PATH, false)), [Op::Read(PATH.into())]);
        let loaded = result(load(PATH, false), Ok(Outcome::Read(Some(sample().to_json())))).unwrap();
        assert_eq!(loaded.history, sample());
        assert!(loaded.discarded.is_none());
        let missing = result(load(PATH, false), Ok(Outcome::Read(None))).unwrap();
        assert_eq!(missing.history, History::default());
        assert!(missing.discarded.is_none());
    }

    #[test]
    fn a_corrupt_file_fails_the_load_naming_it_unless_discarded() {
        let corrupt = || Ok(Outcome::Read(Some(b"{not json".to_vec())));
        let err = result(load(PATH, false), corrupt()).unwrap_err();
        assert_eq!((err.kind(), err.path()), (ErrorKind::CorruptRecord, Some(PATH)), "{err}");
        let loaded = result(load(PATH, true), corrupt()).unwrap();
        assert_eq!(loaded.history, History::default());
        let why = loaded.discarded.expect("the discarded file's error");
        assert_eq!((why.kind(), why.path()), (ErrorKind::CorruptRecord, Some(PATH)), "{why}");
    }

    #[test]
    fn a_failed_read_fails_the_load_even_when_corrupt_files_are_discarded() {
        let failed = || Err(Error::new(ErrorKind::Storage, "storage read failed: disk gone").with_path(PATH));
        for discard in [false, true] {
            let err = result(load(PATH, discard), failed()).unwrap_err();
            assert_eq!((err.kind(), err.path()), (ErrorKind::Storage, Some(PATH)), "{err}");
        }
    }

    #[test]
    fn a_save_writes_the_history_as_it_was_when_the_plan_was_made_replacing_the_file() {
        let mut history = sample();
        let mut plan = save(PATH, &history);
        history.edits.clear();
        let ops = ops(&mut plan);
        assert_eq!(ops, [Op::Write { path: PATH.into(), bytes: sample().to_json(), exclusive: false }]);
        let Op::Write { bytes, .. } = &ops[0] else { unreachable!() };
        assert_eq!(History::from_json(bytes).unwrap(), sample());
        assert!(matches!(plan.step(vec![Ok(Outcome::Done)]), Step::Done(Ok(()))));
        let full = Err(Error::new(ErrorKind::QuotaExceeded, "storage write failed: full").with_path(PATH));
        let err = result(save(PATH, &sample()), full).unwrap_err();
        assert_eq!((err.kind(), err.path()), (ErrorKind::QuotaExceeded, Some(PATH)), "{err}");
    }
}
