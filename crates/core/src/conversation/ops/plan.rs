//! [`OperationPlan`]: an operation of the store as a plan (see `ops.rs`'s docs): the
//! writers' lock when it writes, its reads, its changes in one `change` step, its answer.

use super::{Answer, Conversations, Decision, Operation, Request};
use crate::conversation::Side;
use crate::error::{Error, ErrorKind, Result};
use crate::plan::{stepped_after_done, Op, Outcomes, Plan, Step};

/// An operation of a store as a plan over its local storage (see `ops.rs`):
/// `store` is the store's state ([`Conversations`]: `&Conversations` natively, an `Rc`
/// of it in wasm). It answers an [`Answer`].
pub struct OperationPlan<C> {
    store: C,
    op: Operation,
    stage: Stage,
}

/// Where an operation is: what its last step asked for.
enum Stage {
    Start,
    /// The writers' lock.
    Locking,
    /// These reads and listings.
    Reading(Vec<Op>),
    /// The changes of the decision from the one at `from` on, in order.
    Changing {
        decision: Box<Decision>,
        changes: Vec<Op>,
        from: usize,
    },
    Over,
}

impl<C: std::ops::Deref<Target = Conversations>> OperationPlan<C> {
    /// The operation of `request` on the store `store`, started now.
    pub fn new(store: C, request: Request) -> Self {
        let op = store.begin(request);
        OperationPlan { store, op, stage: Stage::Start }
    }

    /// Whether it writes (and so runs under the writers' lock, as the store's only writer).
    pub fn exclusive(&self) -> bool {
        self.op.request.exclusive()
    }

    fn next(&mut self, outcomes: Outcomes) -> Result<Step<Answer>> {
        match std::mem::replace(&mut self.stage, Stage::Over) {
            Stage::Start if self.exclusive() => {
                self.stage = Stage::Locking;
                Ok(Step::Lock { name: self.store.layout(Side::Local).lock_name(), wait: true })
            }
            Stage::Start | Stage::Locking => self.read(),
            Stage::Reading(asked) => {
                if outcomes.len() != asked.len() {
                    return Err(Error::new(ErrorKind::Internal, "a plan got another number of outcomes than ops"));
                }
                for (need, outcome) in asked.into_iter().zip(outcomes) {
                    self.op.files.put(need, outcome?);
                }
                self.read()
            }
            Stage::Changing { decision, changes, from } => {
                let run = outcomes.len();
                match outcomes.into_iter().enumerate().find_map(|(i, o)| o.err().map(|e| (i, e))) {
                    None if run == changes.len() => Ok(Step::Done(Ok(self.store.finish(*decision)))),
                    None => Err(Error::new(ErrorKind::Internal, "a plan got fewer outcomes than changes")),
                    // The changes before it were made; a taken name is drawn again and
                    // the operation decides once more from there.
                    Some((i, e)) => {
                        let drawn = self.store.drawn_by(&changes[i]);
                        self.store.failed(&mut self.op, from + i, drawn, e)?;
                        self.decide()
                    }
                }
            }
            Stage::Over => Err(stepped_after_done()),
        }
    }

    /// The reads it still needs; once it has all, its changes.
    fn read(&mut self) -> Result<Step<Answer>> {
        let needs = self.store.needs(&mut self.op);
        if needs.is_empty() {
            return self.decide();
        }
        self.stage = Stage::Reading(needs.clone());
        Ok(Step::Run(needs))
    }

    /// Its decision, its changes run in order from the first not made yet, up to the
    /// first that fails; with none left, the answer.
    fn decide(&mut self) -> Result<Step<Answer>> {
        let mut decision = self.store.decide(&mut self.op)?;
        let mut changes = std::mem::take(&mut decision.actions);
        let from = self.op.done.min(changes.len());
        changes.drain(..from);
        if changes.is_empty() {
            return Ok(Step::Done(Ok(self.store.finish(decision))));
        }
        self.stage = Stage::Changing { decision: Box::new(decision), changes: changes.clone(), from };
        Ok(Step::Change(changes))
    }
}

impl<C: std::ops::Deref<Target = Conversations>> Plan for OperationPlan<C> {
    type Output = Answer;

    fn step(&mut self, outcomes: Outcomes) -> Step<Answer> {
        self.next(outcomes).unwrap_or_else(|e| Step::Done(Err(e)))
    }
}
