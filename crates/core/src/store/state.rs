//! A manager's state ([`State`]): its components, each owning its fields, and the few
//! operations that keep two of them in step. A pointer lives in the pointer table and in
//! the live index under the same slot, so adding, removing, compacting and forgetting
//! pointers go through here; everything else is one component's.

use super::holdings::Holdings;
use super::live::LiveIndex;
use super::table::PointerTable;
use super::{Entry, Held, Listed};
use crate::retention::Ledger;
use crate::select::segment::layout::Directory;
use crate::select::segment::{Segment, SegmentRecord};
use crate::select::Terms;
use std::rc::Rc;

/// What a manager holds between its steps.
#[derive(Default)]
pub(super) struct State {
    /// The pointers, by slot, path and handle.
    pub(super) pointers: PointerTable,
    /// Their terms and vectors, and what waits to be indexed or written into a segment.
    pub(super) live: LiveIndex,
    /// Records held in memory, by filepath, and those not yet being written out.
    pub(super) held: Held,
    /// The records retention counts, oldest first; none without a cap (see
    /// [`super::Manager::keeps_ledger`]).
    pub(super) owned: Ledger,
    /// The segments holding the pointers' records, and how many of each's records went.
    pub(super) holdings: Holdings,
}

impl State {
    /// Adds a pointer, `seq` in save order, indexed with `terms`: its slot, `None` when
    /// the index is full.
    pub(super) fn add(&mut self, seq: u64, entry: Entry, terms: &Terms) -> Option<u32> {
        let Some(slot) = self.live.add(seq, terms) else {
            self.pointers.not_added(entry);
            return None;
        };
        let live = &self.live;
        self.pointers.place(seq, slot, entry, |s| live.order(s));
        Some(slot)
    }

    /// Adds a pointer for each of `records`, the records of `segment` in order (their
    /// save orders `orders`), indexed with the segment's terms as they are; `entry_of`
    /// makes a record's pointer. `records` back when the index has no room for them. The
    /// caller calls [`State::sort`] once it has added them all.
    pub(super) fn add_segment<R>(
        &mut self,
        segment: &Segment,
        orders: &[u64],
        records: Vec<R>,
        mut entry_of: impl FnMut(&mut Self, R) -> Entry,
    ) -> Result<(), Vec<R>> {
        let Some(first) = self.live.append_segment(segment, orders) else { return Err(records) };
        for (i, record) in records.into_iter().enumerate() {
            let entry = entry_of(self, record);
            self.pointers.place_last(first + i as u32, entry);
        }
        Ok(())
    }

    /// Adds the records of the segment at `path` read by range (its `directory` and
    /// `records`), with save orders `orders`, without their terms: record `i` gets the
    /// pointer `entry_of` makes of `restored[i]`, or, where none (no pointer takes it), a
    /// vacant slot holding `vacant(record)`, out of ranking. `restored` back when the index
    /// has no room. The caller calls [`State::sort`] once it has added them all.
    pub(super) fn add_lazy_segment<R>(
        &mut self,
        (path, directory, records): (&str, &Directory, &[SegmentRecord]),
        orders: &[u64],
        restored: Vec<Option<R>>,
        mut entry_of: impl FnMut(&mut Self, R) -> Entry,
        mut vacant: impl FnMut(&mut Self, &SegmentRecord) -> Entry,
    ) -> Result<(), Vec<R>> {
        let Some(first) = self.live.append_lazy(path, directory.clone(), records, orders) else {
            return Err(restored.into_iter().flatten().collect());
        };
        for (i, record) in restored.into_iter().enumerate() {
            let slot = first + i as u32;
            match record {
                Some(record) => {
                    let entry = entry_of(self, record);
                    self.pointers.place_last(slot, entry);
                }
                None => {
                    let entry = vacant(self, &records[i]);
                    self.pointers.hold_vacant(slot, entry);
                    self.live.remove(slot);
                }
            }
        }
        Ok(())
    }

    /// Puts the pointers in save order, after [`State::add_segment`].
    pub(super) fn sort(&mut self) {
        let live = &self.live;
        self.pointers.sort(|s| live.order(s));
    }

    /// Drops the pointer at `path`, and its index entry; `false` when there is none.
    pub(super) fn remove_pointer(&mut self, path: &str) -> bool {
        let live = &self.live;
        let Some(slot) = self.pointers.remove(path, |s| live.order(s)) else { return false };
        self.live.remove(slot);
        if let Some(segment) = self.pointers.get(slot).and_then(|e| e.segment) {
            self.holdings.left(segment);
        }
        true
    }

    /// Notes that the segment named `name`, just written, holds the records at `paths`
    /// (those of them that have a pointer): a segment that held one before has lost it.
    pub(super) fn held_by(&mut self, name: &str, paths: impl IntoIterator<Item = impl AsRef<str>>) {
        let Some(id) = self.holdings.register(name) else { return };
        for path in paths {
            if let Some(Some(before)) = self.pointers.set_segment(path.as_ref(), id) {
                if before != id {
                    self.holdings.left(before);
                }
            }
        }
    }

    /// Drops the entries of evicted pointers: the live ones get new slots, in save
    /// order, and the index moves its postings to them (the content indexed at save time
    /// is kept: it cannot be recomputed from the pointer). Slots taken earlier are stale
    /// (the epoch moves).
    pub(super) fn compact(&mut self) {
        let new_slot = self.pointers.compact();
        self.live.remap(&new_slot);
    }

    /// Forgets every pointer, and the index with it (records stay where they are).
    pub(super) fn forget_pointers(&mut self) {
        self.pointers.forget();
        self.live.clear();
        self.holdings.clear();
    }

    /// Where the pointer a list taken at `epoch` had in `slot` is now (see
    /// [`super::Manager::resolve_slot`]).
    pub(super) fn resolve_slot(&self, epoch: u32, slot: u32) -> Option<Listed> {
        if epoch != self.pointers.epoch() {
            return None;
        }
        let entry = self.pointers.get(slot)?;
        if self.live.holds(slot) {
            return Some(Listed::Slot(slot));
        }
        let path = entry.path_text();
        Some(self.pointers.slot_of(&path).map_or(Listed::Gone(path), Listed::Slot))
    }

    /// The record held at `path`, written out: no longer held, and this manager's
    /// (`None`: it was dropped meanwhile).
    pub(super) fn written_out(&mut self, path: &str) -> Option<Rc<[u8]>> {
        let kept = self.held.remove(path);
        if kept.is_some() {
            self.pointers.mark_written(path);
        }
        kept
    }

    /// Holds the record at `path` in memory (replacing any there), last to be written out.
    pub(super) fn hold(&mut self, path: &str, bytes: Rc<[u8]>) {
        self.held.insert(path, bytes, self.pointers.interned());
    }

    /// Where the state's memory goes (see `super::footprint`).
    #[cfg(test)]
    pub(super) fn footprint(&self, m: &mut super::footprint::Meter) {
        self.pointers.footprint(m);
        self.live.footprint(m);
        self.held.footprint(m);
        self.owned.footprint(m);
    }
}
