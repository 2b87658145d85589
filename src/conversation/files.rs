//! The I/O of the conversation store as data (sans-IO): what an operation has to read
//! before it can decide ([`Want`], answered by [`Need`]s into [`Files`]), and what it
//! then changes, in order ([`Action`]s). The store's decisions are synchronous functions
//! of the files read; a driver does the host calls in between: native Rust awaiting a
//! [`Storage`](crate::Storage) (`fetch` and `execute` in `native.rs`), or the JavaScript
//! driver running them as steps (`src/wasm/conversation.rs`, docs/protocol.md).

use std::collections::BTreeMap;

use crate::error::{Error, ErrorKind, Result};

/// Which storage an operation reads or changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// The store's own.
    Local,
    /// The remote it syncs to.
    Remote,
}

/// A read or a listing an operation needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Need {
    /// The bytes of a file (or that it does not exist).
    Read(String),
    /// The names in a folder.
    List(String),
}

/// A change to the storage.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Replaces a file; `exclusive` fails with `ALREADY_EXISTS` instead.
    Write {
        /// The file.
        path: String,
        /// Its whole content.
        bytes: Vec<u8>,
        /// Fail with `ALREADY_EXISTS` if the file exists.
        exclusive: bool,
    },
    /// Adds bytes at the end of a file.
    Append {
        /// The file.
        path: String,
        /// What to add at its end.
        bytes: Vec<u8>,
    },
    /// Removes a file (idempotent).
    Remove {
        /// The file.
        path: String,
    },
    /// Removes an empty folder (idempotent).
    RemoveDir {
        /// The folder.
        path: String,
    },
}

impl Action {
    /// The path the action changes.
    pub fn path(&self) -> &str {
        match self {
            Action::Write { path, .. }
            | Action::Append { path, .. }
            | Action::Remove { path }
            | Action::RemoveDir { path } => path,
        }
    }
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

    /// Whether `need` has its answer.
    pub fn has(&self, need: &Need) -> bool {
        match need {
            Need::Read(path) => self.read.contains_key(path),
            Need::List(dir) => self.listed.contains_key(dir),
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
}
