//! The crate's one sort and one selection: every slice the crate orders goes through them.
//!
//! The standard library's sorts are generic over the element and the comparison, so each
//! call site compiles its own copy of driftsort or ipnsort (1–4 KB each in wasm, about 35 KB
//! for the core module's twenty sites). Here the sorting itself runs once, over `u32`
//! indices with a `dyn` comparison; the elements are then moved into place by following
//! the permutation's cycles, a few dozen bytes per element type.
//!
//! Ties keep the elements' order (a stable sort), so the result is the same as
//! `sort_by`'s, and the same as `sort_unstable_by`'s wherever equal elements are
//! interchangeable, as they are at every call site.

use std::cmp::Ordering;
use std::collections::BTreeSet;

/// Sorts `v` by `cmp`, stably.
pub fn sort_by<T>(v: &mut [T], mut cmp: impl FnMut(&T, &T) -> Ordering) {
    let order = order(v.len(), None, &mut |a, b| cmp(&v[a], &v[b]));
    permute(v, order);
}

/// Sorts `v` by a key of each element, stably.
pub fn sort_by_key<T, K: Ord>(v: &mut [T], mut key: impl FnMut(&T) -> K) {
    sort_by(v, |a, b| key(a).cmp(&key(b)));
}

/// Sorts `v`, stably.
pub fn sort<T: Ord>(v: &mut [T]) {
    sort_by(v, T::cmp);
}

/// Keeps the first `k` elements of `v` in `cmp`'s order (ties by position), sorted: a
/// selection in linear time, then a sort of those `k` only.
pub fn top_by<T>(v: &mut Vec<T>, k: usize, mut cmp: impl FnMut(&T, &T) -> Ordering) {
    let order = order(v.len(), Some(k), &mut |a, b| cmp(&v[a], &v[b]));
    let kept = order.len();
    permute(v, order);
    v.truncate(kept);
}

/// The set of `items`, built by insertion: `collect` into a `BTreeSet` sorts its input
/// first, with a sort of its own.
pub fn set_of<T: Ord>(items: impl IntoIterator<Item = T>) -> BTreeSet<T> {
    let mut set = BTreeSet::new();
    set.extend(items);
    set
}

/// The positions `0..n` in the order of `cmp` (ties by position); with `Some(k)`, the
/// first `k` only. The one instantiation of the standard sort and selection.
fn order(n: usize, k: Option<usize>, cmp: &mut dyn FnMut(usize, usize) -> Ordering) -> Vec<u32> {
    assert!(u32::try_from(n).is_ok(), "sorting 2^32 elements or more");
    let mut idx: Vec<u32> = (0..n as u32).collect();
    let mut by = |a: &u32, b: &u32| cmp(*a as usize, *b as usize).then(a.cmp(b));
    if let Some(k) = k.filter(|&k| k < idx.len()) {
        if k > 0 {
            idx.select_nth_unstable_by(k - 1, &mut by);
        }
        idx.truncate(k);
    }
    idx.sort_unstable_by(by);
    idx
}

/// Moves `v[order[i]]` to position `i` for every `i` in `order` (distinct positions,
/// all of them or the first `k` of an order); the elements not named end up after them.
/// Each step swaps the wanted element in; the one it displaces is found later by
/// following where each step sent its own (`order[i]` is overwritten with it).
fn permute<T>(v: &mut [T], mut order: Vec<u32>) {
    for i in 0..order.len() {
        let mut at = order[i] as usize;
        while at < i {
            at = order[at] as usize;
        }
        v.swap(i, at);
        order[i] = at as u32;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small deterministic generator, so the tests need no dependency.
    fn numbers(seed: u64, n: usize, modulo: u64) -> Vec<u64> {
        let mut x = seed;
        (0..n)
            .map(|_| {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                (x >> 33) % modulo
            })
            .collect()
    }

    #[test]
    fn sorts_as_the_standard_stable_sort_does_ties_included() {
        for (seed, n, modulo) in [(1, 0, 1), (2, 1, 5), (3, 2, 2), (4, 17, 3), (5, 200, 10), (6, 5000, 1000)] {
            // The second field tells equal keys apart: their order must be kept.
            let items: Vec<(u64, usize)> = numbers(seed, n, modulo).into_iter().zip(0..).collect();
            let mut ours = items.clone();
            sort_by(&mut ours, |a, b| a.0.cmp(&b.0));
            let mut std = items.clone();
            std.sort_by_key(|a| a.0);
            assert_eq!(ours, std, "n = {n}");
            let mut ours = items.clone();
            sort_by_key(&mut ours, |a| std::cmp::Reverse(a.0));
            let mut std = items.clone();
            std.sort_by_key(|a| std::cmp::Reverse(a.0));
            assert_eq!(ours, std, "by key, n = {n}");
            let mut strings: Vec<String> = items.iter().map(|i| format!("{:x}", i.0)).collect();
            let mut std = strings.clone();
            sort(&mut strings);
            std.sort();
            assert_eq!(strings, std);
        }
    }

    #[test]
    fn keeps_the_first_k_sorted_as_a_full_sort_then_truncate_would() {
        for (seed, n, modulo) in [(7, 0, 1), (8, 1, 1), (9, 10, 3), (10, 300, 20), (11, 4000, 50)] {
            let items: Vec<(u64, usize)> = numbers(seed, n, modulo).into_iter().zip(0..).collect();
            for k in [0, 1, 2, n / 2, n.saturating_sub(1), n, n + 3] {
                let mut ours = items.clone();
                top_by(&mut ours, k, |a, b| b.0.cmp(&a.0));
                let mut std = items.clone();
                std.sort_by_key(|a| std::cmp::Reverse(a.0));
                std.truncate(k);
                assert_eq!(ours, std, "n = {n}, k = {k}");
            }
        }
    }

    #[test]
    fn sets_hold_each_item_once_in_order() {
        assert_eq!(set_of(["b", "a", "b"]).into_iter().collect::<Vec<_>>(), ["a", "b"]);
    }
}
