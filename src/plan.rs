//! The I/O that a synchronous step asks for (SPEC §0): storage operations run by the
//! caller between the core's steps, and their outcomes, which the next step consumes.
//!
//! In wasm the JavaScript driver runs them (`driver.js`: `runOps`); natively
//! [`run_ops`] does, over any [`Storage`], so a workflow's logic exists once. The
//! operations of one step are independent: they may run at once. A step that holds a
//! lock asks for nothing but [`Op::Lock`] or [`Op::Unlock`] at that step.

use std::rc::Rc;

use crate::error::Result;
use crate::storage::{Storage, WriteOptions};

/// One storage operation.
#[derive(Debug, Clone)]
pub enum Op {
    /// The file's bytes (`None`: missing).
    Read(String),
    /// Replaces the file (or creates it exclusively).
    Write {
        /// Where.
        path: String,
        /// The whole file.
        bytes: Rc<[u8]>,
        /// Fail with `AlreadyExists` rather than replace.
        exclusive: bool,
    },
    /// Removes a file (idempotent).
    Remove(String),
    /// The names of a folder's children (folders end in `/`).
    List(String),
    /// Removes an empty folder (idempotent).
    RemoveDir(String),
    /// Takes the named lock: this process's turn at it, then the storage's own lock. Its
    /// outcome says whether it is held; a step that holds it ends with [`Op::Unlock`].
    Lock(String),
    /// Releases the lock taken; its outcome is how the storage's lock ended.
    Unlock,
}

/// What an operation gave: nothing, a read's bytes, or a listing.
#[derive(Debug, Default)]
pub enum Got {
    /// A write, remove, lock or unlock that worked.
    #[default]
    Nothing,
    /// A read: the bytes, `None` when the file is missing.
    Bytes(Option<Vec<u8>>),
    /// A listing.
    Names(Vec<String>),
}

/// An operation's outcome.
pub type Outcome = Result<Got>;

/// What a step gives: operations to run (then the next step), or the end.
pub enum Step<T> {
    /// Run these, then hand their outcomes (in order) to the next step.
    Io(Vec<Op>),
    /// Finished.
    Done(T),
}

impl Got {
    /// A read's bytes (`None`: missing, or no read).
    pub fn bytes(self) -> Option<Vec<u8>> {
        match self {
            Got::Bytes(bytes) => bytes,
            _ => None,
        }
    }

    /// A listing's names (none when it is no listing).
    pub fn names(self) -> Vec<String> {
        match self {
            Got::Names(names) => names,
            _ => Vec::new(),
        }
    }
}

/// Runs `ops` (no lock among them) against `storage`, all at once; their outcomes in order.
pub async fn run_ops<S: Storage>(storage: &S, ops: &[Op]) -> Vec<Outcome> {
    let runs = ops.iter().map(|op| async move {
        match op {
            Op::Read(path) => storage.read(path).await.map(Got::Bytes),
            Op::Write { path, bytes, exclusive } => {
                storage.write(path, bytes, WriteOptions { exclusive: *exclusive }).await.map(|()| Got::Nothing)
            }
            Op::Remove(path) => storage.remove(path).await.map(|()| Got::Nothing),
            Op::List(dir) => storage.list(dir).await.map(Got::Names),
            Op::RemoveDir(path) => storage.remove_dir(path).await.map(|()| Got::Nothing),
            Op::Lock(_) | Op::Unlock => Ok(Got::Nothing),
        }
    });
    futures_util::future::join_all(runs).await
}
