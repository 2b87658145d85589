//! Embedding vectors for hybrid ranking: one per document, from the host's `embed`
//! hook, held quantised (int8 per dimension with one scale per vector, normalised to
//! unit length first, so a dot product is a cosine), searched by cosine top-k, and
//! fused with the BM25F ranking by reciprocal rank fusion.

use std::collections::HashMap;

use crate::sort;

/// The constant of reciprocal rank fusion (Cormack, Clarke and Büttcher, 2009): a
/// document's fused score is the sum of `1 / (RRF_K + rank)` over the rankings (rank
/// from 1).
pub const RRF_K: f64 = 60.0;

/// How many of the nearest documents by cosine the vector ranking lists.
pub const VECTOR_DEPTH: usize = 100;

/// One vector: `values[i] * scale` is its `i`-th component, of unit length.
#[derive(Debug, Clone)]
struct Quantised {
    values: Box<[i8]>,
    scale: f32,
}

/// A vector quantised to int8, normalised to unit length; `None` for a vector of zero
/// length or with a component that is not finite.
fn quantise(v: &[f32]) -> Option<Quantised> {
    let norm = v.iter().map(|x| f64::from(*x) * f64::from(*x)).sum::<f64>().sqrt();
    if !norm.is_finite() || norm == 0.0 {
        return None;
    }
    let max = v.iter().fold(0f32, |m, x| m.max(x.abs()));
    let step = f64::from(max) / norm / 127.0;
    let values: Box<[i8]> = v.iter().map(|x| (f64::from(*x) / norm / step).round() as i8).collect();
    // The scale that gives the quantised vector unit length again.
    let q_norm = values.iter().map(|&x| f64::from(x) * f64::from(x)).sum::<f64>().sqrt();
    Some(Quantised { values, scale: (1.0 / q_norm) as f32 })
}

/// The documents' vectors, by slot. All have the dimension of the first one set.
#[derive(Debug, Default)]
pub struct Vectors {
    by_slot: HashMap<u32, Quantised>,
    dims: usize,
}

impl Vectors {
    /// Counts the vectors' allocations (the core's memory report).
    #[doc(hidden)]
    pub fn footprint(&self, m: &mut crate::footprint::Meter) {
        m.map("vectors", &self.by_slot);
        for q in self.by_slot.values() {
            m.alloc("vectors", q.values.len());
        }
    }

    /// Sets the vector of `slot`; `false` (nothing kept) when it is empty, zero, not
    /// finite, or of another dimension than those held.
    pub fn set(&mut self, slot: u32, vector: &[f32]) -> bool {
        if vector.is_empty() || (self.dims != 0 && vector.len() != self.dims && !self.by_slot.is_empty()) {
            return false;
        }
        let Some(q) = quantise(vector) else { return false };
        self.dims = vector.len();
        self.by_slot.insert(slot, q);
        true
    }

    /// Whether `slot` has a vector.
    pub fn has(&self, slot: u32) -> bool {
        self.by_slot.contains_key(&slot)
    }

    /// Drops the vector of `slot`.
    pub fn remove(&mut self, slot: u32) {
        self.by_slot.remove(&slot);
    }

    /// Moves the vectors to new slots (see [`super::Index::remap`]).
    pub fn remap(&mut self, new_slot: &[Option<u32>]) {
        let old = std::mem::take(&mut self.by_slot);
        self.by_slot = old
            .into_iter()
            .filter_map(|(slot, v)| new_slot.get(slot as usize).copied().flatten().map(|n| (n, v)))
            .collect();
    }

    /// Forgets every vector.
    pub fn clear(&mut self) {
        self.by_slot.clear();
        self.dims = 0;
    }

    /// Number of vectors held.
    pub fn len(&self) -> usize {
        self.by_slot.len()
    }

    /// Whether none is held.
    pub fn is_empty(&self) -> bool {
        self.by_slot.is_empty()
    }

    /// The cosine of `query` with the vector of `slot` (`None` without one, when the
    /// dimensions differ, or for a query of zero length).
    pub fn cosine(&self, query: &[f32], slot: u32) -> Option<f32> {
        let norm = query.iter().map(|x| x * x).sum::<f32>().sqrt();
        if !norm.is_finite() || norm == 0.0 {
            return None;
        }
        self.dot(query, slot).map(|d| d / norm)
    }

    /// The dot product of `query` with the (unit) vector of `slot`.
    fn dot(&self, query: &[f32], slot: u32) -> Option<f32> {
        let v = self.by_slot.get(&slot).filter(|v| v.values.len() == query.len())?;
        Some(v.values.iter().zip(query).map(|(&a, &b)| f32::from(a) * b).sum::<f32>() * v.scale)
    }

    /// The `k` candidates (`(index, slot)` pairs) nearest to `query` by cosine, nearest
    /// first (ties in the order given), those with a positive cosine only: their indices.
    pub fn top_k(&self, query: &[f32], candidates: impl Iterator<Item = (usize, u32)>, k: usize) -> Vec<usize> {
        let norm = query.iter().map(|x| x * x).sum::<f32>().sqrt();
        if !norm.is_finite() || norm == 0.0 {
            return Vec::new();
        }
        let mut found: Vec<(f32, usize, usize)> = candidates
            .enumerate()
            .filter_map(|(at, (index, slot))| self.dot(query, slot).filter(|d| *d > 0.0).map(|d| (d, at, index)))
            .collect();
        sort::sort_by(&mut found, |a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        found.truncate(k);
        found.into_iter().map(|f| f.2).collect()
    }
}

/// Fuses rankings (each a list of document indices, best first) by reciprocal rank
/// fusion: the documents of any list, by summed `1 / (RRF_K + rank)`, best first; ties
/// keep the order of first appearance, the first list's first.
pub fn fuse(rankings: &[&[usize]]) -> Vec<(usize, f64)> {
    let mut score: HashMap<usize, (f64, usize)> = HashMap::new();
    let mut seen = 0;
    for list in rankings {
        for (rank, &doc) in list.iter().enumerate() {
            let add = 1.0 / (RRF_K + (rank + 1) as f64);
            score.entry(doc).and_modify(|e| e.0 += add).or_insert_with(|| {
                seen += 1;
                (add, seen)
            });
        }
    }
    let mut out: Vec<(usize, f64, usize)> = score.into_iter().map(|(d, (s, first))| (d, s, first)).collect();
    sort::sort_by(&mut out, |a, b| b.1.total_cmp(&a.1).then(a.2.cmp(&b.2)));
    out.into_iter().map(|(d, s, _)| (d, s)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantised_cosines_are_close_to_the_exact_ones() {
        let mut v = Vectors::default();
        let a = [0.3f32, -1.2, 0.05, 2.0];
        let b = [1.0f32, 0.0, 0.0, 0.0];
        assert!(v.set(0, &a) && v.set(1, &b));
        let exact = |x: &[f32], y: &[f32]| {
            let dot: f32 = x.iter().zip(y).map(|(p, q)| p * q).sum();
            dot / (x.iter().map(|p| p * p).sum::<f32>().sqrt() * y.iter().map(|q| q * q).sum::<f32>().sqrt())
        };
        let q = [0.5f32, -1.0, 0.2, 1.5];
        assert!((v.cosine(&q, 0).unwrap() - exact(&q, &a)).abs() < 0.01);
        assert!((v.cosine(&q, 1).unwrap() - exact(&q, &b)).abs() < 0.01);
        assert!(!v.set(2, &[0.0; 4]) && !v.set(2, &[1.0; 3]) && !v.set(2, &[f32::NAN; 4]), "refused");
        assert_eq!(v.cosine(&[1.0; 3], 0), None, "another dimension");
        assert_eq!(v.top_k(&q, [(7, 0), (8, 1), (9, 5)].into_iter(), 10), [7, 8]);
        v.remap(&[None, Some(0)]);
        assert_eq!((v.len(), v.has(0)), (1, true));
    }

    #[test]
    fn fusion_sums_reciprocal_ranks() {
        let fused = fuse(&[&[1, 2, 3], &[3, 4]]);
        let order: Vec<usize> = fused.iter().map(|f| f.0).collect();
        assert_eq!(order, [3, 1, 2, 4]);
        assert!((fused[0].1 - (1.0 / 63.0 + 1.0 / 61.0)).abs() < 1e-12);
    }
}
