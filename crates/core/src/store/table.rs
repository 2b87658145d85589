//! The pointer table ([`PointerTable`]): the pointers by slot, in save order, found by
//! path and by handle; the names and save order handed out; what this manager wrote;
//! eviction and compaction. A slot is the live index's (`super::live`): the table takes
//! the slot the index gave a pointer, and asks for a slot's save order through a closure,
//! so neither reaches into the other.

use super::holdings::SegmentId;
use super::slots::{PathSlots, Prehashed};
use super::{Entry, Filter, Interned, COMPACT_FROM};
use crate::error::{Error, Result};
use crate::handle;
use crate::paged::Paged;
use crate::record::RecordMeta;
use crate::shared::Shared;
use std::collections::{HashMap, HashSet};
use std::rc::Rc;

/// The pointers of a manager, and what names and orders them.
#[derive(Default)]
pub(super) struct PointerTable {
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
    /// Bumped whenever slots are forgotten, so a list of slots taken earlier is
    /// known to be stale.
    epoch: u32,
    /// The latest slot saved with each duplicate key (tool, args hash, result hash): a
    /// slot other than the pointer's own says a later copy may exist (two keys may share
    /// a hash), so selection ranks every candidate to find it.
    latest_copy: HashMap<u32, u32, std::hash::BuildHasherDefault<Prehashed>>,
    /// Paths this manager wrote to storage that no pointer holds (the pointers' entries
    /// have the `written` flag): those of pointers forgotten (`clearPointers`, a rebuild)
    /// or never added (the index was full). A pointer added again at such a path takes
    /// it back as its flag.
    orphans: HashSet<Rc<str>>,
    /// Slots whose pointer was evicted (their entries stay until [`PointerTable::compact`]).
    dead: usize,
    /// How many live pointers share each short handle (SPEC §3): those that share one
    /// get long handles.
    handle_keys: HashMap<u64, u32>,
}

impl PointerTable {
    // -- names and save order

    /// The save order and filename counter of the next save.
    pub(super) fn next_save(&mut self) -> (u64, u64) {
        let (seq, counter) = (self.next_seq, self.counter);
        self.next_seq += 1;
        self.counter += 1;
        (seq, counter)
    }

    /// The first of `n` save orders taken for pointers added in that order.
    pub(super) fn take_seqs(&mut self, n: u64) -> u64 {
        let first = self.next_seq;
        self.next_seq += n;
        first
    }

    /// The pointer of the record at `path`, sharing what other pointers have (see
    /// [`Entry::new`]).
    pub(super) fn new_entry(&mut self, path: &str, meta: RecordMeta, size: usize, generated: Option<bool>) -> Entry {
        Entry::new(path, meta, size, &mut self.interned, generated)
    }

    /// The texts pointers share, for the records held in memory to share them too.
    pub(super) fn interned(&mut self) -> &mut Interned {
        &mut self.interned
    }

    // -- looking up

    /// Number of live pointers.
    pub(super) fn len(&self) -> usize {
        self.order.len()
    }

    /// Slots held, evicted ones included.
    pub(super) fn slots_held(&self) -> usize {
        self.entries.len()
    }

    /// Changes whenever slots are forgotten or a pointer's handle changes length.
    pub(super) fn epoch(&self) -> u32 {
        self.epoch
    }

    /// The live slots, in save order.
    pub(super) fn in_order(&self) -> &[u32] {
        &self.order
    }

    pub(super) fn slot_of(&self, path: &str) -> Option<u32> {
        self.slot_by_path.get(path, &self.entries)
    }

    pub(super) fn entry(&self, path: &str) -> Option<&Entry> {
        self.slot_of(path).map(|slot| &self.entries[slot as usize])
    }

    /// The pointer in `slot` (an evicted one's until compaction).
    pub(super) fn get(&self, slot: u32) -> Option<&Entry> {
        self.entries.get(slot as usize)
    }

    /// The live slots whose pointer `filter` lets through, in save order.
    pub(super) fn matching<'s>(&'s self, filter: Filter<'s>) -> impl Iterator<Item = u32> + 's {
        // Every pointer's query id is the interned one: a query id never interned has no
        // pointer, and one that was is compared by address, not by its text.
        let query_id = filter.query_id.map(|q| self.interned.texts.get(q));
        self.order.iter().copied().filter(move |&slot| {
            let entry = &self.entries[slot as usize];
            let query_passes = match query_id {
                None => true,
                Some(None) => false,
                Some(Some(q)) => entry.query_id.as_ref().is_some_and(|e| Shared::ptr_eq(e, q)),
            };
            query_passes && filter.task_id.map_or(true, |t| entry.task_id().as_ref() == Some(t))
        })
    }

    /// The live slot whose handle's body is `body` (`text`: the handle as given, for the
    /// error); an `INVALID_ARGUMENT` error when a short handle names two records.
    pub(super) fn slot_of_handle(&self, text: &str, body: &str) -> Result<Option<u32>> {
        let mut found = None;
        for &slot in &self.order {
            if handle::names(body, self.entries[slot as usize].handle_digest()) {
                if found.is_some() {
                    let message = format!("the handle {text:?} names more than one record: use a long handle");
                    return Err(Error::invalid(message));
                }
                found = Some(slot);
            }
        }
        Ok(found)
    }

    /// How long the handle of `entry` (a live pointer's) is: long when another live
    /// pointer shares its short one.
    pub(super) fn handle_len(&self, entry: &Entry) -> usize {
        let shared = self.handle_keys.get(&handle::short_key(entry.handle_digest())).is_some_and(|&n| n > 1);
        if shared {
            handle::LONG
        } else {
            handle::SHORT
        }
    }

    /// The pointer in `slot`, as JSON, appended to `out`; `false` when there is none.
    pub(super) fn pointer_json(&self, slot: u32, out: &mut String) -> bool {
        let Some(entry) = self.get(slot) else { return false };
        entry.pointer_json(out, self.handle_len(entry));
        true
    }

    /// Appends the filepath of the pointer in `slot` to `out`; `false` when there is none.
    pub(super) fn push_filepath(&self, slot: u32, out: &mut String) -> bool {
        let Some(entry) = self.get(slot) else { return false };
        entry.filepath.push_to(out, &entry.args.hash);
        true
    }

    // -- duplicates

    /// Notes that the pointer in `slot`, just saved, is the latest copy of its key.
    pub(super) fn latest_copy_at(&mut self, slot: u32) {
        if let Some(key) = self.get(slot).and_then(Entry::duplicate_key) {
            self.latest_copy.insert(key, slot);
        }
    }

    /// Whether a later copy of the pointer at `slot` (same tool, args and result) was saved.
    pub(super) fn has_later_copy(&self, slot: u32) -> bool {
        let key = self.get(slot).and_then(Entry::duplicate_key);
        key.and_then(|k| self.latest_copy.get(&k)).is_some_and(|&latest| latest != slot)
    }

    // -- adding and removing

    /// A pointer the index had no room for: not added (the record stays this manager's
    /// if it wrote it).
    pub(super) fn not_added(&mut self, entry: Entry) {
        if entry.written {
            self.orphans.insert(entry.path_text().into());
        }
    }

    /// Holds `entry` as the pointer of index slot `slot` (just added to the index, so the
    /// next entry), saved in order `seq`, at its place in save order (`seq_of`: a live
    /// slot's save order).
    pub(super) fn place(&mut self, seq: u64, slot: u32, entry: Entry, seq_of: impl Fn(u32) -> u64) {
        let at = self.order.partition_point(|&s| seq_of(s) < seq);
        self.hold(slot, entry, at);
    }

    /// Holds `entry` as the pointer of index slot `slot`, last in `order`: the caller
    /// calls [`PointerTable::sort`] once it has placed them all.
    pub(super) fn place_last(&mut self, slot: u32, entry: Entry) {
        self.hold(slot, entry, self.order.len());
    }

    /// Holds `entry` in index slot `slot` (the next entry) as a pointer removed at once: a
    /// record of a segment read by range that no pointer takes (deleted since, or held by
    /// a newer segment), so the segment's records keep their slots one after the other.
    /// Its path is not known by it, nor its place in save order.
    pub(super) fn hold_vacant(&mut self, slot: u32, entry: Entry) {
        debug_assert_eq!(slot as usize, self.entries.len(), "an entry's slot is the index's");
        self.entries.push(entry);
        self.dead += 1;
    }

    /// Sorts the live slots in save order (`seq_of`: a slot's).
    pub(super) fn sort(&mut self, seq_of: impl Fn(u32) -> u64) {
        crate::sort::sort_by_key(&mut self.order, |&slot| seq_of(slot));
    }

    fn hold(&mut self, slot: u32, mut entry: Entry, at: usize) {
        debug_assert_eq!(slot as usize, self.entries.len(), "an entry's slot is the index's");
        let path = entry.path_text();
        entry.written |= !self.orphans.is_empty() && self.orphans.remove(path.as_str());
        let sharing = self.handle_keys.entry(handle::short_key(entry.handle_digest())).or_insert(0);
        *sharing += 1;
        if *sharing == 2 {
            // A pointer listed before with a short handle now has a long one: lists kept
            // by slot (the JS glue's) are stale.
            self.epoch = self.epoch.wrapping_add(1);
        }
        self.order.insert(at, slot);
        self.entries.push(entry);
        self.slot_by_path.insert(&path, slot, &self.entries);
    }

    /// Drops the pointer at `path` (its entry stays until compaction); its slot, `None`
    /// when there is none. `seq_of`: a live slot's save order.
    pub(super) fn remove(&mut self, path: &str, seq_of: impl Fn(u32) -> u64) -> Option<u32> {
        let slot = self.slot_of(path)?;
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
        let seq = seq_of(slot);
        if self.entries[slot as usize].written {
            self.orphans.insert(path.into());
        }
        // `order` is sorted by seq: find the slot without a scan.
        let at = self.order.partition_point(|&s| seq_of(s) < seq);
        if self.order.get(at) == Some(&slot) {
            self.order.remove(at);
        }
        self.slot_by_path.remove(path, &self.entries);
        self.dead += 1;
        Some(slot)
    }

    /// Whether evicted slots hold as much as the live ones (and at least [`COMPACT_FROM`]).
    pub(super) fn compaction_due(&self) -> bool {
        self.dead >= COMPACT_FROM && self.dead >= self.order.len()
    }

    /// Drops the entries of evicted pointers: the live ones get new slots, in save order.
    /// Returns each old slot's new one (`None`: dropped), for the index to move its
    /// postings. Slots taken earlier are stale (the epoch moves).
    pub(super) fn compact(&mut self) -> Vec<Option<u32>> {
        let order = std::mem::take(&mut self.order);
        let mut new_slot: Vec<Option<u32>> = vec![None; self.entries.len()];
        for (new, &old) in order.iter().enumerate() {
            new_slot[old as usize] = Some(new as u32);
        }
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
        new_slot
    }

    /// Forgets every pointer (the paths this manager wrote stay its own, as orphans).
    pub(super) fn forget(&mut self) {
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
        self.handle_keys.clear();
        self.dead = 0;
        self.latest_copy.clear();
        self.epoch = self.epoch.wrapping_add(1);
    }

    /// Notes that segment `id` holds the record at `path`: the segment that held it
    /// before (`None` inside when none known), `None` when no pointer is at `path`.
    pub(super) fn set_segment(&mut self, path: &str, id: SegmentId) -> Option<Option<SegmentId>> {
        let entry = self.slot_of(path).and_then(|slot| self.entries.get_mut(slot as usize))?;
        Some(entry.segment.replace(id))
    }

    // -- what this manager wrote

    /// Notes that this manager wrote the record at `path`.
    pub(super) fn mark_written(&mut self, path: &str) {
        match self.slot_of(path).and_then(|slot| self.entries.get_mut(slot as usize)) {
            Some(entry) => entry.written = true,
            None => {
                self.orphans.insert(path.into());
            }
        }
    }

    /// Forgets that this manager wrote the record at `path` (it is removed).
    pub(super) fn unmark_written(&mut self, path: &str) {
        if let Some(entry) = self.slot_of(path).and_then(|slot| self.entries.get_mut(slot as usize)) {
            entry.written = false;
        }
        self.orphans.remove(path);
    }

    /// Whether this manager wrote the record at `path`.
    pub(super) fn is_written(&self, path: &str) -> bool {
        self.entry(path).is_some_and(|e| e.written) || self.orphans.contains(path)
    }

    /// The paths this manager wrote.
    pub(super) fn written_paths(&self) -> Vec<String> {
        let live = self.order.iter().map(|&slot| &self.entries[slot as usize]).filter(|e| e.written);
        live.map(|e| e.path_text()).chain(self.orphans.iter().map(|p| p.to_string())).collect()
    }

    /// Forgets every path this manager wrote.
    pub(super) fn forget_written(&mut self) {
        for &slot in &self.order {
            if let Some(entry) = self.entries.get_mut(slot as usize) {
                entry.written = false;
            }
        }
        self.orphans.clear();
    }

    /// Where the table's memory goes (see `super::footprint`).
    #[cfg(test)]
    pub(super) fn footprint(&self, m: &mut super::footprint::Meter) {
        use std::mem::size_of;
        let per_entry = size_of::<Entry>();
        m.part("entries: Entry inline (size_of)", self.entries.len() * per_entry);
        let pages = self.entries.pages();
        let held: usize = pages.iter().map(|p| p.capacity()).sum();
        m.part("entries: page slack", (held - self.entries.len()) * per_entry);
        m.vec("entries: page list", pages);
        for page in pages {
            m.overhead("entries: page headers", page.capacity() * per_entry);
        }
        for i in 0..self.entries.len() {
            self.entries[i].footprint(m);
        }
        m.set("interned: table", &self.interned.texts);
        for s in &self.interned.texts {
            m.shared("interned: texts", s);
        }
        m.set("interned: args table", &self.interned.args);
        for a in &self.interned.args {
            m.alloc("interned: args (hash, text)", 2 * size_of::<usize>() + size_of::<super::entry::Args>());
            m.alloc("interned: args (hash, text)", a.json.len());
        }
        m.vec("order", &self.order);
        m.map("slot_by_path: by_hash", &self.slot_by_path.by_hash);
        m.map("slot_by_path: collisions", &self.slot_by_path.collisions);
        for k in self.slot_by_path.collisions.keys() {
            m.alloc("slot_by_path: collisions", k.len());
        }
        m.map("latest_copy", &self.latest_copy);
        m.set("orphans", &self.orphans);
        for s in &self.orphans {
            m.rc_str("orphans", s);
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::store::{Manager, Options, SaveInput};
    use crate::testing::TestStorage;

    #[test]
    fn compaction_keeps_the_later_copy_of_a_key_whose_latest_holder_was_evicted() {
        let mut o = Options::with("/ctx", std::rc::Rc::new(|| 0), std::rc::Rc::new(|| Ok(0.5)));
        o.persist_threshold = 0;
        let m = Manager::new(o).unwrap();
        let files = TestStorage::default();
        let save = |result: &'static str| {
            let input = SaveInput {
                tool_name: "grep",
                args_json: r#"{"q":"x"}"#,
                result_json: Some(result),
                ..SaveInput::default()
            };
            files.save(&m, input).unwrap()
        };
        let a = save("\"same\"");
        save("\"same\"");
        let c = save("\"other\"");
        {
            // As if C's key collided with A's: C is the latest holder of the key.
            let mut state = m.state.borrow_mut();
            let table = &mut state.pointers;
            let (slot_a, slot_c) = (table.slot_of(&a).unwrap(), table.slot_of(&c).unwrap());
            let key = table.entries[slot_a as usize].duplicate_key().unwrap();
            table.latest_copy.insert(key, slot_c);
            assert!(state.remove_pointer(&c));
            state.compact();
        }
        let slot_a = m.state.borrow().pointers.slot_of(&a).unwrap();
        assert!(m.has_later_copy(slot_a), "A's later copy is still known after compaction");
    }
}
