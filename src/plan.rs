//! Plans: an operation that needs host I/O, written as synchronous steps (the sans-IO
//! core of issue 12). The core decides; a driver does the I/O.
//!
//! A plan never awaits. [`Plan::step`] gets the outcomes of the host operations it asked
//! for last, in the order it asked (nothing on its first step, and nothing after taking
//! or releasing a lock), and answers what comes next ([`Step`]):
//!
//! - [`Step::Run`]: run these [`Op`]s (all at once, in any order) and step with their
//!   outcomes; a failed op is an `Err` outcome, typed as the storage types it;
//! - [`Step::Lock`] / [`Step::Unlock`]: take the storage's named lock (what
//!   [`Storage::locked`] runs its work under), or release it; a plan holds one lock at a
//!   time. A plan that finishes holding it has it released first, then finishes. If the
//!   lock fails (taking or releasing it), the plan hears it through
//!   [`Plan::lock_failed`] (by default, it fails with that error);
//! - [`Step::Done`]: the result.
//!
//! Two drivers run the same plans: [`run`] here, for native Rust over any [`Storage`]
//! (it awaits the storage, nothing else), and in wasm `src/wasm/plans.rs`, which hands
//! each step to the JavaScript driver (`pkg-template/driver.js`, `plan`): JavaScript
//! calls the host and hands the outcomes back. So the logic of a store-wide operation
//! exists once, and no Rust future runs in the wasm module for it.
//!
//! Writing a plan: a struct that knows where it is, and a `step` that matches on it. A
//! plan may run another one inside it: it holds the sub-plan, passes its steps through
//! (see [`Step::finished`]) and goes on when it is done. [`Plan::map`] turns a plan's
//! result into another.

use crate::error::{Error, ErrorKind, Result};
use crate::storage::{Storage, WriteOptions};
use futures_util::lock::Mutex;

/// A host operation a plan asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    /// [`Storage::read`]: [`Outcome::Read`].
    Read(String),
    /// [`Storage::list`]: [`Outcome::List`].
    List(String),
    /// [`Storage::write`]: [`Outcome::Done`].
    Write {
        /// Where.
        path: String,
        /// The whole file.
        bytes: Vec<u8>,
        /// Fail with `AlreadyExists` rather than replace.
        exclusive: bool,
    },
    /// [`Storage::remove`]: [`Outcome::Done`].
    Remove(String),
    /// [`Storage::remove_dir`]: [`Outcome::Done`].
    RemoveDir(String),
}

/// What an [`Op`] gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// A read: the bytes, `None` for a missing file.
    Read(Option<Vec<u8>>),
    /// A list: the names of the children, folders ending in `/`.
    List(Vec<String>),
    /// A write, remove or folder removal.
    Done,
}

/// The outcomes of the ops of one [`Step::Run`], in the order asked.
pub type Outcomes = Vec<Result<Outcome>>;

/// What a plan does next.
#[derive(Debug)]
pub enum Step<T> {
    /// Run these ops, then step with their outcomes.
    Run(Vec<Op>),
    /// Take the named lock, then step (with no outcomes).
    Lock(String),
    /// Release the lock, then step (with no outcomes).
    Unlock,
    /// Finished.
    Done(Result<T>),
}

impl<T> Step<T> {
    /// For a plan running a sub-plan: the sub-plan's result once it is done, else the
    /// step to pass through (the I/O it asks for is the caller's too).
    pub fn finished<U>(self) -> std::result::Result<Result<T>, Step<U>> {
        match self {
            Step::Done(result) => Ok(result),
            Step::Run(ops) => Err(Step::Run(ops)),
            Step::Lock(name) => Err(Step::Lock(name)),
            Step::Unlock => Err(Step::Unlock),
        }
    }
}

/// An operation as synchronous steps (see the module docs).
pub trait Plan {
    /// What it gives when done.
    type Output;

    /// The next step, given the outcomes of the last one's ops.
    fn step(&mut self, outcomes: Outcomes) -> Step<Self::Output>;

    /// The next step once the lock it asked for, or its release, failed with `e`.
    fn lock_failed(&mut self, e: Error) -> Step<Self::Output> {
        Step::Done(Err(e))
    }

    /// This plan, its result passed through `f`.
    fn map<T, F: FnOnce(Self::Output) -> Result<T>>(self, f: F) -> Map<Self, F>
    where
        Self: Sized,
    {
        Map { plan: self, f: Some(f) }
    }
}

/// A plan whose result goes through a function ([`Plan::map`]).
pub struct Map<P, F> {
    plan: P,
    f: Option<F>,
}

impl<P: Plan, T, F: FnOnce(P::Output) -> Result<T>> Plan for Map<P, F> {
    type Output = T;

    fn step(&mut self, outcomes: Outcomes) -> Step<T> {
        match self.plan.step(outcomes).finished() {
            Err(step) => step,
            Ok(result) => self.then(result),
        }
    }

    fn lock_failed(&mut self, e: Error) -> Step<T> {
        match self.plan.lock_failed(e).finished() {
            Err(step) => step,
            Ok(result) => self.then(result),
        }
    }
}

impl<P: Plan, T, F: FnOnce(P::Output) -> Result<T>> Map<P, F> {
    fn then(&mut self, result: Result<P::Output>) -> Step<T> {
        match self.f.take() {
            Some(f) => Step::Done(result.and_then(f)),
            None => Step::Done(Err(stepped_after_done())),
        }
    }
}

/// A plan of one batch: runs `ops`, then gives what `then` makes of their outcomes.
pub fn batch<T, F: FnOnce(Outcomes) -> Result<T>>(ops: Vec<Op>, then: F) -> Batch<F> {
    Batch { ops: Some(ops), then: Some(then) }
}

/// A plan of one batch ([`batch`]).
pub struct Batch<F> {
    ops: Option<Vec<Op>>,
    then: Option<F>,
}

impl<T, F: FnOnce(Outcomes) -> Result<T>> Plan for Batch<F> {
    type Output = T;

    fn step(&mut self, outcomes: Outcomes) -> Step<T> {
        if let Some(ops) = self.ops.take() {
            return Step::Run(ops);
        }
        match self.then.take() {
            Some(then) => Step::Done(then(outcomes)),
            None => Step::Done(Err(stepped_after_done())),
        }
    }
}

/// The error of a plan stepped again after it finished (a driver's bug).
pub fn stepped_after_done() -> Error {
    Error::new(ErrorKind::Internal, "a plan was stepped after it finished")
}

/// The one outcome of a step that ran one op.
pub fn only(outcomes: Outcomes) -> Result<Outcome> {
    outcomes.into_iter().next().unwrap_or_else(|| Err(Error::new(ErrorKind::Internal, "a plan got no outcome")))
}

/// A read's bytes (`None`: no such file).
pub fn bytes(outcome: Result<Outcome>) -> Result<Option<Vec<u8>>> {
    match outcome? {
        Outcome::Read(bytes) => Ok(bytes),
        _ => Err(Error::new(ErrorKind::Internal, "a plan got another outcome than a read's")),
    }
}

/// A list's names.
pub fn names(outcome: Result<Outcome>) -> Result<Vec<String>> {
    match outcome? {
        Outcome::List(names) => Ok(names),
        _ => Err(Error::new(ErrorKind::Internal, "a plan got another outcome than a list's")),
    }
}

/// Runs `plan` to its end over `storage` (the native driver).
pub async fn run<S: Storage, P: Plan>(storage: &S, plan: P) -> Result<P::Output> {
    run_in_turn(storage, &Mutex::new(()), plan).await
}

/// [`run`], each lock the plan takes inside `turn` first (a manager's turn at its locks:
/// its plans take them one after the other, whatever the storage's lock does; in wasm the
/// driver keeps these turns).
pub async fn run_in_turn<S: Storage, P: Plan>(storage: &S, turn: &Mutex<()>, mut plan: P) -> Result<P::Output> {
    let mut step = plan.step(Vec::new());
    loop {
        step = match step {
            Step::Run(ops) => plan.step(perform(storage, &ops).await),
            Step::Lock(name) => {
                let _turn = turn.lock().await;
                // The plan runs on under the lock until it releases it, or finishes.
                let mut inside = None;
                match storage.locked(&name, until_unlocked(storage, &mut plan, &mut inside)).await {
                    Ok(()) => match inside {
                        Some(step) => step,
                        None => plan.step(Vec::new()),
                    },
                    // Taking it or releasing it failed: the plan hears it (unless it is done).
                    Err(e) => match inside {
                        Some(Step::Done(result)) => Step::Done(result.and(Err(e))),
                        _ => plan.lock_failed(e),
                    },
                }
            }
            Step::Unlock => plan.lock_failed(Error::new(ErrorKind::Internal, "a plan released a lock it did not hold")),
            Step::Done(result) => return result,
        }
    }
}

/// Steps `plan` while it holds a lock, until it releases it (`inside` stays `None`) or
/// finishes (`inside`: its last step).
async fn until_unlocked<S: Storage, P: Plan>(storage: &S, plan: &mut P, inside: &mut Option<Step<P::Output>>) {
    let mut outcomes = Vec::new();
    loop {
        match plan.step(std::mem::take(&mut outcomes)) {
            Step::Run(ops) => outcomes = perform(storage, &ops).await,
            Step::Unlock => return,
            Step::Lock(_) => {
                *inside = Some(Step::Done(Err(Error::new(ErrorKind::Internal, "a plan took a lock it holds"))));
                return;
            }
            done => {
                *inside = Some(done);
                return;
            }
        }
    }
}

/// Runs `ops` over `storage`, one after the other: native storages complete at once, and
/// in wasm the JavaScript driver runs a plan's ops (this only serves the workflows that
/// still await plans inside a Rust task), so nothing is gained by polling them together.
async fn perform<S: Storage>(storage: &S, ops: &[Op]) -> Outcomes {
    let mut outcomes = Vec::with_capacity(ops.len());
    for op in ops {
        outcomes.push(match op {
            Op::Read(path) => storage.read(path).await.map(Outcome::Read),
            Op::List(dir) => storage.list(dir).await.map(Outcome::List),
            Op::Write { path, bytes, exclusive } => {
                storage.write(path, bytes, WriteOptions { exclusive: *exclusive }).await.map(|()| Outcome::Done)
            }
            Op::Remove(path) => storage.remove(path).await.map(|()| Outcome::Done),
            Op::RemoveDir(path) => storage.remove_dir(path).await.map(|()| Outcome::Done),
        });
    }
    outcomes
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::MemoryStorage;
    use futures_executor::block_on;
    use std::cell::RefCell;

    /// A memory storage whose lock logs when it is taken and released, and what ran under it.
    #[derive(Default)]
    struct Logged {
        files: MemoryStorage,
        log: RefCell<Vec<String>>,
        /// Its lock fails, before running the work.
        lock_fails: bool,
    }

    impl Storage for Logged {
        async fn read(&self, path: &str) -> Result<Option<Vec<u8>>> {
            self.log.borrow_mut().push(format!("read {path}"));
            self.files.read(path).await
        }
        async fn write(&self, path: &str, data: &[u8], options: WriteOptions) -> Result<()> {
            self.files.write(path, data, options).await
        }
        async fn remove(&self, path: &str) -> Result<()> {
            self.files.remove(path).await
        }
        async fn list(&self, dir: &str) -> Result<Vec<String>> {
            self.files.list(dir).await
        }
        async fn locked<T>(&self, name: &str, work: impl std::future::Future<Output = T>) -> Result<T> {
            self.log.borrow_mut().push(format!("lock {name}"));
            if self.lock_fails {
                return Err(Error::new(ErrorKind::Storage, "the lock failed"));
            }
            let out = work.await;
            self.log.borrow_mut().push("unlock".into());
            Ok(out)
        }
    }

    /// Reads `a` under the lock `l`, then `b` after it; with `fail_locked`, fails under the lock.
    struct Sample {
        at: u8,
        fail_locked: bool,
    }

    impl Plan for Sample {
        type Output = Vec<Option<Vec<u8>>>;

        fn step(&mut self, outcomes: Outcomes) -> Step<Self::Output> {
            self.at += 1;
            match self.at {
                1 => Step::Lock("l".into()),
                2 => Step::Run(vec![Op::Read("a".into())]),
                3 if self.fail_locked => Step::Done(Err(Error::invalid("failed under the lock"))),
                3 => Step::Unlock,
                4 => Step::Run(vec![Op::Read("b".into()), Op::Read("a".into())]),
                _ => Step::Done(outcomes.into_iter().map(bytes).collect()),
            }
        }
    }

    #[test]
    fn a_plan_runs_its_ops_under_the_lock_it_takes_and_hands_back_their_outcomes_in_order() {
        let storage = Logged::default();
        block_on(storage.files.write("a", b"A", WriteOptions::default())).unwrap();
        let out = block_on(run(&storage, Sample { at: 0, fail_locked: false })).unwrap();
        assert_eq!(out, vec![None, Some(b"A".to_vec())]);
        assert_eq!(*storage.log.borrow(), ["lock l", "read a", "unlock", "read b", "read a"]);
    }

    #[test]
    fn a_plan_that_ends_holding_the_lock_has_it_released_then_fails() {
        let storage = Logged::default();
        let err = block_on(run(&storage, Sample { at: 0, fail_locked: true })).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidArgument, "{err}");
        assert_eq!(*storage.log.borrow(), ["lock l", "read a", "unlock"]);
    }

    /// Takes the lock `l`; hears its failure and reads `b` instead.
    struct Hears(Option<Error>);

    impl Plan for Hears {
        type Output = String;

        fn step(&mut self, outcomes: Outcomes) -> Step<String> {
            match self.0.take() {
                None if outcomes.is_empty() => Step::Lock("l".into()),
                Some(e) if outcomes.is_empty() => Step::Run(vec![Op::Read(format!("b {}", e.kind().code()))]),
                _ => Step::Done(Ok(format!("{:?}", outcomes.len()))),
            }
        }

        fn lock_failed(&mut self, e: Error) -> Step<String> {
            self.0 = Some(e);
            self.step(Vec::new())
        }
    }

    #[test]
    fn a_plan_hears_that_its_lock_failed_and_goes_on_while_by_default_it_fails() {
        let storage = Logged { lock_fails: true, ..Logged::default() };
        assert_eq!(block_on(run(&storage, Hears(None))).unwrap(), "1");
        assert_eq!(*storage.log.borrow(), ["lock l", "read b STORAGE"]);
        let err = block_on(run(&storage, Sample { at: 0, fail_locked: false })).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Storage, "{err}");
    }

    #[test]
    fn a_mapped_plan_gives_its_result_through_the_function() {
        let storage = Logged::default();
        let plan = Sample { at: 0, fail_locked: false }.map(|reads| Ok(reads.len()));
        assert_eq!(block_on(run(&storage, plan)).unwrap(), 2);
    }
}
