//! Spilling records held in memory past the budget, and evicting records past the
//! retention caps: the stages [`Stage::Spill`] and [`Stage::Evict`].

use super::{EvictPhase, Job, Next, Victim};
use crate::plan::{self, Op, Outcomes};
use crate::record::{parse_record, push_json_str};
use crate::retention::Owned;
use crate::store::terms::content_terms;
use crate::store::{Entry, Manager};

impl Manager {
    /// The writes of the oldest in-memory records while they exceed `memoryBudget` (or
    /// of every one).
    pub(super) fn start_spill(&self, all: bool, writing: &mut Vec<String>) -> Next {
        let out = self.state.borrow_mut().held.take_over_budget(self.options.memory_budget, all);
        let mut ops = Vec::with_capacity(out.len());
        for (path, bytes) in out {
            ops.push(Op::Write { path: path.clone(), bytes: bytes.to_vec(), exclusive: true });
            writing.push(path);
        }
        ops.into()
    }

    /// The records written out leave memory (and enter the manifest); one dropped while
    /// it was written (evicted, cleared) is removed; one whose write failed goes back to
    /// the front of the queue.
    pub(super) fn spilled(&self, writing: &mut Vec<String>, removing: &mut bool, job: &mut Job, out: Outcomes) -> Next {
        const WHAT: &str = "could not write out an in-memory record";
        let paths = std::mem::take(writing);
        if std::mem::take(removing) {
            for (path, outcome) in paths.iter().zip(out) {
                if let Err(e) = outcome {
                    self.fail(job, WHAT, e, Some(path));
                }
            }
            return Next::Nothing;
        }
        let mut failed = Vec::new();
        let mut removes = Vec::new();
        for (path, outcome) in paths.into_iter().zip(out) {
            if let Err(e) = outcome {
                self.fail(job, WHAT, e, Some(&path));
                failed.push(path);
                continue;
            }
            let kept = self.state.borrow_mut().written_out(&path);
            match kept {
                Some(bytes) => {
                    let terms = content_terms(&bytes, self.options.content_bytes);
                    self.track(&path, &terms);
                    self.to_segment(&path, terms);
                }
                None => {
                    removes.push(Op::Remove(path.to_string()));
                    writing.push(path);
                }
            }
        }
        let mut state = self.state.borrow_mut();
        for path in failed.into_iter().rev() {
            state.held.requeue(&path);
        }
        *removing = !removes.is_empty();
        removes.into()
    }

    // -- retention

    /// Takes out the owned records past the caps, oldest first: a record held in memory
    /// is dropped at once; the pointer of each is made before it goes (from its file when
    /// it is known nowhere else); then their files are removed.
    pub(super) fn start_evict(&self, keep: Option<&str>, victims: &mut Vec<Victim>, phase: &mut EvictPhase) -> Next {
        let caps = self.options.retention;
        if caps.is_unbounded() || self.options.read_only {
            return Next::Nothing;
        }
        let now = (self.options.clock)();
        let taken = self.state.borrow_mut().owned.take_over(&caps, now, keep);
        *victims = taken
            .into_iter()
            .map(|owned| Victim { pointer: self.known_pointer(&owned), owned, held: false, removed: None })
            .collect();
        let reads: Vec<Op> =
            victims.iter().filter(|v| v.pointer.is_none()).map(|v| Op::Read(v.owned.path.clone())).collect();
        if !reads.is_empty() {
            *phase = EvictPhase::Reading;
            return Next::Run(reads);
        }
        self.remove_victims(victims, phase)
    }

    pub(super) fn evicting(&self, victims: &mut Vec<Victim>, phase: &mut EvictPhase, out: Outcomes) -> Next {
        let mut out = out.into_iter();
        if *phase == EvictPhase::Reading {
            for v in victims.iter_mut().filter(|v| v.pointer.is_none()) {
                let bytes = out.next().and_then(|o| plan::bytes(o).ok().flatten());
                v.pointer = Some(self.pointer_from_file(&v.owned, bytes.as_deref()));
            }
            return self.remove_victims(victims, phase);
        }
        for v in victims.iter_mut().filter(|v| !v.held) {
            v.removed = Some(out.next().map_or(Ok(()), |o| o.map(drop)));
        }
        self.evicted(std::mem::take(victims));
        Next::Nothing
    }

    /// Drops the victims held in memory; the removals of the others' files.
    pub(super) fn remove_victims(&self, victims: &mut Vec<Victim>, phase: &mut EvictPhase) -> Next {
        let mut removes = Vec::new();
        {
            let mut state = self.state.borrow_mut();
            for v in victims.iter_mut() {
                let path = v.owned.path.as_str();
                match state.held.remove(path) {
                    Some(_) => {
                        v.held = true;
                        v.removed = Some(Ok(()));
                    }
                    None => removes.push(Op::Remove(v.owned.path.clone())),
                }
            }
        }
        if removes.is_empty() {
            self.evicted(std::mem::take(victims));
        }
        *phase = EvictPhase::Removing;
        removes.into()
    }

    /// Forgets the records evicted (pointer, index entry, manifest entry) and tells
    /// `onEvict`; one whose file could not be removed stays owned, to go at the next check.
    pub(super) fn evicted(&self, victims: Vec<Victim>) {
        let mut pointers = String::from("[");
        let mut evicted = 0;
        for v in victims {
            let path = v.owned.path.as_str();
            if let Some(Err(e)) = v.removed {
                self.debug(format!("retention could not evict a record: {e}"), Some(path));
                let o = &v.owned;
                self.state.borrow_mut().owned.add(path, o.at_ms, o.seq, o.size);
                continue;
            }
            {
                let mut state = self.state.borrow_mut();
                state.pointers.unmark_written(path);
                state.remove_pointer(path);
            }
            if let Some((s, rel)) = self.session.as_ref().and_then(|s| Some((s, s.rel(path)?))) {
                s.untrack(rel);
            }
            if evicted > 0 {
                pointers.push(',');
            }
            pointers.push_str(v.pointer.as_deref().unwrap_or("{}"));
            evicted += 1;
        }
        pointers.push(']');
        if evicted > 0 {
            self.debug(format!("retention evicted {evicted} record(s)"), None);
            if let Some(sink) = &self.options.on_evict {
                sink(&pointers);
            }
        }
    }

    /// The pointer of a record about to be evicted, as `getAllPointers` gives it; for a
    /// record whose pointer was cleared (`clearPointers`), made from its manifest entry
    /// or its bytes in memory. `None`: only its file tells.
    pub(super) fn known_pointer(&self, victim: &Owned) -> Option<String> {
        let path = victim.path.as_str();
        let mut out = String::new();
        let known = {
            let state = self.state.borrow();
            state.pointers.slot_of(path).is_some_and(|slot| state.pointers.pointer_json(slot, &mut out))
        };
        if known {
            return Some(out);
        }
        let from_manifest = self.session.as_ref().and_then(|s| s.listed_meta(s.rel(path)?));
        let meta = match from_manifest {
            Some(meta) => meta,
            None => {
                let held = self.state.borrow().held.get(path).cloned()?;
                parse_record(&held).and_then(|v| v.meta()).ok()?
            }
        };
        Entry::new(path, meta, victim.size, &mut Default::default(), None).pointer_json(&mut out, crate::handle::SHORT);
        Some(out)
    }

    /// The pointer of an evicted record made from its file's bytes; only its path when
    /// they are gone or not a record.
    pub(super) fn pointer_from_file(&self, victim: &Owned, bytes: Option<&[u8]>) -> String {
        let path = victim.path.as_str();
        let mut out = String::new();
        match bytes.and_then(|b| parse_record(b).and_then(|v| v.meta()).ok()) {
            Some(meta) => Entry::new(path, meta, victim.size, &mut Default::default(), None)
                .pointer_json(&mut out, crate::handle::SHORT),
            None => {
                out.push_str("{\"filepath\":");
                push_json_str(&mut out, path);
                out.push_str(",\"filename\":");
                push_json_str(&mut out, crate::paths::file_name(path));
                out.push('}');
            }
        }
        out
    }

    // -- resuming a session
}
