//! A manager's session ([`Session`]): its id and folder, and the manifest it keeps up to
//! date between writes, with what a write of it needs to know (entries added and
//! evicted since the last one, writes in flight, whether the session was ended). The
//! manifest's write is a stage of a job (`jobs::manifest`).

use std::cell::{Cell, RefCell};
use std::collections::HashSet;

use crate::record::RecordMeta;
use crate::session::{Manifest, ManifestEntry};

/// A manager's session: its folder and the manifest it keeps up to date.
pub(super) struct Session {
    pub(super) id: String,
    pub(super) dir: String,
    pub(super) resume: bool,
    pub(super) manifest: RefCell<Manifest>,
    /// Entries added since the manifest was last written.
    pub(super) dirty: Cell<usize>,
    /// The paths `dirty` counts (a record tracked twice before a write, once with its
    /// content terms, counts once).
    counted: RefCell<HashSet<String>>,
    /// Relative paths evicted since the manifest was last written: a merge with the
    /// manifest on disk must not bring them back.
    pub(super) evicted: RefCell<HashSet<String>>,
    pub(super) last_write_ms: Cell<Option<i64>>,
    /// Manifest writes between their lock and their unlock (a flush waits for them).
    pub(super) writes_in_flight: Cell<usize>,
    /// `endSession` holds (or held) the session's lock to remove it: segment writes stop.
    pub(super) ended: Cell<bool>,
}

impl Session {
    /// A session `id` in `dir`, `resume`d or new, whose manifest is `manifest`.
    pub(super) fn new(id: String, dir: String, resume: bool, manifest: Manifest) -> Session {
        Session {
            id,
            dir,
            resume,
            manifest: RefCell::new(manifest),
            dirty: Cell::new(0),
            counted: RefCell::new(HashSet::new()),
            evicted: RefCell::new(HashSet::new()),
            last_write_ms: Cell::new(None),
            writes_in_flight: Cell::new(0),
            ended: Cell::new(false),
        }
    }

    /// `path` relative to the session folder; `None` when it is not in it.
    pub(super) fn rel<'p>(&self, path: &'p str) -> Option<&'p str> {
        path.strip_prefix(&self.dir)?.strip_prefix('/')
    }

    /// Lists the record at `rel` in the manifest (replacing its entry, if any).
    pub(super) fn track(&self, rel: &str, entry: ManifestEntry) {
        self.manifest.borrow_mut().context_files.insert(rel.to_owned(), entry);
        if self.counted.borrow_mut().insert(rel.to_owned()) {
            self.dirty.set(self.dirty.get() + 1);
        }
    }

    /// The entries a manifest write takes to disk: their count, none dirty any more.
    pub(super) fn take_dirty(&self) -> usize {
        self.counted.borrow_mut().clear();
        self.dirty.replace(0)
    }

    /// Drops the record at `rel` from the manifest (evicted): a merge with the manifest
    /// on disk must not bring it back.
    pub(super) fn untrack(&self, rel: &str) {
        if self.manifest.borrow_mut().context_files.remove(rel).is_some() {
            self.evicted.borrow_mut().insert(rel.to_owned());
            self.dirty.set(self.dirty.get() + 1);
        }
    }

    /// The metadata the manifest lists for the record at `rel`.
    pub(super) fn listed_meta(&self, rel: &str) -> Option<RecordMeta> {
        self.manifest.borrow().context_files.get(rel).map(ManifestEntry::meta)
    }

    /// Takes `manifest` as the session's, `dirty`: the entries a write has to bring to disk.
    pub(super) fn replace_manifest(&self, manifest: Manifest, dirty: usize) {
        *self.manifest.borrow_mut() = manifest;
        self.counted.borrow_mut().clear();
        self.dirty.set(dirty);
    }

    /// The session's files are removed: no entry left, nothing to write.
    pub(super) fn forget(&self) {
        self.manifest.borrow_mut().context_files.clear();
        self.take_dirty();
        self.last_write_ms.set(None);
    }
}
