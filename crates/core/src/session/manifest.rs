//! A session's manifest (`.manifest.json`): its entries (a record's metadata, words and
//! content terms), the format, and the merge of two manifests.

use super::{is_relative_record_path, is_session_id, parse_iso_ms, MAX_CONTENT_TERMS, MAX_KEYWORDS};
use crate::error::{Error, ErrorKind, Result};
use crate::record::{iso_timestamp, RecordMeta};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::Number;
use std::collections::BTreeMap;

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
    /// and `toolctx::search_sessions` rank on content from them without reading the record.
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
