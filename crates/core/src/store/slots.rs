//! Filepath → slot ([`PathSlots`]): the map the pointer table and the records held in
//! memory find a path's place with, keyed by a 32-bit hash of the path so it holds no
//! second copy of the paths; and [`Prehashed`], the hasher of maps whose keys are hashes.

use super::{result_hash, Entry};
use crate::paged::Paged;
use std::collections::HashMap;

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::paged::Paged;
    use crate::record::{iso_timestamp, RecordMeta};
    use crate::store::{Entry, Interned};

    fn entry(path: &str) -> Entry {
        let meta = RecordMeta {
            tool_name: "t".into(),
            tool_description: "t".into(),
            args_json: "{}".into(),
            args_hash: "0".repeat(64),
            timestamp: iso_timestamp(0),
            task_id: None,
            query_id: None,
            tool_call_id: None,
        };
        Entry::new(path, meta, 0, &mut Interned::default(), None)
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
}
