//! Sessions (SPEC §5): ids, the `.manifest.json` index of a session's records, and the
//! store-level operations over sessions (list, stale cleanup).
//!
//! Layout: `{contextDir}/sessions/{id}/[{category}/]{record}.json` and
//! `{contextDir}/sessions/{id}/.manifest.json`. The record files are the source of
//! truth; the manifest is an index of them, replaced atomically, and may lag behind
//! (updates are coalesced): resume reads the records it does not list yet.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::Number;

use crate::error::{Error, ErrorKind, Result};
use crate::naming::is_record_filename;
use crate::paths;
use crate::plan::{self, Op, Outcomes, Plan, Step};
use crate::record::{civil_from_days, iso_timestamp, RecordMeta};
use crate::storage::Storage;

/// The folder of sessions inside a context dir.
pub const SESSIONS_DIR: &str = "sessions";
/// The manifest's file name inside a session folder.
pub const MANIFEST: &str = ".manifest.json";
/// The name of the lock of the session in folder `dir`: a path beside the folder (a lock
/// file on file systems, so it never keeps the folder from being removed).
pub fn lock_name(dir: &str) -> String {
    format!("{dir}.lock")
}
/// Default idle time after which `cleanup_stale_sessions` removes a session.
pub const DEFAULT_STALE_MS: i64 = 24 * 60 * 60 * 1000;
/// Most keywords kept per record in the manifest.
pub const MAX_KEYWORDS: usize = 32;
/// Most content terms kept per record in the manifest (the most frequent).
pub const MAX_CONTENT_TERMS: usize = 16;

/// A new session id `YYYYMMDD-HHMMSS-xxxx` (UTC) from a clock reading and 4 random chars.
pub fn session_id(now_ms: i64, random4: &str) -> String {
    let iso = iso_timestamp(now_ms); // 2025-01-18T14:30:22.000Z
    format!("{}{}{}-{}{}{}-{random4}", &iso[0..4], &iso[5..7], &iso[8..10], &iso[11..13], &iso[14..16], &iso[17..19])
}

/// Whether `id` is a session id (`^[0-9]{8}-[0-9]{6}-[a-z0-9]{4}$`).
pub fn is_session_id(id: &str) -> bool {
    let b = id.as_bytes();
    b.len() == 20
        && b[8] == b'-'
        && b[15] == b'-'
        && b[..8].iter().chain(&b[9..15]).all(u8::is_ascii_digit)
        && b[16..].iter().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
}

/// Checks a category folder name: 1 to 64 characters of `[A-Za-z0-9_-]`.
pub fn check_category(category: &str) -> Result<()> {
    let ok = (1..=64).contains(&category.len())
        && category.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if ok {
        Ok(())
    } else {
        Err(Error::invalid(format!("category {category:?} must be 1-64 characters of [A-Za-z0-9_-]")))
    }
}

/// The folder of session `id` in `context_dir`.
pub fn session_dir(context_dir: &str, id: &str) -> String {
    paths::join(&paths::join(context_dir, SESSIONS_DIR), id)
}

/// One record in a manifest: the seed's `{created, for, keywords}` and what a pointer needs.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ManifestEntry {
    /// When the record was saved (ISO 8601).
    pub created: String,
    /// The tool the record is the output of.
    #[serde(rename = "for")]
    pub for_tool: String,
    /// The record's most telling terms, for `context_index`.
    #[serde(default)]
    pub keywords: Vec<String>,
    /// Tool name.
    #[serde(rename = "toolName")]
    pub tool_name: String,
    /// Description.
    #[serde(rename = "toolDescription", default)]
    pub tool_description: String,
    /// Args, as stored.
    pub args: Box<RawValue>,
    /// Full args hash.
    #[serde(rename = "argsHash", default)]
    pub args_hash: String,
    /// Task id.
    #[serde(rename = "taskId", default, skip_serializing_if = "Option::is_none")]
    pub task_id: Option<Number>,
    /// Query id.
    #[serde(rename = "queryId", default, skip_serializing_if = "Option::is_none")]
    pub query_id: Option<String>,
    /// Tool-call id.
    #[serde(rename = "toolCallId", default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// Bytes of the record file.
    #[serde(default)]
    pub size: usize,
    /// The most frequent terms of the record's indexed content (stems, as the index
    /// holds them), at most [`MAX_CONTENT_TERMS`], with how often each occurs: resume
    /// and [`search_sessions`] rank on content from them without reading the record.
    #[serde(rename = "contentTerms", default, skip_serializing_if = "BTreeMap::is_empty")]
    pub content_terms: BTreeMap<String, u32>,
    /// Tokens in the record's indexed content (the content field's length for BM25F).
    #[serde(rename = "contentLength", default, skip_serializing_if = "is_zero")]
    pub content_length: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

impl ManifestEntry {
    /// The entry for a record.
    pub fn new(meta: &RecordMeta, size: usize, terms: &[String]) -> Result<Self> {
        let args = crate::record::raw_json(&meta.args_json)
            .map_err(|e| Error::new(ErrorKind::Internal, format!("args are not JSON: {e}")))?;
        let mut keywords: Vec<String> =
            terms.iter().filter(|t| crate::select::is_keyword(t)).take(MAX_KEYWORDS).cloned().collect();
        keywords.dedup();
        Ok(ManifestEntry {
            created: meta.timestamp.clone(),
            for_tool: meta.tool_name.clone(),
            keywords,
            tool_name: meta.tool_name.clone(),
            tool_description: meta.tool_description.clone(),
            args,
            args_hash: meta.args_hash.clone(),
            task_id: meta.task_id.clone(),
            query_id: meta.query_id.clone(),
            tool_call_id: meta.tool_call_id.clone(),
            size,
            content_terms: BTreeMap::new(),
            content_length: 0,
        })
    }

    /// The entry with the top content terms of `terms` (a record's indexed terms).
    pub fn with_content(mut self, terms: &crate::select::Terms) -> Self {
        self.content_terms = terms.top_content(MAX_CONTENT_TERMS);
        self.content_length = terms.content_len();
        self
    }

    /// The record's indexed terms as far as the entry knows them: its metadata and its
    /// top content terms.
    pub fn terms(&self) -> crate::select::Terms {
        let args: serde_json::Value = crate::record::from_json(self.args.get()).unwrap_or(serde_json::Value::Null);
        crate::select::Terms::of_record(&self.tool_description, &self.tool_name, &args)
            .with_content(&self.content_terms, self.content_length)
    }

    /// The record metadata the entry stands for.
    pub fn meta(&self) -> RecordMeta {
        RecordMeta {
            tool_name: self.tool_name.clone(),
            tool_description: self.tool_description.clone(),
            args_json: self.args.get().to_owned(),
            args_hash: self.args_hash.clone(),
            timestamp: self.created.clone(),
            task_id: self.task_id.clone(),
            query_id: self.query_id.clone(),
            tool_call_id: self.tool_call_id.clone(),
        }
    }
}

/// `.manifest.json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Manifest {
    /// The session's id.
    pub session_id: String,
    /// When the session began (ISO 8601).
    pub created_at: String,
    /// The last write in the session (ISO 8601).
    pub last_activity: String,
    /// Relative path (from the session folder) → entry.
    #[serde(default)]
    pub context_files: BTreeMap<String, ManifestEntry>,
    /// Keyword → relative paths.
    #[serde(default)]
    pub context_index: BTreeMap<String, Vec<String>>,
}

impl Manifest {
    /// An empty manifest for session `id` begun at `now`.
    pub fn new(id: &str, now_iso: &str) -> Self {
        Manifest {
            session_id: id.to_owned(),
            created_at: now_iso.to_owned(),
            last_activity: now_iso.to_owned(),
            context_files: BTreeMap::new(),
            context_index: BTreeMap::new(),
        }
    }

    /// Parses a manifest; a file that does not parse, or names another session, is corrupt.
    pub fn parse(bytes: &[u8], id: &str) -> Result<Self> {
        let manifest: Manifest = serde_json::from_slice(bytes)
            .map_err(|e| Error::new(ErrorKind::CorruptRecord, format!("manifest does not parse: {e}")))?;
        if manifest.session_id != id {
            return Err(Error::new(
                ErrorKind::CorruptRecord,
                format!("manifest names session {:?}", manifest.session_id),
            ));
        }
        let escapes = manifest.context_files.keys().any(|rel| !is_relative_record_path(rel));
        if escapes {
            return Err(Error::new(ErrorKind::CorruptRecord, "manifest lists a path outside its session"));
        }
        Ok(manifest)
    }

    /// Extends `created_at` and `last_activity` to the oldest and newest entry's
    /// `created`: records written since the manifest was (found by resume or rebuild)
    /// are the session's latest activity. `rebuilt`: the dates held are not the
    /// session's (a manifest made afresh), so the entries' replace them.
    pub fn date_from_entries(&mut self, rebuilt: bool) {
        let created = self.context_files.values().filter_map(|e| parse_iso_ms(&e.created));
        let Some((oldest, newest)) = created
            .fold(None, |acc: Option<(i64, i64)>, ms| Some(acc.map_or((ms, ms), |(lo, hi)| (lo.min(ms), hi.max(ms)))))
        else {
            return;
        };
        let held = |date: &str| if rebuilt { None } else { parse_iso_ms(date) };
        if held(&self.created_at).map_or(true, |c| oldest < c) {
            self.created_at = iso_timestamp(oldest);
        }
        if held(&self.last_activity).map_or(true, |l| newest > l) {
            self.last_activity = iso_timestamp(newest);
        }
    }

    /// Rebuilds `context_index` from the entries' keywords.
    pub fn reindex(&mut self) {
        let mut index: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for (rel, entry) in &self.context_files {
            for keyword in &entry.keywords {
                index.entry(keyword.clone()).or_default().push(rel.clone());
            }
        }
        self.context_index = index;
    }

    /// The manifest's bytes (compact JSON), index rebuilt. A manifest that its reader
    /// would refuse (a session id that is none, a path that leaves the session) or that
    /// does not serialise is an `INTERNAL` error: no bytes, so nothing is written.
    pub fn encode(&mut self) -> Result<Vec<u8>> {
        if !is_session_id(&self.session_id) {
            return Err(Error::new(
                ErrorKind::Internal,
                format!("refusing to encode a manifest for {:?}, which is not a session id", self.session_id),
            ));
        }
        if let Some(rel) = self.context_files.keys().find(|rel| !is_relative_record_path(rel)) {
            return Err(Error::new(
                ErrorKind::Internal,
                "refusing to encode a manifest that lists a path outside its session",
            )
            .with_path(rel.clone()));
        }
        self.reindex();
        serde_json::to_vec(self)
            .map_err(|e| Error::new(ErrorKind::Internal, format!("the manifest cannot be encoded: {e}")))
    }
}

/// Whether `rel` is `record.json` or `category/record.json` (nothing that could escape).
pub fn is_relative_record_path(rel: &str) -> bool {
    match rel.split_once('/') {
        None => is_record_filename(rel),
        Some((category, name)) => check_category(category).is_ok() && is_record_filename(name),
    }
}

/// Parses an ISO 8601 date-time (`2025-01-18T14:30:22Z`, with optional fraction and
/// `Z` or `±HH:MM` offset; a space may stand for `T`) into epoch milliseconds.
pub fn parse_iso_ms(s: &str) -> Option<i64> {
    let s = s.trim();
    let b = s.as_bytes();
    if b.len() < 19 || b[4] != b'-' || b[7] != b'-' || !(b[10] == b'T' || b[10] == b't' || b[10] == b' ') {
        return None;
    }
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let part = s.get(r)?;
        part.bytes().all(|c| c.is_ascii_digit()).then(|| part.parse().ok())?
    };
    let (y, mo, d, h, mi, sec) = (num(0..4)?, num(5..7)?, num(8..10)?, num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || sec > 60 {
        return None;
    }
    let mut rest = &s[19..];
    let mut millis = 0;
    if let Some(frac) = rest.strip_prefix('.') {
        let digits = frac.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return None;
        }
        let padded = format!("{:0<3}", &frac[..digits.min(3)]);
        millis = padded.parse().ok()?;
        rest = &frac[digits..];
    }
    let offset_min = match rest {
        "" | "Z" | "z" => 0,
        _ => {
            let sign = match rest.as_bytes()[0] {
                b'+' => 1,
                b'-' => -1,
                _ => return None,
            };
            let hm = rest[1..].replace(':', "");
            if hm.len() != 4 || !hm.bytes().all(|c| c.is_ascii_digit()) {
                return None;
            }
            sign * (hm[..2].parse::<i64>().ok()? * 60 + hm[2..].parse::<i64>().ok()?)
        }
    };
    let days = days_from_civil(y, mo as u32, d as u32);
    if civil_from_days(days) != (y, mo as u32, d as u32) {
        return None; // 2025-02-30 and the like
    }
    Some(((days * 24 + h) * 60 + mi - offset_min) * 60_000 + sec * 1000 + millis)
}

/// (year, month, day) to days since 1970-01-01 (Howard Hinnant's `days_from_civil`).
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = (m as i64 + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// One session, as `listSessions` reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionInfo {
    /// Its id.
    pub id: String,
    /// When it began.
    pub created_at: String,
    /// Its last write.
    pub last_activity: String,
    /// Records its manifest lists.
    pub records: usize,
    /// Bytes of those records.
    pub bytes: usize,
}

/// The sessions of a context dir whose manifest parses, by id.
pub async fn list_sessions<S: Storage>(storage: &S, context_dir: &str) -> Result<Vec<SessionInfo>> {
    plan::run(storage, ListSessions::new(context_dir)).await
}

/// [`list_sessions`] as a plan.
pub struct ListSessions;

impl ListSessions {
    /// The plan that lists the sessions of `context_dir`.
    #[allow(clippy::new_ret_no_self)]
    pub fn new(context_dir: &str) -> impl Plan<Output = Vec<SessionInfo>> {
        Manifests::new(context_dir).map(|manifests| {
            Ok(manifests
                .into_iter()
                .map(|(id, manifest)| SessionInfo {
                    records: manifest.context_files.len(),
                    bytes: manifest.context_files.values().map(|e| e.size).sum(),
                    id,
                    created_at: manifest.created_at,
                    last_activity: manifest.last_activity,
                })
                .collect())
        })
    }
}

/// A plan: the sessions of a context dir whose manifest parses, by id, with it.
pub enum Manifests {
    /// Nothing asked yet.
    Start(String),
    /// The sessions folder is being listed.
    Listing(String),
    /// The manifests of these sessions are being read.
    Reading(Vec<String>),
    /// Finished.
    Done,
}

impl Manifests {
    /// The manifests of the sessions of `context_dir`.
    pub fn new(context_dir: &str) -> Self {
        Manifests::Start(context_dir.to_owned())
    }
}

impl Plan for Manifests {
    type Output = Vec<(String, Manifest)>;

    fn step(&mut self, outcomes: Outcomes) -> Step<Self::Output> {
        match std::mem::replace(self, Manifests::Done) {
            Manifests::Start(context_dir) => {
                let root = paths::join(&context_dir, SESSIONS_DIR);
                *self = Manifests::Listing(context_dir);
                Step::Run(vec![Op::List(root)])
            }
            Manifests::Listing(context_dir) => {
                let names = match plan::names(plan::only(outcomes)) {
                    Ok(names) => names,
                    Err(e) => return Step::Done(Err(e)),
                };
                let ids: Vec<String> = names
                    .iter()
                    .filter_map(|n| n.strip_suffix('/').filter(|id| is_session_id(id)).map(str::to_owned))
                    .collect();
                let reads =
                    ids.iter().map(|id| Op::Read(paths::join(&session_dir(&context_dir, id), MANIFEST))).collect();
                *self = Manifests::Reading(ids);
                Step::Run(reads)
            }
            Manifests::Reading(ids) => {
                let mut out = Vec::new();
                for (id, read) in ids.into_iter().zip(outcomes) {
                    match plan::bytes(read) {
                        Ok(Some(bytes)) => {
                            if let Ok(manifest) = Manifest::parse(&bytes, &id) {
                                out.push((id, manifest));
                            }
                        }
                        Ok(None) => {}
                        Err(e) => return Step::Done(Err(e)),
                    }
                }
                Step::Done(Ok(out))
            }
            Manifests::Done => Step::Done(Err(plan::stepped_after_done())),
        }
    }
}

/// Removes the sessions idle for longer than `older_than_ms` at `now_ms`: the files their
/// manifests track and the record files of their own folders that the manifests do not
/// list yet (a crash left them out; one saved within `older_than_ms` keeps the session),
/// the manifest, then the folders if empty. Other files stay. A session whose
/// manifest is missing, does not parse, or has a `last_activity` that is not a date or
/// lies in the future is never touched. Returns the ids removed.
pub async fn cleanup_stale_sessions<S: Storage>(
    storage: &S,
    context_dir: &str,
    now_ms: i64,
    older_than_ms: i64,
) -> Result<Vec<String>> {
    plan::run(storage, CleanupStale::new(context_dir, now_ms, older_than_ms)).await
}

/// [`cleanup_stale_sessions`] as a plan.
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
                Step::Lock(lock)
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

/// The record files of a session folder (one level of category folders), as paths
/// relative to it: names in the record grammar only.
pub async fn record_files<S: Storage>(storage: &S, dir: &str) -> Result<Vec<String>> {
    plan::run(storage, RecordFiles::new(dir)).await
}

/// [`record_files`] as a plan.
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

/// The save time in a record file name (its 13-digit timestamp part), in epoch ms.
pub fn record_time_ms(rel: &str) -> Option<i64> {
    let name = rel.rsplit('/').next()?;
    name.strip_suffix(".json")?.rsplit('_').nth(2)?.parse().ok()
}

/// Removes the files a manifest tracks (and `also`, paths inside the session), the
/// manifest, and then the category folders and the session folder if they are empty.
pub async fn remove_session<S: Storage>(storage: &S, dir: &str, manifest: &Manifest, also: &[String]) -> Result<()> {
    plan::run(storage, RemoveSession::new(dir, manifest, also)).await
}

/// [`remove_session`] as a plan: one removal at a time, in order, stopping at the first
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
        todo.push_back(Removal::Segments(crate::store::segments_dir(dir)));
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_have_the_documented_shape() {
        let id = session_id(1_737_210_622_000, "a4f2");
        assert_eq!(id, "20250118-143022-a4f2");
        assert!(is_session_id(&id));
        for bad in ["20250118-143022-A4F2", "2025011-143022-a4f2", "../../etc", "20250118_143022-a4f2"] {
            assert!(!is_session_id(bad), "{bad}");
        }
    }

    #[test]
    fn dates_parse_in_every_iso_form_and_nothing_else() {
        let base = parse_iso_ms("2025-01-18T14:30:22Z").unwrap();
        assert_eq!(base, 1_737_210_622_000);
        assert_eq!(parse_iso_ms("2025-01-18T14:30:22.5Z"), Some(base + 500));
        assert_eq!(parse_iso_ms("2025-01-18T14:30:22.123456Z"), Some(base + 123));
        assert_eq!(parse_iso_ms("2025-01-18T16:30:22+02:00"), Some(base));
        assert_eq!(parse_iso_ms("2025-01-18 14:30:22"), Some(base));
        for bad in
            ["", "yesterday", "2025-02-30T00:00:00Z", "2025-01-18T25:00:00Z", "1737210622000", "2025-01-18T14:30:22+2"]
        {
            assert_eq!(parse_iso_ms(bad), None, "{bad}");
        }
        for ms in [0, 951_782_400_123, 4_102_444_800_000] {
            assert_eq!(parse_iso_ms(&iso_timestamp(ms)), Some(ms));
        }
    }

    #[test]
    fn manifests_refuse_paths_that_leave_the_session() {
        let ok = br#"{"session_id":"20250118-143022-a4f2","created_at":"x","last_activity":"x","context_files":{},"context_index":{}}"#;
        assert!(Manifest::parse(ok, "20250118-143022-a4f2").is_ok());
        assert!(Manifest::parse(ok, "20250118-143022-zzzz").is_err());
        for rel in
            ["../t_000000000000_1700000000000_0_aaaa.json", "a/b/t_000000000000_1700000000000_0_aaaa.json", "notes.txt"]
        {
            assert!(!is_relative_record_path(rel), "{rel}");
        }
        assert!(is_relative_record_path("code/t_000000000000_1700000000000_0_aaaa.json"));
    }

    #[test]
    fn a_manifest_its_reader_would_refuse_is_a_typed_error_not_bytes() {
        let id = "20250118-143022-a4f2";
        let meta = RecordMeta {
            tool_name: "t".into(),
            tool_description: "t".into(),
            args_json: "{}".into(),
            args_hash: "0".repeat(64),
            timestamp: "2025-01-18T14:30:22.000Z".into(),
            task_id: None,
            query_id: None,
            tool_call_id: None,
        };
        let entry = ManifestEntry::new(&meta, 2, &[]).unwrap();
        let mut good = Manifest::new(id, "2025-01-18T14:30:22.000Z");
        good.context_files.insert("code/t_000000000000_1700000000000_0_aaaa.json".into(), entry.clone());
        let bytes = good.encode().expect("a sound manifest encodes");
        assert_eq!(Manifest::parse(&bytes, id).unwrap().context_files.len(), 1);
        let mut escaping = good.clone();
        escaping.context_files.insert("../t_000000000000_1700000000000_1_aaaa.json".into(), entry.clone());
        let mut misnamed = good.clone();
        misnamed.session_id = "../../etc".into();
        for mut bad in [escaping, misnamed] {
            let err = bad.encode().expect_err("never bytes a reader refuses, never an empty manifest");
            assert_eq!(err.kind(), ErrorKind::Internal, "{err}");
        }
    }
}

/// One record found by [`search_sessions`].
#[derive(Debug, Clone)]
pub struct SessionHit {
    /// The session the record belongs to.
    pub session_id: String,
    /// The record's path.
    pub filepath: String,
    /// BM25 score (higher is better).
    pub score: f64,
    /// The query's keywords the record matched, as written.
    pub matched: Vec<String>,
    /// The record's manifest entry (what a pointer needs).
    pub entry: ManifestEntry,
}

/// Ranks the records of every session of `context_dir` for `query`, from the sessions'
/// manifests alone (no record is read): BM25F over each entry's description, tool name
/// and argument values, and its top content terms, with statistics over all of them. The best `limit`, best first;
/// nothing when nothing matches.
pub async fn search_sessions<S: Storage>(
    storage: &S,
    context_dir: &str,
    query: &str,
    limit: usize,
) -> Result<Vec<SessionHit>> {
    plan::run(storage, SearchSessions::new(context_dir, query, limit)).await
}

/// [`search_sessions`] as a plan.
pub struct SearchSessions;

impl SearchSessions {
    /// The plan that ranks the records of every session of `context_dir` for `query`.
    #[allow(clippy::new_ret_no_self)]
    pub fn new(context_dir: &str, query: &str, limit: usize) -> impl Plan<Output = Vec<SessionHit>> {
        let (context_dir, query) = (context_dir.to_owned(), query.to_owned());
        Manifests::new(&context_dir).map(move |manifests| Ok(ranked(&context_dir, manifests, &query, limit)))
    }
}

/// The best `limit` records of `manifests` for `query` ([`search_sessions`]).
fn ranked(context_dir: &str, manifests: Vec<(String, Manifest)>, query: &str, limit: usize) -> Vec<SessionHit> {
    use crate::select::{rank, Fallback, Strategy, Terms};
    let mut entries: Vec<(String, String, ManifestEntry)> = Vec::new();
    for (id, manifest) in manifests {
        let dir = session_dir(context_dir, &id);
        for (rel, entry) in manifest.context_files {
            entries.push((id.clone(), paths::join(&dir, &rel), entry));
        }
    }
    let terms: Vec<Terms> = entries.iter().map(|(_, _, e)| e.terms()).collect();
    let refs: Vec<&Terms> = terms.iter().collect();
    let ranking = rank(query, &refs, Fallback::None, Strategy::Bm25);
    ranking
        .hits
        .iter()
        .take(limit)
        .map(|hit| {
            let (id, filepath, entry) = &entries[hit.index];
            SessionHit {
                session_id: id.clone(),
                filepath: filepath.clone(),
                score: hit.score,
                matched: ranking.matched(hit).map(str::to_owned).collect(),
                entry: entry.clone(),
            }
        })
        .collect()
}
