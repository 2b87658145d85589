//! One term's posting list, compact: the documents holding the term, in ascending slot
//! order, each as the gap from the previous slot and the term's frequency in the
//! document, both LEB128 varints (7 bits a byte): a posting takes two bytes for a dense
//! list and three or four for a sparse one. Lists are only ever read front to back
//! (ranking scans them), so nothing needs random access.

use crate::varint;

/// One document holding a term.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Posting {
    /// The document: a record's slot, or a passage's number.
    pub slot: u32,
    /// How often the term occurs in it.
    pub tf: u32,
}

/// Postings in ascending slot order.
#[derive(Debug, Default, Clone)]
pub(super) struct Postings {
    bytes: Vec<u8>,
    /// Postings held.
    len: u32,
    /// The slot of the last posting (the next gap is taken from it).
    last: u32,
}

impl Postings {
    /// Appends `slot`'s posting; `slot` is above every slot held. The list grows by an
    /// eighth (at least 8 bytes) when full rather than doubling: a list grows one
    /// document at a time for as long as the store lives, and doubling leaves a quarter
    /// of the bytes unused on average.
    pub(super) fn push(&mut self, slot: u32, tf: u32) {
        debug_assert!(self.len == 0 || slot > self.last, "slots are pushed in ascending order");
        let gap = slot - if self.len == 0 { 0 } else { self.last };
        if self.bytes.capacity() - self.bytes.len() < 10 {
            self.bytes.reserve_exact((self.bytes.len() / 8).max(10));
        }
        push_varint(&mut self.bytes, gap);
        push_varint(&mut self.bytes, tf);
        self.len += 1;
        self.last = slot;
    }

    /// The slot of the last posting, if any.
    pub(super) fn last(&self) -> Option<u32> {
        (self.len > 0).then_some(self.last)
    }

    /// Appends a list of `count` postings in this encoding (`bytes`, numbers from 0, the
    /// last `last`) with every number shifted by `base`: only its first gap is written
    /// again, the rest is copied. `base` is above every number held.
    pub(super) fn append_shifted(&mut self, bytes: &[u8], count: u32, last: u32, base: u32) {
        let mut it = Iter::new(bytes);
        let Some(first) = it.next() else { return };
        debug_assert!(self.len == 0 || base + first.slot > self.last, "a shifted list comes after the list");
        let gap = base + first.slot - if self.len == 0 { 0 } else { self.last };
        let rest = it.bytes;
        self.bytes.reserve_exact(10 + rest.len());
        push_varint(&mut self.bytes, gap);
        push_varint(&mut self.bytes, first.tf);
        self.bytes.extend_from_slice(rest);
        self.len += count;
        self.last = base + last;
    }

    /// The postings of `a` and `b` in one list, in slot order (a slot in both keeps
    /// `a`'s): `b` appended when it comes after `a`, as a ranking's lists read from
    /// segments come before the lists held; merged one posting at a time otherwise.
    pub(super) fn merged(a: &Postings, b: &Postings) -> Postings {
        match (a.last(), b.iter().next()) {
            (_, None) => a.clone(),
            (Some(last), Some(first)) if first.slot <= last => {
                let mut all: Vec<Posting> = a.iter().chain(b.iter()).collect();
                all.sort_by_key(|p| p.slot); // stable: `a`'s first
                all.dedup_by_key(|p| p.slot);
                Postings::from_postings(all)
            }
            _ => {
                let mut out = a.clone();
                out.append_shifted(&b.bytes, b.len, b.last, 0);
                out
            }
        }
    }

    /// Whether it holds none.
    pub(super) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The postings, in ascending slot order.
    pub(super) fn iter(&self) -> Iter<'_> {
        Iter { bytes: &self.bytes, slot: 0 }
    }

    /// A list of `postings`, which must be in ascending slot order, held at its exact size.
    pub(super) fn from_postings(postings: impl IntoIterator<Item = Posting>) -> Self {
        let mut list = Postings::default();
        for p in postings {
            list.push(p.slot, p.tf);
        }
        list.bytes.shrink_to_fit();
        list
    }

    /// Bytes held (capacity), for memory reports.
    pub(super) fn capacity(&self) -> usize {
        self.bytes.capacity()
    }

    /// Bytes used, for memory reports.
    pub(super) fn used(&self) -> usize {
        self.bytes.len()
    }
}

/// Appends `n` as a varint.
pub(crate) fn push_varint(out: &mut Vec<u8>, n: u32) {
    varint::push(out, u64::from(n));
}

/// The postings of a [`Postings`], or of a list in its encoding (a segment's).
pub(crate) struct Iter<'a> {
    bytes: &'a [u8],
    slot: u32,
}

impl<'a> Iter<'a> {
    /// The postings encoded in `bytes` (gaps from 0).
    pub(crate) fn new(bytes: &'a [u8]) -> Iter<'a> {
        Iter { bytes, slot: 0 }
    }

    /// Whether every byte was read (a list that stopped early was cut inside a posting).
    pub(crate) fn is_done(&self) -> bool {
        self.bytes.is_empty()
    }

    /// The next number; `None` at the end, or at one cut short or past 32 bits.
    fn varint(&mut self) -> Option<u32> {
        let (n, rest) = varint::split(self.bytes)?;
        self.bytes = rest;
        u32::try_from(n).ok()
    }
}

impl Iterator for Iter<'_> {
    type Item = Posting;

    fn next(&mut self) -> Option<Posting> {
        let gap = self.varint()?;
        let tf = self.varint()?;
        self.slot = self.slot.wrapping_add(gap);
        Some(Posting { slot: self.slot, tf })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Slots whose gaps take every size LEB128 distinguishes, at each boundary (1 to 4
    /// bytes), then pseudo-random gaps, up to the largest slot the index takes.
    fn sample() -> Vec<u32> {
        let gaps = [0u32, 1, 126, 127, 128, 129, 16_383, 16_384, 16_385, 2_097_151, 2_097_152, 2_097_153];
        let mut slots: Vec<u32> = gaps
            .iter()
            .scan(0, |s, g| {
                *s += g;
                Some(*s)
            })
            .collect();
        let mut s = *slots.last().unwrap();
        let mut x = 12_345u32;
        while s < (1 << 24) - 300_000 {
            x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            s += 1 + (x >> 13) % [1, 100, 20_000, 250_000][(x % 4) as usize];
            slots.push(s);
        }
        slots.push(u32::MAX);
        slots
    }

    #[test]
    fn postings_read_back_as_pushed_for_every_gap_and_frequency() {
        let tfs = [0, 1, 7, 15, 16, 127, 128, 70_000, u32::MAX];
        let postings: Vec<Posting> =
            sample().iter().enumerate().map(|(i, &slot)| Posting { slot, tf: tfs[i % tfs.len()] }).collect();
        let mut list = Postings::default();
        for p in &postings {
            list.push(p.slot, p.tf);
        }
        assert_eq!(list.iter().count(), postings.len());
        assert!(list.iter().eq(postings.iter().copied()));
        let exact = Postings::from_postings(postings.iter().copied());
        assert!(exact.iter().eq(postings.iter().copied()));
        assert_eq!(exact.capacity(), exact.used(), "a rebuilt list is held at its exact size");
        assert!(Postings::default().iter().next().is_none());
    }

    #[test]
    fn postings_grow_by_an_eighth_and_take_two_bytes_for_dense_slots() {
        let mut list = Postings::default();
        for slot in 0..100_000u32 {
            list.push(slot, 1);
            assert!(list.capacity() <= list.used() + list.used() / 8 + 20, "{} of {}", list.used(), list.capacity());
        }
        assert_eq!(list.used(), 200_000);
        assert!(list.iter().eq((0..100_000u32).map(|slot| Posting { slot, tf: 1 })));
    }

    #[test]
    fn merged_lists_are_in_slot_order_whether_they_follow_or_interleave() {
        let list = |slots: &[u32]| Postings::from_postings(slots.iter().map(|&slot| Posting { slot, tf: slot + 1 }));
        let slots = |p: &Postings| p.iter().map(|p| (p.slot, p.tf)).collect::<Vec<_>>();
        let after = Postings::merged(&list(&[1, 5, 9]), &list(&[10, 300]));
        assert_eq!(slots(&after), [(1, 2), (5, 6), (9, 10), (10, 11), (300, 301)]);
        let interleaved = Postings::merged(&list(&[1, 200, 9000]), &list(&[0, 5, 200, 10_000]));
        assert_eq!(slots(&interleaved), [(0, 1), (1, 2), (5, 6), (200, 201), (9000, 9001), (10_000, 10_001)]);
        assert_eq!(interleaved.last(), Some(10_000));
        assert_eq!(slots(&Postings::merged(&Postings::default(), &list(&[3]))), [(3, 4)]);
        assert_eq!(slots(&Postings::merged(&list(&[3]), &Postings::default())), [(3, 4)]);
    }
}
