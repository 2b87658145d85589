//! Stale-session cleanup, a session's record files, and removing a session: plans.

use super::{check_category, lock_name, parse_iso_ms, record_time_ms, session_dir, Manifest, Manifests, MANIFEST};
use crate::error::{Error, ErrorKind};
use crate::naming::is_record_filename;
use crate::paths;
use crate::plan::{self, Op, Outcomes, Plan, Step};

/// `toolctx::cleanup_stale_sessions` as a plan.
pub struct CleanupStale {
    context_dir: String,
    now_ms: i64,
    older_than_ms: i64,
    /// The stale sessions left to look at, last first.
    stale: Vec<String>,
    /// The ids removed.
    removed: Vec<String>,
    at: Cleanup,
}

/// Where a [`CleanupStale`] is.
enum Cleanup {
    Listing(Manifests),
    /// The session's lock is being taken.
    Locking(String),
    /// Under the lock, its manifest is being read again.
    Reading(String),
    /// Its record files are being listed.
    Files(String, Manifest, RecordFiles),
    /// Its files are being removed.
    Removing(String, RemoveSession),
    /// The lock is being released; the session was removed or not.
    Unlocking(String, bool),
    Done,
}

impl CleanupStale {
    /// The plan that removes the sessions of `context_dir` idle longer than `older_than_ms` at `now_ms`.
    pub fn new(context_dir: &str, now_ms: i64, older_than_ms: i64) -> Self {
        CleanupStale {
            context_dir: context_dir.to_owned(),
            now_ms,
            older_than_ms,
            stale: Vec::new(),
            removed: Vec::new(),
            at: Cleanup::Listing(Manifests::new(context_dir)),
        }
    }

    fn is_stale(&self, manifest: &Manifest) -> bool {
        let now = self.now_ms;
        parse_iso_ms(&manifest.last_activity).is_some_and(|last| last <= now && now - last > self.older_than_ms)
    }

    fn dir(&self, id: &str) -> String {
        session_dir(&self.context_dir, id)
    }

    /// The next stale session: under its lock, read its manifest again (a manager may
    /// have written to the session since it was listed).
    fn next(&mut self) -> Step<Vec<String>> {
        match self.stale.pop() {
            Some(id) => {
                let lock = lock_name(&self.dir(&id));
                self.at = Cleanup::Locking(id);
                Step::Lock { name: lock, wait: true }
            }
            None => Step::Done(Ok(std::mem::take(&mut self.removed))),
        }
    }

    fn unlock(&mut self, id: String, gone: bool) -> Step<Vec<String>> {
        self.at = Cleanup::Unlocking(id, gone);
        Step::Unlock
    }
}

impl Plan for CleanupStale {
    type Output = Vec<String>;

    fn step(&mut self, outcomes: Outcomes) -> Step<Vec<String>> {
        match std::mem::replace(&mut self.at, Cleanup::Done) {
            Cleanup::Listing(mut manifests) => match manifests.step(outcomes).finished() {
                Err(step) => {
                    self.at = Cleanup::Listing(manifests);
                    step
                }
                Ok(Err(e)) => Step::Done(Err(e)),
                Ok(Ok(all)) => {
                    let mut stale: Vec<String> =
                        all.into_iter().filter(|(_, m)| self.is_stale(m)).map(|(id, _)| id).collect();
                    stale.reverse();
                    self.stale = stale;
                    self.next()
                }
            },
            Cleanup::Locking(id) => {
                let path = paths::join(&self.dir(&id), MANIFEST);
                self.at = Cleanup::Reading(id);
                Step::Run(vec![Op::Read(path)])
            }
            Cleanup::Reading(id) => {
                let current = match plan::bytes(plan::only(outcomes)) {
                    Ok(current) => current,
                    Err(e) => return Step::Done(Err(e)),
                };
                match current.map(|bytes| Manifest::parse(&bytes, &id)) {
                    Some(Ok(m)) if self.is_stale(&m) => {
                        let files = RecordFiles::new(&self.dir(&id));
                        self.at = Cleanup::Files(id, m, files);
                        self.step(Vec::new())
                    }
                    _ => self.unlock(id, false),
                }
            }
            Cleanup::Files(id, manifest, mut files) => match files.step(outcomes).finished() {
                Err(step) => {
                    self.at = Cleanup::Files(id, manifest, files);
                    step
                }
                Ok(Err(e)) => Step::Done(Err(e)),
                Ok(Ok(files)) => {
                    // The session's own record files that its manifest does not list (a
                    // crash before the manifest caught up) are its records too. One saved
                    // recently means the session is not idle after all.
                    let orphans: Vec<String> =
                        files.into_iter().filter(|rel| !manifest.context_files.contains_key(rel)).collect();
                    let recent = orphans
                        .iter()
                        .filter_map(|rel| record_time_ms(rel))
                        .any(|at| self.now_ms - at <= self.older_than_ms);
                    if recent {
                        return self.unlock(id, false);
                    }
                    let dir = self.dir(&id);
                    let orphans: Vec<String> = orphans.iter().map(|rel| paths::join(&dir, rel)).collect();
                    self.at = Cleanup::Removing(id, RemoveSession::new(&dir, &manifest, &orphans));
                    self.step(Vec::new())
                }
            },
            Cleanup::Removing(id, mut removing) => match removing.step(outcomes).finished() {
                Err(step) => {
                    self.at = Cleanup::Removing(id, removing);
                    step
                }
                Ok(Err(e)) => Step::Done(Err(e)),
                Ok(Ok(())) => self.unlock(id, true),
            },
            Cleanup::Unlocking(id, gone) => {
                if gone {
                    self.removed.push(id);
                }
                self.next()
            }
            Cleanup::Done => Step::Done(Err(plan::stepped_after_done())),
        }
    }
}

/// `toolctx::record_files` as a plan.
pub enum RecordFiles {
    /// Nothing asked yet.
    Start(String),
    /// The folder is being listed.
    Listing(String),
    /// Its category folders are being listed; the folder's names.
    Categories(Vec<String>),
    /// Finished.
    Done,
}

impl RecordFiles {
    /// The record files of session folder `dir`.
    pub fn new(dir: &str) -> Self {
        RecordFiles::Start(dir.to_owned())
    }
}

/// The category of a folder name (`code/`) that may hold records.
fn category_of(name: &str) -> Option<&str> {
    name.strip_suffix('/').filter(|c| check_category(c).is_ok())
}

impl Plan for RecordFiles {
    type Output = Vec<String>;

    fn step(&mut self, outcomes: Outcomes) -> Step<Vec<String>> {
        match std::mem::replace(self, RecordFiles::Done) {
            RecordFiles::Start(dir) => {
                let list = Op::List(dir.clone());
                *self = RecordFiles::Listing(dir);
                Step::Run(vec![list])
            }
            RecordFiles::Listing(dir) => match plan::names(plan::only(outcomes)) {
                Err(e) => Step::Done(Err(e)),
                Ok(names) => {
                    let lists = names.iter().filter_map(|n| category_of(n)).map(|c| Op::List(paths::join(&dir, c)));
                    let lists = lists.collect();
                    *self = RecordFiles::Categories(names);
                    Step::Run(lists)
                }
            },
            RecordFiles::Categories(names) => {
                let mut out = Vec::new();
                let mut listed = outcomes.into_iter();
                for name in names {
                    if let Some(category) = category_of(&name) {
                        let inner = match listed.next().map(plan::names) {
                            Some(Ok(inner)) => inner,
                            Some(Err(e)) => return Step::Done(Err(e)),
                            None => return Step::Done(Err(Error::new(ErrorKind::Internal, "a list went missing"))),
                        };
                        out.extend(
                            inner.into_iter().filter(|n| is_record_filename(n)).map(|n| format!("{category}/{n}")),
                        );
                    } else if !name.ends_with('/') && is_record_filename(&name) {
                        out.push(name);
                    }
                }
                Step::Done(Ok(out))
            }
            RecordFiles::Done => Step::Done(Err(plan::stepped_after_done())),
        }
    }
}

/// `toolctx::remove_session` as a plan: one removal at a time, in order, stopping at the first
/// that fails.
pub struct RemoveSession {
    todo: std::collections::VecDeque<Removal>,
    asked: Option<Removal>,
}

enum Removal {
    File(String),
    /// The index segments folder: listed, its files removed, then itself.
    Segments(String),
    /// Listed: removed if empty.
    Folder(String),
    /// Listed empty: removed.
    EmptyFolder(String),
}

impl RemoveSession {
    /// The plan that removes session folder `dir`: the files `manifest` tracks, `also`.
    pub fn new(dir: &str, manifest: &Manifest, also: &[String]) -> Self {
        let mut files: Vec<String> = manifest.context_files.keys().map(|rel| paths::join(dir, rel)).collect();
        files.extend(also.iter().filter(|p| paths::is_inside(dir, p)).cloned());
        crate::sort::sort(&mut files);
        files.dedup();
        let mut folders: Vec<String> =
            files.iter().filter_map(|f| f.rsplit_once('/').map(|(d, _)| d.to_owned())).filter(|d| d != dir).collect();
        crate::sort::sort(&mut folders);
        folders.dedup();
        let mut todo: std::collections::VecDeque<Removal> = files.into_iter().map(Removal::File).collect();
        todo.push_back(Removal::Segments(crate::segments::segments_dir(dir)));
        todo.push_back(Removal::File(paths::join(dir, MANIFEST)));
        todo.extend(folders.into_iter().map(Removal::Folder));
        todo.push_back(Removal::Folder(dir.to_owned()));
        RemoveSession { todo, asked: None }
    }
}

impl Plan for RemoveSession {
    type Output = ();

    fn step(&mut self, outcomes: Outcomes) -> Step<()> {
        if let Some(asked) = self.asked.take() {
            let outcome = plan::only(outcomes);
            match asked {
                Removal::File(_) | Removal::EmptyFolder(_) => {
                    if let Err(e) = outcome {
                        return Step::Done(Err(e));
                    }
                }
                Removal::Folder(folder) => match plan::names(outcome) {
                    Ok(names) if names.is_empty() => self.todo.push_front(Removal::EmptyFolder(folder)),
                    Ok(_) => {}
                    Err(e) => return Step::Done(Err(e)),
                },
                Removal::Segments(folder) => match plan::names(outcome) {
                    // Derived data: every file of the folder goes (a segment being written
                    // by a process that still writes fails its merge, not its records).
                    Ok(names) => {
                        self.todo.push_front(Removal::EmptyFolder(folder.clone()));
                        for name in names.iter().rev().filter(|n| !n.ends_with('/')) {
                            self.todo.push_front(Removal::File(paths::join(&folder, name)));
                        }
                    }
                    Err(e) => return Step::Done(Err(e)),
                },
            }
        }
        let Some(next) = self.todo.pop_front() else { return Step::Done(Ok(())) };
        let op = match &next {
            Removal::File(path) => Op::Remove(path.clone()),
            Removal::Folder(folder) | Removal::Segments(folder) => Op::List(folder.clone()),
            Removal::EmptyFolder(folder) => Op::RemoveDir(folder.clone()),
        };
        self.asked = Some(next);
        Step::Run(vec![op])
    }
}
