//! `loadContexts` in synchronous steps (SPEC §0, §4): the core decides what each path
//! asked is, the caller reads, and the core words why a path was skipped.
//!
//! 1. [`Manager::begin_load`] enters the manager's gate (`CLOSED` once `close`
//!    began); the [`Loading`] it returns holds it, so `close` waits for the reads.
//! 2. [`Manager::load_step`], per path as asked: the bytes of a record held in
//!    memory, the confined path to read, or skipped (a path outside the store: the
//!    `onDebug` warning is given here).
//! 3. The caller reads (every read at once), checks what it read is a record, and
//!    reports each path it skips with [`Manager::load_skipped`], in the words of
//!    the original: `Failed to load <path as asked>: <why>`.
//!
//! The native [`Manager::load`] runs these steps over its storage; in wasm the JS
//! driver runs them over the host's (src/wasm/manager/load.rs, `__loadBegin`), so the bytes
//! a host read stay in JavaScript, which parses them.

use std::fmt;
use std::rc::Rc;

use super::Manager;
use crate::error::{Error, Result};
use crate::lifecycle::Pass;
use crate::paths;

/// A load in flight: it holds the manager's gate (`close` waits for it) until dropped.
pub struct Loading {
    _pass: Pass,
}

/// What a load does for one path as asked ([`Manager::load_step`]).
pub enum LoadStep {
    /// A record held in memory: its bytes.
    Held(Rc<[u8]>),
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
        match self.state.borrow().memory.get(&path) {
            Some(bytes) => LoadStep::Held(bytes.clone()),
            None => LoadStep::Read(path),
        }
    }

    /// Tells `onDebug` that the path `asked` is skipped, and why.
    pub fn load_skipped(&self, asked: &str, why: &NotLoaded) {
        self.debug(format!("Failed to load {asked}: {why}"), Some(asked));
    }
}
