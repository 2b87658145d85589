//! Export to JSON, JSON Lines and Markdown; import of JSON and JSON Lines.
//!
//! Export and import are lossless: importing an export into a store and exporting
//! again gives the same bytes. Markdown is for people and is not imported.

use serde::{Deserialize, Serialize};

use super::artifacts::ArtifactMeta;
use super::messages::Message;
use super::replica::{to_json, ConversationMetadata};
use crate::error::{Error, ErrorKind, Result};

/// Export formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// One JSON document (pretty-printed).
    Json,
    /// One JSON object a line: the conversation, then each artifact, then each message.
    Jsonl,
    /// A readable transcript (not importable).
    Markdown,
}

impl Format {
    /// `"json"`, `"jsonl"` or `"markdown"` (also `"md"`).
    pub fn parse(name: &str) -> Result<Format> {
        match name {
            "json" => Ok(Format::Json),
            "jsonl" => Ok(Format::Jsonl),
            "markdown" | "md" => Ok(Format::Markdown),
            other => Err(Error::invalid(format!("format must be json, jsonl or markdown, got {other:?}"))),
        }
    }
}

/// The value of `format` in a JSON export.
pub const FORMAT_TAG: &str = "toolctx.conversation";

/// An artifact with its content, as exported.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ExportedArtifact {
    /// Id.
    pub id: String,
    /// Type.
    #[serde(rename = "type")]
    pub kind: String,
    /// Name.
    pub name: String,
    /// Media type.
    pub mime_type: String,
    /// Bytes.
    pub size: u64,
    /// Created.
    pub created_at: String,
    /// The content (UTF-8).
    pub content: String,
}

impl ExportedArtifact {
    /// The meta and content of an artifact; the content must be UTF-8.
    pub fn new(meta: &ArtifactMeta, content: Vec<u8>) -> Result<Self> {
        let content = String::from_utf8(content)
            .map_err(|_| Error::new(ErrorKind::CorruptRecord, format!("artifact {} is not UTF-8 text", meta.id)))?;
        Ok(ExportedArtifact {
            id: meta.id.clone(),
            kind: meta.kind.clone(),
            name: meta.name.clone(),
            mime_type: meta.mime_type.clone(),
            size: meta.size,
            created_at: meta.created_at.clone(),
            content,
        })
    }

    /// Its meta (the size is the content's).
    pub fn meta(&self) -> ArtifactMeta {
        ArtifactMeta {
            id: self.id.clone(),
            kind: self.kind.clone(),
            name: self.name.clone(),
            mime_type: self.mime_type.clone(),
            size: self.content.len() as u64,
            created_at: self.created_at.clone(),
        }
    }
}

/// A whole conversation.
#[derive(Debug, Clone, PartialEq)]
pub struct Snapshot {
    /// Metadata.
    pub conversation: ConversationMetadata,
    /// Messages in order.
    pub messages: Vec<Message>,
    /// Artifacts by creation.
    pub artifacts: Vec<ExportedArtifact>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct JsonExport {
    format: String,
    v: u32,
    conversation: ConversationMetadata,
    messages: Vec<Message>,
    artifacts: Vec<ExportedArtifact>,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "lowercase", deny_unknown_fields)]
enum Line {
    Conversation(ConversationMetadata),
    Artifact(ExportedArtifact),
    Message(Message),
}

fn internal(e: serde_json::Error) -> Error {
    Error::new(ErrorKind::Internal, e.to_string())
}

/// The text of `snapshot` in `format`.
pub fn export(snapshot: &Snapshot, format: Format) -> Result<String> {
    match format {
        Format::Json => {
            let doc = JsonExport {
                format: FORMAT_TAG.to_owned(),
                v: 1,
                conversation: snapshot.conversation.clone(),
                messages: snapshot.messages.clone(),
                artifacts: snapshot.artifacts.clone(),
            };
            // Pretty-printed through a Value: one pretty serializer (Value's) in the wasm
            // binary instead of one per type; key order and numbers are kept. (`from_str`,
            // the parser the module has anyway: see [`super::from_json`].)
            let value: serde_json::Value = serde_json::from_str(&to_json(&doc)?).map_err(internal)?;
            let mut out = serde_json::to_string_pretty(&value).map_err(internal)?;
            out.push('\n');
            Ok(out)
        }
        Format::Jsonl => {
            let mut out = to_json(&Line::Conversation(snapshot.conversation.clone()))?;
            out.push('\n');
            for a in &snapshot.artifacts {
                out.push_str(&to_json(&Line::Artifact(a.clone()))?);
                out.push('\n');
            }
            for m in &snapshot.messages {
                out.push_str(&to_json(&Line::Message(m.clone()))?);
                out.push('\n');
            }
            Ok(out)
        }
        Format::Markdown => Ok(markdown(snapshot)),
    }
}

/// Parses an export (JSON or JSON Lines; `None` guesses from the text) and validates
/// every id and timestamp in it.
pub fn parse(text: &str, format: Option<Format>) -> Result<Snapshot> {
    let format =
        format.unwrap_or(if text.trim_start().starts_with("{\"conversation\"") { Format::Jsonl } else { Format::Json });
    let bad = |what: String| Error::invalid(format!("not a conversation export: {what}"));
    let snapshot = match format {
        Format::Json => {
            let doc: JsonExport = super::from_json(text.as_bytes()).map_err(|e| bad(e.to_string()))?;
            if doc.format != FORMAT_TAG || doc.v != 1 {
                return Err(bad(format!("format {:?} version {}", doc.format, doc.v)));
            }
            Snapshot { conversation: doc.conversation, messages: doc.messages, artifacts: doc.artifacts }
        }
        Format::Jsonl => {
            let mut lines = text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty());
            let conversation = match lines.next().map(|(i, l)| (i, super::from_json::<Line>(l.as_bytes()))) {
                Some((_, Ok(Line::Conversation(c)))) => c,
                Some((i, Err(e))) => return Err(bad(format!("line {}: {e}", i + 1))),
                _ => return Err(bad("the first line must be the conversation".into())),
            };
            let (mut messages, mut artifacts) = (Vec::new(), Vec::new());
            for (i, line) in lines {
                match super::from_json::<Line>(line.as_bytes()).map_err(|e| bad(format!("line {}: {e}", i + 1)))? {
                    Line::Message(m) => messages.push(m),
                    Line::Artifact(a) => artifacts.push(a),
                    Line::Conversation(_) => return Err(bad(format!("line {}: a second conversation", i + 1))),
                }
            }
            Snapshot { conversation, messages, artifacts }
        }
        Format::Markdown => return Err(Error::invalid("Markdown exports cannot be imported; use json or jsonl")),
    };
    super::ids::validate_id(&snapshot.conversation.id, "conversation id")?;
    super::messages::parse_timestamp(&snapshot.conversation.created_at)?;
    super::messages::parse_timestamp(&snapshot.conversation.updated_at)?;
    for m in &snapshot.messages {
        m.validate()?;
    }
    for a in &snapshot.artifacts {
        a.meta().validate()?;
    }
    Ok(snapshot)
}

fn fence(content: &str) -> String {
    let (mut longest, mut run) = (0, 0);
    for c in content.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    "`".repeat((longest + 1).max(3))
}

fn markdown(s: &Snapshot) -> String {
    use std::fmt::Write;
    let c = &s.conversation;
    let mut out = String::new();
    let _ = writeln!(out, "# {}\n", c.title.as_deref().unwrap_or(&c.id));
    let _ = writeln!(out, "- Conversation: `{}`", c.id);
    let _ = writeln!(out, "- Created: {}", c.created_at);
    let _ = writeln!(out, "- Updated: {}", c.updated_at);
    let _ = writeln!(out, "- Messages: {}, artifacts: {}\n", s.messages.len(), s.artifacts.len());
    for (i, m) in s.messages.iter().enumerate() {
        let _ = writeln!(out, "## {}. {} · {} · `{}`\n", i + 1, m.role.as_str(), m.timestamp, m.id);
        let _ = writeln!(out, "{}\n", m.content);
        for call in m.tool_calls.iter().flatten() {
            // `to_string`, the compact writer the module has anyway (`Value`'s `Display`
            // would be a second one); it cannot fail on a `Value`.
            let args = call.args.as_ref().and_then(|a| serde_json::to_string(a).ok()).unwrap_or_default();
            let _ = writeln!(out, "- Tool call: `{}` {}", call.name, args);
        }
        if let Some(ok) = m.success {
            let _ = writeln!(out, "- Success: {}", if ok { "yes" } else { "no" });
        }
        if m.tool_calls.is_some() || m.success.is_some() {
            out.push('\n');
        }
    }
    if !s.artifacts.is_empty() {
        out.push_str("## Artifacts\n\n");
        for a in &s.artifacts {
            let f = fence(&a.content);
            let _ = writeln!(out, "### `{}` · {} · {}\n", a.id, a.kind, a.name);
            let _ = writeln!(out, "{}, {} bytes, {}\n", a.mime_type, a.size, a.created_at);
            let _ = writeln!(out, "{f}\n{}\n{f}\n", a.content);
        }
    }
    out
}
