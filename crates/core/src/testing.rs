//! (Tests) a small synchronous driver for the core's own unit tests of the manager's
//! plans: they run to their end over files in memory, as the `toolctx` crate's runner
//! runs them over a `Storage` (the integration tests in crates/native/tests use that
//! one). The core's unit tests cannot depend on `toolctx`: it would link a second copy of
//! this crate's types. It runs the manager's plans only: one storage (no remote), no
//! held bytes (`WriteParts`), locks taken at once (nothing else runs).

use std::cell::RefCell;
use std::collections::BTreeMap;

use crate::error::{Error, ErrorKind, Result};
use crate::plan::{Op, Outcome, Plan, RecordOutcome, Step};
use crate::record::parse_record;
use crate::store::{JobPlan, Manager, SaveInput, SaveRecord};

/// Files in memory; `discard` keeps none (every write succeeds, every read misses), as a
/// bench's store whose records go to a disk elsewhere.
#[derive(Default)]
pub(crate) struct TestStorage {
    files: RefCell<BTreeMap<String, Vec<u8>>>,
    discard: bool,
}

impl TestStorage {
    /// Files that keep nothing.
    pub(crate) fn discard() -> Self {
        TestStorage { discard: true, ..TestStorage::default() }
    }

    /// Runs `plan` to its end (its locks are taken at once: nothing else runs).
    pub(crate) fn run<P: Plan>(&self, mut plan: P) -> Result<P::Output> {
        let (mut kept, mut held) = (0u32, false);
        let mut step = plan.step(Vec::new());
        loop {
            step = match step {
                Step::Run(ops) => plan.step(ops.iter().map(|op| self.perform(op, &mut kept)).collect()),
                Step::Change(ops) => {
                    let mut outcomes = Vec::new();
                    for op in &ops {
                        let outcome = self.perform(op, &mut kept);
                        let failed = outcome.is_err();
                        outcomes.push(outcome);
                        if failed {
                            break;
                        }
                    }
                    plan.step(outcomes)
                }
                Step::Lock { .. } => {
                    held = true;
                    plan.step(Vec::new())
                }
                Step::Unlock if held => {
                    held = false;
                    plan.step(Vec::new())
                }
                Step::Unlock => {
                    plan.lock_failed(Error::new(ErrorKind::Internal, "a plan released a lock it did not hold"))
                }
                Step::Wait => return Err(Error::new(ErrorKind::Internal, "a test plan waited")),
                Step::Done(result) => return result,
            }
        }
    }

    fn perform(&self, op: &Op, kept: &mut u32) -> Result<Outcome> {
        let mut files = self.files.borrow_mut();
        let mut write = |path: &str, bytes: Vec<u8>, exclusive: bool| {
            if exclusive && files.contains_key(path) {
                return Err(Error::new(ErrorKind::AlreadyExists, format!("{path} exists")));
            }
            if !self.discard {
                files.insert(path.to_owned(), bytes);
            }
            Ok(Outcome::Done)
        };
        match op {
            Op::Read(path) => Ok(Outcome::Read(files.get(path).cloned())),
            Op::ReadRecord(path) => Ok(Outcome::Record(match files.get(path) {
                None => RecordOutcome::Missing,
                Some(bytes) => match parse_record(bytes) {
                    Ok(_) => {
                        *kept += 1;
                        RecordOutcome::Kept(*kept - 1)
                    }
                    Err(e) => RecordOutcome::NotARecord(e.to_string()),
                },
            })),
            Op::KeepRecord { .. } => {
                *kept += 1;
                Ok(Outcome::Record(RecordOutcome::Kept(*kept - 1)))
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
