//! The pointer table ([`State`]): entries by slot, the path → slot map with its own
//! hasher, what is written, eviction and compaction.

use super::unindexed::Unindexed;
use super::{result_hash, Entry, Held, Interned, COMPACT_FROM};
use crate::handle;
use crate::paged::Paged;
use crate::retention::Ledger;
use crate::select::{Index, Terms, Vectors};
use std::collections::{HashMap, HashSet};
use std::rc::Rc;

#[derive(Default)]
pub(super) struct State {
    /// The filename counter: per manager, from 0.
    pub(super) counter: u64,
    /// Save order of pointers (resumed ones first).
    pub(super) next_seq: u64,
    /// Pointers by slot (the order they were added; a slot never changes).
    pub(super) entries: Paged<Entry>,
    /// Tool names, query ids and args, shared by the pointers.
    pub(super) interned: Interned,
    /// Slots in save order (ascending `seq`).
    pub(super) order: Vec<u32>,
    pub(super) slot_by_path: PathSlots,
    /// The pointers' terms, by slot.
    pub(super) index: Index,
    /// The pointers' embedding vectors (the `embed` hook's), by slot.
    pub(super) vectors: Vectors,
    /// Bumped whenever slots are forgotten, so a list of slots taken earlier is
    /// known to be stale.
    pub(super) epoch: u32,
    /// The latest slot saved with each duplicate key (tool, args hash, result hash): a
    /// slot other than the pointer's own says a later copy may exist (two keys may share
    /// a hash), so selection ranks every candidate to find it.
    pub(super) latest_copy: HashMap<u32, u32, std::hash::BuildHasherDefault<Prehashed>>,
    /// Records held in memory, by filepath, and those not yet being written out.
    pub(super) memory: Held,
    /// Paths this manager wrote to storage that no pointer holds (the pointers' entries
    /// have the `written` flag): those of pointers forgotten (`clearPointers`, a rebuild)
    /// or never added (the index was full). A pointer added again at such a path takes
    /// it back as its flag.
    pub(super) orphans: HashSet<Rc<str>>,
    /// The records retention counts, oldest first; none without a cap (see
    /// [`Manager::own`]).
    pub(super) owned: Ledger,
    /// Slots whose pointer was evicted (their entries stay until [`State::compact`]).
    pub(super) dead: usize,
    /// Saved records whose content is not indexed yet ([`Manager::index_content`]).
    pub(super) unindexed: Unindexed,
    /// Persisted records whose content is indexed but in no segment this manager wrote
    /// or read: filepath and content terms, for the next segment (SPEC §4).
    pub(super) unsegmented: crate::select::segment::Builder,
    /// How many live pointers share each short handle (SPEC §3): those that share one
    /// get long handles.
    pub(super) handle_keys: HashMap<u64, u32>,
}

/// Filepath → slot, keyed by a 32-bit hash of the path so the map does not hold a second
/// copy of every filepath (the entries have them) and takes 8 bytes a pointer; paths
/// whose hash is taken go to `collisions` (at 100,000 paths, a few), so a weak hash costs
/// time, never correctness. Selecting over a list of pointers looks up every filepath
/// given: the hash is a fast one (FxHash's word-at-a-time step, then MurmurHash3's
/// finaliser so every bit mixes), and the map only spreads it to 64 bits.
#[derive(Default)]
pub(super) struct PathSlots {
    pub(super) by_hash: HashMap<u32, u32, std::hash::BuildHasherDefault<Prehashed>>,
    pub(super) collisions: HashMap<Box<str>, u32>,
}

/// A `Hasher` for keys that are hashes already: it spreads the `u32` it is given over 64
/// bits (the map takes its buckets from the low bits and its tags from the top ones).
#[derive(Default)]
pub(super) struct Prehashed(u64);

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
    pub(super) fn key(path: &str) -> u32 {
        // MurmurHash3's finaliser over the FxHash of the path.
        let mut h = result_hash(Some(path.as_bytes()));
        h ^= h >> 33;
        h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
        h ^= h >> 33;
        h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
        (h ^ (h >> 33)) as u32
    }

    pub(super) fn get(&self, path: &str, entries: &Paged<Entry>) -> Option<u32> {
        self.find(path, |slot, path| entries[slot as usize].path_is(path))
    }

    pub(super) fn insert(&mut self, path: &str, slot: u32, entries: &Paged<Entry>) {
        self.put(path, slot, |slot, path| entries[slot as usize].path_is(path));
    }

    pub(super) fn remove(&mut self, path: &str, entries: &Paged<Entry>) {
        self.take(path, |slot, path| entries[slot as usize].path_is(path));
    }

    /// The slot of `path`; `is(slot, path)`: whether the path at `slot` is `path`.
    pub(super) fn find(&self, path: &str, is: impl Fn(u32, &str) -> bool) -> Option<u32> {
        match self.by_hash.get(&Self::key(path)) {
            Some(&slot) if is(slot, path) => Some(slot),
            _ => self.collisions.get(path).copied(),
        }
    }

    /// Puts `path` at `slot` (the path's slot before, if any, is replaced).
    pub(super) fn put(&mut self, path: &str, slot: u32, is: impl Fn(u32, &str) -> bool) {
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
    pub(super) fn take(&mut self, path: &str, is: impl Fn(u32, &str) -> bool) {
        let key = Self::key(path);
        if matches!(self.by_hash.get(&key), Some(&slot) if is(slot, path)) {
            self.by_hash.remove(&key);
        } else {
            self.collisions.remove(path);
        }
    }

    pub(super) fn clear(&mut self) {
        self.by_hash.clear();
        self.collisions.clear();
    }
}

impl State {
    pub(super) fn slot_of(&self, path: &str) -> Option<u32> {
        self.slot_by_path.get(path, &self.entries)
    }

    pub(super) fn entry(&self, path: &str) -> Option<&Entry> {
        self.slot_of(path).map(|slot| &self.entries[slot as usize])
    }

    /// Adds a pointer, `seq` in save order; `false` when the index is full.
    pub(super) fn add(&mut self, seq: u64, entry: Entry, terms: &Terms) -> bool {
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
    pub(super) fn place(&mut self, seq: u64, slot: u32, mut entry: Entry, sorted: bool) {
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
    pub(super) fn handle_len(&self, entry: &Entry) -> usize {
        let shared = self.handle_keys.get(&handle::short_key(entry.handle_digest())).is_some_and(|&n| n > 1);
        if shared {
            handle::LONG
        } else {
            handle::SHORT
        }
    }

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

    /// Drops the pointer at `path`, and its index entry; `false` when there is none.
    pub(super) fn remove_pointer(&mut self, path: &str) -> bool {
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
    pub(super) fn compaction_due(&self) -> bool {
        self.dead >= COMPACT_FROM && self.dead >= self.order.len()
    }

    /// Drops the entries of evicted pointers: the live ones get new slots, in save
    /// order, and the index moves its postings to them (the content indexed at save time
    /// is kept: it cannot be recomputed from the pointer). Slots taken earlier are stale
    /// (the epoch moves).
    pub(super) fn compact(&mut self) {
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

    pub(super) fn forget_pointers(&mut self) {
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
        self.unsegmented.clear();
        self.handle_keys.clear();
        self.dead = 0;
        self.latest_copy.clear();
        self.epoch = self.epoch.wrapping_add(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::paged::Paged;
    use crate::record::{iso_timestamp, RecordMeta};
    use crate::store::{Entry, Interned, Manager, Options, SaveInput};
    use crate::testing::TestStorage;
    use serde_json::{Number, Value};

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
            let (slot_a, slot_c) = (state.slot_of(&a).unwrap(), state.slot_of(&c).unwrap());
            let key = state.entries[slot_a as usize].duplicate_key().unwrap();
            state.latest_copy.insert(key, slot_c);
            assert!(state.remove_pointer(&c));
            state.compact();
        }
        let slot_a = m.state.borrow().slot_of(&a).unwrap();
        assert!(m.has_later_copy(slot_a), "A's later copy is still known after compaction");
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
