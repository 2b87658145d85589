//! Retention: caps on the records a manager owns, by bytes, by count and by age, and
//! the oldest-first choice of what to evict when one is exceeded.
//!
//! A manager can only enforce caps over the records it owns, so that is the scope:
//! in a session, the session's records (those its manifest tracks, resumed or
//! reconciled, and the ones held in memory); outside a session, the records this
//! manager saved (held in memory or written). Records of another manager sharing the
//! folder, and records only adopted (`rebuildIndex`, resume outside a session), are
//! neither counted nor evicted (SPEC §4: `clearContextDir` never removes them either).

use std::collections::{BTreeMap, HashMap};

use crate::error::{Error, Result};

/// The `retention` option: every cap is optional; a record past any of them goes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Retention {
    /// Most bytes of records kept (the records' JSON sizes).
    pub max_bytes: Option<usize>,
    /// Most records kept.
    pub max_records: Option<usize>,
    /// Records saved longer ago than this (by the clock) go.
    pub max_age_ms: Option<i64>,
}

impl Retention {
    /// Whether no cap is set.
    pub fn is_unbounded(&self) -> bool {
        self.max_bytes.is_none() && self.max_records.is_none() && self.max_age_ms.is_none()
    }

    /// Checks the caps: each one given is at least 1.
    pub fn check(&self) -> Result<()> {
        let zero = self.max_bytes == Some(0) || self.max_records == Some(0) || self.max_age_ms.is_some_and(|a| a < 1);
        if zero {
            return Err(Error::invalid("retention caps (maxBytes, maxRecords, maxAgeMs) must be at least 1"));
        }
        Ok(())
    }
}

/// One owned record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Owned {
    /// Its filepath.
    pub path: String,
    /// Bytes of its JSON.
    pub size: usize,
    /// When it was saved (epoch ms).
    pub at_ms: i64,
    /// Its place in save order.
    pub seq: u64,
}

/// The records a manager owns, oldest first: by save time, then save order.
#[derive(Debug, Default)]
pub struct Ledger {
    records: BTreeMap<(i64, u64), Owned>,
    keys: HashMap<String, (i64, u64)>,
    bytes: usize,
}

impl Ledger {
    /// Counts the ledger's allocations (see [`crate::store::footprint`]); the B-tree's
    /// nodes are estimated as one allocation per record.
    #[cfg(test)]
    pub(crate) fn footprint(&self, m: &mut crate::store::footprint::Meter) {
        m.map("ledger: keys", &self.keys);
        for (k, owned) in self.keys.keys().zip(self.records.values()) {
            m.alloc("ledger: paths", k.len() + owned.path.len());
            m.alloc("ledger: records", std::mem::size_of::<((i64, u64), Owned)>());
        }
    }

    /// Records `path`, saved at `at_ms` as the `seq`-th record; a path held already stays.
    pub fn add(&mut self, path: &str, at_ms: i64, seq: u64, size: usize) {
        if self.keys.contains_key(path) {
            return;
        }
        self.keys.insert(path.to_owned(), (at_ms, seq));
        self.records.insert((at_ms, seq), Owned { path: path.to_owned(), size, at_ms, seq });
        self.bytes += size;
    }

    /// Forgets `path`; `false` when it was not held.
    pub fn remove(&mut self, path: &str) -> bool {
        let Some(key) = self.keys.remove(path) else { return false };
        if let Some(owned) = self.records.remove(&key) {
            self.bytes -= owned.size;
        }
        true
    }

    /// Whether `path` is held.
    pub fn holds(&self, path: &str) -> bool {
        self.keys.contains_key(path)
    }

    /// Keeps only the paths for which `keep` holds.
    pub fn retain(&mut self, mut keep: impl FnMut(&str) -> bool) {
        let gone: Vec<String> = self.keys.keys().filter(|p| !keep(p)).cloned().collect();
        for path in gone {
            self.remove(&path);
        }
    }

    /// Forgets every record.
    pub fn clear(&mut self) {
        *self = Ledger::default();
    }

    /// Records held.
    pub fn len(&self) -> usize {
        self.records.len()
    }

    /// Whether none is held.
    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    /// Bytes of the records held.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// Takes out, oldest first, the records that must go for `caps` to hold at `now_ms`;
    /// `keep` (the record a save just made) is never taken. Stops at the first record
    /// that may stay, so a check that evicts nothing costs one look at the oldest.
    pub fn take_over(&mut self, caps: &Retention, now_ms: i64, keep: Option<&str>) -> Vec<Owned> {
        let (mut count, mut bytes) = (self.len(), self.bytes);
        let mut victims = Vec::new();
        for (&(at, _), owned) in &self.records {
            if keep == Some(owned.path.as_str()) {
                continue;
            }
            let over = caps.max_records.is_some_and(|n| count > n)
                || caps.max_bytes.is_some_and(|n| bytes > n)
                || caps.max_age_ms.is_some_and(|age| now_ms.saturating_sub(at) > age);
            if !over {
                break;
            }
            count -= 1;
            bytes -= owned.size;
            victims.push(owned.clone());
        }
        for victim in &victims {
            self.remove(&victim.path);
        }
        victims
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ledger(sizes: &[(i64, usize)]) -> Ledger {
        let mut l = Ledger::default();
        for (i, &(at, size)) in sizes.iter().enumerate() {
            l.add(&format!("r{i}"), at, i as u64, size);
        }
        l
    }

    fn paths(v: &[Owned]) -> Vec<&str> {
        v.iter().map(|o| o.path.as_str()).collect()
    }

    #[test]
    fn the_oldest_go_first_until_every_cap_holds() {
        let caps = Retention { max_records: Some(2), ..Retention::default() };
        let mut l = ledger(&[(10, 1), (20, 1), (30, 1), (40, 1)]);
        assert_eq!(paths(&l.take_over(&caps, 40, None)), ["r0", "r1"]);
        assert_eq!((l.len(), l.bytes()), (2, 2));
        let caps = Retention { max_bytes: Some(100), ..Retention::default() };
        let mut l = ledger(&[(10, 60), (20, 30), (30, 30)]);
        assert_eq!(paths(&l.take_over(&caps, 30, None)), ["r0"]);
        let caps = Retention { max_age_ms: Some(15), ..Retention::default() };
        let mut l = ledger(&[(10, 1), (20, 1), (30, 1)]);
        assert_eq!(paths(&l.take_over(&caps, 30, None)), ["r0"]);
        assert!(l.take_over(&caps, 30, None).is_empty());
    }

    #[test]
    fn the_record_just_saved_is_never_taken() {
        let caps = Retention { max_bytes: Some(10), ..Retention::default() };
        let mut l = ledger(&[(10, 5), (20, 50)]);
        assert_eq!(paths(&l.take_over(&caps, 20, Some("r1"))), ["r0"]);
        assert!(l.holds("r1"));
    }

    #[test]
    fn zero_caps_are_refused() {
        assert!(Retention { max_records: Some(0), ..Retention::default() }.check().is_err());
        assert!(Retention { max_age_ms: Some(0), ..Retention::default() }.check().is_err());
        assert!(Retention { max_bytes: Some(1), ..Retention::default() }.check().is_ok());
    }
}
