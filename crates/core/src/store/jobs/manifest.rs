//! Ending a session ([`Stage::End`]) and writing its manifest under the session's lock,
//! merged with the one on disk ([`Stage::Manifest`]).

use super::{Due, EndPhase, Job, ManifestPhase, ManifestWrite, Next};
use crate::error::{Error, Result};
use crate::paths;
use crate::plan::{self, Op, Outcome, Outcomes, Plan, Step};
use crate::record::iso_timestamp;
use crate::session::{self, Manifest, RemoveSession, MANIFEST};
use crate::store::{Manager, MANIFEST_EVERY_MS, MANIFEST_EVERY_RECORDS};

impl Manager {
    /// Under the session lock: the manifest on disk read (its entries are the session's
    /// too), the removal run ([`RemoveSession`]), the lock released; then the manager forgets
    /// the session's records.
    pub(super) fn ending(
        &self,
        phase: &mut EndPhase,
        removal: &mut Option<RemoveSession>,
        result: &mut Result<()>,
        job: &mut Job,
        mut out: Outcomes,
    ) -> Next {
        let Some(s) = &self.session else { return Next::Nothing };
        match *phase {
            EndPhase::Locking => {
                if let Some(Err(e)) = out.pop() {
                    self.fail(job, "could not end the session", e, None);
                    return Next::Nothing;
                }
                // From here no segment write of this manager lands in the session (they
                // take this lock and look).
                s.ended.set(true);
                *phase = EndPhase::Reading;
                Next::Run(vec![Op::Read(paths::join(&s.dir, MANIFEST))])
            }
            EndPhase::Reading => {
                let mut manifest = s.manifest.borrow().clone();
                let on_disk = plan::bytes(plan::only(out)).ok().flatten();
                if let Some(on_disk) = on_disk.and_then(|b| Manifest::parse(&b, &s.id).ok()) {
                    manifest.context_files.extend(on_disk.context_files);
                }
                let written = self.state.borrow().pointers.written_paths();
                *removal = Some(RemoveSession::new(&s.dir, &manifest, &written));
                *phase = EndPhase::Removing;
                self.ending(phase, removal, result, job, Vec::new())
            }
            EndPhase::Removing => {
                if let Some(removing) = removal.as_mut() {
                    match removing.step(out).finished::<()>() {
                        Ok(done) => *result = done,
                        Err(Step::Run(ops)) => return Next::Run(ops),
                        Err(_) => {}
                    }
                }
                *phase = EndPhase::Unlocking;
                Next::Unlock
            }
            EndPhase::Unlocking => {
                let unlocked = out.pop().unwrap_or(Ok(Outcome::Done));
                match (std::mem::replace(result, Ok(())), unlocked) {
                    (Err(e), _) | (Ok(()), Err(e)) => self.fail(job, "could not end the session", e, None),
                    (Ok(()), Ok(_)) => self.forget_session(),
                }
                Next::Nothing
            }
        }
    }

    /// After the session's files are removed: no manifest, no record, no pointer left.
    pub(super) fn forget_session(&self) {
        let Some(s) = &self.session else { return };
        s.forget();
        let mut state = self.state.borrow_mut();
        state.pointers.forget_written();
        state.owned.clear();
        state.held.clear();
        state.forget_pointers();
    }

    // -- the session manifest

    /// Whether a manifest write is wanted (the clock is read here, once, for a save and a
    /// flush); then the session lock.
    pub(super) fn start_manifest(&self, write: &mut ManifestWrite) -> Next {
        let Some(s) = &self.session else { return Next::Nothing };
        if self.options.read_only {
            return Next::Nothing;
        }
        let wanted = match write.due {
            Due::Reindex => true,
            Due::Changed | Due::Opened => s.dirty.get() > 0,
            due => {
                write.now = (self.options.clock)();
                match s.last_write_ms.get() {
                    None => true,
                    // Up to date, unless a write in flight has yet to land (flush waits for it).
                    Some(_) if s.dirty.get() == 0 => due == Due::Forced && s.writes_in_flight.get() > 0,
                    Some(_) if due == Due::Forced => true,
                    Some(last) => s.dirty.get() >= MANIFEST_EVERY_RECORDS || write.now - last >= MANIFEST_EVERY_MS,
                }
            }
        };
        if !wanted {
            return Next::Nothing;
        }
        s.writes_in_flight.set(s.writes_in_flight.get() + 1);
        write.phase = ManifestPhase::Locking;
        Next::Lock { name: session::lock_name(&s.dir), wait: true }
    }

    /// Under the session lock: read the manifest on disk, merge it with ours (entries
    /// another manager of the session added are kept, those evicted here are not), write
    /// it whole, release the lock.
    pub(super) fn manifest_step(&self, write: &mut ManifestWrite, job: &mut Job, out: Outcomes) -> Next {
        let Some(s) = &self.session else { return Next::Nothing };
        let outcome = out.into_iter().next().unwrap_or(Ok(Outcome::Done));
        let path = paths::join(&s.dir, MANIFEST);
        match write.phase {
            ManifestPhase::Locking => {
                if let Err(e) = outcome {
                    s.writes_in_flight.set(s.writes_in_flight.get() - 1);
                    self.manifest_failed(write, job, e);
                    return Next::Nothing;
                }
                if !write.keeps_activity() && s.last_write_ms.get().is_some() && s.dirty.get() == 0 {
                    // A write that held the lock before wrote what this one would.
                    write.phase = ManifestPhase::Unlocking;
                    return Next::Unlock;
                }
                write.gone = s.evicted.borrow().iter().cloned().collect();
                write.phase = ManifestPhase::Reading;
                Next::Run(vec![Op::Read(path)])
            }
            ManifestPhase::Reading => {
                if let Some(on_disk) = plan::bytes(outcome).ok().flatten().and_then(|b| Manifest::parse(&b, &s.id).ok())
                {
                    self.merge_manifest(on_disk);
                }
                // The entries written get the content terms of the records saved since.
                self.index_content();
                let encoded = {
                    let mut manifest = s.manifest.borrow_mut();
                    if !write.keeps_activity() {
                        manifest.last_activity = iso_timestamp(write.now);
                    }
                    manifest.encode()
                };
                write.phase = ManifestPhase::Writing;
                match encoded {
                    Ok(bytes) => {
                        write.taken = s.take_dirty();
                        Next::Run(vec![Op::Write { path, bytes, exclusive: false }])
                    }
                    Err(e) => {
                        self.manifest_failed(write, job, e);
                        write.phase = ManifestPhase::Unlocking;
                        Next::Unlock
                    }
                }
            }
            ManifestPhase::Writing => {
                match outcome {
                    Ok(_) => {
                        let mut evicted = s.evicted.borrow_mut();
                        for rel in std::mem::take(&mut write.gone) {
                            evicted.remove(&rel);
                        }
                        let now = if write.keeps_activity() { (self.options.clock)() } else { write.now };
                        s.last_write_ms.set(Some(now));
                    }
                    Err(e) => {
                        s.dirty.set(s.dirty.get() + write.taken);
                        self.manifest_failed(write, job, e);
                    }
                }
                write.phase = ManifestPhase::Unlocking;
                Next::Unlock
            }
            ManifestPhase::Unlocking => {
                s.writes_in_flight.set(s.writes_in_flight.get() - 1);
                if let Err(e) = outcome {
                    self.manifest_failed(write, job, e);
                }
                Next::Nothing
            }
        }
    }

    /// A manifest write that failed (`e`: its lock, its encoding or its write). One of
    /// `open()` (`Due::Opened`: the manifest brought up to date with what a resume found)
    /// fails nothing: the records are the source of truth, the manifest stays to write (by
    /// the next save, `flush` or `close`), and `onDebug` says why (once for each of the
    /// open's two manifest stages), so a resume on a full disk still opens the session. Any
    /// other fails its job.
    fn manifest_failed(&self, write: &ManifestWrite, job: &mut Job, e: Error) {
        if write.due == Due::Opened {
            self.debug(
                format!("could not write the session manifest (it is written later, by a save, flush or close): {e}"),
                None,
            );
        } else {
            self.fail(job, "could not update the session manifest", e, None);
        }
    }

    /// Merges the manifest on disk into ours: its entries we do not have (and did not
    /// evict), the earlier `created_at`, the later `last_activity`.
    pub(super) fn merge_manifest(&self, on_disk: Manifest) {
        let Some(s) = &self.session else { return };
        let mut ours = s.manifest.borrow_mut();
        let evicted = s.evicted.borrow();
        for (rel, entry) in on_disk.context_files {
            if !evicted.contains(&rel) {
                ours.context_files.entry(rel).or_insert(entry);
            }
        }
        if session::parse_iso_ms(&on_disk.created_at) < session::parse_iso_ms(&ours.created_at) {
            ours.created_at = on_disk.created_at;
        }
        if session::parse_iso_ms(&on_disk.last_activity) > session::parse_iso_ms(&ours.last_activity) {
            ours.last_activity = on_disk.last_activity;
        }
    }
}
