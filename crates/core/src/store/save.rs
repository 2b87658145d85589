//! Saving a record: the input, naming, the record's bytes ([`Manager::begin_save`], the
//! synchronous first step), and [`SaveRecord`], the plan that writes it and adds its
//! pointer. The JavaScript driver and the native runner run that plan as any other.

use std::ops::Deref;

use super::{Job, JobPlan, Manager, ResultHasher, NAME_ATTEMPTS, UNINDEXED_BYTES};
use crate::error::{Error, ErrorKind, Result};
use crate::lifecycle::Pass;
use crate::naming::{args_hash, random_chars, record_filename, sanitize_tool_name, unit_byte, RANDOM_LEN};
use crate::paths;
use crate::plan::{self, Op, Outcomes, Plan, Step};
use crate::record::{check_no_lone_surrogates, from_json, iso_timestamp, RecordMeta};
use crate::select::Terms;
use crate::session;
use serde_json::{Number, Value};
use std::rc::Rc;

/// One `saveContext` call.
#[derive(Debug, Clone, Default)]
pub struct SaveInput<'a> {
    /// The tool's name.
    pub tool_name: &'a str,
    /// The args as JSON text (must be an object).
    pub args_json: &'a str,
    /// The result as JSON text; `None` when the result is `undefined`.
    pub result_json: Option<&'a str>,
    /// Optional task id.
    pub task_id: Option<Number>,
    /// Optional query id.
    pub query_id: Option<String>,
    /// A description to use instead of the generated one.
    pub description: Option<String>,
    /// A category folder inside the session (`features`, `code`, `testing`, ...).
    pub category: Option<String>,
    /// The id of the model's tool call, stored in the record and its pointer.
    pub tool_call_id: Option<String>,
    /// The result held by the host instead of `result_json` (wasm): its bytes never
    /// cross into the core, and its record is always written.
    pub result_body: Option<HostBody<'a>>,
}

/// A result whose JSON text the host holds as UTF-8 bytes. The core gets what it needs
/// to index, name and size the record; the storage writes the record as the header
/// the core encodes, the body, then `}` ([`Op::WriteParts`]). A record with a body is
/// always written, never held in memory: its bytes never cross into the core.
#[derive(Debug, Clone, Copy)]
pub struct HostBody<'a> {
    /// The host's handle of the bytes.
    pub handle: u32,
    /// Their length.
    pub len: usize,
    /// Their first `content_bytes` bytes (cut at a character boundary), for the index.
    pub prefix: &'a str,
    /// [`result_hash`] of the whole text.
    pub hash: u64,
}

impl Manager {
    /// The random part of a record's (or a segment's) name: four characters of `[a-z0-9]`
    /// from the `random` option.
    pub(super) fn random_part(&self) -> Result<String> {
        let mut failure = None;
        let chars = random_chars(RANDOM_LEN, || {
            unit_byte((self.options.random)().unwrap_or_else(|e| {
                failure.get_or_insert(e);
                0.0
            }))
        });
        failure.map_or(Ok(chars), Err)
    }

    /// The first step of a save, synchronous: checks, the args' hash, the description,
    /// the record's bytes, its size checks and its name. A record held in memory (smaller
    /// than `persistThreshold`, its result not held by the host) is saved by this step;
    /// else [`SaveRecord`] writes it. The pending save holds the manager's gate: `close()`
    /// waits for it.
    pub fn begin_save(&self, input: SaveInput<'_>) -> Result<Begun> {
        let pass = self.gate.enter("saveContext")?;
        self.check_writable()?;
        if let Some(s) = &self.session {
            // A save after endSession brings the session back: its segments are written again.
            s.ended.set(false);
        }
        self.compact();
        let args: Value = from_json(input.args_json)
            .map_err(|e| Error::new(ErrorKind::NotSerializable, format!("args are not canonicalisable JSON: {e}")))?;
        if !args.is_object() {
            return Err(Error::invalid("args must be a plain object"));
        }
        let hash = args_hash(&args)?;
        let hash_of_result = match (&input.result_body, input.result_json) {
            (Some(body), _) => body.hash,
            (None, Some(result)) => {
                check_no_lone_surrogates(result)?;
                result_hash(Some(result.as_bytes()))
            }
            (None, None) => result_hash(None),
        };
        let generated = input.description.is_none();
        let description = match input.description {
            Some(d) => d,
            None => crate::describe::describe(input.tool_name, &args),
        };
        let dir = match &input.category {
            None => self.record_root().to_owned(),
            Some(c) if self.session.is_some() => {
                session::check_category(c)?;
                paths::join(self.record_root(), c)
            }
            Some(_) => return Err(Error::invalid("category needs a session (the session option)")),
        };
        let (seq, counter) = self.state.borrow_mut().pointers.next_save();
        let now = (self.options.clock)();
        let meta = RecordMeta {
            tool_name: input.tool_name.to_owned(),
            tool_description: description,
            args_json: input.args_json.to_owned(),
            args_hash: hash,
            timestamp: iso_timestamp(now),
            task_id: input.task_id,
            query_id: input.query_id,
            tool_call_id: input.tool_call_id,
        };
        // The record: whole, or the header before a body the host holds (and `}`).
        let (bytes, size, indexed) = match &input.result_body {
            Some(body) => {
                let head = meta.encode_head();
                let size = head.len() + body.len + 1;
                (head, size, Indexed::Prefix(body.prefix.to_owned()))
            }
            None => {
                let bytes = meta.encode(input.result_json);
                let size = bytes.len();
                // The result's text ends the record, before its `}`.
                (bytes, size, input.result_json.map_or(Indexed::None, |r| Indexed::Tail(r.len())))
            }
        };
        if size > self.options.max_record_bytes {
            return Err(Error::new(
                ErrorKind::TooLarge,
                format!("record of {size} bytes exceeds maxRecordBytes ({})", self.options.max_record_bytes),
            ));
        }
        if let Some(cap) = self.options.retention.max_bytes.filter(|&cap| size > cap) {
            // It could only be kept by evicting itself: refuse it, as a record too large.
            return Err(Error::new(
                ErrorKind::TooLarge,
                format!("record of {size} bytes exceeds retention.maxBytes ({cap})"),
            ));
        }
        let mut pending = PendingSave {
            pass,
            seq,
            now,
            size,
            tool: sanitize_tool_name(input.tool_name),
            dir,
            counter,
            meta,
            generated,
            result_hash: hash_of_result,
            args,
            bytes,
            body: input.result_body.map(|b| b.handle),
            indexed,
            path: String::new(),
            attempts: 0,
            terms: None,
            content: None,
        };
        pending.path = pending.name(&self.random_part()?);
        if size >= self.options.persist_threshold || pending.body.is_some() {
            return Ok(Begun::Write(Box::new(pending)));
        }
        // A small record: held in memory.
        pending.index(self.options.content_bytes);
        self.state.borrow_mut().hold(&pending.path, Rc::from(std::mem::take(&mut pending.bytes)));
        let (filepath, after) = self.commit_save(pending, false);
        Ok(Begun::Saved(filepath, after))
    }

    /// The step after the write of a pending save: on success the pointer is added
    /// ([`Written::Saved`]); a taken name draws another ([`Written::Retry`]); any other
    /// failure leaves a file to remove before the error is reported ([`Written::Remove`]).
    pub(super) fn record_written(&self, mut pending: Box<PendingSave>, written: Result<()>) -> Written {
        match written {
            Ok(()) => {
                pending.index(self.options.content_bytes);
                let (filepath, after) = self.commit_save(*pending, true);
                Written::Saved(filepath, after)
            }
            Err(e) if e.kind() == ErrorKind::AlreadyExists => {
                self.debug("record name taken, drawing another", Some(&pending.path));
                pending.attempts += 1;
                if pending.attempts >= NAME_ATTEMPTS {
                    // The last name taken is the cause.
                    return Written::Failed(
                        Error::new(ErrorKind::Storage, "no free record name after repeated attempts").with_source(e),
                    );
                }
                match self.random_part() {
                    Ok(random) => {
                        pending.path = pending.name(&random);
                        Written::Retry(pending)
                    }
                    Err(e) => Written::Failed(e),
                }
            }
            Err(error) => {
                Written::Remove(FailedSave { path: std::mem::take(&mut pending.path), error, _pass: pending.pass })
            }
        }
    }

    /// Adds the pointer of a saved record (`written`: persisted just now, no await
    /// since); the follow-up the save needs, if any.
    pub(super) fn commit_save(&self, pending: PendingSave, written: bool) -> (String, Option<Job>) {
        let PendingSave { pass, seq, now, size, meta, generated, path: filepath, terms, content, result_hash, .. } =
            pending;
        let terms = terms.unwrap_or_default();
        let added = {
            let mut state = self.state.borrow_mut();
            if self.keeps_ledger() {
                state.owned.add(&filepath, now, seq, size);
            }
            // A reconcile may have adopted the file while its write was answering: this
            // save's pointer (with the content it indexed) replaces that one.
            state.remove_pointer(&filepath);
            // A description the save made is describe's; one given is compared.
            let mut entry = state.pointers.new_entry(&filepath, meta, size, generated.then_some(true));
            entry.written = written;
            entry.set_result_hash(result_hash);
            let added = state.add(seq, entry, &terms);
            if let Some(slot) = added {
                state.pointers.latest_copy_at(slot);
            }
            let nothing_to_index = added.is_some() && content.is_none();
            if let (Some(_), Some(json)) = (added, content) {
                state.live.wait_for_content(filepath.clone(), json);
            }
            (added.is_some(), nothing_to_index)
        };
        let (added, nothing_to_index) = added;
        if nothing_to_index && written {
            // No content to wait for: it waits for the next segment as it is.
            self.to_segment(&filepath, Terms::default());
        }
        if !added {
            self.debug("the index is full: this record has no pointer", Some(&filepath));
        }
        self.debug("saved context", Some(&filepath));
        if written {
            self.track(&filepath, &terms);
        }
        let waiting = self.state.borrow().live.content_waiting_bytes();
        if waiting > UNINDEXED_BYTES {
            // Idle time (the driver's slices, `index_some`) did not keep up: the save
            // indexes what waits, so the texts held for it stay bounded.
            if !self.indexing_behind.replace(true) {
                let message = format!("a save indexes the results waiting: {waiting} bytes wait (the bound is {UNINDEXED_BYTES}); idle time did not keep up");
                self.debug(message, None);
            }
            self.index_content();
        }
        // Follow-up I/O: spilling over the memory budget, retention, the session manifest.
        let spill = {
            let state = self.state.borrow();
            state.held.bytes() > self.options.memory_budget && state.held.any_queued()
        };
        let after =
            (spill || self.keeps_ledger() || self.session.is_some()).then(|| Job::after_save(pass, filepath.clone()));
        (filepath, after)
    }
}

/// The hash that tells duplicate results apart: [`ResultHasher`] over the JSON text's
/// bytes (not cryptographic: it only tells apart results saved with the same tool and
/// args); a result left `undefined` hashes apart from every JSON text.
pub fn result_hash(result_json: Option<&[u8]>) -> u64 {
    match result_json {
        Some(bytes) => {
            let mut hasher = ResultHasher::default();
            hasher.update(bytes);
            hasher.finish()
        }
        None => u64::MAX,
    }
}

/// What the first step of a save did ([`Manager::begin_save`]).
pub enum Begun {
    /// Saved already (held in memory): its filepath, and the follow-up, if any.
    Saved(String, Option<Job>),
    /// The record is to be written.
    Write(Box<PendingSave>),
}

/// What the step after a save's write did ([`Manager::record_written`]).
pub(super) enum Written {
    /// Saved: its filepath, and the follow-up, if any.
    Saved(String, Option<Job>),
    /// The name was taken: write the record again, at its new [`PendingSave::path`].
    Retry(Box<PendingSave>),
    /// The write failed: remove [`FailedSave::path`], then report the error.
    Remove(FailedSave),
    /// The save failed (no free name): nothing to remove.
    Failed(Error),
}

/// A save whose record is to be written ([`SaveRecord`]). It holds the manager's gate
/// until it is finished.
pub struct PendingSave {
    pub(super) pass: Pass,
    pub(super) seq: u64,
    pub(super) now: i64,
    pub(super) size: usize,
    pub(super) tool: String,
    pub(super) dir: String,
    pub(super) counter: u64,
    pub(super) meta: RecordMeta,
    pub(super) generated: bool,
    /// [`result_hash`] of the result.
    pub(super) result_hash: u64,
    pub(super) args: Value,
    /// The whole record, or its header when the host holds the body.
    pub(super) bytes: Vec<u8>,
    /// The host's handle of the result's bytes, written between the header and `}`.
    pub(super) body: Option<u32>,
    pub(super) indexed: Indexed,
    pub(super) path: String,
    pub(super) attempts: usize,
    pub(super) terms: Option<Terms>,
    /// The result's JSON text, kept by [`PendingSave::index`] for the content's indexing.
    pub(super) content: Option<String>,
}

/// The result's text that the index reads.
pub(super) enum Indexed {
    /// No result (`undefined`).
    None,
    /// The last this many bytes of the record before its `}`: the whole result.
    Tail(usize),
    /// The first `content_bytes` bytes of a body the host holds.
    Prefix(String),
}

impl PendingSave {
    /// The write of the record, exclusive: its whole bytes, or (the host holding the
    /// result) the header, the result's bytes and `}`.
    fn write_op(&self) -> Op {
        let path = self.path.clone();
        match self.body {
            Some(body) => Op::WriteParts { path, head: self.bytes.clone(), body, tail: b"}".to_vec(), exclusive: true },
            None => Op::Write { path, bytes: self.bytes.clone(), exclusive: true },
        }
    }

    /// Indexes the record's metadata and keeps its result's text for the content's
    /// indexing after the save (once).
    pub(super) fn index(&mut self, content_bytes: usize) {
        if self.terms.is_none() {
            self.terms = Some(self.terms_of());
            self.content = self.content(content_bytes);
        }
    }

    /// The terms of the record's metadata: its content is indexed after the save
    /// ([`Manager::index_content`]).
    pub(super) fn terms_of(&self) -> Terms {
        Terms::of_record(&self.meta.tool_description, &self.meta.tool_name, &self.args)
    }

    /// The JSON text of the result, to index once the record is saved (none when there is
    /// no result or no content is indexed).
    pub(super) fn content(&self, content_bytes: usize) -> Option<String> {
        if content_bytes == 0 {
            return None;
        }
        match &self.indexed {
            Indexed::None => None,
            Indexed::Tail(len) => {
                let end = self.bytes.len().checked_sub(1)?;
                let text = std::str::from_utf8(self.bytes.get(end.checked_sub(*len)?..end)?).ok()?;
                // Only what is indexed is kept until then.
                let mut cut = text.len().min(content_bytes);
                while !text.is_char_boundary(cut) {
                    cut -= 1;
                }
                Some(text[..cut].to_owned())
            }
            Indexed::Prefix(prefix) => Some(prefix.clone()),
        }
    }

    pub(super) fn name(&self, random: &str) -> String {
        let ts = self.now.max(0) as u64;
        paths::join(&self.dir, &record_filename(&self.tool, &self.meta.args_hash, ts, self.counter, random))
    }
}

/// A save whose write failed: the file at `path` is removed, then the error reported.
pub(super) struct FailedSave {
    /// What the failed write may have left.
    pub(super) path: String,
    pub(super) error: Error,
    pub(super) _pass: Pass,
}

impl FailedSave {
    /// The error, once the file is removed (the save ends).
    pub(super) fn into_error(self) -> Error {
        self.error
    }
}

/// A save after its first step ([`Manager::begin_save`]), as a plan over the manager `M`
/// points at (a reference natively, an `Rc` in wasm): the record written exclusively
/// (another name drawn while one is taken; what a failed write left removed before the
/// save fails with the write's error), its pointer added, then the save's follow-up (a
/// spill over the memory budget, retention, the session manifest; its failures go to
/// `onDebug`). Resolves to the record's filepath.
pub struct SaveRecord<M> {
    manager: M,
    at: SaveAt<M>,
}

/// Where a [`SaveRecord`] is.
enum SaveAt<M> {
    /// The record is to be written (again, under another name, after a taken one).
    Write(Box<PendingSave>),
    /// Its write is in flight.
    Writing(Box<PendingSave>),
    /// Its write failed: what it left is being removed, then the save fails.
    Removing(FailedSave),
    /// Saved at this filepath: its follow-up runs.
    After(String, JobPlan<M>),
    /// Saved at this filepath, nothing left to do.
    Saved(String),
    /// Finished.
    Over,
}

impl<M: Deref<Target = Manager> + Clone> SaveRecord<M> {
    /// The rest of the save `begun`.
    pub fn new(manager: M, begun: Begun) -> Self {
        let at = match begun {
            Begun::Write(pending) => SaveAt::Write(pending),
            Begun::Saved(filepath, after) => Self::saved(&manager, filepath, after),
        };
        SaveRecord { manager, at }
    }

    /// Whether the save is done already (a record held in memory with no follow-up):
    /// its filepath. The caller need not run the plan.
    pub fn done(&self) -> Option<&str> {
        match &self.at {
            SaveAt::Saved(filepath) => Some(filepath),
            _ => None,
        }
    }

    fn saved(manager: &M, filepath: String, after: Option<Job>) -> SaveAt<M> {
        match after {
            Some(job) => SaveAt::After(filepath, JobPlan { manager: manager.clone(), job }),
            None => SaveAt::Saved(filepath),
        }
    }

    /// The follow-up's step `step`, passed through until it is done.
    fn after(&mut self, filepath: String, job: JobPlan<M>, step: Step<Vec<String>>) -> Step<String> {
        match step.finished() {
            Err(step) => {
                self.at = SaveAt::After(filepath, job);
                step
            }
            Ok(result) => {
                // The record is saved: a follow-up that failed (its stages tell `onDebug`
                // as they fail; a lock's release could still fail it) does not fail the save.
                if let Err(e) = result {
                    self.manager.debug(format!("the save's follow-up failed: {e}"), Some(&filepath));
                }
                Step::Done(Ok(filepath))
            }
        }
    }
}

impl<M: Deref<Target = Manager> + Clone> Plan for SaveRecord<M> {
    type Output = String;

    fn step(&mut self, outcomes: Outcomes) -> Step<String> {
        match std::mem::replace(&mut self.at, SaveAt::Over) {
            SaveAt::Write(pending) => {
                let op = pending.write_op();
                self.at = SaveAt::Writing(pending);
                Step::Run(vec![op])
            }
            SaveAt::Writing(pending) => {
                let written = plan::only(outcomes).map(|_| ());
                match self.manager.record_written(pending, written) {
                    Written::Saved(filepath, after) => {
                        self.at = Self::saved(&self.manager, filepath, after);
                        self.step(Vec::new())
                    }
                    Written::Retry(pending) => {
                        self.at = SaveAt::Write(pending);
                        self.step(Vec::new())
                    }
                    Written::Remove(failed) => {
                        // The write was exclusive: whatever it left is this save's.
                        let op = Op::Remove(failed.path.clone());
                        self.at = SaveAt::Removing(failed);
                        Step::Run(vec![op])
                    }
                    Written::Failed(e) => Step::Done(Err(e)),
                }
            }
            // The save fails with the write's error, whatever the removal gave.
            SaveAt::Removing(failed) => Step::Done(Err(failed.into_error())),
            SaveAt::After(filepath, mut job) => {
                let step = job.step(outcomes);
                self.after(filepath, job, step)
            }
            SaveAt::Saved(filepath) => Step::Done(Ok(filepath)),
            SaveAt::Over => Step::Done(Err(plan::stepped_after_done())),
        }
    }

    fn lock_failed(&mut self, e: Error) -> Step<String> {
        match std::mem::replace(&mut self.at, SaveAt::Over) {
            SaveAt::After(filepath, mut job) => {
                let step = job.lock_failed(e);
                self.after(filepath, job, step)
            }
            _ => Step::Done(Err(e)),
        }
    }
}
