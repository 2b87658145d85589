//! Pointers from storage: adopting records into the session manifest, restoring pointers
//! (resume, open), `rebuild_index` and `reconcile`.

use super::holdings::SegmentId;
use super::opened::Opened;
use super::terms::{content_terms, manifest_words, terms_of};
use super::{Entry, Interned, Manager, State};
use crate::paths;
use crate::record::{parse_record, RecordMeta};
use crate::select::Terms;
use crate::session::{self, ManifestEntry};
use std::borrow::Cow;
use std::collections::HashMap;

impl Manager {
    /// Adds a persisted record of this manager to the session manifest, with the top
    /// content terms of `terms` (its indexed terms).
    pub(super) fn track(&self, path: &str, terms: &Terms) {
        let Some(s) = &self.session else { return };
        let Some(rel) = s.rel(path) else { return };
        let state = self.state.borrow();
        let Some(entry) = state.pointers.entry(path) else { return };
        let meta = entry.meta();
        match ManifestEntry::new(&meta, entry.size(), &manifest_words(&meta)) {
            Ok(m) => s.track(rel, m.with_content(terms)),
            Err(e) => self.debug(format!("could not index a record in the manifest: {e}"), Some(path)),
        }
    }

    /// A record file's bytes read for the index: its metadata, size and the terms of its
    /// content; `None`, reported, when they are torn or foreign.
    pub(super) fn adopted(&self, path: &str, bytes: &[u8]) -> Option<(RecordMeta, usize, Terms)> {
        match parse_record(bytes).and_then(|v| v.meta()) {
            Ok(meta) => Some((meta, bytes.len(), content_terms(bytes, self.options.content_bytes))),
            Err(e) => {
                self.debug(format!("skipped a record that does not parse: {e}"), Some(path));
                None
            }
        }
    }

    /// Replaces the pointers with those of `records` (relative to `dir`), in save order
    /// (the filenames' timestamp, then counter). `own`: they are the session's records,
    /// so retention counts them (with the records held in memory), and nothing else.
    /// Each record comes with what its content is indexed from: the terms of its content
    /// (its passages), all of them when the record was read, or what its manifest entry
    /// keeps, or its place in a segment of `segments`; a restored pointer ranks on them
    /// and its metadata. `interned`: what the entries made already (`Made::Entry`) share,
    /// which the table takes as its own before it makes any other entry, so every entry
    /// shares the table's texts (a query id is matched by its shared text).
    pub(super) fn restore_pointers(
        &self,
        dir: &str,
        records: impl Iterator<Item = (String, Made, usize, Option<Content>)>,
        segments: &[Opened],
        own: bool,
        interned: Interned,
    ) {
        let mut records: Vec<Restored> = records
            .map(|(rel, made, size, content)| Restored { seq: 0, rel, made, size, content, segment: None })
            .collect();
        // Save order: each record's place in it, keyed once by timestamp and counter (then
        // name), gives its seq; the records themselves stay where they are.
        let name = paths::file_name;
        let key = |rel: &str| {
            let mut parts = name(rel).rsplitn(5, '_');
            let (_, counter, ts) = (parts.next(), parts.next(), parts.next());
            let num = |p: Option<&str>| p.and_then(|x| x.parse::<u64>().ok()).unwrap_or(0);
            (num(ts), num(counter))
        };
        let mut order: Vec<((u64, u64), u32)> =
            records.iter().enumerate().map(|(i, r)| (key(&r.rel), i as u32)).collect();
        crate::sort::sort_by(&mut order, |a, b| {
            a.0.cmp(&b.0).then_with(|| name(&records[a.1 as usize].rel).cmp(name(&records[b.1 as usize].rel)))
        });
        let mut state = self.state.borrow_mut();
        state.forget_pointers();
        *state.pointers.interned() = interned;
        if own {
            let State { owned, held, .. } = &mut *state;
            owned.retain(|p| held.contains(p));
        }
        let first_seq = state.pointers.take_seqs(records.len() as u64);
        for (place, (_, i)) in order.into_iter().enumerate() {
            records[i as usize].seq = first_seq + place as u64;
        }
        // A segment every record of which is restored from it is appended whole (its
        // lists as they are); one read by range, whole or not (its records keep their
        // slots, those no pointer takes vacant); the other records are added one by one.
        let mut taken = vec![0usize; segments.len()];
        for r in &records {
            if let Some(Content::Stored(s, _)) = r.content {
                taken[s] += 1;
            }
        }
        // Each segment's records not restored from it are gone (`super::holdings`), and
        // each pointer restored from one names it.
        let ids: Vec<Option<SegmentId>> = segments.iter().map(|s| state.holdings.register(s.name())).collect();
        for (s, id) in ids.iter().enumerate() {
            if let Some(id) = *id {
                state.holdings.restored(id, taken[s]);
            }
        }
        for r in &mut records {
            if let Some(Content::Stored(s, _)) = r.content {
                r.segment = ids[s];
            }
        }
        let whole = |s: usize| match &segments[s] {
            Opened::Whole { segment, .. } => segment.records.len() == taken[s] && taken[s] > 0,
            Opened::Lazy { .. } => taken[s] > 0,
        };
        let mut by_segment: Vec<Vec<Option<Restored>>> = segments
            .iter()
            .enumerate()
            .map(|(s, seg)| if whole(s) { (0..seg.records().len()).map(|_| None).collect() } else { Vec::new() })
            .collect();
        let mut one_by_one = Vec::new();
        for r in records {
            match r.content {
                Some(Content::Stored(s, i)) if whole(s) => by_segment[s][i] = Some(r),
                _ => one_by_one.push(r),
            }
        }
        let mut placed_unordered = false;
        let entry_of = |state: &mut State, r: Restored| self.restored_entry(state, dir, r, own);
        for (s, restored) in by_segment.into_iter().enumerate() {
            if restored.is_empty() {
                continue;
            }
            let added = match &segments[s] {
                Opened::Whole { segment, .. } => {
                    let restored: Vec<Restored> = restored.into_iter().flatten().collect();
                    let orders: Vec<u64> = restored.iter().map(|r| r.seq).collect();
                    state.add_segment(segment, &orders, restored, entry_of)
                }
                Opened::Lazy { path, directory, records, .. } => {
                    let orders: Vec<u64> = restored.iter().map(|r| r.as_ref().map_or(0, |r| r.seq)).collect();
                    // A vacant slot's entry: any record's metadata of the segment (nothing
                    // reads it: it is out of ranking and of every list).
                    let Some(fallback) = restored.iter().flatten().next().map(|r| r.made.meta().into_owned()) else {
                        continue;
                    };
                    let vacant = |state: &mut State, r: &crate::select::segment::SegmentRecord| {
                        state.pointers.new_entry(&paths::join(dir, &r.path), fallback.clone(), 0, None)
                    };
                    state.add_lazy_segment((path, directory, records), &orders, restored, entry_of, vacant)
                }
            };
            match added {
                Ok(()) => placed_unordered = true,
                Err(restored) => one_by_one.extend(restored),
            }
        }
        if placed_unordered {
            state.sort();
        }
        // Per segment read one by one: its dictionary's ids in the index, as they are met.
        let mut ids: HashMap<usize, Vec<u32>> = HashMap::new();
        crate::sort::sort_by_key(&mut one_by_one, |r| r.seq);
        for mut r in one_by_one {
            let content = r.content.take();
            let terms = terms_of(&r.made.meta());
            let (terms, stored) = match content {
                Some(Content::Terms(content)) => (terms.with_passages_of(*content), None),
                Some(Content::Stored(s, i)) => (terms, Some((s, i))),
                None => (terms, None),
            };
            let seq = r.seq;
            let entry = self.restored_entry(&mut state, dir, r, own);
            let Some(slot) = state.add(seq, entry, &terms) else { continue };
            if let Some((s, i)) = stored {
                // Read from a segment: ranked on the terms the saving process indexed. (A
                // segment read by range is taken whole or not at all: never here.)
                let Opened::Whole { segment, .. } = &segments[s] else { continue };
                let ids = ids.entry(s).or_insert_with(|| vec![u32::MAX; segment.dictionary.len()]);
                state.live.add_stored_content(slot, &terms, &segment.dictionary, &segment.forward()[i], ids);
            }
        }
    }

    /// The pointer of a record being restored; owned records enter retention's ledger. A
    /// pointer, not ownership: only what this manager wrote is marked written (placing it
    /// takes the mark back from `orphans`). An entry made already (`Made::Entry`) has its
    /// path joined to the folder it was read from, `dir`.
    pub(super) fn restored_entry(&self, state: &mut State, dir: &str, r: Restored, own: bool) -> Entry {
        if own && self.keeps_ledger() {
            let saved_at = saved_at_ms(&r.rel, &r.made.meta());
            state.owned.add(&paths::join(dir, &r.rel), saved_at, r.seq, r.size);
        }
        let mut entry = match r.made {
            Made::Meta(meta) => state.pointers.new_entry(&paths::join(dir, &r.rel), *meta, r.size, None),
            Made::Entry(entry) => *entry,
        };
        entry.segment = r.segment;
        entry
    }

    /// Whether the record at `path`, read `size` bytes long, is not the size its pointer
    /// says: rewritten under its name since it was indexed.
    pub(super) fn size_changed(&self, path: &str, size: usize) -> bool {
        self.state.borrow().pointers.entry(path).is_some_and(|e| e.size() != size)
    }

    /// Indexes the record at `path` again, changed under its name (`bytes`: as read now):
    /// its pointer made again from it, in its place in save order, ranked on what it holds
    /// now (its content no longer waits to be indexed from the text it was saved with);
    /// retention counts its size now; in a session its manifest entry is made again; it
    /// waits for the next segment, so a later open ranks it so too. `onDebug` says so.
    pub(super) fn changed_under_name(&self, path: &str, bytes: &[u8]) {
        let Some((meta, size, content)) = self.adopted(path, bytes) else { return };
        let terms = terms_of(&meta).with_passages_of(content);
        let before = {
            let mut state = self.state.borrow_mut();
            let Some(slot) = state.pointers.slot_of(path) else { return };
            let seq = state.live.order(slot);
            let before = state.pointers.get(slot).map_or(0, Entry::size);
            let saved_at = saved_at_ms(path, &meta);
            state.live.forget_waiting(path);
            state.remove_pointer(path);
            if state.owned.remove(path) {
                state.owned.add(path, saved_at, seq, size);
            }
            let entry = state.pointers.new_entry(path, meta.clone(), size, None);
            state.add(seq, entry, &terms);
            before
        };
        self.track(path, &terms);
        self.wait_for_segment(path, &meta, &terms);
        let message =
            format!("a record changed under its name ({before} bytes when indexed, {size} now): indexed again");
        self.debug(message, Some(path));
    }

    /// A pointer for the record file `full` (`rel` in the session folder) that a
    /// reconcile adopts, owned (retention counts it); `false` when it has one already.
    pub(super) fn adopt_pointer(&self, full: &str, rel: &str, meta: RecordMeta, size: usize, terms: &Terms) -> bool {
        let mut state = self.state.borrow_mut();
        if state.pointers.slot_of(full).is_some() {
            return false;
        }
        let seq = state.pointers.take_seqs(1);
        if self.keeps_ledger() {
            state.owned.add(full, saved_at_ms(rel, &meta), seq, size);
        }
        let pointer = state.pointers.new_entry(full, meta, size, None);
        state.add(seq, pointer, terms);
        true
    }
}

/// A restored record's metadata: its header parsed, or its pointer's entry made from it
/// already (as a segment read by range is read). Boxed: the records of a store are held
/// together while their pointers are made.
pub(super) enum Made {
    Meta(Box<RecordMeta>),
    Entry(Box<Entry>),
}

impl Made {
    /// The record's metadata: its header as parsed, or made again from its entry.
    pub(super) fn meta(&self) -> Cow<'_, RecordMeta> {
        match self {
            Made::Meta(meta) => Cow::Borrowed(meta),
            Made::Entry(entry) => Cow::Owned(entry.meta()),
        }
    }
}

/// A record's content as a restored pointer gets it.
pub(super) enum Content {
    /// Its terms, from its file (read whole) or its manifest entry. Boxed: a store's
    /// records are held together while their pointers are made, most of them `Stored`.
    Terms(Box<Terms>),
    /// Record `.1` of segment `.0` (of those loaded).
    Stored(usize, usize),
}

/// A record whose pointer is being restored: its save order, path (relative to its
/// folder), metadata, size and what its content is indexed from.
pub(super) struct Restored {
    pub(super) seq: u64,
    pub(super) rel: String,
    pub(super) made: Made,
    pub(super) size: usize,
    pub(super) content: Option<Content>,
    /// The segment it is restored from (its `Content::Stored`'s).
    pub(super) segment: Option<SegmentId>,
}

/// When a record was saved, in epoch ms: its timestamp, else its file name's.
pub(super) fn saved_at_ms(rel: &str, meta: &RecordMeta) -> i64 {
    session::parse_iso_ms(&meta.timestamp).or_else(|| session::record_time_ms(rel)).unwrap_or(0)
}
