//! The whole workflow of SPEC §2–§4 and the seed part of §6: [`Manager`], its state and
//! synchronous steps (sans-IO: no storage, no await). `ContextManager`
//! (`crates/native/src/manager.rs`) drives those steps natively over a storage; the wasm layer
//! drives them through the JavaScript driver.
//!
//! All methods take `&self`: state lives in a `RefCell` borrowed only within a step, so
//! any number of saves and loads may be in flight at once.
//!
//! One file per part of the workflow:
//!
//! - `options`: [`Options`], their defaults and the callbacks a manager is given;
//! - `state`: the manager's state, composed of components that own their fields, and
//!   what keeps two of them in step (a pointer's slot is the table's and the index's):
//!   - `table`: the pointer table (`PointerTable`), over `entry` (a pointer as the table
//!     keeps it, packed) and `slots` (filepath → slot by a 32-bit hash);
//!   - `live`: the live index (`LiveIndex`): terms and vectors by slot, with `unindexed`
//!     (saved records whose content waits to be indexed) and the next segment's records;
//!   - `held`: records held in memory; retention's ledger is [`crate::retention`]'s;
//! - `session_state`: the manager's session, its folder and the manifest it keeps;
//! - `terms`: what the index and a session manifest take from a record;
//! - `save`: a save, its first step ([`Manager::begin_save`]) and its plan ([`SaveRecord`]);
//! - `load`: loading records, a plan ([`LoadRecords`]);
//! - `pointers`: listing, handles and ranking over the table ([`Filter`]);
//! - `close`: flush and close ([`ClosePlan`]); `clear`: clearing and ending a session;
//! - `restore`: pointers from storage (open, resume, rebuild, reconcile);
//! - `jobs`: the multi-step jobs ([`Job`]), their stages and their plan ([`JobPlan`]);
//!   `stage`: what a stage asks for next, shared with `persist` and `open`;
//! - `persist`: the persisted index (segments beside the records, named and merged as
//!   [`crate::segments`] says): the stages that write and merge it; `opened`: segments
//!   read at `open()` or a resume (whole, or by range, each pointer made as its block is
//!   read); `open`: `open()` outside a session; `lazy`: what queries read of segments
//!   read by range, in a cache bounded by `indexMemory`.

use std::cell::{Cell, RefCell};
use std::collections::HashSet;
use std::rc::Rc;

use crate::error::{Error, ErrorKind, Result};
use crate::lifecycle::Gate;
use crate::paths;
use crate::record::iso_timestamp;
use crate::session::{self, Manifest};
pub use crate::storewide::{Export, ImportReport, Skipped};
pub use toolctx_text::ResultHasher;

mod clear;
mod close;
mod entry;
mod held;
mod holdings;
mod lazy;
mod live;
mod load;
mod open;
mod opened;
mod options;
mod persist;
mod pointers;
mod restore;
mod save;
mod second_phase;
mod session_state;
mod slots;
mod stage;
mod state;
mod table;
mod terms;
mod unindexed;
pub use crate::segments::{segments_dir, INDEX_DIR};
pub use close::{ClosePlan, Closing};
use held::Held;
pub use lazy::{PrepareQuery, DEFAULT_INDEX_MEMORY};
pub use load::{LoadRecords, LoadStep, Loading, NotLoaded};

pub use clear::{remove_written, Clearing};
use entry::{Entry, Interned};
pub use options::{
    Clock, DebugEvent, DebugSink, EvictSink, Options, Random, SessionChoice, DEFAULT_MAX_RECORD_BYTES,
    DEFAULT_MEMORY_BUDGET, DEFAULT_PERSIST_THRESHOLD, INDEX_SLICE_BYTES, NAME_ATTEMPTS, UNINDEXED_BYTES,
};
pub use pointers::{Candidate, Filter, Listed};

pub use save::{result_hash, Begun, HostBody, PendingSave, SaveInput, SaveRecord};
pub use second_phase::{Reread, SecondPhase, Target};
use session_state::Session;
use state::State;

/// The tool-context store's state and its synchronous steps (sans-IO): it owns no storage
/// and awaits nothing. `ContextManager` (`crates/native/src/manager.rs`) runs it over a storage
/// natively; the wasm layer, over the host's storage through the JavaScript driver.
pub struct Manager {
    options: Options,
    dir: String,
    state: RefCell<State>,
    session: Option<Session>,
    gate: Rc<Gate>,
    /// A background segment write is under way.
    segmenting: Cell<bool>,
    /// Segments a merge wrote of more than half the storage's largest value
    /// ([`Options::max_value_bytes`]): two would not fit, so this manager merges them no more.
    unmergeable: RefCell<HashSet<String>>,
    /// Records waiting past which the next background segment write is due, after one
    /// failed (0: none failed since the last written): twice those waiting then.
    segment_retry_at: Cell<usize>,
    /// The most bytes a record took in the segments this manager wrote: a segment's size
    /// estimated from its name's record count, for merges within the storage's largest value.
    bytes_per_record: Cell<f64>,
    /// Saves yield to the event loop ([`Manager::index_backlogged`]): `onDebug` was told.
    backlogged: Cell<bool>,
    /// A save indexed the results waiting, idle time having not kept up: `onDebug` was
    /// told, until the content waiting is all indexed.
    indexing_behind: Cell<bool>,
}

/// Evicted slots kept before the pointer table is compacted (and at least as many as live ones).
pub const COMPACT_FROM: usize = 1024;

/// Manifest writes are coalesced: at most one a second, or every this many records.
const MANIFEST_EVERY_MS: i64 = 1000;
const MANIFEST_EVERY_RECORDS: usize = 64;

impl Manager {
    /// A manager with `options`. The context dir is normalised; it must not be empty or
    /// hold NUL or backslash characters.
    pub fn new(mut options: Options) -> Result<Self> {
        options.retention.check()?;
        let dir = paths::normalize(&options.context_dir)
            .filter(|d| !d.is_empty() && d != "/")
            .ok_or_else(|| Error::invalid(format!("contextDir {:?} is not a usable folder", options.context_dir)))?;
        options.context_dir = dir.clone();
        let mut manager = Manager {
            options,
            dir,
            state: RefCell::new(State::default()),
            session: None,
            gate: Rc::default(),
            segmenting: Cell::new(false),
            unmergeable: RefCell::default(),
            segment_retry_at: Cell::new(0),
            bytes_per_record: Cell::new(0.0),
            backlogged: Cell::new(false),
            indexing_behind: Cell::new(false),
        };
        manager.session = match manager.options.session.clone() {
            None => None,
            Some(choice) => {
                let now = (manager.options.clock)();
                let (id, resume) = match choice {
                    SessionChoice::New if manager.options.read_only => {
                        return Err(Error::invalid("a new session cannot be read-only: name the session to read"))
                    }
                    SessionChoice::New => (session::session_id(now, &manager.random_part()?), false),
                    SessionChoice::Resume(id) if session::is_session_id(&id) => (id, true),
                    SessionChoice::Resume(id) => {
                        return Err(Error::invalid(format!("{id:?} is not a session id (YYYYMMDD-HHMMSS-xxxx)")))
                    }
                };
                let (dir, manifest) =
                    (session::session_dir(&manager.dir, &id), Manifest::new(&id, &iso_timestamp(now)));
                Some(Session::new(id, dir, resume, manifest))
            }
        };
        Ok(manager)
    }

    /// What `open` does once the manager is made, when it has a session: a new one's
    /// manifest written; a named one resumed (see [`Job::open`]).
    pub fn opening(&self) -> Option<Job> {
        let Some(s) = self.session.as_ref() else { return Some(Job::load()) };
        Some(if s.resume { Job::open() } else { Job::write_out(None) })
    }

    /// The session id, when a session is in use.
    pub fn session_id(&self) -> Option<&str> {
        self.session.as_ref().map(|s| s.id.as_str())
    }

    /// Where new records go: the session folder, or the context dir.
    fn record_root(&self) -> &str {
        self.session.as_ref().map_or(&self.dir, |s| &s.dir)
    }

    /// The normalised context dir.
    pub fn context_dir(&self) -> &str {
        &self.dir
    }

    /// The options in force.
    pub fn options(&self) -> &Options {
        &self.options
    }

    /// Number of pointers.
    pub fn len(&self) -> usize {
        self.state.borrow().pointers.len()
    }

    /// Whether there are no pointers.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether retention has a cap, so the records owned are counted in a ledger (without
    /// one, nothing is ever evicted and no ledger is kept).
    fn keeps_ledger(&self) -> bool {
        !self.options.retention.is_unbounded()
    }

    /// Sends a message (and the path it concerns) to the `on_debug` sink, if any.
    pub fn debug(&self, message: impl Into<String>, path: Option<&str>) {
        crate::inputs::debug(self.options.on_debug.as_ref(), message, path)
    }

    /// `Ok` unless the manager was opened read-only (then a typed `READ_ONLY` error).
    pub fn check_writable(&self) -> Result<()> {
        if self.options.read_only {
            return Err(Error::new(ErrorKind::ReadOnly, "this manager was opened with readOnly: it writes nothing"));
        }
        Ok(())
    }
}

mod jobs;
pub use jobs::{Job, JobPlan};

#[cfg(test)]
pub(crate) mod footprint;
