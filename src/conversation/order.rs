//! Ordering with one copy of the standard library's sort in the wasm module. Each
//! `sort_by` of its own element type and closure, and each `collect` into a `BTreeSet`
//! or `BTreeMap` (which sorts its input first), compiles to a sort of its own (2-4 KB
//! each); here every list is ordered by one stable sort of indices, and sets and maps are
//! built by insertion.

use std::cmp::Ordering;
use std::collections::BTreeSet;

/// Sorts `list` stably by `cmp`: the order `list.sort_by(cmp)` gives.
pub(crate) fn sort_by<T>(list: &mut Vec<T>, cmp: impl Fn(&T, &T) -> Ordering) {
    let order = stable_order(list.len(), &|a, b| cmp(&list[a], &list[b]));
    let mut slots: Vec<Option<T>> = list.drain(..).map(Some).collect();
    list.extend(order.into_iter().filter_map(|i| slots[i].take()));
}

/// The indices `0..len`, stably sorted by `cmp`.
fn stable_order(len: usize, cmp: &dyn Fn(usize, usize) -> Ordering) -> Vec<usize> {
    let mut order: Vec<usize> = (0..len).collect();
    order.sort_by(|&a, &b| cmp(a, b));
    order
}

/// The set of `items`, built by insertion.
pub(crate) fn set_of<T: Ord>(items: impl IntoIterator<Item = T>) -> BTreeSet<T> {
    let mut set = BTreeSet::new();
    set.extend(items);
    set
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorts_as_the_standard_stable_sort_does() {
        // Many ties, in a list long enough for the sort's non-trivial paths.
        let mut seed = 7u32;
        let mut list: Vec<(u32, usize)> = (0..300)
            .map(|i| {
                seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
                ((seed >> 16) % 5, i)
            })
            .collect();
        let mut expected = list.clone();
        expected.sort_by_key(|p| std::cmp::Reverse(p.0));
        sort_by(&mut list, |a, b| b.0.cmp(&a.0));
        assert_eq!(list, expected);
    }

    #[test]
    fn sets_hold_each_item_once_in_order() {
        assert_eq!(set_of(["b", "a", "b"]).into_iter().collect::<Vec<_>>(), ["a", "b"]);
    }
}
