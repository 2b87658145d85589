//! `rebuildIndex` and `reconcile`: reading every record of the folder again
//! ([`Stage::Rebuild`]), and adopting those a crash left out of the manifest
//! ([`Stage::Reconcile`]).

use super::{Job, Next, ReadEntry, RebuildPhase, Rebuilding, ReconcilePhase, Reconciling};
use crate::paths;
use crate::plan::{self, Op, Outcomes};
use crate::record::RecordMeta;
use crate::select::Terms;
use crate::session::{self, Manifest, ManifestEntry};
use crate::store::restore::{Content, Made};
use crate::store::terms::manifest_words;
use crate::store::Interned;
use crate::store::Manager;
use std::collections::{BTreeMap, HashMap};

impl Manager {
    /// The steps of a rebuild: the listing (a session's record files, or the context
    /// dir's `.json` files), the reads of every file, then the index replaced
    /// ([`Manager::rebuilt`]) and the torn records of a session removed.
    pub(super) fn rebuilding(&self, r: &mut Rebuilding, job: &mut Job, out: Outcomes) -> Next {
        const WHAT: &str = "could not rebuild the index";
        match r.phase {
            RebuildPhase::Listing => {
                let Some(listing) = r.listing.as_mut() else { return Next::Nothing };
                match self.listed(listing, job, WHAT, out) {
                    Err(next) => next,
                    Ok(files) => {
                        r.listing = None;
                        self.read_all(r, job, files)
                    }
                }
            }
            RebuildPhase::ListingDir => match plan::names(plan::only(out)) {
                Err(e) => {
                    self.fail(job, WHAT, e, None);
                    Next::Nothing
                }
                Ok(names) => {
                    let files = names.into_iter().filter(|n| n.ends_with(".json") && !n.ends_with('/')).collect();
                    self.read_all(r, job, files)
                }
            },
            RebuildPhase::Reading => self.rebuilt(r, job, out),
            RebuildPhase::Removing => Next::Nothing,
        }
    }

    /// The reads of the files listed (none: the index is rebuilt empty at once).
    pub(super) fn read_all(&self, r: &mut Rebuilding, job: &mut Job, files: Vec<String>) -> Next {
        r.files = files;
        r.phase = RebuildPhase::Reading;
        if r.files.is_empty() {
            return self.rebuilt(r, job, Vec::new());
        }
        let dir = self.record_root();
        Next::Run(r.files.iter().map(|rel| Op::Read(paths::join(dir, rel))).collect())
    }

    /// The files read: the records that parse indexed, in a session as its manifest
    /// (`last_activity` kept); the pointers replaced. A file that is missing or unreadable
    /// is left out; one that does not parse is reported, and in a session removed (not by
    /// a read-only manager). Adopted records are pointers, not this manager's own outside
    /// a session: `clearContextDir` leaves them.
    pub(super) fn rebuilt(&self, r: &mut Rebuilding, job: &mut Job, out: Outcomes) -> Next {
        let dir = self.record_root().to_owned();
        let remove_torn = self.session.is_some() && !self.options.read_only;
        let mut records: Vec<(String, RecordMeta, usize)> = Vec::with_capacity(r.files.len());
        let mut contents: HashMap<String, (BTreeMap<String, u32>, u32)> = HashMap::with_capacity(r.files.len());
        // Every record is read here: its pointer ranks on all of its content.
        let mut read: HashMap<String, Terms> = HashMap::with_capacity(r.files.len());
        let mut removes = Vec::new();
        for (rel, outcome) in std::mem::take(&mut r.files).into_iter().zip(out) {
            let Ok(Some(bytes)) = plan::bytes(outcome) else { continue };
            let full = paths::join(&dir, &rel);
            match self.adopted(&full, &bytes) {
                Some((meta, size, content)) => {
                    let top = content.top_content(session::MAX_CONTENT_TERMS);
                    contents.insert(rel.clone(), (top, content.content_len()));
                    read.insert(rel.clone(), content);
                    records.push((rel, meta, size));
                }
                None if remove_torn => removes.push(Op::Remove(full)),
                None => {}
            }
        }
        if let Some(s) = &self.session {
            let mut manifest = Manifest::new(&s.id, &s.manifest.borrow().created_at);
            manifest.last_activity = s.manifest.borrow().last_activity.clone();
            for (rel, meta, size) in &records {
                let mut entry = match ManifestEntry::new(meta, *size, &manifest_words(meta)) {
                    Ok(entry) => entry,
                    Err(e) => {
                        self.fail(job, "could not rebuild the index", e, None);
                        return Next::Nothing;
                    }
                };
                if let Some((terms, len)) = contents.get(rel) {
                    (entry.content_terms, entry.content_length) = (terms.clone(), *len);
                }
                manifest.context_files.insert(rel.clone(), entry);
            }
            manifest.date_from_entries(false);
            s.replace_manifest(manifest, records.len().max(1));
        }
        job.indexed = records.iter().map(|(rel, ..)| paths::join(&dir, rel)).collect();
        let segment: Vec<(String, Terms)> = read.iter().map(|(rel, t)| (paths::join(&dir, rel), t.clone())).collect();
        let records = records.into_iter().map(|(rel, meta, size)| {
            let content = read.remove(&rel).map(|t| Content::Terms(Box::new(t)));
            (rel, Made::Meta(Box::new(meta)), size, content)
        });
        self.restore_pointers(&dir, records, &[], self.session.is_some(), Interned::default());
        for (path, terms) in segment {
            self.to_segment(&path, terms);
        }
        r.phase = RebuildPhase::Removing;
        removes.into()
    }

    // -- reconciling a session

    /// The steps of a reconcile: the session's record files listed, the manifest on disk
    /// read, the files neither it nor this manager lists read and adopted.
    pub(super) fn reconciling(&self, r: &mut Reconciling, job: &mut Job, out: Outcomes) -> Next {
        const WHAT: &str = "could not reconcile the session";
        let Some(s) = &self.session else { return Next::Nothing };
        match r.phase {
            ReconcilePhase::Listing => {
                let next = self.list_then_read_manifest(&mut r.listing, &mut r.files, job, WHAT, out);
                if r.listing.is_none() {
                    r.phase = ReconcilePhase::Manifest;
                }
                next
            }
            ReconcilePhase::Manifest => {
                let on_disk = match plan::bytes(plan::only(out)) {
                    Err(e) => {
                        self.fail(job, WHAT, e, None);
                        return Next::Nothing;
                    }
                    Ok(Some(bytes)) => Manifest::parse(&bytes, &s.id).map(|m| m.context_files).unwrap_or_default(),
                    Ok(None) => Default::default(),
                };
                let ours = s.manifest.borrow();
                r.orphans = std::mem::take(&mut r.files)
                    .into_iter()
                    .filter(|rel| !ours.context_files.contains_key(rel) && !on_disk.contains_key(rel))
                    .collect();
                r.phase = ReconcilePhase::Adopting;
                r.orphans.iter().map(|rel| Op::Read(paths::join(&s.dir, rel))).collect::<Vec<_>>().into()
            }
            ReconcilePhase::Adopting => {
                for (rel, outcome) in std::mem::take(&mut r.orphans).into_iter().zip(out) {
                    let ReadEntry { full, meta, size, entry, content } = match self.read_entry(&rel, outcome) {
                        Ok(Some(read)) => read,
                        Ok(None) => continue,
                        Err(e) => {
                            self.fail(job, WHAT, e, None);
                            return Next::Nothing;
                        }
                    };
                    // Read whole: its pointer ranks on all of its content.
                    if !self.adopt_pointer(&full, &rel, meta, size, &entry.terms().with_passages_of(content)) {
                        continue;
                    }
                    s.track(&rel, entry);
                    self.debug("reconcile adopted a record the manifest did not list", Some(&full));
                    job.indexed.push(full);
                }
                Next::Nothing
            }
        }
    }

    // -- the end of a session
}
