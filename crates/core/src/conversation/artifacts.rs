//! Artifacts: large data stored once in `artifacts/{id}` beside a meta file
//! `artifacts/{id}.meta.json`, referenced from messages as `artifact://{id}`.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// The scheme of an artifact reference.
pub const SCHEME: &str = "artifact://";
/// Suffix of an artifact's meta file.
pub const META_SUFFIX: &str = ".meta.json";

/// What is known about an artifact (its meta file).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ArtifactMeta {
    /// `art-…`.
    pub id: String,
    /// `file`, `search_result`, `command_output`, …: 1-64 of `[A-Za-z0-9_-]`.
    #[serde(rename = "type")]
    pub kind: String,
    /// A human-readable name (a path, a query…).
    pub name: String,
    /// The content's media type (default `text/plain`).
    pub mime_type: String,
    /// Bytes of the content (UTF-8).
    pub size: u64,
    /// ISO 8601 UTC with milliseconds.
    pub created_at: String,
}

impl ArtifactMeta {
    /// Checks the id, the type and the timestamp.
    pub fn validate(&self) -> Result<()> {
        super::ids::validate_id(&self.id, "artifact id")?;
        validate_type(&self.kind)?;
        super::messages::parse_timestamp(&self.created_at)?;
        Ok(())
    }
}

/// An artifact type: 1-64 characters of `[A-Za-z0-9_-]`.
pub fn validate_type(kind: &str) -> Result<()> {
    let ok = !kind.is_empty()
        && kind.len() <= 64
        && kind.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if ok {
        Ok(())
    } else {
        Err(Error::invalid(format!("artifact type must be 1-64 characters of [A-Za-z0-9_-], got {kind:?}")))
    }
}

/// `{summary} (artifact://{id})`: the compact text of a message whose data is an artifact.
pub fn reference_text(summary: &str, id: &str) -> String {
    if summary.is_empty() {
        format!("{SCHEME}{id}")
    } else {
        format!("{summary} ({SCHEME}{id})")
    }
}

/// The artifact ids referenced in `text` (`artifact://{id}`), first occurrence first.
///
/// ```
/// let ids = toolctx_core::conversation::artifact_refs("see artifact://art-1, artifact://art-2 and artifact://art-1.");
/// assert_eq!(ids, ["art-1", "art-2"]);
/// ```
pub fn artifact_refs(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for (at, _) in text.match_indices(SCHEME) {
        let rest = &text[at + SCHEME.len()..];
        let end = rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-')).unwrap_or(rest.len());
        // An id does not end in '-' or '_' in practice; trailing punctuation is not part of it.
        let id = &rest[..end];
        if !id.is_empty() && !out.iter().any(|x| x == id) {
            out.push(id.to_owned());
        }
    }
    out
}
