//! Where memory goes, structure by structure: the meter the core's memory report walks
//! its state with (its `store::footprint`), and the index counts itself into. Not for
//! users: it models the allocator of wasm32.
//!
//! A [`Meter`] counts, per structure, the bytes each heap allocation asks for and the
//! bytes the allocator gives it. The allocator is modelled as wasm32's (Rust's dlmalloc
//! port): a chunk is the request plus a 4-byte header, rounded up to 8, and at least 16
//! bytes. Hash tables are modelled as hashbrown lays them out: a power of two of
//! buckets, each slot plus one control byte, in one allocation.

use std::collections::{HashMap, HashSet};
use std::mem::size_of;

/// Bytes the allocator takes for a request of `n` bytes (wasm32 dlmalloc).
fn chunk(n: usize) -> usize {
    if n == 0 {
        0
    } else {
        ((n + 4 + 7) & !7).max(16)
    }
}

/// One structure's bytes.
#[derive(Debug, Default, Clone)]
pub struct Row {
    pub name: &'static str,
    /// Bytes asked for (or, for `inline` rows, held inside another structure's allocation).
    pub requested: usize,
    /// Bytes the allocator holds for them.
    pub held: usize,
    /// Allocations.
    pub allocs: usize,
}

/// Bytes by structure.
#[derive(Debug, Default)]
pub struct Meter {
    pub rows: Vec<Row>,
}

impl Meter {
    fn row(&mut self, name: &'static str) -> &mut Row {
        if let Some(at) = self.rows.iter().position(|r| r.name == name) {
            return &mut self.rows[at];
        }
        self.rows.push(Row { name, ..Row::default() });
        self.rows.last_mut().unwrap()
    }

    /// One heap allocation of `bytes`, counted under `name`.
    pub fn alloc(&mut self, name: &'static str, bytes: usize) {
        if bytes > 0 {
            let row = self.row(name);
            row.requested += bytes;
            row.held += chunk(bytes);
            row.allocs += 1;
        }
    }

    /// Bytes inside an allocation counted elsewhere, shown apart (e.g. a page's slack).
    pub fn part(&mut self, name: &'static str, bytes: usize) {
        let row = self.row(name);
        row.requested += bytes;
        row.held += bytes;
    }

    /// What the allocator adds to an allocation of `bytes` whose bytes other rows show.
    pub fn overhead(&mut self, name: &'static str, bytes: usize) {
        if bytes > 0 {
            let row = self.row(name);
            row.held += chunk(bytes) - bytes;
            row.allocs += 1;
        }
    }

    /// A `Vec`'s buffer.
    pub fn vec<T>(&mut self, name: &'static str, v: &Vec<T>) {
        self.alloc(name, v.capacity() * size_of::<T>());
    }

    /// A hash table of `capacity` slots of `T`.
    pub fn table<T>(&mut self, name: &'static str, capacity: usize) {
        if capacity == 0 {
            return;
        }
        let buckets = if capacity < 8 { capacity + 1 } else { (capacity * 8 / 7).next_power_of_two() };
        let group = if cfg!(target_arch = "x86_64") { 16 } else { size_of::<usize>() };
        let data = (buckets * size_of::<T>()).next_multiple_of(group.max(std::mem::align_of::<T>()));
        self.alloc(name, data + buckets + group);
    }

    pub fn map<K, V, H>(&mut self, name: &'static str, m: &HashMap<K, V, H>) {
        self.table::<(K, V)>(name, m.capacity());
    }

    pub fn set<K, H>(&mut self, name: &'static str, s: &HashSet<K, H>) {
        self.table::<K>(name, s.capacity());
    }

    /// An `Rc<str>`'s allocation.
    pub fn rc_str(&mut self, name: &'static str, s: &str) {
        self.alloc(name, 2 * size_of::<usize>() + s.len());
    }

    /// A shared text's two allocations (the core's `Shared`: the `Rc` of a `Box<str>`, the text).
    pub fn shared(&mut self, name: &'static str, s: &str) {
        self.alloc(name, 4 * size_of::<usize>());
        self.alloc(name, s.len());
    }

    pub fn total(&self) -> Row {
        let mut t = Row { name: "total", ..Row::default() };
        for r in &self.rows {
            t.requested += r.requested;
            t.held += r.held;
            t.allocs += r.allocs;
        }
        t
    }

    /// The table, per pointer.
    pub fn report(&self, pointers: usize) -> String {
        let n = pointers.max(1) as f64;
        let mut out = format!("{:<44} {:>9} {:>9} {:>9}\n", "structure (B per pointer)", "asked", "held", "allocs");
        for r in self.rows.iter().chain(std::iter::once(&self.total())) {
            out += &format!(
                "{:<44} {:>9.1} {:>9.1} {:>9.2}\n",
                r.name,
                r.requested as f64 / n,
                r.held as f64 / n,
                r.allocs as f64 / n
            );
        }
        out
    }
}
