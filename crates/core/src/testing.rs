//! (Tests) a small synchronous driver for the core's own unit tests: plans (the
//! manager's, the conversation store's operations) run to their end over files in
//! memory, as the `toolctx` crate's runner runs them over a `Storage` (the integration
//! tests in crates/native/tests use that one). The core's unit tests cannot depend on
//! `toolctx`: it would link a second copy of this crate's types. One storage (no remote),
//! no held bytes (`WriteParts`), one lock at a time, taken at once (nothing else runs); a
//! test may have what it did logged and ops failed on purpose.

use std::cell::RefCell;
use std::collections::BTreeMap;

use crate::error::{Error, ErrorKind, Result};
use crate::plan::{Op, Outcome, Plan, RecordOutcome, Step};
use crate::record::parse_record;
use crate::store::{JobPlan, Manager, SaveInput, SaveRecord};

/// Answers an error for the ops a test fails instead of running them.
pub(crate) type Failing = Box<dyn FnMut(&Op) -> Option<Error>>;

/// Files in memory; `discard` keeps none (every write succeeds, every read misses), as a
/// bench's store whose records go to a disk elsewhere.
#[derive(Default)]
pub(crate) struct TestStorage {
    /// The files, by path.
    pub(crate) files: RefCell<BTreeMap<String, Vec<u8>>>,
    discard: bool,
    /// What was done, step by step, when `logging` (see [`TestStorage::log`]).
    logging: bool,
    log: RefCell<Vec<String>>,
    /// Fails the ops it answers an error for.
    pub(crate) fail: RefCell<Option<Failing>>,
}

impl TestStorage {
    /// Files that keep nothing.
    pub(crate) fn discard() -> Self {
        TestStorage { discard: true, ..TestStorage::default() }
    }

    /// Files that log what is done: `lock <name>` (`… (not waiting)` when asked so),
    /// `unlock` (also for a plan that ends holding its lock), each `run` as its ops
    /// (`method path`) joined by `, `, and each op of a `change` as it runs.
    pub(crate) fn logging() -> Self {
        TestStorage { logging: true, ..TestStorage::default() }
    }

    /// The log so far, and a fresh one from now on.
    pub(crate) fn take_log(&self) -> Vec<String> {
        std::mem::take(&mut self.log.borrow_mut())
    }

    fn note(&self, line: impl FnOnce() -> String) {
        if self.logging {
            self.log.borrow_mut().push(line());
        }
    }

    /// Runs `plan` to its end (its lock is taken at once: nothing else runs).
    pub(crate) fn run<P: Plan>(&self, mut plan: P) -> Result<P::Output> {
        let (mut kept, mut held) = (0u32, false);
        let mut step = plan.step(Vec::new());
        loop {
            step = match step {
                Step::Run(ops) => {
                    self.note(|| {
                        ops.iter().map(|op| format!("{} {}", op.method(), op.path())).collect::<Vec<_>>().join(", ")
                    });
                    plan.step(ops.iter().map(|op| self.perform(op, &mut kept)).collect())
                }
                // In order, up to the first that fails; each logged as it runs.
                Step::Change(ops) => {
                    let mut outcomes = Vec::new();
                    for op in &ops {
                        self.note(|| format!("{} {}", op.method(), op.path()));
                        let outcome = self.perform(op, &mut kept);
                        let failed = outcome.is_err();
                        outcomes.push(outcome);
                        if failed {
                            break;
                        }
                    }
                    plan.step(outcomes)
                }
                Step::Lock { .. } if held => {
                    plan.lock_failed(Error::new(ErrorKind::Internal, "a plan took a lock it holds"))
                }
                Step::Lock { name, wait } => {
                    held = true;
                    self.note(|| if wait { format!("lock {name}") } else { format!("lock {name} (not waiting)") });
                    plan.step(Vec::new())
                }
                Step::Unlock if held => {
                    held = false;
                    self.note(|| "unlock".into());
                    plan.step(Vec::new())
                }
                Step::Unlock => {
                    plan.lock_failed(Error::new(ErrorKind::Internal, "a plan released a lock it did not hold"))
                }
                Step::Wait => return Err(Error::new(ErrorKind::Internal, "a test plan waited")),
                Step::Done(result) => {
                    if held {
                        self.note(|| "unlock".into());
                    }
                    return result;
                }
            }
        }
    }

    fn perform(&self, op: &Op, kept: &mut u32) -> Result<Outcome> {
        if let Some(e) = self.fail.borrow_mut().as_mut().and_then(|fail| fail(op)) {
            return Err(e);
        }
        let mut files = self.files.borrow_mut();
        let mut write = |path: &str, bytes: Vec<u8>, exclusive: bool| {
            if exclusive && files.contains_key(path) {
                return Err(Error::new(ErrorKind::AlreadyExists, format!("{path} exists")).with_path(path));
            }
            if !self.discard {
                files.insert(path.to_owned(), bytes);
            }
            Ok(Outcome::Done)
        };
        match op {
            Op::Read(path) => Ok(Outcome::Read(files.get(path).cloned())),
            Op::ReadRange { path, offset, len } => Ok(Outcome::Read(files.get(path).map(|bytes| {
                let start = (*offset as usize).min(bytes.len());
                bytes[start..(start + *len as usize).min(bytes.len())].to_vec()
            }))),
            Op::ReadRecord(path) => Ok(Outcome::Record(match files.get(path) {
                None => RecordOutcome::Missing,
                Some(bytes) => match parse_record(bytes) {
                    Ok(_) => {
                        *kept += 1;
                        RecordOutcome::Kept { at: *kept - 1, size: bytes.len() }
                    }
                    Err(e) => RecordOutcome::NotARecord(e.to_string()),
                },
            })),
            Op::KeepRecord { text, .. } => {
                *kept += 1;
                Ok(Outcome::Record(RecordOutcome::Kept { at: *kept - 1, size: text.len() }))
            }
            Op::List(dir) => {
                let prefix = format!("{}/", dir.trim_end_matches('/'));
                let mut names: Vec<String> = files
                    .keys()
                    .filter_map(|p| p.strip_prefix(&prefix))
                    .map(|rest| match rest.split_once('/') {
                        Some((folder, _)) => format!("{folder}/"),
                        None => rest.to_owned(),
                    })
                    .collect();
                names.dedup();
                Ok(Outcome::List(names))
            }
            Op::Write { path, bytes, exclusive } => write(path, bytes.clone(), *exclusive),
            Op::WriteParts { .. } => Err(Error::new(ErrorKind::Internal, "no bytes held in a test")),
            Op::Append { path, bytes } => {
                if !self.discard {
                    files.entry(path.clone()).or_default().extend_from_slice(bytes);
                }
                Ok(Outcome::Done)
            }
            Op::Remove(path) => {
                files.remove(path);
                Ok(Outcome::Done)
            }
            Op::RemoveDir(_) => Ok(Outcome::Done),
        }
    }

    /// Saves `input` as the `toolctx` crate's `ContextManager::save` does: the save's
    /// plan, then the index segment it made due.
    pub(crate) fn save(&self, manager: &Manager, input: SaveInput<'_>) -> Result<String> {
        let save = SaveRecord::new(manager, manager.begin_save(input)?);
        let filepath = match save.done() {
            Some(filepath) => filepath.to_owned(),
            None => self.run(save)?,
        };
        if let Some(job) = manager.begin_persist_index() {
            let _ = self.run(JobPlan { manager, job });
        }
        Ok(filepath)
    }
}
