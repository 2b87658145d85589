//! The records held in memory (SPEC §4: smaller than `persistThreshold`, up to
//! `memoryBudget`), by path, and the order they are written out in (oldest first).
//!
//! A held record is a pointer's twin: its path has the record-name form, so it is kept
//! as its parts ([`StoredPath`]) rather than as text, and found through a 32-bit hash of
//! the path ([`PathSlots`]) rather than a table keyed by the text. A record outlives its
//! pointer (`clearPointers` keeps it), so it keeps its own path.

use std::collections::VecDeque;
use std::rc::Rc;

use super::slots::PathSlots;
use super::Interned;
use crate::naming::{HashBytes, StoredPath, FILENAME_HASH_LEN};

/// Records by place (a free place is `None`, listed in `free`), found by path.
#[derive(Default)]
pub(super) struct Held {
    records: Vec<Option<Record>>,
    free: Vec<u32>,
    places: PathSlots,
    /// Places of the records not yet being written out, oldest first.
    queue: VecDeque<u32>,
    /// The bytes held, all records together (what `memoryBudget` bounds).
    bytes: usize,
}

struct Record {
    path: StoredPath,
    /// The hash its name carries (what [`StoredPath`] prints it with).
    hash: [u8; FILENAME_HASH_LEN / 2],
    bytes: Rc<[u8]>,
    /// Whether its place is in the queue.
    queued: bool,
}

impl Record {
    fn hash(&self) -> HashBytes {
        let mut out = [0; 32];
        out[..self.hash.len()].copy_from_slice(&self.hash);
        out
    }

    fn is(&self, path: &str) -> bool {
        self.path.is(path, &self.hash())
    }

    fn text(&self) -> String {
        self.path.text(&self.hash())
    }
}

impl Held {
    fn is_at(records: &[Option<Record>]) -> impl Fn(u32, &str) -> bool + '_ {
        |place, path| records.get(place as usize).and_then(Option::as_ref).is_some_and(|r| r.is(path))
    }

    fn place(&self, path: &str) -> Option<u32> {
        self.places.find(path, Self::is_at(&self.records))
    }

    /// The record at `path`.
    pub(super) fn get(&self, path: &str) -> Option<&Rc<[u8]>> {
        let place = self.place(path)?;
        self.records[place as usize].as_ref().map(|r| &r.bytes)
    }

    /// Whether a record is held at `path`.
    pub(super) fn contains(&self, path: &str) -> bool {
        self.place(path).is_some()
    }

    /// Holds `bytes` at `path` (replacing any record there), last in the queue.
    pub(super) fn insert(&mut self, path: &str, bytes: Rc<[u8]>, interned: &mut Interned) {
        self.remove(path);
        let hash = StoredPath::name_hash(path);
        self.bytes += bytes.len();
        let record = Record {
            path: StoredPath::new(path, &hash, |t| interned.text(t)),
            hash: hash[..FILENAME_HASH_LEN / 2].try_into().unwrap_or_default(),
            bytes,
            queued: true,
        };
        let place = match self.free.pop() {
            Some(place) => {
                self.records[place as usize] = Some(record);
                place
            }
            None => {
                self.records.push(Some(record));
                (self.records.len() - 1) as u32
            }
        };
        self.places.put(path, place, Self::is_at(&self.records));
        self.queue.push_back(place);
    }

    /// Drops the record at `path`; its bytes.
    pub(super) fn remove(&mut self, path: &str) -> Option<Rc<[u8]>> {
        let place = self.place(path)?;
        self.places.take(path, Self::is_at(&self.records));
        let record = self.records[place as usize].take()?;
        self.bytes -= record.bytes.len();
        if record.queued {
            self.queue.retain(|&p| p != place);
        }
        self.free.push(place);
        if self.free.len() == self.records.len() {
            // None held: the places start over.
            self.clear();
        }
        Some(record.bytes)
    }

    /// The oldest record not yet being written out: its path and bytes (it stays held).
    pub(super) fn next_out(&mut self) -> Option<(String, Rc<[u8]>)> {
        let place = self.queue.pop_front()?;
        let record = self.records[place as usize].as_mut()?;
        record.queued = false;
        Some((record.text(), record.bytes.clone()))
    }

    /// The oldest records not yet being written out while those held exceed `budget`
    /// bytes (`all`: every one), to write out: their paths and bytes (they stay held).
    pub(super) fn take_over_budget(&mut self, budget: usize, all: bool) -> Vec<(String, Rc<[u8]>)> {
        let mut over = self.bytes.saturating_sub(budget);
        let mut out = Vec::new();
        while all || over > 0 {
            let Some((path, bytes)) = self.next_out() else { break };
            over = over.saturating_sub(bytes.len());
            out.push((path, bytes));
        }
        out
    }

    /// Puts the record at `path` first in the queue again (its write failed).
    pub(super) fn requeue(&mut self, path: &str) {
        let Some(place) = self.place(path) else { return };
        if let Some(record) = self.records[place as usize].as_mut().filter(|r| !r.queued) {
            record.queued = true;
            self.queue.push_front(place);
        }
    }

    /// The bytes held, all records together.
    pub(super) fn bytes(&self) -> usize {
        self.bytes
    }

    /// Whether some record is not yet being written out.
    pub(super) fn any_queued(&self) -> bool {
        !self.queue.is_empty()
    }

    pub(super) fn clear(&mut self) {
        self.records.clear();
        self.free.clear();
        self.places.clear();
        self.queue.clear();
        self.bytes = 0;
    }

    /// (Tests) what it holds, for the footprint report.
    #[cfg(test)]
    pub(super) fn footprint(&self, m: &mut super::footprint::Meter) {
        use std::mem::size_of;
        m.vec("memory: records (place, path parts)", &self.records);
        m.vec("memory: free places", &self.free);
        m.map("memory: places by path hash", &self.places.by_hash);
        m.map("memory: places by path hash", &self.places.collisions);
        m.alloc("memory: queue", self.queue.capacity() * size_of::<u32>());
        for record in self.records.iter().flatten() {
            if let StoredPath::Text(text) = &record.path {
                m.shared("memory: path text (not record-name form)", text);
            }
            m.alloc("memory: held records (the budget)", 2 * size_of::<usize>() + record.bytes.len());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn held_records_are_found_by_path_and_written_out_oldest_first() {
        let mut interned = Interned::default();
        let mut held = Held::default();
        let bytes = |s: &str| -> Rc<[u8]> { s.as_bytes().into() };
        let (a, b, c) = (
            "/ctx/t_0123456789ab_1700000000000_0_aaaa.json",
            "/ctx/notes.json",
            "/ctx/t_ffffffffffff_1700000000001_1_bbbb.json",
        );
        for (path, text) in [(a, "A"), (b, "B"), (c, "C")] {
            held.insert(path, bytes(text), &mut interned);
        }
        assert_eq!(held.bytes(), 3, "the bytes held, all records together");
        assert!(matches!(held.records[0].as_ref().map(|r| &r.path), Some(StoredPath::Named { .. })));
        assert!(matches!(held.records[1].as_ref().map(|r| &r.path), Some(StoredPath::Text(_))));
        for (path, text) in [(a, "A"), (b, "B"), (c, "C")] {
            assert_eq!(held.get(path).map(|b| &b[..]), Some(text.as_bytes()), "{path}");
        }
        assert!(!held.contains("/ctx/t_0123456789ab_1700000000000_0_aaab.json"));
        // Written out oldest first; a record being written stays held.
        assert_eq!(held.next_out().map(|(p, b)| (p, b.to_vec())), Some((a.to_owned(), b"A".to_vec())));
        assert!(held.contains(a));
        // A failed write puts it first again, once.
        held.requeue(a);
        held.requeue(a);
        // A record dropped while queued leaves the queue; its place is taken again.
        assert_eq!(held.remove(b).as_deref(), Some(&b"B"[..]));
        assert_eq!(held.remove(b), None);
        let d = "/ctx/t_0123456789ab_1700000000002_2_cccc.json";
        held.insert(d, bytes("D"), &mut interned);
        assert_eq!(held.records.len(), 3, "the free place is used again");
        // Holding a path again replaces its record (and its place in the queue).
        held.insert(c, bytes("C2"), &mut interned);
        assert_eq!(held.bytes(), "A".len() + "D".len() + "C2".len(), "a record replaced no longer counts");
        let order: Vec<(String, Vec<u8>)> =
            std::iter::from_fn(|| held.next_out()).map(|(p, b)| (p, b.to_vec())).collect();
        assert_eq!(
            order,
            [(a.to_owned(), b"A".to_vec()), (d.to_owned(), b"D".to_vec()), (c.to_owned(), b"C2".to_vec())]
        );
        assert!(!held.any_queued());
        for path in [a, c, d] {
            assert!(held.remove(path).is_some());
        }
        assert!(held.records.is_empty() && held.free.is_empty(), "none held: the places start over");
        assert_eq!(held.bytes(), 0);
        held.insert(a, bytes("A"), &mut interned);
        held.clear();
        assert_eq!(held.bytes(), 0, "cleared");
    }
}
