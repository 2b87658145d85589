//! The I/O of the conversation store as data (sans-IO): what an operation has to read
//! before it can decide ([`Want`], answered by reads and listings, [`Op`]s, into
//! [`Files`]), and what it then changes, in order (writes, appends and removals, [`Op`]s
//! too: the ops every plan asks for). The store's decisions are synchronous functions
//! of the files read; a driver does the host calls in between: the plan runner of the
//! `toolctx` crate awaiting a `Storage`, or the JavaScript driver running them as steps
//! (`crates/wasm/src/conversation.rs`, docs/protocol.md).

use std::collections::BTreeMap;

use crate::error::{Error, ErrorKind, Result};
use crate::plan::{Op, Outcome};

/// Which storage an operation reads or changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// The store's own.
    Local,
    /// The remote it syncs to.
    Remote,
}

/// What an operation reads of a conversation store: parts of one conversation, the
/// index, the sync queue.
#[derive(Debug, Clone, Default)]
pub struct Want {
    /// The conversation the parts below are of.
    pub conv: Option<String>,
    /// `metadata.json`.
    pub meta: bool,
    /// `messages.jsonl`.
    pub messages: bool,
    /// `pruned.json`.
    pub pruned: bool,
    /// The listing of `artifacts/` and every meta file in it.
    pub artifacts: bool,
    /// The content of every listed artifact too.
    pub contents: bool,
    /// The meta and content of these artifacts.
    pub artifact_ids: Vec<String>,
    /// `index.json` (and, when it is missing or does not parse, every `metadata.json`).
    pub index: bool,
    /// Every item of the sync queue.
    pub queue: bool,
}

/// The files and listings read so far, by path.
#[derive(Debug, Default)]
pub struct Files {
    read: BTreeMap<String, Option<Vec<u8>>>,
    listed: BTreeMap<String, Vec<String>>,
}

fn not_loaded(path: &str) -> Error {
    Error::new(ErrorKind::Internal, "the conversation store read a file it did not load").with_path(path)
}

impl Files {
    /// Nothing read yet.
    pub const fn new() -> Self {
        Files { read: BTreeMap::new(), listed: BTreeMap::new() }
    }

    /// The bytes read at `path` (`None`: no such file).
    pub fn read(&self, path: &str) -> Result<Option<&[u8]>> {
        self.read.get(path).map(Option::as_deref).ok_or_else(|| not_loaded(path))
    }

    /// The names listed in `dir`.
    pub fn listed(&self, dir: &str) -> Result<&[String]> {
        self.listed.get(dir).map(Vec::as_slice).ok_or_else(|| not_loaded(dir))
    }

    /// Whether the read or listing `need` has its answer (a change has none to keep).
    pub fn has(&self, need: &Op) -> bool {
        match need {
            Op::Read(path) => self.read.contains_key(path),
            Op::List(dir) => self.listed.contains_key(dir),
            _ => false,
        }
    }

    /// The bytes at `path`, as read.
    pub fn put_read(&mut self, path: String, bytes: Option<Vec<u8>>) {
        self.read.insert(path, bytes);
    }

    /// Forgets what was read at `path` and under it (to read it again).
    pub fn forget(&mut self, path: &str) {
        let under = |p: &String| p == path || p.strip_prefix(path).is_some_and(|rest| rest.starts_with('/'));
        self.read.retain(|p, _| !under(p));
        self.listed.retain(|p, _| !under(p));
    }

    /// Forgets the listing of `dir` (what was read in it stays).
    pub fn forget_listing(&mut self, dir: &str) {
        self.listed.remove(dir);
    }

    /// Forgets the index of the store in `base` (`index.json` and the listing of `base`).
    pub fn forget_index(&mut self, base: &str) {
        self.read.remove(&crate::paths::join(base, "index.json"));
        self.listed.remove(base);
    }

    /// The names in `dir`, as listed.
    pub fn put_listed(&mut self, dir: String, names: Vec<String>) {
        self.listed.insert(dir, names);
    }

    /// What the read or the listing `op` gave (a change gives nothing to keep).
    pub fn put(&mut self, op: Op, outcome: Outcome) {
        match (op, outcome) {
            (Op::Read(path), Outcome::Read(bytes)) => self.put_read(path, bytes),
            (Op::List(dir), Outcome::List(names)) => self.put_listed(dir, names),
            _ => {}
        }
    }
}
