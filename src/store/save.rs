//! Saving a record in steps: the input, naming, the record's bytes, and what a save did
//! ([`Begun`], [`Written`]); the async `save` that drives them over a [`Storage`].

use super::{Entry, Job, Manager, ResultHasher, State, NAME_ATTEMPTS, UNINDEXED_BYTES};
use crate::error::{Error, ErrorKind, Result};
use crate::lifecycle::Pass;
use crate::naming::{args_hash, random_chars, record_filename, sanitize_tool_name, unit_byte, RANDOM_LEN};
use crate::paths;
use crate::record::{check_no_lone_surrogates, from_json, iso_timestamp, parse_record, RecordMeta};
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
    /// cross into the core unless the record stays in memory.
    pub result_body: Option<HostBody<'a>>,
}

/// A result whose JSON text the host holds as UTF-8 bytes. The core gets what it needs
/// to index, name and size the record; the storage writes the record as the header
/// the core encodes, the body, then `}` ([`Storage::write_parts`](crate::Storage::write_parts)).
#[derive(Debug, Clone, Copy)]
pub struct HostBody<'a> {
    /// The host's handle of the bytes (read through [`Options::host_bytes`](super::Options::host_bytes)).
    pub handle: u32,
    /// Their length.
    pub len: usize,
    /// Their first `content_bytes` bytes (cut at a character boundary), for the index.
    pub prefix: &'a str,
    /// [`result_hash`] of the whole text, when the host has it. Without it, the core
    /// hashes the bytes it copies in for a record held in memory; for a record to write,
    /// the host hands it over while the record is written
    /// ([`PendingSave::set_result_hash`]), else the core reads the bytes
    /// ([`Options::host_bytes`](super::Options::host_bytes)) once the record is written.
    pub hash: Option<u64>,
}

impl Manager {
    /// The bytes the host holds under `handle` ([`HostBody`]), through the `host_bytes`
    /// option.
    fn host_bytes(&self, handle: u32) -> Option<Vec<u8>> {
        self.options.host_bytes.as_ref().and_then(|read| read(handle))
    }

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
    /// than `persistThreshold`) is saved by this step; else the caller writes
    /// [`PendingSave::record`] exclusively to [`PendingSave::path`], has the result
    /// indexed meanwhile ([`PendingSave::index`]), and hands the outcome to
    /// [`Manager::record_written`]. The pending save holds the manager's gate:
    /// `close()` waits for it.
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
                Some(result_hash(Some(result.as_bytes())))
            }
            (None, None) => Some(result_hash(None)),
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
        let (seq, counter, now) = {
            let mut state = self.state.borrow_mut();
            let (seq, counter) = (state.next_seq, state.counter);
            state.next_seq += 1;
            state.counter += 1;
            (seq, counter, (self.options.clock)())
        };
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
        if size >= self.options.persist_threshold {
            return Ok(Begun::Write(Box::new(pending)));
        }
        // A small record: held in memory (its body, if the host holds it, copied in).
        pending.index(self.options.content_bytes);
        if let Some(handle) = pending.body.take() {
            let body = self
                .host_bytes(handle)
                .ok_or_else(|| Error::new(ErrorKind::Internal, "the host no longer holds the result's bytes"))?;
            pending.result_hash.get_or_insert_with(|| result_hash(Some(&body)));
            pending.bytes.extend_from_slice(&body);
            pending.bytes.push(b'}');
        }
        {
            let mut state = self.state.borrow_mut();
            let State { memory, interned, .. } = &mut *state;
            memory.insert(&pending.path, Rc::from(std::mem::take(&mut pending.bytes)), interned);
            state.memory_bytes += size;
        }
        let (filepath, after) = self.commit_save(pending, false);
        Ok(Begun::Saved(filepath, after))
    }

    /// The step after the write of a pending save: on success the pointer is added
    /// ([`Written::Saved`]); a taken name draws another ([`Written::Retry`]); any other
    /// failure leaves a file to remove before the error is reported ([`Written::Remove`]).
    pub fn record_written(&self, mut pending: Box<PendingSave>, written: Result<()>) -> Written {
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
        let hash = pending
            .result_hash
            .or_else(|| pending.body.and_then(|h| self.host_bytes(h)).map(|b| result_hash(Some(&b))));
        let PendingSave { pass, seq, now, size, meta, generated, path: filepath, terms, content, .. } = pending;
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
            let mut entry = Entry::new(&filepath, meta, size, &mut state.interned, generated.then_some(true));
            entry.written = written;
            // A hash not known (the host gave none and no longer holds the bytes): never a
            // duplicate, rather than a made-up one.
            if let Some(hash) = hash {
                entry.set_result_hash(hash);
            }
            let key = entry.duplicate_key();
            let added = state.add(seq, entry, &terms);
            if let (true, Some(key)) = (added, key) {
                let slot = (state.entries.len() - 1) as u32;
                state.latest_copy.insert(key, slot);
            }
            let nothing_to_index = added && content.is_none();
            if let (true, Some(json)) = (added, content) {
                state.unindexed_bytes += json.len();
                state.unindexed.push_back((filepath.clone(), json));
            }
            (added, nothing_to_index)
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
        if self.state.borrow().unindexed_bytes > UNINDEXED_BYTES {
            self.index_content();
        }
        // Follow-up I/O: spilling over the memory budget, retention, the session manifest.
        let spill = {
            let state = self.state.borrow();
            state.memory_bytes > self.options.memory_budget && state.memory.any_queued()
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
pub enum Written {
    /// Saved: its filepath, and the follow-up, if any.
    Saved(String, Option<Job>),
    /// The name was taken: write the record again, at its new [`PendingSave::path`].
    Retry(Box<PendingSave>),
    /// The write failed: remove [`FailedSave::path`], then report the error.
    Remove(FailedSave),
    /// The save failed (no free name): nothing to remove.
    Failed(Error),
}

/// A save whose record is to be written by the caller (the JavaScript driver, or
/// [`ContextManager::save`](crate::ContextManager::save)). It holds the manager's gate until it is finished.
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
    /// `None` until the host hands over the hash of a body it holds (see [`HostBody::hash`]).
    pub(super) result_hash: Option<u64>,
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
    /// The path to write the record to (exclusively).
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The record: its whole bytes, or (with a handle) the header to write before the
    /// bytes the host holds under the handle, then `}`.
    pub fn record(&self) -> (&[u8], Option<u32>) {
        (&self.bytes, self.body)
    }

    /// The hash of the result's bytes the host holds ([`HostBody::hash`]), computed while
    /// the record is written.
    pub fn set_result_hash(&mut self, hash: u64) {
        self.result_hash = Some(hash);
    }

    /// Whether the hash of the result is still to be handed over ([`PendingSave::set_result_hash`]).
    pub fn wants_result_hash(&self) -> bool {
        self.result_hash.is_none()
    }

    /// Indexes the record's metadata and keeps its result's text for the content's
    /// indexing after the save (once): run while the host writes it.
    pub fn index(&mut self, content_bytes: usize) {
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
pub struct FailedSave {
    /// What the failed write may have left.
    pub path: String,
    pub(super) error: Error,
    pub(super) _pass: Pass,
}

impl FailedSave {
    /// The error, once the file is removed (the save ends).
    pub fn into_error(self) -> Error {
        self.error
    }
}

/// The words a manifest lists for a record (the seed's `keywords`): its metadata's
/// index tokens, distinct and sorted, as written (not stemmed).
pub(super) fn manifest_words(meta: &RecordMeta) -> Vec<String> {
    let args: Value = from_json(&meta.args_json).unwrap_or(Value::Null);
    crate::select::metadata_words(&meta.tool_description, &meta.tool_name, &args)
}

/// The terms of the content of a record file (its bytes): the string values of the
/// first `content_bytes` bytes of its result (none when it does not parse).
pub(super) fn content_terms(bytes: &[u8], content_bytes: usize) -> Terms {
    let view = parse_record(bytes).ok();
    let result = view.as_ref().and_then(|v| v.result).map(|r| r.get());
    Terms::of_record_with_content("", "", &Value::Null, result, content_bytes)
}

/// The indexed terms of a record's metadata.
pub(super) fn terms_of(meta: &RecordMeta) -> Terms {
    let args: Value = from_json(&meta.args_json).unwrap_or(Value::Null);
    Terms::of_record(&meta.tool_description, &meta.tool_name, &args)
}
