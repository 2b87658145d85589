//! Flushing and closing: `flush`, `close` and its plan ([`ClosePlan`], over the steps of
//! a close: [`Closing`]).

use std::ops::Deref;
use std::task::Waker;

use super::{Job, JobPlan, Manager};
use crate::error::{Error, Result};
use crate::lifecycle::Phase;
use crate::plan::{self, Outcomes, Plan, Step};

impl Manager {
    /// Calls `waker` at the manager's next change: an operation ending, or its phase
    /// changing (what a native driver waits on between the steps of a close; the
    /// JavaScript driver is told by the steps themselves).
    pub fn wake_on_change(&self, waker: &Waker) {
        self.gate.wake_on_change(waker);
    }

    /// The first step of `flush`: its job (see [`Manager::job_step`]).
    pub fn begin_flush(&self) -> Result<Job> {
        Ok(Job::write_out(Some(self.gate.enter("flush")?)))
    }

    /// `close` in steps, its first: closed already ([`Closing::Done`]), or the manager is
    /// closing now, and the next step is [`Manager::close_when_idle`]'s. Another
    /// `close` under way makes this one wait ([`Closing::Wait`]).
    pub fn begin_close(&self) -> Closing {
        match self.gate.phase() {
            Phase::Closed => Closing::Done,
            Phase::Closing => Closing::Wait,
            Phase::Open => {
                self.gate.set(Phase::Closing);
                self.close_when_idle()
            }
        }
    }

    /// The step of a `close` once the operations in flight have ended: the write-out
    /// job (which ends with [`Manager::end_close`]), or [`Closing::Busy`] while one is left.
    ///
    /// A manager closed meanwhile is done. One close's write-out at a time is the driver's
    /// to keep: the JavaScript driver runs one `close()` of a manager at a time, and
    /// natively [`Closing::Wait`] makes a second close wait for the first.
    pub fn close_when_idle(&self) -> Closing {
        if self.gate.phase() == Phase::Closed {
            Closing::Done
        } else if self.gate.is_idle() {
            Closing::WriteOut(Job::close())
        } else {
            Closing::Busy
        }
    }

    /// The end of a `close` whose write-out gave `result`: closed, or open again (it can
    /// be retried, nothing is lost).
    pub fn end_close(&self, result: &Result<()>) {
        self.gate.set(if result.is_ok() { Phase::Closed } else { Phase::Open });
    }

    /// Whether `close` has begun or ended.
    pub fn is_closed(&self) -> bool {
        self.gate.phase() != Phase::Open
    }

    /// Fails with [`ErrorKind::Closed`](crate::ErrorKind::Closed) once `close` has begun (for operations that do
    /// no I/O but answer through a Promise).
    pub fn check_open(&self, what: &str) -> Result<()> {
        self.gate.enter(what).map(drop)
    }
}

/// Where a `close` run in steps stands ([`Manager::begin_close`]).
pub enum Closing {
    /// Closed: nothing to do.
    Done,
    /// Another `close` is under way: ask [`Manager::begin_close`] again once the
    /// operations in flight have ended.
    Wait,
    /// Operations are in flight: ask [`Manager::close_when_idle`] again once they end.
    Busy,
    /// Run this job (it ends the close).
    WriteOut(Job),
}

/// `close` as a plan over the manager `M` points at (a reference natively, an `Rc` in
/// wasm): it waits ([`Step::Wait`]) while another close is under way or operations are in
/// flight, then writes the manager out (the write-out job, which leaves it closed, or open
/// again if it fails). Resolves to whether this close closed the manager (`false`: it was
/// closed already, by another).
pub struct ClosePlan<M> {
    manager: M,
    at: CloseAt<M>,
}

/// Where a [`ClosePlan`] is.
enum CloseAt<M> {
    /// Beginning (again, once another close has ended).
    Begin,
    /// Closing, waiting for the operations in flight to end.
    Idle,
    /// Writing the manager out.
    WriteOut(JobPlan<M>),
    /// Finished.
    Over,
}

impl<M: Deref<Target = Manager> + Clone> ClosePlan<M> {
    /// A close of `manager`.
    pub fn new(manager: M) -> Self {
        ClosePlan { manager, at: CloseAt::Begin }
    }

    /// The write-out's step `step`, passed through until it is done.
    fn writing_out(&mut self, job: JobPlan<M>, step: Step<Vec<String>>) -> Step<bool> {
        match step.finished() {
            Err(step) => {
                self.at = CloseAt::WriteOut(job);
                step
            }
            Ok(result) => Step::Done(result.map(|_| true)),
        }
    }
}

impl<M: Deref<Target = Manager> + Clone> Plan for ClosePlan<M> {
    type Output = bool;

    fn step(&mut self, outcomes: Outcomes) -> Step<bool> {
        let closing = match std::mem::replace(&mut self.at, CloseAt::Over) {
            CloseAt::Begin => self.manager.begin_close(),
            CloseAt::Idle => self.manager.close_when_idle(),
            CloseAt::WriteOut(mut job) => {
                let step = job.step(outcomes);
                return self.writing_out(job, step);
            }
            CloseAt::Over => return Step::Done(Err(plan::stepped_after_done())),
        };
        match closing {
            Closing::Done => Step::Done(Ok(false)),
            Closing::Wait => {
                self.at = CloseAt::Begin;
                Step::Wait
            }
            Closing::Busy => {
                self.at = CloseAt::Idle;
                Step::Wait
            }
            Closing::WriteOut(job) => {
                let mut job = JobPlan { manager: self.manager.clone(), job };
                let step = job.step(Vec::new());
                self.writing_out(job, step)
            }
        }
    }

    fn lock_failed(&mut self, e: Error) -> Step<bool> {
        match std::mem::replace(&mut self.at, CloseAt::Over) {
            CloseAt::WriteOut(mut job) => {
                let step = job.lock_failed(e);
                self.writing_out(job, step)
            }
            _ => Step::Done(Err(e)),
        }
    }

    fn wake_on_change(&self, waker: &Waker) -> bool {
        self.manager.wake_on_change(waker);
        true
    }
}
