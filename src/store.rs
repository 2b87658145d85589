//! `ContextManager<S: Storage>`: the whole workflow of SPEC §2–§4 and the seed part of
//! §6, generic over storage. The wasm layer wraps it with `JsStorage`; native code and
//! tests use [`MemoryStorage`](crate::MemoryStorage) or [`FsStorage`](crate::FsStorage).
//!
//! All methods take `&self`: state lives in a `RefCell` that is never borrowed across
//! an `.await`, so any number of saves and loads may be in flight at once.

use std::cell::{Cell, RefCell};
use std::collections::{HashMap, HashSet, VecDeque};
use std::rc::Rc;

use futures_util::lock::Mutex;
use serde_json::{Number, Value};

use crate::error::{Error, ErrorKind, Result};
use crate::handle;
use crate::lifecycle::{Gate, Pass, Phase};
use crate::naming::{
    args_hash, os_random_chars, random_chars, record_filename, sanitize_tool_name, StoredPath, RANDOM_LEN,
};
use crate::paged::Paged;
use crate::paths;
use crate::plan::{self, Op, Outcomes, Plan};
use crate::record::{
    check_no_lone_surrogates, from_json, iso_timestamp, parse_record, push_iso_timestamp, push_json_str, RecordMeta,
};
use crate::retention::{Ledger, Retention};
use crate::select::{Doc, Fallback, Index, Query, Ranking, Scored, Strategy, Terms, Vectors};
use crate::session::{self, Manifest, ManifestEntry};
use crate::shared::Shared;
use crate::storage::{Storage, WriteOptions};
pub use crate::storewide::{export_jsonl, import_jsonl, purge, Export, ImportReport, Skipped};
pub use toolctx_text::ResultHasher;

mod held;
mod load;
mod persist;
mod segments;
use held::Held;
pub use load::{LoadStep, Loading, NotLoaded};
use persist::Content;
pub use segments::{segments_dir, INDEX_DIR};

/// Default `persistThreshold`: records of this many bytes or more are written out. 0:
/// every record is in storage when its save resolves (SPEC §4, durable by default);
/// holding small records in memory is an opt-in.
pub const DEFAULT_PERSIST_THRESHOLD: usize = 0;
/// Default `memoryBudget` for records held in memory.
pub const DEFAULT_MEMORY_BUDGET: usize = 8 * 1024 * 1024;
/// Default `maxRecordBytes`.
pub const DEFAULT_MAX_RECORD_BYTES: usize = 64 * 1024 * 1024;
/// Bytes of saved results waiting to be indexed past which a save indexes them at once
/// (otherwise the next ranking does): memory for the texts held meanwhile stays bounded.
pub const UNINDEXED_BYTES: usize = 8 * 1024 * 1024;
/// Fresh random parts tried when a record name is taken.
pub const NAME_ATTEMPTS: usize = 16;

/// A debug message for `onDebug`.
#[derive(Debug, Clone, PartialEq)]
pub struct DebugEvent {
    /// What happened.
    pub message: String,
    /// The path concerned, if any.
    pub path: Option<String>,
}

/// Milliseconds since the Unix epoch.
pub type Clock = Rc<dyn Fn() -> i64>;
/// Uniform numbers in `[0, 1)`, like `Math.random` (tests only; default is the CSPRNG).
pub type Random = Rc<dyn Fn() -> f64>;
/// Receiver of debug messages.
pub type DebugSink = Rc<dyn Fn(&DebugEvent)>;
/// Receiver of the pointers retention evicted, as a JSON array (save order).
pub type EvictSink = Rc<dyn Fn(&str)>;

/// Settings of a [`ContextManager`].
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
    /// The clock; the default is the system clock.
    pub clock: Clock,
    /// A random source for filenames; `None` uses the platform's CSPRNG.
    pub random: Option<Random>,
    /// Receiver of warnings and traces.
    pub on_debug: Option<DebugSink>,
    /// A new session, or one to resume (SPEC §5); `None` keeps records in the context dir.
    pub session: Option<SessionChoice>,
    /// Inspection only: every write is refused with [`ErrorKind::ReadOnly`], and opening
    /// or re-indexing a session never writes its manifest (nor takes its lock).
    pub read_only: bool,
    /// Caps on the records this manager owns (see [`crate::retention`]).
    pub retention: Retention,
    /// Told which pointers retention evicted, once per enforcement.
    pub on_evict: Option<EvictSink>,
    /// Bytes of each result's JSON text whose string values are indexed for selection
    /// (SPEC §6); 0 indexes no content.
    pub content_bytes: usize,
}

/// The `session` option.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionChoice {
    /// A fresh session with a new id.
    New,
    /// The session with this id (resumed by [`ContextManager::open`]).
    Resume(String),
}

impl Options {
    /// Defaults for a store in `context_dir`.
    pub fn new(context_dir: impl Into<String>) -> Self {
        Options {
            context_dir: context_dir.into(),
            persist_threshold: DEFAULT_PERSIST_THRESHOLD,
            memory_budget: DEFAULT_MEMORY_BUDGET,
            max_record_bytes: DEFAULT_MAX_RECORD_BYTES,
            clock: Rc::new(system_clock),
            random: None,
            on_debug: None,
            session: None,
            read_only: false,
            retention: Retention::default(),
            on_evict: None,
            content_bytes: crate::select::DEFAULT_CONTENT_BYTES,
        }
    }
}

#[cfg(not(target_arch = "wasm32"))]
fn system_clock() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as i64)
}

#[cfg(target_arch = "wasm32")]
fn system_clock() -> i64 {
    // The wasm layer always installs `Date.now`; std has no clock on wasm32-unknown-unknown.
    0
}

/// One `saveContext` call.
#[derive(Debug, Clone, Default)]
pub struct SaveInput<'a> {
    /// The tool's name.
    pub tool_name: &'a str,
    /// The args as JSON text (must be an object).
    pub args_json: &'a str,
    /// The result as JSON text; `None` when the result is `undefined`.
    pub result_json: Option<&'a str>,
    /// Optional task id.
    pub task_id: Option<Number>,
    /// Optional query id.
    pub query_id: Option<String>,
    /// A description to use instead of the generated one.
    pub description: Option<String>,
    /// A category folder inside the session (`features`, `code`, `testing`, ...).
    pub category: Option<String>,
    /// The id of the model's tool call, stored in the record and its pointer.
    pub tool_call_id: Option<String>,
    /// The result held by the host instead of `result_json` (wasm): its bytes never
    /// cross into the core unless the record stays in memory.
    pub result_body: Option<HostBody<'a>>,
}

/// A result whose JSON text the host holds as UTF-8 bytes. The core gets what it needs
/// to index, name and size the record; the storage writes the record as the header
/// the core encodes, the body, then `}` ([`Storage::write_parts`]).
#[derive(Debug, Clone, Copy)]
pub struct HostBody<'a> {
    /// The storage's handle of the bytes (see [`Storage::body`]).
    pub handle: u32,
    /// Their length.
    pub len: usize,
    /// Their first `content_bytes` bytes (cut at a character boundary), for the index.
    pub prefix: &'a str,
    /// [`result_hash`] of the whole text, when the host has it. Without it, the core
    /// hashes the bytes it copies in for a record held in memory; for a record to write,
    /// the host hands it over while the record is written
    /// ([`PendingSave::set_result_hash`]), else the core reads the bytes
    /// ([`Storage::body`]) once the record is written.
    pub hash: Option<u64>,
}

/// Which pointers to list or rank: those saved with this query id and/or task id
/// (every pointer when neither is given).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Filter<'a> {
    /// Only pointers saved with this query id.
    pub query_id: Option<&'a str>,
    /// Only pointers saved with this task id.
    pub task_id: Option<&'a Number>,
}

impl<'a> Filter<'a> {
    /// Every pointer.
    pub const ALL: Filter<'static> = Filter { query_id: None, task_id: None };

    /// The pointers saved with query id `q`.
    pub fn query(q: &'a str) -> Self {
        Filter { query_id: Some(q), task_id: None }
    }

    /// The pointers saved with task id `t`.
    pub fn task(t: &'a Number) -> Self {
        Filter { query_id: None, task_id: Some(t) }
    }

    /// Whether it lets every pointer through.
    pub fn is_all(&self) -> bool {
        self.query_id.is_none() && self.task_id.is_none()
    }

    /// Whether a pointer saved with `query_id` and `task_id` passes.
    pub fn passes(&self, query_id: Option<&str>, task_id: Option<&Number>) -> bool {
        self.query_id.map_or(true, |q| query_id == Some(q)) && self.task_id.map_or(true, |t| task_id == Some(t))
    }
}

/// A pointer of a list, as [`ContextManager::resolve_slot`] finds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Listed {
    /// This manager's pointer in that slot.
    Slot(u32),
    /// No pointer of this manager any more; its filepath.
    Gone(String),
}

/// A candidate for selection: a pointer of this manager by path, or one described in full.
#[derive(Debug, Clone)]
pub enum Candidate {
    /// A pointer of this manager, by slot: its terms are already indexed.
    Known(u32),
    /// Any other pointer: its indexed text, tokenised now.
    Foreign(Terms),
}

/// A pointer as it is kept: the tool name, query id and path prefix shared by every
/// pointer that has them (through thin pointers), the args text and hash (as bytes)
/// shared by every pointer with the same args, the path as its parts (its name's hash is
/// the args hash's start), the task id as an `i32`, the timestamp as the path's
/// milliseconds (a record's name holds the instant it was saved), and the fields most
/// pointers lack (a description `describe` does not make, a tool call id, an args hash
/// or timestamp the packed form would not print back, a task id that is not an `i32`)
/// in `rare`. The save order is the index's ([`Index::order`]). A description `describe`
/// makes from the tool name and args is made again, not kept; any other (from a
/// `describe` callback, or another implementation) is.
struct Entry {
    /// The path, as its parts when it has the record-name form.
    filepath: StoredPath,
    tool_name: Shared,
    /// The args text and hash, shared by every pointer that has both (an agent calls a
    /// tool with the same args again and again).
    args: Rc<Args>,
    /// The task id when it is an `i32` other than [`NO_TASK`] (else in `rare`).
    task: i32,
    query_id: Option<Shared>,
    size: u32,
    /// Whether this manager wrote the record to storage (see [`State::orphans`]).
    written: bool,
    /// A 64-bit hash of the result's JSON text, when this manager saved the record:
    /// with the tool and args hash, what makes two records duplicates.
    /// (High and low halves, all zero when not known: so the entry aligns to 4 bytes in
    /// wasm, not 8; see [`Entry::result_hash`].)
    result_hash: [u32; 2],
    /// `None` when the pointer has none of its fields (most pointers).
    rare: Option<Box<Rare>>,
}

/// A pointer's args: their JSON text, as given, and the args hash as bytes (all zero,
/// and ignored, when [`Rare::args_hash`] holds its text). Pointers with the same text
/// and hash share one ([`Interned::args`]).
#[derive(PartialEq, Eq, Hash)]
struct Args {
    hash: [u8; 32],
    json: Box<str>,
}

/// What pointers share: tool names and query ids (many pointers have each), and args.
#[derive(Default)]
struct Interned {
    texts: HashSet<Shared>,
    args: HashSet<Rc<Args>>,
}

impl Interned {
    fn text(&mut self, text: &str) -> Shared {
        match self.texts.get(text) {
            Some(t) => t.clone(),
            None => {
                let t = Shared::from(text);
                self.texts.insert(t.clone());
                t
            }
        }
    }

    fn args(&mut self, args: Args) -> Rc<Args> {
        match self.args.get(&args) {
            Some(a) => a.clone(),
            None => {
                let a = Rc::new(args);
                self.args.insert(a.clone());
                a
            }
        }
    }

    /// Drops the args no pointer holds any more.
    fn prune(&mut self) {
        self.args.retain(|a| Rc::strong_count(a) > 1);
    }

    fn clear(&mut self) {
        self.texts.clear();
        self.args.clear();
    }
}

/// The fields of an [`Entry`] most pointers do not have.
#[derive(Default, PartialEq, Eq)]
struct Rare {
    /// The description, when it is not `describe(tool_name, args)`.
    tool_description: Option<Box<str>>,
    tool_call_id: Option<Box<str>>,
    /// The args hash, when it is not 64 lowercase hex digits.
    args_hash: Option<Box<str>>,
    /// The timestamp, when it is not the ISO form of the path's milliseconds (a record
    /// adopted with another name).
    timestamp: Option<Stamp>,
    /// The task id, when it is not an integer that fits in an `i32`.
    task_id: Option<Number>,
}

/// A timestamp the path does not give: the ISO form of a number of ms, or any text.
#[derive(PartialEq, Eq)]
enum Stamp {
    Ms(i64),
    Text(Box<str>),
}

/// [`Entry::task`] when the pointer has no task id, or one kept in [`Rare::task_id`].
const NO_TASK: i32 = i32::MIN;

/// The bytes of a 64-digit lowercase hex hash.
fn hash_bytes(hex: &str) -> Option<[u8; 32]> {
    let digit = |c: u8| match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        _ => None,
    };
    let mut out = [0u8; 32];
    if hex.len() != 64 {
        return None;
    }
    for (byte, pair) in out.iter_mut().zip(hex.as_bytes().chunks(2)) {
        *byte = digit(pair[0])? << 4 | digit(pair[1])?;
    }
    Some(out)
}

impl Entry {
    /// The pointer of the record at `filepath`. `generated`: whether its description is
    /// the one `describe` makes, when the caller knows (`None`: it is compared here).
    fn new(filepath: &str, meta: RecordMeta, size: usize, interned: &mut Interned, generated: Option<bool>) -> Self {
        let generated =
            generated.unwrap_or_else(|| Self::generated(&meta.tool_name, &meta.args_json) == meta.tool_description);
        let tool_name = interned.text(&meta.tool_name);
        let query_id = meta.query_id.as_deref().map(|q| interned.text(q));
        let args_hash = hash_bytes(&meta.args_hash);
        let filepath = StoredPath::new(filepath, &args_hash.unwrap_or_default(), |t| interned.text(t));
        let from_path = filepath.ms().is_some_and(|ms| iso_timestamp(ms) == meta.timestamp);
        let task = meta.task_id.as_ref().and_then(|n| n.as_i64()).and_then(|n| i32::try_from(n).ok());
        let task = task.filter(|&n| n != NO_TASK);
        let rare = Rare {
            tool_description: (!generated).then(|| meta.tool_description.into()),
            task_id: meta.task_id.filter(|_| task.is_none()),
            tool_call_id: meta.tool_call_id.map(Into::into),
            args_hash: args_hash.is_none().then(|| meta.args_hash.into()),
            timestamp: (!from_path).then(|| {
                match session::parse_iso_ms(&meta.timestamp).filter(|&ms| iso_timestamp(ms) == meta.timestamp) {
                    Some(ms) => Stamp::Ms(ms),
                    None => Stamp::Text(meta.timestamp.into()),
                }
            }),
        };
        Entry {
            filepath,
            tool_name,
            args: interned.args(Args { hash: args_hash.unwrap_or_default(), json: meta.args_json.into() }),
            task: task.unwrap_or(NO_TASK),
            query_id,
            size: u32::try_from(size).unwrap_or(u32::MAX),
            written: false,
            result_hash: [0, 0],
            rare: (rare != Rare::default()).then(|| Box::new(rare)),
        }
    }

    fn rare(&self) -> Option<&Rare> {
        self.rare.as_deref()
    }

    /// The hash of the result's JSON text, when this manager saved the record.
    fn result_hash(&self) -> Option<u64> {
        let [high, low] = self.result_hash;
        Some((u64::from(high) << 32) | u64::from(low)).filter(|&h| h != 0)
    }

    /// Notes the hash of the result's JSON text (a hash of 0 is kept as 1).
    fn set_result_hash(&mut self, hash: u64) {
        let hash = hash.max(1);
        self.result_hash = [(hash >> 32) as u32, hash as u32];
    }

    /// Whether the pointer's path is `path`, byte for byte.
    fn path_is(&self, path: &str) -> bool {
        self.filepath.is(path, &self.args.hash)
    }

    /// The pointer's path.
    fn path_text(&self) -> String {
        self.filepath.text(&self.args.hash)
    }

    fn task_id(&self) -> Option<Number> {
        match self.task {
            NO_TASK => self.rare().and_then(|r| r.task_id.clone()),
            n => Some(Number::from(n)),
        }
    }

    fn push_args_hash(&self, out: &mut String) {
        match self.rare().and_then(|r| r.args_hash.as_deref()) {
            Some(text) => out.push_str(text),
            None => crate::naming::push_hex(&self.args.hash, out),
        }
    }

    fn push_timestamp(&self, out: &mut String) {
        match (self.rare().and_then(|r| r.timestamp.as_ref()), self.filepath.ms()) {
            (Some(Stamp::Text(text)), _) => out.push_str(text),
            (Some(&Stamp::Ms(ms)), _) | (None, Some(ms)) => push_iso_timestamp(ms, out),
            // `Entry::new` keeps the text of any timestamp the path does not give.
            (None, None) => {}
        }
    }

    /// The key duplicates share (`None` when the result is not known): a 32-bit hash, so
    /// a table of them takes 8-byte slots. Two keys may collide (at 100,000 pointers, a
    /// pair or so): [`State::latest_copy`] is a hint, and a collision only costs time.
    fn duplicate_key(&self) -> Option<u32> {
        // What `duplicates` compares, fed to one hasher; 0xff (never in UTF-8) ends the name.
        let mut hasher = ResultHasher::default();
        hasher.update(self.tool_name.as_bytes());
        hasher.update(&[0xff]);
        hasher.update(&self.args.hash);
        if let Some(text) = self.rare().and_then(|r| r.args_hash.as_deref()) {
            hasher.update(text.as_bytes());
        }
        hasher.update(&self.result_hash()?.to_le_bytes());
        let h = hasher.finish();
        Some((h >> 32) as u32 ^ h as u32)
    }

    /// Whether `other` holds the same tool, args and result (both saved by this manager).
    fn duplicates(&self, other: &Entry) -> bool {
        self.result_hash().is_some()
            && self.result_hash() == other.result_hash()
            && self.tool_name == other.tool_name
            && self.args.hash == other.args.hash
            && self.rare().and_then(|r| r.args_hash.as_ref()) == other.rare().and_then(|r| r.args_hash.as_ref())
    }

    /// The description `describe` makes of a tool name and args text: [`Entry::description`]
    /// makes it again, byte for byte (`describe` is a pure function of the two).
    fn generated(tool_name: &str, args_json: &str) -> String {
        let args: Value = from_json(args_json).unwrap_or(Value::Null);
        crate::describe::describe(tool_name, &args)
    }

    /// The pointer's description: the one kept, or the generated one.
    fn description(&self) -> std::borrow::Cow<'_, str> {
        match self.rare().and_then(|r| r.tool_description.as_deref()) {
            Some(text) => std::borrow::Cow::Borrowed(text),
            None => std::borrow::Cow::Owned(Self::generated(&self.tool_name, &self.args.json)),
        }
    }

    fn meta(&self) -> RecordMeta {
        let (mut args_hash, mut timestamp) = (String::new(), String::new());
        self.push_args_hash(&mut args_hash);
        self.push_timestamp(&mut timestamp);
        RecordMeta {
            tool_name: self.tool_name.to_string(),
            tool_description: self.description().into_owned(),
            args_json: self.args.json.to_string(),
            args_hash,
            timestamp,
            task_id: self.task_id(),
            query_id: self.query_id.as_deref().map(str::to_owned),
            tool_call_id: self.rare().and_then(|r| r.tool_call_id.as_deref()).map(str::to_owned),
        }
    }

    fn size(&self) -> usize {
        self.size as usize
    }

    /// The pointer's JSON (SPEC §2 fields, plus `argsHash`, `timestamp`, `size`).
    /// The JS glue copies these fields by name (pkg-template/pointers.js): a new field goes there too.
    /// The digest its handles are made of (SPEC §3: from its file name alone).
    fn handle_digest(&self) -> u64 {
        let path = self.path_text();
        handle::digest(path.rsplit('/').next().unwrap_or(&path))
    }

    /// Its pointer as JSON, its handle `handle_len` base32 characters long.
    fn pointer_json(&self, out: &mut String, handle_len: usize) {
        // The tail (the parts after the prefix) holds no `/` and nothing JSON escapes.
        let (head, tail) = self.filepath.split(&self.args.hash);
        let push_path = |out: &mut String, head: &str| {
            push_json_str(out, head);
            out.pop();
            out.push_str(tail.as_str());
            out.push('"');
        };
        out.push_str("{\"filepath\":");
        push_path(out, head);
        out.push_str(",\"filename\":");
        push_path(out, head.rsplit('/').next().unwrap_or(head));
        out.push_str(",\"handle\":\"");
        handle::push_handle(out, self.handle_digest(), handle_len);
        out.push_str("\",\"toolName\":");
        push_json_str(out, &self.tool_name);
        out.push_str(",\"toolDescription\":");
        push_json_str(out, &self.description());
        out.push_str(",\"args\":");
        out.push_str(&self.args.json);
        if let Some(task) = self.task_id() {
            out.push_str(",\"taskId\":");
            out.push_str(&task.to_string());
        }
        if let Some(query) = &self.query_id {
            out.push_str(",\"queryId\":");
            push_json_str(out, query);
        }
        if let Some(call) = self.rare().and_then(|r| r.tool_call_id.as_deref()) {
            out.push_str(",\"toolCallId\":");
            push_json_str(out, call);
        }
        out.push_str(",\"argsHash\":\"");
        self.push_args_hash(out);
        out.push_str("\",\"timestamp\":\"");
        self.push_timestamp(out);
        out.push_str("\",\"size\":");
        out.push_str(&self.size.to_string());
        out.push('}');
    }
}

#[derive(Default)]
struct State {
    /// The filename counter: per manager, from 0.
    counter: u64,
    /// Save order of pointers (resumed ones first).
    next_seq: u64,
    /// Pointers by slot (the order they were added; a slot never changes).
    entries: Paged<Entry>,
    /// Tool names, query ids and args, shared by the pointers.
    interned: Interned,
    /// Slots in save order (ascending `seq`).
    order: Vec<u32>,
    slot_by_path: PathSlots,
    /// The pointers' terms, by slot.
    index: Index,
    /// The pointers' embedding vectors (the `embed` hook's), by slot.
    vectors: Vectors,
    /// Bumped whenever slots are forgotten, so a list of slots taken earlier is
    /// known to be stale.
    epoch: u32,
    /// The latest slot saved with each duplicate key (tool, args hash, result hash): a
    /// slot other than the pointer's own says a later copy may exist (two keys may share
    /// a hash), so selection ranks every candidate to find it.
    latest_copy: HashMap<u32, u32, std::hash::BuildHasherDefault<Prehashed>>,
    /// Records held in memory, by filepath, and those not yet being written out.
    memory: Held,
    memory_bytes: usize,
    /// Paths this manager wrote to storage that no pointer holds (the pointers' entries
    /// have the `written` flag): those of pointers forgotten (`clearPointers`, a rebuild)
    /// or never added (the index was full). A pointer added again at such a path takes
    /// it back as its flag.
    orphans: HashSet<Rc<str>>,
    /// The records retention counts, oldest first; none without a cap (see
    /// [`ContextManager::own`]).
    owned: Ledger,
    /// Slots whose pointer was evicted (their entries stay until [`State::compact`]).
    dead: usize,
    /// Saved records whose content is not indexed yet: filepath and result JSON text, in
    /// save order ([`ContextManager::index_content`]).
    unindexed: VecDeque<(String, String)>,
    unindexed_bytes: usize,
    /// Persisted records whose content is indexed but in no segment this manager wrote
    /// or read: filepath and content terms, for the next segment (SPEC §4).
    unsegmented: crate::select::segment::Builder,
    /// How many live pointers share each short handle (SPEC §3): those that share one
    /// get long handles.
    handle_keys: HashMap<u64, u32>,
}

/// Filepath → slot, keyed by a 32-bit hash of the path so the map does not hold a second
/// copy of every filepath (the entries have them) and takes 8 bytes a pointer; paths
/// whose hash is taken go to `collisions` (at 100,000 paths, a few), so a weak hash costs
/// time, never correctness. Selecting over a list of pointers looks up every filepath
/// given: the hash is a fast one (FxHash's word-at-a-time step, then MurmurHash3's
/// finaliser so every bit mixes), and the map only spreads it to 64 bits.
#[derive(Default)]
struct PathSlots {
    by_hash: HashMap<u32, u32, std::hash::BuildHasherDefault<Prehashed>>,
    collisions: HashMap<Box<str>, u32>,
}

/// A `Hasher` for keys that are hashes already: it spreads the `u32` it is given over 64
/// bits (the map takes its buckets from the low bits and its tags from the top ones).
#[derive(Default)]
struct Prehashed(u64);

impl std::hash::Hasher for Prehashed {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8) | u64::from(b);
        }
    }

    fn write_u32(&mut self, n: u32) {
        self.0 = (u64::from(n) << 32) | u64::from(n);
    }
}

impl PathSlots {
    fn key(path: &str) -> u32 {
        // MurmurHash3's finaliser over the FxHash of the path.
        let mut h = result_hash(Some(path.as_bytes()));
        h ^= h >> 33;
        h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
        h ^= h >> 33;
        h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
        (h ^ (h >> 33)) as u32
    }

    fn get(&self, path: &str, entries: &Paged<Entry>) -> Option<u32> {
        self.find(path, |slot, path| entries[slot as usize].path_is(path))
    }

    fn insert(&mut self, path: &str, slot: u32, entries: &Paged<Entry>) {
        self.put(path, slot, |slot, path| entries[slot as usize].path_is(path));
    }

    fn remove(&mut self, path: &str, entries: &Paged<Entry>) {
        self.take(path, |slot, path| entries[slot as usize].path_is(path));
    }

    /// The slot of `path`; `is(slot, path)`: whether the path at `slot` is `path`.
    fn find(&self, path: &str, is: impl Fn(u32, &str) -> bool) -> Option<u32> {
        match self.by_hash.get(&Self::key(path)) {
            Some(&slot) if is(slot, path) => Some(slot),
            _ => self.collisions.get(path).copied(),
        }
    }

    /// Puts `path` at `slot` (the path's slot before, if any, is replaced).
    fn put(&mut self, path: &str, slot: u32, is: impl Fn(u32, &str) -> bool) {
        match self.by_hash.entry(Self::key(path)) {
            std::collections::hash_map::Entry::Occupied(mut o) => {
                if is(*o.get(), path) {
                    o.insert(slot);
                } else {
                    self.collisions.insert(path.into(), slot);
                }
            }
            std::collections::hash_map::Entry::Vacant(v) => {
                v.insert(slot);
            }
        }
    }

    /// Forgets `path`.
    fn take(&mut self, path: &str, is: impl Fn(u32, &str) -> bool) {
        let key = Self::key(path);
        if matches!(self.by_hash.get(&key), Some(&slot) if is(slot, path)) {
            self.by_hash.remove(&key);
        } else {
            self.collisions.remove(path);
        }
    }

    fn clear(&mut self) {
        self.by_hash.clear();
        self.collisions.clear();
    }
}

impl State {
    fn slot_of(&self, path: &str) -> Option<u32> {
        self.slot_by_path.get(path, &self.entries)
    }

    fn entry(&self, path: &str) -> Option<&Entry> {
        self.slot_of(path).map(|slot| &self.entries[slot as usize])
    }

    /// Adds a pointer, `seq` in save order; `false` when the index is full.
    fn add(&mut self, seq: u64, entry: Entry, terms: &Terms) -> bool {
        let Some(slot) = self.index.add(seq, terms) else {
            if entry.written {
                self.orphans.insert(entry.path_text().into());
            }
            return false;
        };
        self.place(seq, slot, entry, true);
        true
    }

    /// Holds `entry` as the pointer of index slot `slot` (just added to the index, so the
    /// next entry), saved in order `seq`. `sorted`: its place in `order` is found now;
    /// else it goes last, and the caller sorts `order` once it has placed them all.
    fn place(&mut self, seq: u64, slot: u32, mut entry: Entry, sorted: bool) {
        debug_assert_eq!(slot as usize, self.entries.len(), "an entry's slot is the index's");
        let path = entry.path_text();
        entry.written |= self.orphans.remove(path.as_str());
        let sharing = self.handle_keys.entry(handle::short_key(entry.handle_digest())).or_insert(0);
        *sharing += 1;
        if *sharing == 2 {
            // A pointer listed before with a short handle now has a long one: lists kept
            // by slot (the JS glue's) are stale.
            self.epoch = self.epoch.wrapping_add(1);
        }
        if sorted {
            let at = self.order.partition_point(|&s| self.index.order(s) < seq);
            self.order.insert(at, slot);
        } else {
            self.order.push(slot);
        }
        self.entries.push(entry);
        self.slot_by_path.insert(&path, slot, &self.entries);
    }

    /// How long the handle of `entry` (a live pointer's) is: long when another live
    /// pointer shares its short one.
    fn handle_len(&self, entry: &Entry) -> usize {
        let shared = self.handle_keys.get(&handle::short_key(entry.handle_digest())).is_some_and(|&n| n > 1);
        if shared {
            handle::LONG
        } else {
            handle::SHORT
        }
    }

    /// Notes that this manager wrote the record at `path`.
    fn mark_written(&mut self, path: &str) {
        match self.slot_of(path).and_then(|slot| self.entries.get_mut(slot as usize)) {
            Some(entry) => entry.written = true,
            None => {
                self.orphans.insert(path.into());
            }
        }
    }

    /// Forgets that this manager wrote the record at `path` (it is removed).
    fn unmark_written(&mut self, path: &str) {
        if let Some(entry) = self.slot_of(path).and_then(|slot| self.entries.get_mut(slot as usize)) {
            entry.written = false;
        }
        self.orphans.remove(path);
    }

    /// Whether this manager wrote the record at `path`.
    fn is_written(&self, path: &str) -> bool {
        self.entry(path).is_some_and(|e| e.written) || self.orphans.contains(path)
    }

    /// The paths this manager wrote.
    fn written_paths(&self) -> Vec<String> {
        let live = self.order.iter().map(|&slot| &self.entries[slot as usize]).filter(|e| e.written);
        live.map(|e| e.path_text()).chain(self.orphans.iter().map(|p| p.to_string())).collect()
    }

    /// Forgets every path this manager wrote.
    fn forget_written(&mut self) {
        for &slot in &self.order {
            if let Some(entry) = self.entries.get_mut(slot as usize) {
                entry.written = false;
            }
        }
        self.orphans.clear();
    }

    /// Drops the pointer at `path`, and its index entry; `false` when there is none.
    fn remove_pointer(&mut self, path: &str) -> bool {
        let Some(slot) = self.slot_of(path) else { return false };
        let key = handle::short_key(self.entries[slot as usize].handle_digest());
        if let Some(n) = self.handle_keys.get_mut(&key) {
            *n -= 1;
            match *n {
                0 => {
                    self.handle_keys.remove(&key);
                }
                // The one left gets its short handle back: lists kept by slot are stale.
                1 => self.epoch = self.epoch.wrapping_add(1),
                _ => {}
            }
        }
        let seq = self.index.order(slot);
        if self.entries[slot as usize].written {
            self.orphans.insert(path.into());
        }
        self.index.remove(slot);
        self.vectors.remove(slot);
        // `order` is sorted by seq: find the slot without a scan.
        let at = self.order.partition_point(|&s| self.index.order(s) < seq);
        if self.order.get(at) == Some(&slot) {
            self.order.remove(at);
        }
        self.slot_by_path.remove(path, &self.entries);
        self.dead += 1;
        true
    }

    /// Whether evicted slots hold as much as the live ones (and at least [`COMPACT_FROM`]).
    fn compaction_due(&self) -> bool {
        self.dead >= COMPACT_FROM && self.dead >= self.order.len()
    }

    /// Drops the entries of evicted pointers: the live ones get new slots, in save
    /// order, and the index moves its postings to them (the content indexed at save time
    /// is kept: it cannot be recomputed from the pointer). Slots taken earlier are stale
    /// (the epoch moves).
    fn compact(&mut self) {
        let order = std::mem::take(&mut self.order);
        let mut new_slot: Vec<Option<u32>> = vec![None; self.entries.len()];
        for (new, &old) in order.iter().enumerate() {
            new_slot[old as usize] = Some(new as u32);
        }
        self.index.remap(&new_slot);
        self.vectors.remap(&new_slot);
        let mut old: Vec<Option<Entry>> = std::mem::take(&mut self.entries).into_iter().map(Some).collect();
        self.entries = order.iter().filter_map(|&s| old[s as usize].take()).collect();
        drop(old);
        self.order = (0..self.entries.len() as u32).collect();
        self.interned.prune();
        self.slot_by_path.clear();
        for slot in 0..self.entries.len() as u32 {
            let path = self.entries[slot as usize].path_text();
            self.slot_by_path.insert(&path, slot, &self.entries);
        }
        // Made again from the live entries, in save order: a key whose latest copy was
        // evicted names the latest live one (after a 32-bit collision too).
        self.latest_copy.clear();
        for slot in 0..self.entries.len() as u32 {
            if let Some(key) = self.entries[slot as usize].duplicate_key() {
                self.latest_copy.insert(key, slot);
            }
        }
        self.dead = 0;
        self.epoch = self.epoch.wrapping_add(1);
    }

    fn forget_pointers(&mut self) {
        for &slot in &self.order {
            let entry = &self.entries[slot as usize];
            if entry.written {
                self.orphans.insert(entry.path_text().into());
            }
        }
        self.entries.clear();
        self.interned.clear();
        self.order.clear();
        self.slot_by_path.clear();
        self.index.clear();
        self.vectors.clear();
        self.unindexed.clear();
        self.unindexed_bytes = 0;
        self.unsegmented.clear();
        self.handle_keys.clear();
        self.dead = 0;
        self.latest_copy.clear();
        self.epoch = self.epoch.wrapping_add(1);
    }
}

/// The tool-context store. See the crate docs for an example.
pub struct ContextManager<S> {
    storage: S,
    options: Options,
    dir: String,
    state: RefCell<State>,
    session: Option<Session>,
    gate: Rc<Gate>,
    /// This manager's turn at the session lock, natively (in wasm the driver keeps one
    /// per lock name): so an older manifest never lands after a newer one.
    turn: Mutex<()>,
    /// A background segment write is under way.
    segmenting: Cell<bool>,
}

/// A manager's session: its folder and the manifest it keeps up to date.
struct Session {
    id: String,
    dir: String,
    resume: bool,
    manifest: RefCell<Manifest>,
    /// Entries added since the manifest was last written.
    dirty: Cell<usize>,
    /// Relative paths evicted since the manifest was last written: a merge with the
    /// manifest on disk must not bring them back.
    evicted: RefCell<HashSet<String>>,
    last_write_ms: Cell<Option<i64>>,
    /// Manifest writes between their lock and their unlock (a flush waits for them).
    writes_in_flight: Cell<usize>,
    /// `endSession` holds (or held) the session's lock to remove it: segment writes stop.
    ended: Cell<bool>,
}

/// Evicted slots kept before the pointer table is compacted (and at least as many as live ones).
pub const COMPACT_FROM: usize = 1024;

/// Manifest writes are coalesced: at most one a second, or every this many records.
const MANIFEST_EVERY_MS: i64 = 1000;
const MANIFEST_EVERY_RECORDS: usize = 64;

impl<S: Storage> ContextManager<S> {
    /// A manager over `storage` with `options`. The context dir is normalised; it
    /// must not be empty or hold NUL or backslash characters.
    pub fn new(storage: S, mut options: Options) -> Result<Self> {
        options.retention.check()?;
        let dir = paths::normalize(&options.context_dir)
            .filter(|d| !d.is_empty() && d != "/")
            .ok_or_else(|| Error::invalid(format!("contextDir {:?} is not a usable folder", options.context_dir)))?;
        options.context_dir = dir.clone();
        let mut manager = ContextManager {
            storage,
            options,
            dir,
            state: RefCell::new(State::default()),
            session: None,
            gate: Rc::default(),
            turn: Mutex::new(()),
            segmenting: Cell::new(false),
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
                Some(Session {
                    dir: session::session_dir(&manager.dir, &id),
                    manifest: RefCell::new(Manifest::new(&id, &iso_timestamp(now))),
                    id,
                    resume,
                    dirty: Cell::new(0),
                    evicted: RefCell::new(HashSet::new()),
                    last_write_ms: Cell::new(None),
                    writes_in_flight: Cell::new(0),
                    ended: Cell::new(false),
                })
            }
        };
        Ok(manager)
    }

    /// A manager, ready: a new session's manifest is written, a named one is resumed.
    pub async fn open(storage: S, options: Options) -> Result<Self> {
        let manager = Self::new(storage, options)?;
        if let Some(job) = manager.opening() {
            manager.drive(job).await?;
        }
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

    /// The storage.
    pub fn storage(&self) -> &S {
        &self.storage
    }

    /// Number of pointers.
    pub fn len(&self) -> usize {
        self.state.borrow().order.len()
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
        if let Some(sink) = &self.options.on_debug {
            sink(&DebugEvent { message: message.into(), path: path.map(str::to_owned) });
        }
    }

    /// `Ok` unless the manager was opened read-only (then a typed `READ_ONLY` error).
    pub fn check_writable(&self) -> Result<()> {
        if self.options.read_only {
            return Err(Error::new(ErrorKind::ReadOnly, "this manager was opened with readOnly: it writes nothing"));
        }
        Ok(())
    }

    fn random_part(&self) -> Result<String> {
        match &self.options.random {
            Some(random) => Ok(random_chars(RANDOM_LEN, || {
                let x = random();
                let x = if x.is_finite() { x.clamp(0.0, 0.999_999_999) } else { 0.0 };
                // Map [0, 1) onto 0..252 so random_chars' rejection never loops.
                (x * 252.0) as u8
            })),
            None => os_random_chars(RANDOM_LEN),
        }
    }

    /// Saves one tool output and returns its filepath. Nothing is written and no
    /// pointer is added when it fails.
    ///
    /// The save runs the same synchronous steps that the JavaScript driver runs (see
    /// [`ContextManager::begin_save`]); only the I/O is awaited here.
    pub async fn save(&self, input: SaveInput<'_>) -> Result<String> {
        let mut pending = match self.begin_save(input)? {
            Begun::Saved(filepath, after) => return Ok(self.finish_save(filepath, after).await),
            Begun::Write(pending) => pending,
        };
        loop {
            let written = if pending.terms.is_none() {
                // The result is indexed while the host writes it: the write is started
                // first (the task yields once it is queued), then the index work runs.
                let indexed = async {
                    yield_now().await;
                    (pending.terms_of(), pending.content(self.options.content_bytes))
                };
                let (written, (terms, content)) =
                    futures_util::future::join(self.write_record(&pending), indexed).await;
                (pending.terms, pending.content) = (Some(terms), content);
                written
            } else {
                self.write_record(&pending).await
            };
            match self.record_written(pending, written) {
                Written::Saved(filepath, after) => return Ok(self.finish_save(filepath, after).await),
                Written::Retry(next) => pending = next,
                Written::Remove(failed) => {
                    // The file did not exist before (the write was exclusive), so
                    // whatever a failed write left there is ours to remove.
                    let _ = self.storage.remove(&failed.path).await;
                    return Err(failed.into_error());
                }
                Written::Failed(e) => return Err(e),
            }
        }
    }

    /// The record of `pending` written to its path exclusively.
    async fn write_record(&self, pending: &PendingSave) -> Result<()> {
        let exclusive = WriteOptions { exclusive: true };
        match pending.body {
            Some(body) => self.storage.write_parts(&pending.path, &pending.bytes, body, b"}", exclusive).await,
            None => self.storage.write(&pending.path, &pending.bytes, exclusive).await,
        }
    }

    /// The follow-up of a save, if it has one; the filepath.
    async fn finish_save(&self, filepath: String, after: Option<Job>) -> String {
        if let Some(after) = after {
            // Its failures went to onDebug: the record is saved.
            let _ = self.drive(after).await;
        }
        // Natively there is no background: a segment due is written here (JavaScript's
        // driver starts it after the save resolves).
        if let Some(job) = self.begin_persist_index() {
            let _ = self.drive(job).await;
        }
        filepath
    }

    /// The first step of a save, synchronous: checks, the args' hash, the description,
    /// the record's bytes, its size checks and its name. A record held in memory (smaller
    /// than `persistThreshold`) is saved by this step; else the caller writes
    /// [`PendingSave::record`] exclusively to [`PendingSave::path`], has the result
    /// indexed meanwhile ([`PendingSave::index`]), and hands the outcome to
    /// [`ContextManager::record_written`]. The pending save holds the manager's gate:
    /// `close()` waits for it.
    pub fn begin_save(&self, input: SaveInput<'_>) -> Result<Begun> {
        let pass = self.gate.enter("saveContext")?;
        self.check_writable()?;
        if let Some(s) = &self.session {
            // A save after endSession brings the session back: its segments are written again.
            s.ended.set(false);
        }
        self.compact();
        let args: Value = from_json(input.args_json)
            .map_err(|e| Error::new(ErrorKind::NotSerializable, format!("args are not canonicalisable JSON: {e}")))?;
        if !args.is_object() {
            return Err(Error::invalid("args must be a plain object"));
        }
        let hash = args_hash(&args)?;
        let hash_of_result = match (&input.result_body, input.result_json) {
            (Some(body), _) => body.hash,
            (None, Some(result)) => {
                check_no_lone_surrogates(result)?;
                Some(result_hash(Some(result.as_bytes())))
            }
            (None, None) => Some(result_hash(None)),
        };
        let generated = input.description.is_none();
        let description = match input.description {
            Some(d) => d,
            None => crate::describe::describe(input.tool_name, &args),
        };
        let dir = match &input.category {
            None => self.record_root().to_owned(),
            Some(c) if self.session.is_some() => {
                session::check_category(c)?;
                paths::join(self.record_root(), c)
            }
            Some(_) => return Err(Error::invalid("category needs a session (the session option)")),
        };
        let (seq, counter, now) = {
            let mut state = self.state.borrow_mut();
            let (seq, counter) = (state.next_seq, state.counter);
            state.next_seq += 1;
            state.counter += 1;
            (seq, counter, (self.options.clock)())
        };
        let meta = RecordMeta {
            tool_name: input.tool_name.to_owned(),
            tool_description: description,
            args_json: input.args_json.to_owned(),
            args_hash: hash,
            timestamp: iso_timestamp(now),
            task_id: input.task_id,
            query_id: input.query_id,
            tool_call_id: input.tool_call_id,
        };
        // The record: whole, or the header before a body the host holds (and `}`).
        let (bytes, size, indexed) = match &input.result_body {
            Some(body) => {
                let head = meta.encode_head();
                let size = head.len() + body.len + 1;
                (head, size, Indexed::Prefix(body.prefix.to_owned()))
            }
            None => {
                let bytes = meta.encode(input.result_json);
                let size = bytes.len();
                // The result's text ends the record, before its `}`.
                (bytes, size, input.result_json.map_or(Indexed::None, |r| Indexed::Tail(r.len())))
            }
        };
        if size > self.options.max_record_bytes {
            return Err(Error::new(
                ErrorKind::TooLarge,
                format!("record of {size} bytes exceeds maxRecordBytes ({})", self.options.max_record_bytes),
            ));
        }
        if let Some(cap) = self.options.retention.max_bytes.filter(|&cap| size > cap) {
            // It could only be kept by evicting itself: refuse it, as a record too large.
            return Err(Error::new(
                ErrorKind::TooLarge,
                format!("record of {size} bytes exceeds retention.maxBytes ({cap})"),
            ));
        }
        let mut pending = PendingSave {
            pass,
            seq,
            now,
            size,
            tool: sanitize_tool_name(input.tool_name),
            dir,
            counter,
            meta,
            generated,
            result_hash: hash_of_result,
            args,
            bytes,
            body: input.result_body.map(|b| b.handle),
            indexed,
            path: String::new(),
            attempts: 0,
            terms: None,
            content: None,
        };
        pending.path = pending.name(&self.random_part()?);
        if size >= self.options.persist_threshold {
            return Ok(Begun::Write(Box::new(pending)));
        }
        // A small record: held in memory (its body, if the host holds it, copied in).
        pending.index(self.options.content_bytes);
        if let Some(handle) = pending.body.take() {
            let body = self
                .storage
                .body(handle)
                .ok_or_else(|| Error::new(ErrorKind::Internal, "the storage no longer holds the result's bytes"))?;
            pending.result_hash.get_or_insert_with(|| result_hash(Some(&body)));
            pending.bytes.extend_from_slice(&body);
            pending.bytes.push(b'}');
        }
        {
            let mut state = self.state.borrow_mut();
            let State { memory, interned, .. } = &mut *state;
            memory.insert(&pending.path, Rc::from(std::mem::take(&mut pending.bytes)), interned);
            state.memory_bytes += size;
        }
        let (filepath, after) = self.commit_save(pending, false);
        Ok(Begun::Saved(filepath, after))
    }

    /// The step after the write of a pending save: on success the pointer is added
    /// ([`Written::Saved`]); a taken name draws another ([`Written::Retry`]); any other
    /// failure leaves a file to remove before the error is reported ([`Written::Remove`]).
    pub fn record_written(&self, mut pending: Box<PendingSave>, written: Result<()>) -> Written {
        match written {
            Ok(()) => {
                pending.index(self.options.content_bytes);
                let (filepath, after) = self.commit_save(*pending, true);
                Written::Saved(filepath, after)
            }
            Err(e) if e.kind() == ErrorKind::AlreadyExists => {
                self.debug("record name taken, drawing another", Some(&pending.path));
                pending.attempts += 1;
                if pending.attempts >= NAME_ATTEMPTS {
                    // The last name taken is the cause.
                    return Written::Failed(
                        Error::new(ErrorKind::Storage, "no free record name after repeated attempts").with_source(e),
                    );
                }
                match self.random_part() {
                    Ok(random) => {
                        pending.path = pending.name(&random);
                        Written::Retry(pending)
                    }
                    Err(e) => Written::Failed(e),
                }
            }
            Err(error) => {
                Written::Remove(FailedSave { path: std::mem::take(&mut pending.path), error, _pass: pending.pass })
            }
        }
    }

    /// Adds the pointer of a saved record (`written`: persisted just now, no await
    /// since); the follow-up the save needs, if any.
    fn commit_save(&self, pending: PendingSave, written: bool) -> (String, Option<Job>) {
        let hash = pending
            .result_hash
            .or_else(|| pending.body.and_then(|h| self.storage.body(h)).map(|b| result_hash(Some(&b))));
        let PendingSave { pass, seq, now, size, meta, generated, path: filepath, terms, content, .. } = pending;
        let terms = terms.unwrap_or_default();
        let added = {
            let mut state = self.state.borrow_mut();
            if self.keeps_ledger() {
                state.owned.add(&filepath, now, seq, size);
            }
            // A reconcile may have adopted the file while its write was answering: this
            // save's pointer (with the content it indexed) replaces that one.
            state.remove_pointer(&filepath);
            // A description the save made is describe's; one given is compared.
            let mut entry = Entry::new(&filepath, meta, size, &mut state.interned, generated.then_some(true));
            entry.written = written;
            // A hash not known (the host gave none and no longer holds the bytes): never a
            // duplicate, rather than a made-up one.
            if let Some(hash) = hash {
                entry.set_result_hash(hash);
            }
            let key = entry.duplicate_key();
            let added = state.add(seq, entry, &terms);
            if let (true, Some(key)) = (added, key) {
                let slot = (state.entries.len() - 1) as u32;
                state.latest_copy.insert(key, slot);
            }
            let nothing_to_index = added && content.is_none();
            if let (true, Some(json)) = (added, content) {
                state.unindexed_bytes += json.len();
                state.unindexed.push_back((filepath.clone(), json));
            }
            (added, nothing_to_index)
        };
        let (added, nothing_to_index) = added;
        if nothing_to_index && written {
            // No content to wait for: it waits for the next segment as it is.
            self.to_segment(&filepath, Terms::default());
        }
        if !added {
            self.debug("the index is full: this record has no pointer", Some(&filepath));
        }
        self.debug("saved context", Some(&filepath));
        if written {
            self.track(&filepath, &terms);
        }
        if self.state.borrow().unindexed_bytes > UNINDEXED_BYTES {
            self.index_content();
        }
        // Follow-up I/O: spilling over the memory budget, retention, the session manifest.
        let spill = {
            let state = self.state.borrow();
            state.memory_bytes > self.options.memory_budget && state.memory.any_queued()
        };
        let after =
            (spill || self.keeps_ledger() || self.session.is_some()).then(|| Job::after_save(pass, filepath.clone()));
        (filepath, after)
    }

    /// Writes out every record held in memory.
    pub async fn flush(&self) -> Result<()> {
        let pass = self.gate.enter("flush")?;
        self.drive(Job::write_out(Some(pass))).await
    }

    /// The first step of `flush`: its job (see [`ContextManager::job_step`]).
    pub fn begin_flush(&self) -> Result<Job> {
        Ok(Job::write_out(Some(self.gate.enter("flush")?)))
    }

    /// Closes the manager: later operations fail with [`ErrorKind::Closed`]; the
    /// operations in flight finish; the records held in memory are written out and the
    /// session manifest brought up to date. Once it resolves nothing of this manager
    /// runs any more (no write, no lock). Closing a closed manager does nothing. If
    /// writing out fails, the error is returned and the manager stays open with its
    /// records, so nothing is lost and `close` can be retried. Pointers stay readable.
    pub async fn close(&self) -> Result<()> {
        loop {
            match self.gate.phase() {
                Phase::Closed => return Ok(()),
                Phase::Closing => self.gate.settled().await,
                Phase::Open => break,
            }
        }
        self.gate.set(Phase::Closing);
        self.gate.idle().await;
        self.drive(Job::close()).await
    }

    /// `close` in steps, its first: closed already ([`Closing::Done`]), or the manager is
    /// closing now, and the next step is [`ContextManager::close_when_idle`]'s. Another
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
    /// job (which ends with [`ContextManager::end_close`]), or [`Closing::Busy`] while one is left.
    pub fn close_when_idle(&self) -> Closing {
        if self.gate.is_idle() {
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

    /// Fails with [`ErrorKind::Closed`] once `close` has begun (for operations that do
    /// no I/O but answer through a Promise).
    pub fn check_open(&self, what: &str) -> Result<()> {
        self.gate.enter(what).map(drop)
    }

    /// The pointers matching `filter`, as a JSON array, in save order.
    pub fn pointers_json(&self, filter: Filter<'_>) -> String {
        let state = self.state.borrow();
        let mut out = String::from("[");
        for slot in self.slots_in(&state, filter) {
            if out.len() > 1 {
                out.push(',');
            }
            let entry = &state.entries[slot as usize];
            entry.pointer_json(&mut out, state.handle_len(entry));
        }
        out.push(']');
        out
    }

    /// The slots of the pointers matching `filter`, in save order. A slot names one
    /// pointer until the pointers are forgotten ([`ContextManager::epoch`] changes).
    pub fn slots(&self, filter: Filter<'_>) -> Vec<u32> {
        let state = self.state.borrow();
        self.slots_in(&state, filter).collect()
    }

    fn slots_in<'s>(&self, state: &'s State, filter: Filter<'s>) -> impl Iterator<Item = u32> + 's {
        // Every pointer's query id is the interned one: a query id never interned has no
        // pointer, and one that was is compared by address, not by its text.
        let query_id = filter.query_id.map(|q| state.interned.texts.get(q));
        state.order.iter().copied().filter(move |&slot| {
            let entry = &state.entries[slot as usize];
            let query_passes = match query_id {
                None => true,
                Some(None) => false,
                Some(Some(q)) => entry.query_id.as_ref().is_some_and(|e| Shared::ptr_eq(e, q)),
            };
            query_passes && filter.task_id.map_or(true, |t| entry.task_id().as_ref() == Some(t))
        })
    }

    /// Frees what evicted pointers still hold once they are as many as the live ones (at
    /// least [`COMPACT_FROM`]): an evicted pointer keeps its slot, so a pointer list
    /// handed out earlier stays valid, until this. Slots change (the epoch moves).
    /// Returns whether it compacted.
    pub fn compact(&self) -> bool {
        let mut state = self.state.borrow_mut();
        if !state.compaction_due() {
            return false;
        }
        state.compact();
        true
    }

    /// Slots held by the pointer table, evicted ones included (memory reports, tests).
    pub fn slots_held(&self) -> usize {
        self.state.borrow().entries.len()
    }

    /// Changes whenever slots are forgotten (`clear_pointers`, resume, rebuild).
    pub fn epoch(&self) -> u32 {
        self.state.borrow().epoch
    }

    /// The pointer in `slot`, as JSON, appended to `out`; `false` when there is none.
    pub fn pointer_json_of(&self, slot: u32, out: &mut String) -> bool {
        let state = self.state.borrow();
        let Some(entry) = state.entries.get(slot as usize) else { return false };
        entry.pointer_json(out, state.handle_len(entry));
        true
    }

    /// The slot of the pointer whose handle is `text` (SPEC §3: `ctx:` and base32, any
    /// case; a long handle or its short form). `Ok(None)`: no such handle here (or
    /// `text` is none). An `INVALID_ARGUMENT` error when a short handle names two records
    /// (their long handles tell them apart).
    pub fn slot_of_handle(&self, text: &str) -> Result<Option<u32>> {
        let Some(body) = handle::parse(text.trim()) else { return Ok(None) };
        let state = self.state.borrow();
        let mut found = None;
        for &slot in &state.order {
            if handle::names(&body, state.entries[slot as usize].handle_digest()) {
                if found.is_some() {
                    let message = format!("the handle {text:?} names more than one record: use a long handle");
                    return Err(Error::invalid(message));
                }
                found = Some(slot);
            }
        }
        Ok(found)
    }

    /// The filepath of the pointer in `slot`.
    pub fn filepath_of(&self, slot: u32) -> Option<String> {
        let mut out = String::new();
        self.push_filepath(slot, &mut out).then_some(out)
    }

    /// Appends the filepath of the pointer in `slot` to `out`; `false` when there is none.
    pub fn push_filepath(&self, slot: u32, out: &mut String) -> bool {
        let state = self.state.borrow();
        let Some(entry) = state.entries.get(slot as usize) else { return false };
        entry.filepath.push_to(out, &entry.args.hash);
        true
    }

    /// The record size of the pointer in `slot`.
    pub fn size_of_slot(&self, slot: u32) -> Option<usize> {
        self.state.borrow().entries.get(slot as usize).map(Entry::size)
    }

    /// The slot of this manager's pointer at `path`.
    pub fn slot_of(&self, path: &str) -> Option<u32> {
        self.state.borrow().slot_of(path)
    }

    /// Where the pointer a list taken at `epoch` had in `slot` is now: [`Listed::Slot`]
    /// while it is this manager's, else [`Listed::Gone`] with its filepath (evicted, or
    /// removed by a reconcile; a save that put a pointer back at that path gave it
    /// another slot, which is the one returned). `None` when the epoch moved or there
    /// never was such a slot: the slot may name another pointer, so it says nothing.
    pub fn resolve_slot(&self, epoch: u32, slot: u32) -> Option<Listed> {
        let state = self.state.borrow();
        if epoch != state.epoch {
            return None;
        }
        let entry = state.entries.get(slot as usize)?;
        if state.index.holds(slot) {
            return Some(Listed::Slot(slot));
        }
        let path = entry.path_text();
        Some(state.slot_of(&path).map_or(Listed::Gone(path), Listed::Slot))
    }

    /// Indexes the content of every record saved since the last call (near-real-time,
    /// SPEC §6): a save writes its record and adds its pointer with its metadata; the
    /// tokenising of its result waits until the next ranking, a session manifest's write,
    /// or [`UNINDEXED_BYTES`] of results waiting. Every ranking calls it first, so it sees
    /// every save acknowledged before it. A record whose pointer is gone is passed over.
    pub fn index_content(&self) {
        let waiting = {
            let mut state = self.state.borrow_mut();
            state.unindexed_bytes = 0;
            std::mem::take(&mut state.unindexed)
        };
        for (path, json) in waiting {
            let terms = {
                let mut state = self.state.borrow_mut();
                let Some(slot) = state.slot_of(&path) else { continue };
                let entry = &state.entries[slot as usize];
                let meta = entry.meta();
                let written = entry.written;
                let args: Value = from_json(&meta.args_json).unwrap_or(Value::Null);
                let terms = Terms::of_record_with_content(
                    &meta.tool_description,
                    &meta.tool_name,
                    &args,
                    Some(&json),
                    self.options.content_bytes,
                );
                state.index.add_content(slot, &terms);
                let persisted = !state.memory.contains(&path);
                (written.then(|| terms.clone()), persisted.then_some(terms))
            };
            if let Some(terms) = terms.0 {
                // The manifest entry gets the record's content terms.
                self.track(&path, &terms);
            }
            if let Some(terms) = terms.1 {
                self.to_segment(&path, terms);
            }
        }
    }

    /// How many saved records' content waits to be indexed (see
    /// [`ContextManager::index_content`]).
    pub fn content_waiting(&self) -> usize {
        self.state.borrow().unindexed.len()
    }

    /// Ranks `candidates` for `query` (seed contract: relevant first, fallback to all).
    /// `Scored::index` is a position in `candidates`; statistics are those of the
    /// candidates. Only the best `limit` are sorted and kept.
    pub fn rank(
        &self,
        query: &Query,
        candidates: &[Candidate],
        fallback: Fallback,
        strategy: Strategy,
        limit: Option<usize>,
    ) -> Ranking {
        self.index_content();
        let state = self.state.borrow();
        // The index ranks a slot once; a pointer given again is ranked from its terms,
        // so every candidate given is ranked, as the seed does.
        let mut seen = vec![false; state.entries.len()];
        let mut first = |slot: u32| match seen.get_mut(slot as usize) {
            Some(s) => !std::mem::replace(s, true),
            None => true,
        };
        let again: Vec<Option<Terms>> = candidates
            .iter()
            .map(|c| match c {
                Candidate::Known(slot) if !first(*slot) => {
                    Some(state.entries.get(*slot as usize).map(|e| terms_of(&e.meta())).unwrap_or_default())
                }
                _ => None,
            })
            .collect();
        let docs: Vec<Doc<'_>> = candidates
            .iter()
            .zip(&again)
            .map(|(c, again)| match (c, again) {
                (_, Some(terms)) | (Candidate::Foreign(terms), None) => Doc::Terms(terms),
                (Candidate::Known(slot), None) => Doc::Slot(*slot),
            })
            .collect();
        let mut ranking = state.index.rank_docs(query, &docs, strategy, limit);
        ranking.apply_fallback(fallback, 0..candidates.len().min(limit.unwrap_or(usize::MAX)));
        ranking
    }

    /// Collapses duplicates among `hits` (the same tool, args hash and result, saved by
    /// this manager): each counts once, at the place of its best-ranked copy, and the
    /// copy kept is the latest saved. `slot_of` gives a hit's slot (`None`: a pointer
    /// of no manager, never collapsed). Returns how many hits were dropped.
    pub fn collapse_duplicates(&self, hits: &mut Vec<Scored>, slot_of: impl Fn(usize) -> Option<u32>) -> usize {
        let state = self.state.borrow();
        let entry =
            |i: usize| slot_of(i).and_then(|s| state.entries.get(s as usize).map(|e| (e, state.index.order(s))));
        // Kept hits by result hash (the cheap part of the key), as places in `out`.
        let mut kept: HashMap<u64, Vec<usize>> = HashMap::new();
        let before = hits.len();
        let mut out: Vec<Scored> = Vec::with_capacity(before);
        for hit in hits.drain(..) {
            let Some((e, seq, hash)) = entry(hit.index).and_then(|(e, seq)| e.result_hash().map(|h| (e, seq, h)))
            else {
                out.push(hit);
                continue;
            };
            let places = kept.entry(hash).or_default();
            match places.iter().copied().find(|&p| entry(out[p].index).is_some_and(|(k, _)| k.duplicates(e))) {
                Some(p) => {
                    if entry(out[p].index).is_some_and(|(_, k_seq)| k_seq < seq) {
                        out[p].index = hit.index;
                    }
                }
                None => {
                    places.push(out.len());
                    out.push(hit);
                }
            }
        }
        *hits = out;
        before - hits.len()
    }

    /// Whether a later copy of the pointer at `slot` (same tool, args and result) was
    /// saved: a hint for selection, which then ranks every candidate to keep the latest.
    pub fn has_later_copy(&self, slot: u32) -> bool {
        let state = self.state.borrow();
        let key = state.entries.get(slot as usize).and_then(Entry::duplicate_key);
        key.and_then(|k| state.latest_copy.get(&k)).is_some_and(|&latest| latest != slot)
    }

    /// Ranks every pointer for `query` through the index: no text is rescanned.
    /// `Scored::index` is a slot; the fallback lists every slot in save order.
    pub fn rank_all(&self, query: &Query, fallback: Fallback, strategy: Strategy, limit: Option<usize>) -> Ranking {
        self.index_content();
        let state = self.state.borrow();
        let mut ranking = state.index.rank_all(query, strategy, limit);
        let order = state.order.iter().map(|&s| s as usize).take(limit.unwrap_or(usize::MAX));
        ranking.apply_fallback(fallback, order);
        ranking
    }

    /// Ranks the pointers `filter` lets through for `query`, through the index: no text
    /// is rescanned. `Scored::index` is a slot; statistics are those of the pointers
    /// ranked; the fallback lists them in save order.
    pub fn rank_matching(
        &self,
        query: &Query,
        filter: Filter<'_>,
        fallback: Fallback,
        strategy: Strategy,
        limit: Option<usize>,
    ) -> Ranking {
        if filter.is_all() {
            return self.rank_all(query, fallback, strategy, limit);
        }
        self.rank_slots(query, &self.slots(filter), fallback, strategy, limit)
    }

    /// Ranks the pointers in `slots` (as [`ContextManager::rank`] does); `Scored::index`
    /// is a slot.
    pub fn rank_slots(
        &self,
        query: &Query,
        slots: &[u32],
        fallback: Fallback,
        strategy: Strategy,
        limit: Option<usize>,
    ) -> Ranking {
        let candidates: Vec<Candidate> = slots.iter().map(|&s| Candidate::Known(s)).collect();
        let mut ranking = self.rank(query, &candidates, fallback, strategy, limit);
        ranking.hits.iter_mut().for_each(|h| h.index = slots[h.index] as usize);
        ranking
    }

    /// Gives the pointer at `path` its embedding vector (the host's `embed` hook's),
    /// for hybrid ranking; `false` (nothing kept) when there is no such pointer or the
    /// vector is refused (empty, zero, not finite, or of another dimension than those held).
    pub fn set_vector(&self, path: &str, vector: &[f32]) -> bool {
        let mut state = self.state.borrow_mut();
        let Some(slot) = state.slot_of(path) else { return false };
        state.vectors.set(slot, vector)
    }

    /// The best `k` of `candidates` (`(index, slot)` pairs) by the cosine of their
    /// vector with `query`, nearest first, those with a positive cosine only: their indices.
    pub fn nearest(&self, query: &[f32], candidates: impl Iterator<Item = (usize, u32)>, k: usize) -> Vec<usize> {
        self.state.borrow().vectors.top_k(query, candidates, k)
    }

    /// The description of this manager's pointer at `path`.
    pub fn description_of(&self, path: &str) -> Option<String> {
        self.state.borrow().entry(path).map(|e| e.description().into_owned())
    }

    /// The record size of this manager's pointer at `path`.
    pub fn size_of(&self, path: &str) -> Option<usize> {
        self.state.borrow().entry(path).map(Entry::size)
    }

    /// Whether `path` is the filepath of one of this manager's pointers.
    pub fn knows(&self, path: &str) -> bool {
        self.state.borrow().slot_of(path).is_some()
    }

    /// Forgets every pointer (records stay where they are).
    pub fn clear_pointers(&self) {
        self.state.borrow_mut().forget_pointers();
    }

    /// Removes the records this manager wrote and drops those held in memory. Never
    /// touches any other file. Every removal is attempted; the first failure is returned.
    pub async fn clear_context_dir(&self) -> Result<()> {
        let clearing = self.begin_clear("clearContextDir")?;
        self.remove_written(clearing).await
    }

    /// The first step of `clear_context_dir` and `clear` (`what`): the gate passed and the
    /// manager writable, what to remove. Without a session, the records held in memory are
    /// dropped here.
    pub(crate) fn begin_clear(&self, what: &str) -> Result<Clearing> {
        let pass = self.gate.enter(what)?;
        self.check_writable()?;
        if self.session.is_some() {
            let job = if what == "clear" { Job::clear_session(pass) } else { Job::end_session(Some(pass)) };
            return Ok(Clearing::Session(job));
        }
        let mut state = self.state.borrow_mut();
        state.memory.clear();
        state.memory_bytes = 0;
        Ok(Clearing::Files(pass, state.written_paths()))
    }

    /// The removals of `Clearing::Files`: a plan of one batch.
    pub(crate) fn remove_written_plan<'a>(&'a self, written: Vec<String>) -> impl Plan<Output = ()> + 'a
    where
        S: 'a,
    {
        let removes = written.iter().map(|p| Op::Remove(p.clone())).collect();
        plan::batch(removes, move |outcomes| self.written_removed(&written, outcomes))
    }

    /// The last step of the removal of the records this manager wrote, given how each
    /// removal of `written` ended: those removed are no longer its own; the first failure
    /// is the error.
    pub(crate) fn written_removed(&self, written: &[String], outcomes: Outcomes) -> Result<()> {
        let mut first_error = None;
        let mut state = self.state.borrow_mut();
        for (path, result) in written.iter().zip(outcomes) {
            match result {
                Ok(_) => state.unmark_written(path),
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
        let State { owned, .. } = &mut *state;
        let mut owned = std::mem::take(owned);
        owned.retain(|p| state.is_written(p));
        state.owned = owned;
        first_error.map_or(Ok(()), Err)
    }

    /// `clear_context_dir` after its first step.
    async fn remove_written(&self, clearing: Clearing) -> Result<()> {
        match clearing {
            Clearing::Session(job) => self.drive(job).await,
            Clearing::Files(_pass, written) => plan::run(&self.storage, self.remove_written_plan(written)).await,
        }
    }

    /// Adds a persisted record of this manager to the session manifest, with the top
    /// content terms of `terms` (its indexed terms).
    fn track(&self, path: &str, terms: &Terms) {
        let Some(s) = &self.session else { return };
        let Some(rel) = path.strip_prefix(&s.dir).and_then(|r| r.strip_prefix('/')) else { return };
        let state = self.state.borrow();
        let Some(entry) = state.entry(path) else { return };
        let meta = entry.meta();
        match ManifestEntry::new(&meta, entry.size(), &manifest_words(&meta)) {
            Ok(m) => {
                let m = m.with_content(terms);
                s.manifest.borrow_mut().context_files.insert(rel.to_owned(), m);
                s.dirty.set(s.dirty.get() + 1);
            }
            Err(e) => self.debug(format!("could not index a record in the manifest: {e}"), Some(path)),
        }
    }

    /// A record file's bytes read for the index: its metadata, size and the terms of its
    /// content; `None`, reported, when they are torn or foreign.
    fn adopted(&self, path: &str, bytes: &[u8]) -> Option<(RecordMeta, usize, Terms)> {
        match parse_record(bytes).and_then(|v| v.meta()) {
            Ok(meta) => Some((meta, bytes.len(), content_terms(bytes, self.options.content_bytes))),
            Err(e) => {
                self.debug(format!("skipped a record that does not parse: {e}"), Some(path));
                None
            }
        }
    }

    /// Replaces the pointers with those of `records` (relative to `dir`), in save order
    /// (the filenames' timestamp, then counter). `own`: they are the session's records,
    /// so retention counts them (with the records held in memory), and nothing else.
    /// `content_of(rel)`: the terms of the record's content (its passages): all of them
    /// when the record was read, or what its manifest entry keeps; a restored pointer
    /// ranks on them and its metadata.
    fn restore_pointers(
        &self,
        dir: &str,
        records: impl Iterator<Item = (String, RecordMeta, usize)>,
        segments: &[crate::select::segment::Segment],
        mut content_of: impl FnMut(&str) -> Option<Content>,
        own: bool,
    ) {
        // Each keyed once: by timestamp, counter and name.
        type Keyed = ((u64, u64, String), (String, RecordMeta, usize));
        let mut records: Vec<Keyed> = records
            .map(|record| {
                let rel = &record.0;
                let name = rel.rsplit('/').next().unwrap_or(rel);
                let mut parts = name.rsplitn(5, '_');
                let (_, counter, ts) = (parts.next(), parts.next(), parts.next());
                let num = |p: Option<&str>| p.and_then(|x| x.parse::<u64>().ok()).unwrap_or(0);
                ((num(ts), num(counter), name.to_owned()), record)
            })
            .collect();
        crate::sort::sort_by(&mut records, |a, b| a.0.cmp(&b.0));
        let mut state = self.state.borrow_mut();
        state.forget_pointers();
        if own {
            let State { owned, memory, .. } = &mut *state;
            owned.retain(|p| memory.contains(p));
        }
        // Save order: the pointers' seq.
        let first_seq = state.next_seq;
        state.next_seq += records.len() as u64;
        let mut records: Vec<Restored> = records
            .into_iter()
            .enumerate()
            .map(|(i, (_, (rel, meta, size)))| {
                let content = content_of(&rel);
                Restored { seq: first_seq + i as u64, rel, meta, size, content }
            })
            .collect();
        // A segment every record of which is restored from it is appended whole (its
        // lists as they are); the other records are added one by one.
        let mut taken = vec![0usize; segments.len()];
        for r in &records {
            if let Some(Content::Stored(s, _)) = r.content {
                taken[s] += 1;
            }
        }
        let whole = |s: usize| segments[s].records.len() == taken[s] && taken[s] > 0;
        let mut by_segment: Vec<Vec<Option<Restored>>> = segments
            .iter()
            .enumerate()
            .map(|(s, seg)| if whole(s) { (0..seg.records.len()).map(|_| None).collect() } else { Vec::new() })
            .collect();
        let mut one_by_one = Vec::with_capacity(records.len());
        for r in records.drain(..) {
            match r.content {
                Some(Content::Stored(s, i)) if whole(s) => by_segment[s][i] = Some(r),
                _ => one_by_one.push(r),
            }
        }
        let mut placed_unordered = false;
        for (s, restored) in by_segment.into_iter().enumerate() {
            let restored: Vec<Restored> = restored.into_iter().flatten().collect();
            if restored.is_empty() {
                continue;
            }
            let orders: Vec<u64> = restored.iter().map(|r| r.seq).collect();
            let Some(first) = state.index.append_segment(&segments[s], &orders) else {
                one_by_one.extend(restored);
                continue;
            };
            for (i, r) in restored.into_iter().enumerate() {
                let args: Value = from_json(&r.meta.args_json).unwrap_or(Value::Null);
                let (_, entry) = self.restored_entry(&mut state, dir, r, &args, own);
                state.place(orders[i], first + i as u32, entry, false);
                placed_unordered = true;
            }
        }
        if placed_unordered {
            let State { order, index, .. } = &mut *state;
            crate::sort::sort_by_key(order, |&slot| index.order(slot));
        }
        // Per segment read one by one: its dictionary's ids in the index, as they are met.
        let mut ids: HashMap<usize, Vec<u32>> = HashMap::new();
        crate::sort::sort_by_key(&mut one_by_one, |r| r.seq);
        for mut r in one_by_one {
            let content = r.content.take();
            let args: Value = from_json(&r.meta.args_json).unwrap_or(Value::Null);
            let terms = Terms::of_record(&r.meta.tool_description, &r.meta.tool_name, &args);
            let (terms, stored) = match content {
                Some(Content::Terms(content)) => (terms.with_passages_of(content), None),
                Some(Content::Stored(s, i)) => (terms, Some((s, i))),
                None => (terms, None),
            };
            let seq = r.seq;
            let (filepath, entry) = self.restored_entry(&mut state, dir, r, &args, own);
            if !state.add(seq, entry, &terms) {
                continue;
            }
            if let (Some((s, i)), Some(slot)) = (stored, state.slot_of(&filepath)) {
                // Read from a segment: ranked on the terms the saving process indexed.
                let segment = &segments[s];
                let ids = ids.entry(s).or_insert_with(|| vec![u32::MAX; segment.dictionary.len()]);
                state.index.add_stored_content(slot, &terms, &segment.dictionary, &segment.forward()[i], ids);
            }
        }
    }

    /// The filepath and the pointer of a record being restored (`args`: its args, parsed
    /// once by the caller); owned records enter retention's ledger. A pointer, not
    /// ownership: only what this manager wrote is marked written (placing it takes the mark
    /// back from `orphans`).
    fn restored_entry(&self, state: &mut State, dir: &str, r: Restored, args: &Value, own: bool) -> (String, Entry) {
        let filepath = paths::join(dir, &r.rel);
        if own && self.keeps_ledger() {
            state.owned.add(&filepath, saved_at_ms(&r.rel, &r.meta), r.seq, r.size);
        }
        let generated = crate::describe::describe(&r.meta.tool_name, args) == r.meta.tool_description;
        let entry = Entry::new(&filepath, r.meta, r.size, &mut state.interned, Some(generated));
        (filepath, entry)
    }

    /// Rebuilds the index from the record files: in a session, the manifest (a torn
    /// record is removed); without one, the pointers of every record in the context
    /// dir (records written by the seed implementation are adopted too). Adopted records
    /// are pointers, not this manager's own: `clear_context_dir` leaves them. Read-only,
    /// only the pointers are rebuilt. Returns the number of records indexed.
    pub async fn rebuild_index(&self) -> Result<usize> {
        let job = self.begin_rebuild_index()?;
        Ok(self.drive_indexing(job).await?.len())
    }

    /// The first step of `rebuildIndex`: its job, which resolves to the filepaths indexed
    /// (see [`ContextManager::job_step`]).
    pub fn begin_rebuild_index(&self) -> Result<Job> {
        Ok(Job::rebuild(self.gate.enter("rebuildIndex")?))
    }

    /// Ends the session: removes the files its manifest tracks and this manager wrote,
    /// the manifest, and then the folders if empty; drops pointers and in-memory records.
    pub async fn end_session(&self) -> Result<()> {
        let job = self.begin_end_session()?;
        self.drive(job).await
    }

    /// The first step of `endSession`: its job (see [`ContextManager::job_step`]).
    pub fn begin_end_session(&self) -> Result<Job> {
        let pass = self.gate.enter("endSession")?;
        self.check_writable()?;
        Ok(Job::end_session(Some(pass)))
    }

    /// Adopts the records a crash left out of the session manifest: the record files of
    /// the session folder (and its category folders) that neither this manager nor the
    /// manifest on disk lists get a manifest entry and a pointer, so `endSession`, stale
    /// cleanup and retention count them. A file that does not parse is skipped (reported
    /// through `onDebug`). Outside a session there is nothing to reconcile: records in a
    /// shared folder belong to whoever wrote them (`rebuildIndex` re-reads them as
    /// pointers). Returns the filepaths adopted.
    pub async fn reconcile(&self) -> Result<Vec<String>> {
        match self.begin_reconcile()? {
            Some(job) => self.drive_indexing(job).await,
            None => Ok(Vec::new()),
        }
    }

    /// The first step of `reconcile`: its job, which resolves to the filepaths adopted
    /// (see [`ContextManager::job_step`]); `None` outside a session (nothing to adopt).
    pub fn begin_reconcile(&self) -> Result<Option<Job>> {
        let pass = self.gate.enter("reconcile")?;
        self.check_writable()?;
        Ok(self.session.is_some().then(|| Job::reconcile(pass)))
    }

    /// A pointer for the record file `full` (`rel` in the session folder) that a
    /// reconcile adopts, owned (retention counts it); `false` when it has one already.
    fn adopt_pointer(&self, full: &str, rel: &str, meta: RecordMeta, size: usize, terms: &Terms) -> bool {
        let mut state = self.state.borrow_mut();
        if state.slot_of(full).is_some() {
            return false;
        }
        let seq = state.next_seq;
        state.next_seq += 1;
        if self.keeps_ledger() {
            state.owned.add(full, saved_at_ms(rel, &meta), seq, size);
        }
        let pointer = Entry::new(full, meta, size, &mut state.interned, None);
        state.add(seq, pointer, terms);
        true
    }

    /// `clear_context_dir` and `clear_pointers`.
    pub async fn clear(&self) -> Result<()> {
        match self.begin_clear("clear")? {
            // The job clears the pointers.
            clearing @ Clearing::Session(_) => self.remove_written(clearing).await,
            clearing => {
                let result = self.remove_written(clearing).await;
                self.clear_pointers();
                result
            }
        }
    }
}

/// A record whose pointer is being restored: its save order, path (relative to its
/// folder), metadata, size and what its content is indexed from.
struct Restored {
    seq: u64,
    rel: String,
    meta: RecordMeta,
    size: usize,
    content: Option<Content>,
}

/// When a record was saved, in epoch ms: its timestamp, else its file name's.
fn saved_at_ms(rel: &str, meta: &RecordMeta) -> i64 {
    session::parse_iso_ms(&meta.timestamp).or_else(|| session::record_time_ms(rel)).unwrap_or(0)
}

/// The hash that tells duplicate results apart: [`ResultHasher`] over the JSON text's
/// bytes (not cryptographic: it only tells apart results saved with the same tool and
/// args); a result left `undefined` hashes apart from every JSON text.
pub fn result_hash(result_json: Option<&[u8]>) -> u64 {
    match result_json {
        Some(bytes) => {
            let mut hasher = ResultHasher::default();
            hasher.update(bytes);
            hasher.finish()
        }
        None => u64::MAX,
    }
}

/// Yields once: the task gives way (in wasm, the host calls it queued are started)
/// and is polled again.
async fn yield_now() {
    let mut yielded = false;
    std::future::poll_fn(|cx| {
        if yielded {
            return std::task::Poll::Ready(());
        }
        yielded = true;
        cx.waker().wake_by_ref();
        std::task::Poll::Pending
    })
    .await
}

/// What `clear_context_dir` removes, decided by its first step; each holds the pass of
/// the operation (a `close()` waits for it).
pub(crate) enum Clearing {
    /// In a session, the session: its files, manifest and folders ([`Job::end_session`];
    /// for `clear`, [`Job::clear_session`]).
    Session(Job),
    /// Else the records this manager wrote ([`ContextManager::remove_written_plan`]).
    Files(Pass, Vec<String>),
}

/// Where a `close` run in steps stands ([`ContextManager::begin_close`]).
pub enum Closing {
    /// Closed: nothing to do.
    Done,
    /// Another `close` is under way: ask [`ContextManager::begin_close`] again once the
    /// operations in flight have ended.
    Wait,
    /// Operations are in flight: ask [`ContextManager::close_when_idle`] again once they end.
    Busy,
    /// Run this job (it ends the close).
    WriteOut(Job),
}

/// What the first step of a save did ([`ContextManager::begin_save`]).
pub enum Begun {
    /// Saved already (held in memory): its filepath, and the follow-up, if any.
    Saved(String, Option<Job>),
    /// The record is to be written.
    Write(Box<PendingSave>),
}

/// What the step after a save's write did ([`ContextManager::record_written`]).
pub enum Written {
    /// Saved: its filepath, and the follow-up, if any.
    Saved(String, Option<Job>),
    /// The name was taken: write the record again, at its new [`PendingSave::path`].
    Retry(Box<PendingSave>),
    /// The write failed: remove [`FailedSave::path`], then report the error.
    Remove(FailedSave),
    /// The save failed (no free name): nothing to remove.
    Failed(Error),
}

/// A save whose record is to be written by the caller (the JavaScript driver, or
/// [`ContextManager::save`]). It holds the manager's gate until it is finished.
pub struct PendingSave {
    pass: Pass,
    seq: u64,
    now: i64,
    size: usize,
    tool: String,
    dir: String,
    counter: u64,
    meta: RecordMeta,
    generated: bool,
    /// `None` until the host hands over the hash of a body it holds (see [`HostBody::hash`]).
    result_hash: Option<u64>,
    args: Value,
    /// The whole record, or its header when the host holds the body.
    bytes: Vec<u8>,
    /// The host's handle of the result's bytes, written between the header and `}`.
    body: Option<u32>,
    indexed: Indexed,
    path: String,
    attempts: usize,
    terms: Option<Terms>,
    /// The result's JSON text, kept by [`PendingSave::index`] for the content's indexing.
    content: Option<String>,
}

/// The result's text that the index reads.
enum Indexed {
    /// No result (`undefined`).
    None,
    /// The last this many bytes of the record before its `}`: the whole result.
    Tail(usize),
    /// The first `content_bytes` bytes of a body the host holds.
    Prefix(String),
}

impl PendingSave {
    /// The path to write the record to (exclusively).
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The record: its whole bytes, or (with a handle) the header to write before the
    /// bytes the host holds under the handle, then `}`.
    pub fn record(&self) -> (&[u8], Option<u32>) {
        (&self.bytes, self.body)
    }

    /// The hash of the result's bytes the host holds ([`HostBody::hash`]), computed while
    /// the record is written.
    pub fn set_result_hash(&mut self, hash: u64) {
        self.result_hash = Some(hash);
    }

    /// Whether the hash of the result is still to be handed over ([`PendingSave::set_result_hash`]).
    pub fn wants_result_hash(&self) -> bool {
        self.result_hash.is_none()
    }

    /// Indexes the record's metadata and keeps its result's text for the content's
    /// indexing after the save (once): run while the host writes it.
    pub fn index(&mut self, content_bytes: usize) {
        if self.terms.is_none() {
            self.terms = Some(self.terms_of());
            self.content = self.content(content_bytes);
        }
    }

    /// The terms of the record's metadata: its content is indexed after the save
    /// ([`ContextManager::index_content`]).
    fn terms_of(&self) -> Terms {
        Terms::of_record(&self.meta.tool_description, &self.meta.tool_name, &self.args)
    }

    /// The JSON text of the result, to index once the record is saved (none when there is
    /// no result or no content is indexed).
    fn content(&self, content_bytes: usize) -> Option<String> {
        if content_bytes == 0 {
            return None;
        }
        match &self.indexed {
            Indexed::None => None,
            Indexed::Tail(len) => {
                let end = self.bytes.len().checked_sub(1)?;
                let text = std::str::from_utf8(self.bytes.get(end.checked_sub(*len)?..end)?).ok()?;
                // Only what is indexed is kept until then.
                let mut cut = text.len().min(content_bytes);
                while !text.is_char_boundary(cut) {
                    cut -= 1;
                }
                Some(text[..cut].to_owned())
            }
            Indexed::Prefix(prefix) => Some(prefix.clone()),
        }
    }

    fn name(&self, random: &str) -> String {
        let ts = self.now.max(0) as u64;
        paths::join(&self.dir, &record_filename(&self.tool, &self.meta.args_hash, ts, self.counter, random))
    }
}

/// A save whose write failed: the file at `path` is removed, then the error reported.
pub struct FailedSave {
    /// What the failed write may have left.
    pub path: String,
    error: Error,
    _pass: Pass,
}

impl FailedSave {
    /// The error, once the file is removed (the save ends).
    pub fn into_error(self) -> Error {
        self.error
    }
}

/// The words a manifest lists for a record (the seed's `keywords`): its metadata's
/// index tokens, distinct and sorted, as written (not stemmed).
fn manifest_words(meta: &RecordMeta) -> Vec<String> {
    let args: Value = from_json(&meta.args_json).unwrap_or(Value::Null);
    crate::select::metadata_words(&meta.tool_description, &meta.tool_name, &args)
}

/// The terms of the content of a record file (its bytes): the string values of the
/// first `content_bytes` bytes of its result (none when it does not parse).
fn content_terms(bytes: &[u8], content_bytes: usize) -> Terms {
    let view = parse_record(bytes).ok();
    let result = view.as_ref().and_then(|v| v.result).map(|r| r.get());
    Terms::of_record_with_content("", "", &Value::Null, result, content_bytes)
}

/// The indexed terms of a record's metadata.
fn terms_of(meta: &RecordMeta) -> Terms {
    let args: Value = from_json(&meta.args_json).unwrap_or(Value::Null);
    Terms::of_record(&meta.tool_description, &meta.tool_name, &args)
}

mod jobs;
pub use jobs::{Job, JobPlan};

#[cfg(test)]
pub(crate) mod footprint;

#[cfg(test)]
mod tests {
    use super::*;

    /// The metadata of a record of tool `t` with no args, described as `description`.
    fn meta(description: &str) -> RecordMeta {
        RecordMeta {
            tool_name: "t".into(),
            tool_description: description.into(),
            args_json: "{}".into(),
            args_hash: "0".repeat(64),
            timestamp: iso_timestamp(0),
            task_id: None,
            query_id: None,
            tool_call_id: None,
        }
    }

    fn entry(path: &str) -> Entry {
        Entry::new(path, meta("t"), 0, &mut Interned::default(), None)
    }

    #[test]
    fn compaction_keeps_the_later_copy_of_a_key_whose_latest_holder_was_evicted() {
        futures_executor::block_on(async {
            let mut o = Options::new("/ctx");
            o.persist_threshold = 0;
            let m = ContextManager::new(crate::MemoryStorage::new(), o).unwrap();
            let save = |result: &'static str| SaveInput {
                tool_name: "grep",
                args_json: r#"{"q":"x"}"#,
                result_json: Some(result),
                ..SaveInput::default()
            };
            let a = m.save(save("\"same\"")).await.unwrap();
            m.save(save("\"same\"")).await.unwrap();
            let c = m.save(save("\"other\"")).await.unwrap();
            {
                // As if C's key collided with A's: C is the latest holder of the key.
                let mut state = m.state.borrow_mut();
                let (slot_a, slot_c) = (state.slot_of(&a).unwrap(), state.slot_of(&c).unwrap());
                let key = state.entries[slot_a as usize].duplicate_key().unwrap();
                state.latest_copy.insert(key, slot_c);
                assert!(state.remove_pointer(&c));
                state.compact();
            }
            let slot_a = m.state.borrow().slot_of(&a).unwrap();
            assert!(m.has_later_copy(slot_a), "A's later copy is still known after compaction");
        });
    }

    #[test]
    fn path_slots_find_every_path_when_32_bit_keys_collide() {
        // 200,000 paths under 32-bit keys: a few collide (about 5 expected).
        let n = 200_000u32;
        let paths: Vec<String> =
            (0..n).map(|i| format!("/ctx/readFile_{i:012x}_1732341234567_{i}_abcd.json")).collect();
        let mut entries: Paged<Entry> = Paged::default();
        let mut slots = PathSlots::default();
        for (slot, path) in paths.iter().enumerate() {
            entries.push(entry(path));
            slots.insert(path, slot as u32, &entries);
        }
        assert!(!slots.collisions.is_empty(), "the test needs colliding keys");
        for (slot, path) in paths.iter().enumerate() {
            assert_eq!(slots.get(path, &entries), Some(slot as u32), "{path}");
        }
        assert_eq!(slots.get("/ctx/unknown.json", &entries), None);
        // Removing either side of a collision keeps the other findable.
        let collided: Vec<(Box<str>, u32)> = slots.collisions.iter().map(|(p, &s)| (p.clone(), s)).collect();
        for (path, slot) in &collided {
            let Some(&owner) = slots.by_hash.get(&PathSlots::key(path)) else { continue };
            let owner_path = entries[owner as usize].path_text();
            slots.remove(&owner_path, &entries);
            assert_eq!(slots.get(path, &entries), Some(*slot));
            assert_eq!(slots.get(&owner_path, &entries), None);
        }
    }

    #[test]
    fn an_entry_gives_back_the_meta_and_path_it_was_made_from() {
        let metas = [
            ("/ctx/t_000000000000_1700000000000_0_aaaa.json", "0".repeat(64), iso_timestamp(1_700_000_000_000), None),
            ("/ctx/notes.json", "ABC".into(), "2024-01-01T00:00:00Z".into(), Some("call_1")),
            ("/ctx/x_y_0123456789ab_1700000000000_7_zz00.json", "01".repeat(32), "yesterday".into(), None),
            ("/ctx/seed_3f2a9c1b_1735012345678_0_k3j9x2.json", "3f2a9c1b".into(), iso_timestamp(-1), Some("")),
        ];
        let mut interned = Interned::default();
        let tasks = [Some(Number::from(3)), None, Number::from_f64(2.0), Some(Number::from(1u64 << 40))];
        for ((path, args_hash, timestamp, call), task_id) in metas.into_iter().zip(tasks) {
            let meta = RecordMeta {
                tool_name: "x_y".into(),
                tool_description: "given".into(),
                args_json: r#"{"a":1}"#.into(),
                args_hash,
                timestamp,
                task_id: task_id.clone(),
                query_id: Some("q".into()),
                tool_call_id: call.map(str::to_owned),
            };
            let e = Entry::new(path, meta.clone(), 5, &mut interned, None);
            assert!(e.meta() == meta, "{path}: {:?} != {meta:?}", e.meta());
            assert_eq!(e.path_text(), path);
            let mut json = String::new();
            e.pointer_json(&mut json, handle::SHORT);
            let v: Value = serde_json::from_str(&json).unwrap();
            assert_eq!((v["filepath"].as_str(), v["argsHash"].as_str()), (Some(path), Some(&*meta.args_hash)));
            assert_eq!((v["timestamp"].as_str(), v["toolCallId"].as_str()), (Some(&*meta.timestamp), call));
            // The same record with the description `describe` makes: not kept.
            let generated_meta = RecordMeta { tool_description: describe_of(&meta), ..meta.clone() };
            let generated = Entry::new(path, generated_meta, 5, &mut interned, None);
            assert!(e.rare.as_ref().is_some_and(|r| r.tool_description.as_deref() == Some("given")));
            assert_eq!(
                (v["taskId"].to_string(), v.get("taskId").is_some()),
                (task_id.as_ref().map_or("null".into(), Number::to_string), task_id.is_some())
            );
            let compact = call.is_none() && meta.args_hash.len() == 64 && meta.timestamp.starts_with("20");
            assert_eq!(generated.rare.is_none(), compact && task_id.is_none_or(|t| t.is_i64()));
            assert!(generated.meta() == RecordMeta { tool_description: describe_of(&meta), ..meta });
        }
    }

    fn describe_of(meta: &RecordMeta) -> String {
        crate::describe::describe(&meta.tool_name, &serde_json::from_str(&meta.args_json).unwrap())
    }

    #[test]
    fn an_entry_is_packed_so_the_pointer_table_stays_small() {
        // One entry per pointer: 100,000 pointers take 100,000 of them. wasm32: the path's
        // parts 20 (its prefix shared, its name's hash the args hash's start), the tool
        // name and query id 8 (shared, through thin pointers), the shared args 4, the
        // result hash 8, the task, the size and the written flag 9, the rare fields 4,
        // padded to 4 (nothing aligns to 8). The args hash and text live once per
        // distinct args, in `Interned::args`; a description `describe` makes is made
        // again; the save order is the index's, the timestamp the path's milliseconds.
        let expected = if cfg!(target_pointer_width = "32") { 56 } else { 80 };
        assert_eq!(std::mem::size_of::<Entry>(), expected);
    }

    #[test]
    fn pointers_with_the_same_args_share_them_until_none_holds_them() {
        let mut interned = Interned::default();
        let make = |interned: &mut Interned, path: &str, args: &str, hash: &str| {
            let meta = RecordMeta {
                tool_name: "t".into(),
                tool_description: "t".into(),
                args_json: args.into(),
                args_hash: hash.into(),
                timestamp: iso_timestamp(0),
                task_id: None,
                query_id: None,
                tool_call_id: None,
            };
            let e = Entry::new(path, meta.clone(), 0, interned, None);
            assert!(e.meta() == meta, "{:?} != {meta:?}", e.meta());
            e
        };
        let (h, other) = ("ab".repeat(32), "cd".repeat(32));
        let a = make(&mut interned, "/ctx/a.json", r#"{"x":1,"y":2}"#, &h);
        let b = make(&mut interned, "/ctx/b.json", r#"{"x":1,"y":2}"#, &h);
        // The same args in another key order (same hash), or the same text with another
        // hash (a record adopted with its own), are other args.
        let c = make(&mut interned, "/ctx/c.json", r#"{"y":2,"x":1}"#, &h);
        let d = make(&mut interned, "/ctx/d.json", r#"{"x":1,"y":2}"#, &other);
        assert!(Rc::ptr_eq(&a.args, &b.args));
        assert!(!Rc::ptr_eq(&a.args, &c.args) && !Rc::ptr_eq(&a.args, &d.args));
        assert_eq!(interned.args.len(), 3);
        drop((a, c));
        interned.prune();
        assert_eq!(interned.args.len(), 2, "b still holds the first args, d its own");
        drop((b, d));
        interned.prune();
        assert!(interned.args.is_empty());
    }

    #[test]
    fn a_timestamp_or_task_id_the_packed_form_cannot_hold_is_kept_apart() {
        let path = "/ctx/t_000000000000_1700000000000_0_aaaa.json";
        let cases = [
            // The path's milliseconds and an i32 task id: nothing apart.
            (iso_timestamp(1_700_000_000_000), Some(Number::from(7)), false),
            // Another instant than the path's, though ISO: kept apart, as text.
            (iso_timestamp(1_700_000_000_001), Some(Number::from(7)), true),
            // The one i32 the packed task id keeps for "none".
            (iso_timestamp(1_700_000_000_000), Some(Number::from(i32::MIN)), true),
            (iso_timestamp(1_700_000_000_000), Some(Number::from(i32::MIN + 1)), false),
            (iso_timestamp(1_700_000_000_000), None, false),
        ];
        for (timestamp, task_id, apart) in cases {
            let meta = RecordMeta {
                tool_name: "t".into(),
                tool_description: "t".into(),
                args_json: "{}".into(),
                args_hash: "0".repeat(64),
                timestamp,
                task_id,
                query_id: None,
                tool_call_id: None,
            };
            let e = Entry::new(path, meta.clone(), 0, &mut Interned::default(), None);
            assert!(e.meta() == meta, "{:?} != {meta:?}", e.meta());
            assert_eq!(e.rare.is_some(), apart, "{meta:?}");
        }
    }

    #[test]
    fn a_generated_description_is_not_kept() {
        // A record name whose milliseconds give the timestamp (0): no rare fields.
        let path = "/ctx/t_000000000000_0000000000000_0_aaaa.json";
        let generated = crate::describe::describe("t", &serde_json::json!({}));
        assert_eq!(generated, "t");
        let with = |description: &str, said_generated: Option<bool>| {
            Entry::new(path, meta(description), 0, &mut Interned::default(), said_generated)
        };
        // The save's own (said generated), or a record read back whose description is
        // the one `describe` makes: made again, not kept.
        for e in [with(&generated, Some(true)), with(&generated, None)] {
            assert!(e.rare.is_none());
            assert_eq!(e.description(), generated);
        }
        // Any other description (a `describe` callback's) is kept, whether the caller
        // compared it already (restoring pointers) or leaves it to `Entry::new`.
        for e in [with("a tool", Some(false)), with("a tool", None)] {
            assert!(e.rare.is_some());
            assert_eq!(e.description(), "a tool");
        }
        assert_eq!(entry("/ctx/a.json").description(), "t");
    }
}
