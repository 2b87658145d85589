//! Saved records whose content waits to be indexed ([`Manager::index_content`]): each
//! one's filepath and result text, in save order, and how many bytes of text wait (past
//! [`UNINDEXED_BYTES`](super::UNINDEXED_BYTES) a save indexes them at once).
//!
//! [`Manager::index_content`]: super::Manager::index_content

use std::collections::VecDeque;

/// The records waiting, oldest first.
#[derive(Default)]
pub(super) struct Unindexed {
    waiting: VecDeque<(String, String)>,
    bytes: usize,
}

impl Unindexed {
    /// The record at `path`, whose result's text is `json`, waits last.
    pub(super) fn push(&mut self, path: String, json: String) {
        self.bytes += json.len();
        self.waiting.push_back((path, json));
    }

    /// Every record waiting, oldest first; none waits any more.
    pub(super) fn take(&mut self) -> VecDeque<(String, String)> {
        self.bytes = 0;
        std::mem::take(&mut self.waiting)
    }

    /// How many records wait.
    pub(super) fn len(&self) -> usize {
        self.waiting.len()
    }

    /// The bytes of text waiting.
    pub(super) fn bytes(&self) -> usize {
        self.bytes
    }

    pub(super) fn clear(&mut self) {
        self.take();
    }
}
