//! `loadContexts` as a plan (SPEC §0, §4): the core decides what each path asked is, the
//! driver reads and keeps the records, and the core words why a path was skipped.
//!
//! [`LoadRecords`] asks, in one batch and in the order asked, an [`Op::ReadRecord`] for
//! each record in storage and an [`Op::KeepRecord`] for each held in memory; a path
//! outside the store is skipped before. The driver checks each record is whole and keeps
//! it (in wasm, JavaScript parses what it read: the bytes never cross), answering the
//! number it keeps it under and its size; the plan gives those numbers in order, and tells `onDebug`
//! of each path skipped, in the words of the original: `Failed to load <path as asked>:
//! <why>`. The load holds the manager's gate (`close` waits for it) until it ends.
//!
//! A record read whose size is not its pointer's was rewritten under its name by another
//! program since it was indexed (its pointer and terms came from an index segment, or
//! another process saved it): the plan reads it again, into the core this once, which
//! indexes it as it is now (`Manager::changed_under_name`), before the load ends. So a
//! record is ranked by what it holds once it was read, and the next segment holds it so.
//! A rewrite that keeps the size is not seen: the host interface gives no modification
//! marker (SPEC §4 asks for one; a listing with sizes and markers is left to do).

use std::fmt;
use std::ops::Deref;
use std::rc::Rc;

use super::Manager;
use crate::error::{Error, ErrorKind, Result};
use crate::lifecycle::Pass;
use crate::paths;
use crate::plan::{Op, Outcome, Outcomes, Plan, RecordOutcome, Step};

/// A load in flight: it holds the manager's gate (`close` waits for it) until dropped.
pub struct Loading {
    _pass: Pass,
}

/// What a load does for one path as asked ([`Manager::load_step`]).
pub enum LoadStep {
    /// A record held in memory: its path (confined to the context dir) and bytes.
    Held(String, Rc<[u8]>),
    /// Read the record at this path (the one asked, confined to the context dir).
    Read(String),
    /// Skipped: the `onDebug` warning is given.
    Skipped,
}

/// Why a load skips a path: the reason of `Failed to load <path>: <why>`.
pub enum NotLoaded {
    /// The path leaves the context dir: never read.
    Outside,
    /// The storage has no such file.
    Missing,
    /// The storage's read failed.
    Unreadable(Error),
    /// What was read is not a whole record: why.
    NotARecord(String),
}

impl fmt::Display for NotLoaded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NotLoaded::Outside => f.write_str("outside the context dir"),
            NotLoaded::Missing => f.write_str("the record is missing"),
            NotLoaded::Unreadable(e) => write!(f, "the storage could not read it ({e})"),
            NotLoaded::NotARecord(why) => write!(f, "not a whole record ({why})"),
        }
    }
}

impl Manager {
    /// The first step of a load: `CLOSED` once `close` has begun.
    pub fn begin_load(&self) -> Result<Loading> {
        Ok(Loading { _pass: self.gate.enter("loadContexts")? })
    }

    /// What a load does for the path `asked` (see [`LoadStep`]).
    pub fn load_step(&self, asked: &str) -> LoadStep {
        let Some(path) = paths::confine(&self.dir, asked) else {
            self.load_skipped(asked, &NotLoaded::Outside);
            return LoadStep::Skipped;
        };
        match self.state.borrow().held.get(&path) {
            Some(bytes) => LoadStep::Held(path, bytes.clone()),
            None => LoadStep::Read(path),
        }
    }

    /// Tells `onDebug` that the path `asked` is skipped, and why.
    pub fn load_skipped(&self, asked: &str, why: &NotLoaded) {
        self.debug(format!("Failed to load {asked}: {why}"), Some(asked));
    }
}

/// `loadContexts` of the manager `M` points at (a reference natively, an `Rc` in wasm), as a
/// plan: the numbers the driver keeps the records under, in the order asked (see the
/// module docs).
pub struct LoadRecords<M> {
    manager: M,
    /// The paths asked, until the first step.
    asked: Option<Vec<String>>,
    /// The path asked of each op of the batch, for the warnings, and the path read (a
    /// record in storage).
    asked_of_op: Vec<(String, Option<String>)>,
    /// The numbers kept, once the batch ran and records changed under their name are read
    /// again ([`LoadRecords::changed`]).
    kept: Option<Vec<u32>>,
    /// The records read again, in that read's order.
    changed: Vec<String>,
    _loading: Loading,
}

impl<M: Deref<Target = Manager>> LoadRecords<M> {
    /// A load of `asked`; `CLOSED` once `close` has begun.
    pub fn new(manager: M, asked: Vec<String>) -> Result<Self> {
        let loading = manager.begin_load()?;
        let (asked_of_op, kept, changed) = (Vec::new(), None, Vec::new());
        Ok(LoadRecords { manager, asked: Some(asked), asked_of_op, kept, changed, _loading: loading })
    }
}

impl<M: Deref<Target = Manager>> Plan for LoadRecords<M> {
    type Output = Vec<u32>;

    fn step(&mut self, outcomes: Outcomes) -> Step<Vec<u32>> {
        if let Some(asked) = self.asked.take() {
            let mut ops = Vec::with_capacity(asked.len());
            for path_asked in asked {
                let (op, read) = match self.manager.load_step(&path_asked) {
                    LoadStep::Read(path) => (Op::ReadRecord(path.clone()), Some(path)),
                    LoadStep::Held(path, bytes) => match std::str::from_utf8(&bytes) {
                        Ok(text) => (Op::KeepRecord { path, text: text.to_owned() }, None),
                        Err(_) => {
                            let why = NotLoaded::NotARecord("not UTF-8 JSON text".to_owned());
                            self.manager.load_skipped(&path_asked, &why);
                            continue;
                        }
                    },
                    LoadStep::Skipped => continue,
                };
                ops.push(op);
                self.asked_of_op.push((path_asked, read));
            }
            if !ops.is_empty() {
                return Step::Run(ops);
            }
        }
        if let Some(kept) = self.kept.take() {
            return self.read_again(outcomes, kept);
        }
        if outcomes.len() != self.asked_of_op.len() {
            return Step::Done(Err(driver_bug("the driver answered another number of outcomes than ops")));
        }
        let mut kept = Vec::with_capacity(outcomes.len());
        for ((asked, read), outcome) in std::mem::take(&mut self.asked_of_op).iter().zip(outcomes) {
            let why = match outcome {
                Ok(Outcome::Record(RecordOutcome::Kept { at, size })) => {
                    kept.push(at);
                    if let Some(path) = read.as_ref().filter(|p| self.manager.size_changed(p, size)) {
                        self.changed.push(path.clone());
                    }
                    continue;
                }
                Ok(Outcome::Record(RecordOutcome::Missing)) => NotLoaded::Missing,
                Ok(Outcome::Record(RecordOutcome::NotARecord(why))) => NotLoaded::NotARecord(why),
                Ok(_) => return Step::Done(Err(driver_bug("the driver answered another outcome than a record's"))),
                Err(e) => NotLoaded::Unreadable(e),
            };
            self.manager.load_skipped(asked, &why);
        }
        if self.changed.is_empty() {
            return Step::Done(Ok(kept));
        }
        self.kept = Some(kept);
        Step::Run(self.changed.iter().map(|p| Op::Read(p.clone())).collect())
    }
}

impl<M: Deref<Target = Manager>> LoadRecords<M> {
    /// The records changed under their name, read again (`outcomes`): indexed as they are
    /// now; then the load's numbers.
    fn read_again(&mut self, outcomes: Outcomes, kept: Vec<u32>) -> Step<Vec<u32>> {
        if outcomes.len() != self.changed.len() {
            return Step::Done(Err(driver_bug("the driver answered another number of outcomes than ops")));
        }
        for (path, outcome) in std::mem::take(&mut self.changed).iter().zip(outcomes) {
            match crate::plan::bytes(outcome) {
                Ok(Some(bytes)) => self.manager.changed_under_name(path, &bytes),
                Ok(None) => {}
                Err(e) => self
                    .manager
                    .debug(format!("a record changed under its name could not be read again: {e}"), Some(path)),
            }
        }
        Step::Done(Ok(kept))
    }
}

/// An answer no driver should give.
fn driver_bug(what: &str) -> Error {
    Error::new(ErrorKind::Internal, what)
}
