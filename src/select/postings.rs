//! One term's posting list, compact: the documents holding the term, in ascending slot
//! order, each as the gap from the previous slot (LEB128: 7 bits a byte) and one byte
//! with the term's frequency in the document's two fields. A term held by a large share
//! of the store (a tool name, a common word) costs 2 bytes a document instead of 4; a
//! rare one, 3 or 4. Lists are only ever read front to back (ranking scans them), so
//! nothing needs random access.

use super::index::SLOT_SHIFT;

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
    /// Appends `slot`'s posting; `slot` is above every slot held. `tf` is the packed
    /// frequencies (metadata in the high 4 bits, content in the low 4). The list grows by
    /// an eighth (at least 8 bytes) when full rather than doubling: a list grows one
    /// document at a time for as long as the store lives, and doubling leaves a quarter
    /// of the bytes unused on average.
    pub(super) fn push(&mut self, slot: u32, tf: u8) {
        debug_assert!(self.len == 0 || slot > self.last, "slots are pushed in ascending order");
        let mut gap = slot - if self.len == 0 { 0 } else { self.last };
        if self.bytes.capacity() - self.bytes.len() < 6 {
            self.bytes.reserve_exact((self.bytes.len() / 8).max(8));
        }
        while gap >= 0x80 {
            self.bytes.push(gap as u8 | 0x80);
            gap >>= 7;
        }
        self.bytes.push(gap as u8);
        self.bytes.push(tf);
        self.len += 1;
        self.last = slot;
    }

    /// Postings held.
    pub(super) fn len(&self) -> usize {
        self.len as usize
    }

    /// Whether it holds none.
    pub(super) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The postings, in ascending slot order, packed as `slot << 8 | tf`.
    pub(super) fn iter(&self) -> Iter<'_> {
        Iter { bytes: &self.bytes, slot: 0 }
    }

    /// A list of `packed` postings (`slot << 8 | tf`), which must be in ascending slot
    /// order, held at its exact size.
    pub(super) fn from_packed(packed: impl IntoIterator<Item = u32>) -> Self {
        let mut list = Postings::default();
        for p in packed {
            list.push(p >> SLOT_SHIFT, p as u8);
        }
        list.bytes.shrink_to_fit();
        list
    }

    /// Bytes held (capacity), for memory reports.
    pub(super) fn capacity(&self) -> usize {
        self.bytes.capacity()
    }

    /// Bytes used, for memory reports.
    #[cfg(test)]
    pub(super) fn used(&self) -> usize {
        self.bytes.len()
    }
}

/// The postings of a [`Postings`], packed as `slot << 8 | tf`.
pub(super) struct Iter<'a> {
    bytes: &'a [u8],
    slot: u32,
}

impl Iterator for Iter<'_> {
    type Item = u32;

    fn next(&mut self) -> Option<u32> {
        let mut gap = 0u32;
        let mut shift = 0;
        loop {
            let (&b, rest) = self.bytes.split_first()?;
            self.bytes = rest;
            gap |= u32::from(b & 0x7f) << shift;
            if b < 0x80 {
                break;
            }
            shift += 7;
        }
        let (&tf, rest) = self.bytes.split_first()?;
        self.bytes = rest;
        self.slot += gap;
        Some(self.slot << SLOT_SHIFT | u32::from(tf))
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
        slots.push((1 << 24) - 1);
        slots
    }

    #[test]
    fn postings_read_back_as_pushed_for_every_gap_size() {
        let packed: Vec<u32> =
            sample().iter().enumerate().map(|(i, &s)| s << SLOT_SHIFT | (i * 37 % 256) as u32).collect();
        let mut list = Postings::default();
        for &p in &packed {
            list.push(p >> SLOT_SHIFT, p as u8);
        }
        assert_eq!(list.len(), packed.len());
        assert!(list.iter().eq(packed.iter().copied()));
        let exact = Postings::from_packed(packed.iter().copied());
        assert!(exact.iter().eq(packed.iter().copied()));
        assert_eq!(exact.capacity(), exact.used(), "a rebuilt list is held at its exact size");
        assert!(Postings::default().iter().next().is_none());
    }

    #[test]
    fn postings_grow_by_an_eighth_and_take_two_bytes_for_dense_slots() {
        let mut list = Postings::default();
        for slot in 0..100_000u32 {
            list.push(slot, 0x11);
            assert!(list.capacity() <= list.used() + list.used() / 8 + 8 + 6, "{} of {}", list.used(), list.capacity());
        }
        assert_eq!(list.used(), 200_000);
        assert!(list.iter().eq((0..100_000u32).map(|s| s << SLOT_SHIFT | 0x11)));
    }
}
