//! A growable table in fixed-size pages: what a `Vec` does for the pointer table (and the
//! index's per-document columns), without
//! its slack. A `Vec` grows by doubling, so at 100,000 entries it may hold room for
//! 131,072, and each growth copies the whole table into a buffer twice its size; in wasm
//! the memory that takes is never given back. Pages are allocated one at a time at their
//! exact size and never move: the slack is under one page, and growing copies nothing.

use std::ops::{Index, IndexMut};

/// Entries per page.
pub const PAGE: usize = 1024;

/// A table of `T` by position, in pages of [`PAGE`].
#[derive(Debug)]
pub struct Paged<T> {
    pages: Vec<Vec<T>>,
    len: usize,
}

impl<T> Default for Paged<T> {
    fn default() -> Self {
        Paged { pages: Vec::new(), len: 0 }
    }
}

impl<T> Paged<T> {
    /// Entries held.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it holds no entry.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Appends `value` at position `len()`.
    pub fn push(&mut self, value: T) {
        if self.len % PAGE == 0 {
            self.pages.push(Vec::with_capacity(PAGE));
        }
        if let Some(page) = self.pages.last_mut() {
            page.push(value);
            self.len += 1;
        }
    }

    /// The entry at `i`, if any.
    pub fn get(&self, i: usize) -> Option<&T> {
        self.pages.get(i / PAGE).and_then(|page| page.get(i % PAGE))
    }

    /// The entry at `i`, mutably, if any.
    pub fn get_mut(&mut self, i: usize) -> Option<&mut T> {
        self.pages.get_mut(i / PAGE).and_then(|page| page.get_mut(i % PAGE))
    }

    /// The pages (for memory reports).
    pub fn pages(&self) -> &Vec<Vec<T>> {
        &self.pages
    }

    /// Drops every entry and page.
    pub fn clear(&mut self) {
        *self = Paged::default();
    }
}

impl<T> Index<usize> for Paged<T> {
    type Output = T;

    fn index(&self, i: usize) -> &T {
        &self.pages[i / PAGE][i % PAGE]
    }
}

impl<T> IndexMut<usize> for Paged<T> {
    fn index_mut(&mut self, i: usize) -> &mut T {
        &mut self.pages[i / PAGE][i % PAGE]
    }
}

impl<T> IntoIterator for Paged<T> {
    type Item = T;
    type IntoIter = std::iter::Flatten<std::vec::IntoIter<Vec<T>>>;

    fn into_iter(self) -> Self::IntoIter {
        self.pages.into_iter().flatten()
    }
}

impl<T> FromIterator<T> for Paged<T> {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        let mut out = Paged::default();
        for value in iter {
            out.push(value);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_survive_page_boundaries() {
        let mut t: Paged<usize> = Paged::default();
        for i in 0..3 * PAGE + 5 {
            t.push(i);
        }
        assert_eq!(t.len(), 3 * PAGE + 5);
        assert_eq!(t.pages.len(), 4);
        assert!(t.pages.iter().all(|p| p.capacity() == PAGE), "exact pages, no slack past the last");
        assert_eq!((t[0], t[PAGE - 1], t[PAGE], t[3 * PAGE + 4]), (0, PAGE - 1, PAGE, 3 * PAGE + 4));
        assert_eq!(t.get(3 * PAGE + 5), None);
        let back: Paged<usize> = t.into_iter().filter(|i| i % 2 == 0).collect();
        assert_eq!(back.len(), (3 * PAGE + 5).div_ceil(2));
        assert_eq!(back[PAGE], 2 * PAGE);
    }
}
