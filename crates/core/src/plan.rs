//! Plans: an operation that needs host I/O, written as synchronous steps (the sans-IO
//! core of issue 12). The core decides; a driver does the I/O.
//!
//! A plan never awaits. [`Plan::step`] gets the outcomes of the host operations it asked
//! for last, in the order it asked (nothing on its first step, and nothing after taking
//! or releasing a lock), and answers what comes next ([`Step`]):
//!
//! - [`Step::Run`]: run these [`Op`]s (all at once, in any order) and step with their
//!   outcomes; a failed op is an `Err` outcome, typed as the storage types it;
//! - [`Step::Change`]: run these ops one after the other, stopping at the first that
//!   fails, and step with the outcomes of those run (the last is the failure, if any);
//! - [`Step::Lock`] / [`Step::Unlock`]: take the storage's named lock (what
//!   `Storage::locked` runs its work under), or release it; a plan holds one lock at a
//!   time. A lock asked with `wait: false` (background index work, which yields) fails at
//!   once when another holds it, instead of being waited for: in JavaScript at this
//!   process's turn and by the host's lock (`lock(name, fn, {wait: false})`); natively at
//!   the manager's turn only, as `Storage::locked` has no form that does not wait. A
//!   plan that finishes holding it has it released first, then finishes. If the
//!   lock fails (taking or releasing it), the plan hears it through
//!   [`Plan::lock_failed`] (by default, it fails with that error);
//! - [`Step::Wait`]: wait until the operations in flight beside this plan have changed
//!   (one of them ended), then step with no outcomes. The JavaScript driver knows the
//!   operations of the manager it runs the plan for; natively the plan says how it is
//!   woken ([`Plan::wake_on_change`]). Only `close` waits;
//! - [`Step::Done`]: the result.
//!
//! Two drivers run the same plans: the `toolctx` crate's `run`, for native Rust over any
//! `Storage` (it awaits the storage, nothing else), and in wasm `crates/wasm/src/plans.rs`, which hands
//! each step to the JavaScript driver (`pkg-template/driver.js`, `plan`): JavaScript
//! calls the host and hands the outcomes back. So the logic of a store-wide operation
//! exists once, and no Rust future runs in the wasm module for it.
//!
//! A plan runs over its store's storage ([`Place::Store`]); a conversation store's sync
//! also runs steps on its remote ([`Place::Remote`]): the drivers run each step where
//! [`Plan::place`] says, read after the plan gave it.
//!
//! Writing a plan: a struct that knows where it is, and a `step` that matches on it. A
//! plan may run another one inside it: it holds the sub-plan, passes its steps through
//! (see [`Step::finished`]) and goes on when it is done. [`Plan::map`] turns a plan's
//! result into another; [`Plan::and_then`] runs a second plan made of a first one's result.

use std::task::Waker;

use crate::error::{Error, ErrorKind, Result};

/// A host operation a plan asks for (the methods named are those of the `toolctx` crate's
/// `Storage` trait, which the native runner calls).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    /// `Storage::read`: [`Outcome::Read`].
    Read(String),
    /// `Storage::read_range`: the bytes `[offset, offset + len)` of a file, fewer at its
    /// end ([`Outcome::Read`]). A host without range reads reads the file and cuts it.
    ReadRange {
        /// Which file.
        path: String,
        /// The first byte.
        offset: u64,
        /// How many bytes.
        len: u64,
    },
    /// `Storage::list`: [`Outcome::List`].
    List(String),
    /// `Storage::write`: [`Outcome::Done`].
    Write {
        /// Where.
        path: String,
        /// The whole file.
        bytes: Vec<u8>,
        /// Fail with `AlreadyExists` rather than replace.
        exclusive: bool,
    },
    /// `Storage::write_parts`: `head`, the bytes the host holds under `body` (a result's
    /// text: [`crate::store::HostBody`]) and `tail`, as one file: [`Outcome::Done`]. Its
    /// bytes never cross into the core: the host joins them, or writes them as parts
    /// where it can.
    WriteParts {
        /// Where.
        path: String,
        /// What comes before the held bytes.
        head: Vec<u8>,
        /// The host's handle of the held bytes.
        body: u32,
        /// What comes after them.
        tail: Vec<u8>,
        /// Fail with `AlreadyExists` rather than replace.
        exclusive: bool,
    },
    /// `Storage::append`: [`Outcome::Done`].
    Append {
        /// Where.
        path: String,
        /// What to add at the end of the file.
        bytes: Vec<u8>,
    },
    /// `Storage::remove`: [`Outcome::Done`].
    Remove(String),
    /// `Storage::remove_dir`: [`Outcome::Done`].
    RemoveDir(String),
    /// `Storage::read` of a record, which the driver checks is a whole one and keeps:
    /// [`Outcome::Record`]. What was read never comes back to the plan (in wasm it stays
    /// in JavaScript, which parses it); the plan gets the number it is kept under.
    ReadRecord(String),
    /// The text of the record at `path`, held in memory, for the driver to keep as it
    /// keeps what [`Op::ReadRecord`] reads: [`Outcome::Record`].
    KeepRecord {
        /// The record's path.
        path: String,
        /// Its JSON text.
        text: String,
    },
}

impl Op {
    /// The file or folder the op reads or changes.
    pub fn path(&self) -> &str {
        match self {
            Op::Read(path) | Op::List(path) | Op::Remove(path) | Op::RemoveDir(path) | Op::ReadRecord(path) => path,
            Op::ReadRange { path, .. } => path,
            Op::Write { path, .. } | Op::WriteParts { path, .. } | Op::Append { path, .. } => path,
            Op::KeepRecord { path, .. } => path,
        }
    }

    /// The storage method it calls (`read`, `readRange`, `list`, `write`, `append`, `remove`,
    /// `removeDir`; a record kept calls none), as errors name it.
    pub fn method(&self) -> &'static str {
        match self {
            Op::Read(_) => "read",
            Op::ReadRange { .. } => "readRange",
            Op::List(_) => "list",
            Op::Write { .. } | Op::WriteParts { .. } => "write",
            Op::Append { .. } => "append",
            Op::Remove(_) => "remove",
            Op::RemoveDir(_) => "removeDir",
            Op::ReadRecord(_) => "read",
            Op::KeepRecord { .. } => "keep",
        }
    }
}

/// What an [`Op`] gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// A read: the bytes, `None` for a missing file.
    Read(Option<Vec<u8>>),
    /// A list: the names of the children, folders ending in `/`.
    List(Vec<String>),
    /// A write, an append, a removal or a folder removal.
    Done,
    /// An [`Op::ReadRecord`] or [`Op::KeepRecord`].
    Record(RecordOutcome),
}

/// What the driver made of a record it was asked to read or keep.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RecordOutcome {
    /// A whole record, kept under number `at` (the driver's, for this plan's run); `size`:
    /// its bytes (a record read: as stored).
    Kept {
        /// The driver's number for it.
        at: u32,
        /// Its length in bytes.
        size: usize,
    },
    /// The storage has no such file.
    Missing,
    /// What was read is not a whole record: why.
    NotARecord(String),
}

/// The outcomes of the ops of one [`Step::Run`], in the order asked.
pub type Outcomes = Vec<Result<Outcome>>;

/// Where a plan's step runs ([`Plan::place`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// The store's storage.
    Store,
    /// The remote a store syncs to.
    Remote,
}

/// What a plan does next.
#[derive(Debug)]
pub enum Step<T> {
    /// Run these ops, then step with their outcomes.
    Run(Vec<Op>),
    /// Run these ops in order up to the first that fails, then step with the outcomes of
    /// those run.
    Change(Vec<Op>),
    /// Take the named lock, then step (with no outcomes).
    Lock {
        /// The lock: a path inside the store.
        name: String,
        /// Whether to wait while another holds it; else taking it fails at once (the plan
        /// hears it through [`Plan::lock_failed`]).
        wait: bool,
    },
    /// Release the lock, then step (with no outcomes).
    Unlock,
    /// Wait until the operations in flight beside this plan have changed, then step (with
    /// no outcomes).
    Wait,
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
            Step::Change(ops) => Err(Step::Change(ops)),
            Step::Lock { name, wait } => Err(Step::Lock { name, wait }),
            Step::Unlock => Err(Step::Unlock),
            Step::Wait => Err(Step::Wait),
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

    /// Where the step it gave last runs: [`Place::Store`] unless it syncs to a remote.
    fn place(&self) -> Place {
        Place::Store
    }

    /// Has `waker` called at the next change of the operations in flight beside it, for a
    /// plan that waits ([`Step::Wait`]); `false` when it cannot be woken (it never waits).
    fn wake_on_change(&self, _waker: &Waker) -> bool {
        false
    }

    /// This plan, its result passed through `f`.
    fn map<T, F: FnOnce(Self::Output) -> Result<T>>(self, f: F) -> Map<Self, F>
    where
        Self: Sized,
    {
        Map { plan: self, f: Some(f) }
    }

    /// This plan, then the plan `f` makes of its result: one plan whose steps are the first's,
    /// then the second's, and whose result is the second's (the first's failure, when it
    /// fails: no second is made). The first must not finish holding a lock (the drivers
    /// release a lock when its plan finishes, and the second would begin inside it).
    fn and_then<Q: Plan, F: FnOnce(Self::Output) -> Result<Q>>(self, f: F) -> AndThen<Self, Q, F>
    where
        Self: Sized,
    {
        AndThen { first: self, f: Some(f), second: None }
    }
}

/// A plan, then another made of its result ([`Plan::and_then`]).
pub struct AndThen<P, Q, F> {
    first: P,
    f: Option<F>,
    second: Option<Q>,
}

impl<P: Plan, Q: Plan, F: FnOnce(P::Output) -> Result<Q>> Plan for AndThen<P, Q, F> {
    type Output = Q::Output;

    fn step(&mut self, outcomes: Outcomes) -> Step<Q::Output> {
        if let Some(second) = &mut self.second {
            return second.step(outcomes);
        }
        if self.f.is_none() {
            return Step::Done(Err(stepped_after_done()));
        }
        match self.first.step(outcomes).finished() {
            Err(step) => step,
            Ok(result) => self.begin_second(result),
        }
    }

    fn lock_failed(&mut self, e: Error) -> Step<Q::Output> {
        if let Some(second) = &mut self.second {
            return second.lock_failed(e);
        }
        match self.first.lock_failed(e).finished() {
            Err(step) => step,
            Ok(result) => self.begin_second(result),
        }
    }

    fn wake_on_change(&self, waker: &Waker) -> bool {
        match &self.second {
            Some(second) => second.wake_on_change(waker),
            None => self.first.wake_on_change(waker),
        }
    }

    fn place(&self) -> Place {
        match &self.second {
            Some(second) => second.place(),
            None => self.first.place(),
        }
    }
}

impl<P: Plan, Q: Plan, F: FnOnce(P::Output) -> Result<Q>> AndThen<P, Q, F> {
    /// The second plan made of the first's result, and its first step.
    fn begin_second(&mut self, result: Result<P::Output>) -> Step<Q::Output> {
        let Some(f) = self.f.take() else { return Step::Done(Err(stepped_after_done())) };
        match result.and_then(f) {
            Err(e) => Step::Done(Err(e)),
            Ok(second) => self.second.insert(second).step(Vec::new()),
        }
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

    fn wake_on_change(&self, waker: &Waker) -> bool {
        self.plan.wake_on_change(waker)
    }

    fn place(&self) -> Place {
        self.plan.place()
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

#[cfg(test)]
mod tests {
    use super::*;

    fn read(path: &str) -> Op {
        Op::Read(path.to_owned())
    }

    fn answered(bytes: &[u8]) -> Outcomes {
        vec![Ok(Outcome::Read(Some(bytes.to_vec())))]
    }

    #[test]
    fn and_then_runs_the_first_plan_then_the_one_made_of_its_result() {
        let first = batch(vec![read("a")], |o| Ok(bytes(only(o))?.unwrap_or_default().len()));
        let mut plan = first.and_then(|n| Ok(batch(vec![read(&format!("b{n}"))], |o| bytes(only(o)))));
        assert!(matches!(plan.step(Vec::new()), Step::Run(ops) if ops == [read("a")]));
        assert!(matches!(plan.step(answered(b"xyz")), Step::Run(ops) if ops == [read("b3")]));
        assert!(matches!(plan.step(answered(b"done")), Step::Done(Ok(Some(b))) if b == b"done"));
    }

    #[test]
    fn and_then_makes_no_second_plan_when_the_first_fails() {
        let first = batch(vec![read("a")], |o| Ok(bytes(only(o))?.unwrap_or_default()));
        type Second = Batch<fn(Outcomes) -> Result<()>>;
        let mut plan = first.and_then(|_| -> Result<Second> { panic!("not made") });
        plan.step(Vec::new());
        let failed = vec![Err(Error::new(ErrorKind::Storage, "down"))];
        assert!(matches!(plan.step(failed), Step::Done(Err(e)) if e.kind() == ErrorKind::Storage));
    }
}
