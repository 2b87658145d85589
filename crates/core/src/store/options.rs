//! A manager's options and their defaults, and the callbacks it is given (the clock,
//! randomness and debug sink are the core's inputs: [`crate::inputs`]).

use crate::retention::Retention;
use std::rc::Rc;

/// Default `persistThreshold`: records of this many bytes or more are written out. 0:
/// every record is in storage when its save resolves (SPEC §4, durable by default);
/// holding small records in memory is an opt-in.
pub const DEFAULT_PERSIST_THRESHOLD: usize = 0;
/// Default `memoryBudget` for records held in memory.
pub const DEFAULT_MEMORY_BUDGET: usize = 8 * 1024 * 1024;
/// Default `maxRecordBytes`.
pub const DEFAULT_MAX_RECORD_BYTES: usize = 64 * 1024 * 1024;
/// Bytes of saved results waiting to be indexed past which a save indexes them at once
/// (otherwise idle time or the next ranking does): memory for the texts held meanwhile
/// stays bounded.
pub const UNINDEXED_BYTES: usize = 8 * 1024 * 1024;
/// Bytes of saved results a slice of idle-time index work indexes
/// ([`Manager::index_some`](super::Manager::index_some)): a few milliseconds of
/// tokenising, so a call that arrives meanwhile waits no longer than that.
pub const INDEX_SLICE_BYTES: usize = 64 * 1024;
/// Fresh random parts tried when a record name is taken.
pub const NAME_ATTEMPTS: usize = 16;

pub use crate::inputs::{Clock, DebugEvent, DebugSink, Random};

/// Receiver of the pointers retention evicted, as a JSON array (save order).
pub type EvictSink = Rc<dyn Fn(&str)>;

/// Settings of a [`Manager`](crate::Manager) (and of the `toolctx` crate's `ContextManager`).
#[derive(Clone)]
pub struct Options {
    /// The store's folder (absolute on file systems; a key prefix elsewhere).
    pub context_dir: String,
    /// Records whose JSON is smaller than this stay in memory (0: write all).
    pub persist_threshold: usize,
    /// Bytes of records held in memory before the oldest are written out.
    pub memory_budget: usize,
    /// Largest record accepted.
    pub max_record_bytes: usize,
    /// The clock (the `toolctx` crate's `platform::now_ms` by default).
    pub clock: Clock,
    /// The random source of file names (the `toolctx` crate's `platform::random_unit` by default).
    pub random: Random,
    /// Receiver of warnings and traces.
    pub on_debug: Option<DebugSink>,
    /// A new session, or one to resume (SPEC §5); `None` keeps records in the context dir.
    pub session: Option<SessionChoice>,
    /// Inspection only: every write is refused with [`ErrorKind::ReadOnly`](crate::ErrorKind::ReadOnly), and opening
    /// or re-indexing a session never writes its manifest (nor takes its lock).
    pub read_only: bool,
    /// Caps on the records this manager owns (see [`crate::retention`]).
    pub retention: Retention,
    /// Told which pointers retention evicted, once per enforcement.
    pub on_evict: Option<EvictSink>,
    /// Bytes of each result's JSON text whose string values are indexed for selection
    /// (SPEC §6); 0 indexes no content.
    pub content_bytes: usize,
    /// Bytes of index segments read by range kept for rankings (`indexMemory`).
    pub index_memory: usize,
    /// The storage reads ranges of files: `open()` reads of each index segment its directory
    /// and records only, and a query its lists (the runner sets it from its storage).
    pub ranges: bool,
    /// The largest file the storage writes (its `maxValueBytes`: D1's and a Durable Object's
    /// rows hold 2 MB): index segments are written within it (a segment write cuts its
    /// records in several, and segments whose merge would be larger are not merged).
    /// `usize::MAX` when the storage has no limit.
    pub max_value_bytes: usize,
}

/// The `session` option.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionChoice {
    /// A fresh session with a new id.
    New,
    /// The session with this id (resumed by the `toolctx` crate's `ContextManager::open`).
    Resume(String),
}

impl Options {
    /// Defaults for a store in `context_dir`, with this clock and random source (natively,
    /// `toolctx::options` hands in the platform's).
    pub fn with(context_dir: impl Into<String>, clock: Clock, random: Random) -> Self {
        Options {
            context_dir: context_dir.into(),
            persist_threshold: DEFAULT_PERSIST_THRESHOLD,
            memory_budget: DEFAULT_MEMORY_BUDGET,
            max_record_bytes: DEFAULT_MAX_RECORD_BYTES,
            clock,
            random,
            on_debug: None,
            session: None,
            read_only: false,
            retention: Retention::default(),
            on_evict: None,
            content_bytes: crate::select::DEFAULT_CONTENT_BYTES,
            index_memory: super::DEFAULT_INDEX_MEMORY,
            ranges: false,
            max_value_bytes: usize::MAX,
        }
    }
}
