//! A sync as a plan ([`SyncPlan`]): the steps [`Conversations::sync_step`] decides, run
//! where they say (the local storage, [`Place::Store`], or the remote, [`Place::Remote`])
//! by the drivers that run every plan.

use std::ops::Deref;

use super::{Conversations, Step as SyncStep, SyncReport, SyncRun};
use crate::conversation::Side;
use crate::error::{Error, Result};
use crate::plan::{Op, Outcomes, Place, Plan, Step};

/// A sync of the store `C` points at (a reference natively, an `Rc` in wasm), as a plan:
/// resolves to its report.
pub struct SyncPlan<C> {
    store: C,
    run: SyncRun,
    /// Where its last step runs.
    side: Side,
    /// What its last step asked for.
    last: Last,
}

/// What a sync's last step asked for, to read its outcomes.
enum Last {
    /// Nothing whose outcomes matter (a lock's failure comes through `lock_failed`).
    Nothing,
    /// Reads and listings, whose answers go into the run's files of a side.
    Read(Vec<Op>),
    /// Changes, in order: the first that failed fails the step.
    Change,
}

impl<C: Deref<Target = Conversations>> SyncPlan<C> {
    /// A sync of `store`, started now; `INVALID_ARGUMENT` without a remote.
    pub fn new(store: C) -> Result<Self> {
        let run = store.begin_sync()?;
        Ok(SyncPlan { store, run, side: Side::Local, last: Last::Nothing })
    }

    /// The step after the last one went as `last`.
    fn next(&mut self, last: Result<()>) -> Step<SyncReport> {
        let step = match self.store.sync_step(&mut self.run, last) {
            Ok(step) => step,
            Err(e) => return Step::Done(Err(e)),
        };
        let [local_lock, remote_lock] = self.store.lock_names();
        let lock_name = |side| if side == Side::Local { local_lock } else { remote_lock };
        match step {
            SyncStep::Read(side, needs) => {
                self.side = side;
                self.last = Last::Read(needs.clone());
                Step::Run(needs)
            }
            SyncStep::Change(side, changes) => {
                self.side = side;
                self.last = Last::Change;
                Step::Change(changes)
            }
            SyncStep::Lock(side) => {
                self.side = side;
                self.last = Last::Nothing;
                Step::Lock { name: lock_name(side), wait: true }
            }
            SyncStep::Unlock(side) => {
                self.side = side;
                self.last = Last::Nothing;
                Step::Unlock
            }
            SyncStep::Done(report) => Step::Done(Ok(report)),
        }
    }
}

impl<C: Deref<Target = Conversations>> Plan for SyncPlan<C> {
    type Output = SyncReport;

    fn step(&mut self, outcomes: Outcomes) -> Step<SyncReport> {
        let last = match std::mem::replace(&mut self.last, Last::Nothing) {
            Last::Nothing => Ok(()),
            Last::Read(asked) => {
                let files = self.run.files(self.side);
                asked.into_iter().zip(outcomes).try_for_each(|(op, outcome)| outcome.map(|o| files.put(op, o)))
            }
            Last::Change => outcomes.into_iter().find_map(|o| o.err()).map_or(Ok(()), Err),
        };
        self.next(last)
    }

    fn lock_failed(&mut self, e: Error) -> Step<SyncReport> {
        self.last = Last::Nothing;
        self.next(Err(e))
    }

    fn place(&self) -> Place {
        match self.side {
            Side::Local => Place::Store,
            Side::Remote => Place::Remote,
        }
    }
}
