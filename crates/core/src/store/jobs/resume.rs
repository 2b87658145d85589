//! Opening a session or a store: reading the manifest, the segments and the records
//! no segment covers, and restoring their pointers ([`Stage::Resume`]).

use super::{Job, Next, ResumePhase, Resuming};
use crate::error::{Error, ErrorKind};
use crate::paths;
use crate::plan::{self, Op, Outcomes};
use crate::segments::segments_dir;
use crate::select::Terms;
use crate::session::{Manifest, ManifestEntry, MANIFEST};
use crate::store::opened::Opened;
use crate::store::restore::{Content, Made};
use crate::store::terms::manifest_words;
use crate::store::Interned;
use crate::store::Manager;
use std::collections::HashSet;

impl Manager {
    /// The steps of a resume: the listings (the folder's, then its category folders'),
    /// the manifest, the records it does not list yet; then the pointers restored.
    pub(super) fn resuming(&self, r: &mut Resuming, job: &mut Job, out: Outcomes) -> Next {
        const WHAT: &str = "could not resume the session";
        if self.session.is_none() {
            return Next::Nothing;
        }
        match r.phase {
            ResumePhase::Listing => {
                let mut next = self.list_then_read_manifest(&mut r.listing, &mut r.files, job, WHAT, out);
                if r.listing.is_none() {
                    r.phase = ResumePhase::Manifest;
                    // The segment folder listed beside the manifest's read.
                    if let Next::Run(ops) = &mut next {
                        ops.push(Op::List(segments_dir(self.record_root())));
                    }
                }
                next
            }
            ResumePhase::Manifest => {
                let mut out = out.into_iter();
                r.manifest = Some(out.next().map_or(Ok(None), plan::bytes));
                // A session's segments are read whole: its synchronous rankings (the seed's
                // selectRelevantContexts) rank on its records' content, as they did before
                // segments were read by range, and a session's memory is bounded by the
                // session (its manifest is held whole), not by the store.
                let reads;
                (r.reading, reads) = self.begin_segments(out.next(), false);
                if reads.is_empty() {
                    return self.read_unlisted(r, job);
                }
                r.phase = ResumePhase::Segments;
                Next::Run(reads)
            }
            ResumePhase::Segments => {
                let read = match self.segments_step(&mut r.reading, out, &r.files) {
                    Ok(Ok(read)) => read,
                    Ok(Err(reads)) => return Next::Run(reads),
                    Err(e) => {
                        self.fail(job, WHAT, e, None);
                        return Next::Nothing;
                    }
                };
                (r.segments, r.covered, r.segment_removes) = (read.segments, read.covered, read.removes);
                self.read_unlisted(r, job)
            }
            ResumePhase::Adopting => {
                let Some(manifest) = r.found.as_mut() else { return Next::Nothing };
                for (rel, outcome) in std::mem::take(&mut r.unlisted).into_iter().zip(out) {
                    match self.read_entry(&rel, outcome) {
                        Ok(Some(read)) => {
                            r.read.insert(rel.clone(), read.content);
                            if manifest.context_files.contains_key(&rel) {
                                continue;
                            }
                            manifest.context_files.insert(rel.clone(), read.entry);
                            self.debug("indexed a record the manifest did not list yet", Some(&read.full));
                            r.changed = true;
                        }
                        Ok(None) => {}
                        Err(e) => {
                            self.fail(job, WHAT, e, None);
                            return Next::Nothing;
                        }
                    }
                }
                self.resumed(r);
                r.phase = ResumePhase::RemovingSegments;
                std::mem::take(&mut r.segment_removes).into()
            }
            ResumePhase::RemovingSegments => Next::Nothing,
        }
    }

    /// Once the folder is listed: the manifest read (or rebuilt, when missing or corrupt),
    /// its entries whose records are gone dropped; the reads of the records it does not list.
    pub(super) fn read_unlisted(&self, r: &mut Resuming, job: &mut Job) -> Next {
        let Some(s) = &self.session else { return Next::Nothing };
        let path = paths::join(&s.dir, MANIFEST);
        let manifest = match r.manifest.take().unwrap_or(Ok(None)) {
            Err(e) => {
                self.fail(job, "could not resume the session", e, None);
                return Next::Nothing;
            }
            Ok(Some(bytes)) => match Manifest::parse(&bytes, &s.id) {
                Ok(m) => Some(m),
                Err(e) => {
                    self.debug(format!("rebuilding a corrupt manifest: {e}"), Some(&path));
                    None
                }
            },
            Ok(None) if r.files.is_empty() => {
                let e = Error::new(ErrorKind::NotFound, format!("no session {:?} in this store", s.id));
                self.fail(job, "could not resume the session", e, None);
                return Next::Nothing;
            }
            Ok(None) => {
                self.debug("rebuilding a missing manifest", Some(&path));
                None
            }
        };
        r.rebuilt = manifest.is_none();
        let mut manifest = manifest.unwrap_or_else(|| s.manifest.borrow().clone());
        let listed: HashSet<&String> = r.files.iter().collect();
        let before = manifest.context_files.len();
        manifest.context_files.retain(|rel, _| listed.contains(rel));
        if manifest.context_files.len() != before {
            self.debug("dropped manifest entries whose records are gone", Some(&path));
            r.changed = true;
        }
        // A record a segment holds is restored from it (and enters the manifest if it is
        // not there: a crash between the two writes); any other is read whole.
        for (rel, stored) in &r.covered {
            if manifest.context_files.contains_key(rel) {
                continue;
            }
            let meta = stored.made.meta();
            match ManifestEntry::new(&meta, stored.size, &manifest_words(&meta)) {
                Ok(entry) => {
                    let (s, i) = stored.at;
                    // (A session's segments are read whole: see the Manifest phase.)
                    let terms = match &r.segments[s] {
                        Opened::Whole { segment, .. } => segment.terms_of(i),
                        Opened::Lazy { .. } => Terms::default(),
                    };
                    manifest.context_files.insert(rel.clone(), entry.with_content(&terms));
                    r.changed = true;
                }
                Err(e) => {
                    self.fail(job, "could not resume the session", e, None);
                    return Next::Nothing;
                }
            }
        }
        r.unlisted = r.files.iter().filter(|rel| !r.covered.contains_key(*rel)).cloned().collect();
        r.found = Some(manifest);
        if r.unlisted.is_empty() {
            self.resumed(r);
            r.phase = ResumePhase::RemovingSegments;
            return std::mem::take(&mut r.segment_removes).into();
        }
        r.phase = ResumePhase::Adopting;
        Next::Run(r.unlisted.iter().map(|rel| Op::Read(paths::join(&s.dir, rel))).collect())
    }

    /// The pointers restored from the manifest, which becomes the session's; marked for a
    /// write when it changed (and the manager writes).
    pub(super) fn resumed(&self, r: &mut Resuming) {
        let (Some(s), Some(mut manifest)) = (&self.session, r.found.take()) else { return };
        if r.changed {
            // The records found are the session's last writes; the resume is not one.
            manifest.date_from_entries(r.rebuilt);
        }
        let read: Vec<(String, Terms)> = r.read.iter().map(|(rel, t)| (paths::join(&s.dir, rel), t.clone())).collect();
        let records = manifest.context_files.iter().map(|(rel, e)| {
            let content = match (r.read.remove(rel), r.covered.get(rel)) {
                (Some(terms), _) => Content::Terms(Box::new(terms)),
                (None, Some(stored)) => Content::Stored(stored.at.0, stored.at.1),
                (None, None) => {
                    Content::Terms(Box::new(Terms::default().with_content(&e.content_terms, e.content_length)))
                }
            };
            (rel.clone(), Made::Meta(Box::new(e.meta())), e.size, Some(content))
        });
        // A session's segments are read whole: no entry is made before its pointer is.
        self.restore_pointers(&s.dir, records, &r.segments, true, Interned::default());
        r.segments = Vec::new();
        for (path, terms) in read {
            self.to_segment(&path, terms);
        }
        *s.manifest.borrow_mut() = manifest;
        if !r.changed || self.options.read_only {
            // Up to date on disk (or only read): the next save's write moves last_activity.
            s.last_write_ms.set(Some((self.options.clock)()));
        } else {
            s.dirty.set(1);
        }
    }

    // -- rebuilding the index
}
