//! Saved records whose content waits to be indexed ([`Manager::index_some`], in idle time;
//! [`Manager::index_content`], before a ranking): each one's filepath and result text, in
//! save order, and how many bytes of text wait (past
//! [`UNINDEXED_BYTES`](super::UNINDEXED_BYTES) a save indexes them at once).
//!
//! [`Manager::index_some`]: super::Manager::index_some
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

    /// The oldest record waiting, no longer waiting.
    pub(super) fn pop(&mut self) -> Option<(String, String)> {
        let next = self.waiting.pop_front()?;
        self.bytes -= next.1.len();
        Some(next)
    }

    /// The record at `path` no longer waits (its file changed: it is indexed from that).
    pub(super) fn forget(&mut self, path: &str) {
        let bytes = &mut self.bytes;
        self.waiting.retain(|(p, json)| {
            let keep = p != path;
            if !keep {
                *bytes -= json.len();
            }
            keep
        });
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_wait_in_save_order_and_their_bytes_are_counted_until_taken() {
        let mut unindexed = Unindexed::default();
        unindexed.push("/ctx/a.json".into(), "\"aa\"".into());
        unindexed.push("/ctx/b.json".into(), "[1]".into());
        assert_eq!((unindexed.len(), unindexed.bytes()), (2, 7));
        let paths: Vec<String> = unindexed.take().into_iter().map(|(path, _)| path).collect();
        assert_eq!(paths, ["/ctx/a.json", "/ctx/b.json"]);
        assert_eq!((unindexed.len(), unindexed.bytes()), (0, 0), "none waits once taken");
        unindexed.push("/ctx/c.json".into(), "1".into());
        unindexed.push("/ctx/d.json".into(), "22".into());
        assert_eq!(unindexed.pop().map(|(path, _)| path).as_deref(), Some("/ctx/c.json"), "the oldest first");
        assert_eq!((unindexed.len(), unindexed.bytes()), (1, 2));
        unindexed.clear();
        assert_eq!((unindexed.len(), unindexed.bytes()), (0, 0));
    }
}
