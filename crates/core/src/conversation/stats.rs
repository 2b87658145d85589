//! Conversation stats: messages by role, artifacts by type, bytes, estimated tokens and
//! an optional cost.

use std::collections::BTreeMap;

use serde::Serialize;

use super::artifacts::ArtifactMeta;
use super::messages::{Message, Role};
use crate::select::estimated_tokens;

/// Tokens of a message for budgets and stats: its content at 4 bytes a token
/// ([`estimated_tokens`]), the estimate the selection budgets use.
pub fn message_tokens(message: &Message) -> usize {
    estimated_tokens(message.content.len())
}

/// What `stats` reports.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Stats {
    /// The conversation.
    pub conversation_id: String,
    /// Messages in all.
    pub messages: u64,
    /// Messages per role (every role present, zero when absent).
    pub messages_by_role: BTreeMap<String, u64>,
    /// Artifacts in all.
    pub artifacts: u64,
    /// Artifacts per type.
    pub artifacts_by_type: BTreeMap<String, u64>,
    /// UTF-8 bytes of the messages' content.
    pub message_bytes: u64,
    /// Bytes of the artifacts' content.
    pub artifact_bytes: u64,
    /// `messageBytes + artifactBytes`.
    pub bytes: u64,
    /// Estimated tokens of the messages (what a model call with them costs; artifacts
    /// are referenced, not sent).
    pub estimated_tokens: u64,
    /// `estimatedTokens × costPerToken`, when a cost per token was given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub estimated_cost: Option<f64>,
}

/// The stats of a conversation's messages and artifacts.
pub fn stats(
    conversation_id: &str,
    messages: &[Message],
    artifacts: &[ArtifactMeta],
    cost_per_token: Option<f64>,
) -> Stats {
    // Built by insertion: a `collect` would sort (see `order`).
    // Keyed by `String` as `by_type` is: one map type in the wasm module, not two.
    let mut by_role: BTreeMap<String, u64> = BTreeMap::new();
    by_role.extend(Role::ALL.iter().map(|r| (r.as_str().to_owned(), 0)));
    let (mut bytes, mut tokens) = (0u64, 0u64);
    for m in messages {
        if let Some(n) = by_role.get_mut(m.role.as_str()) {
            *n += 1; // every role is there
        }
        bytes += m.content.len() as u64;
        tokens += message_tokens(m) as u64;
    }
    let mut by_type: BTreeMap<String, u64> = BTreeMap::new();
    let mut artifact_bytes = 0u64;
    for a in artifacts {
        *by_type.entry(a.kind.clone()).or_default() += 1;
        artifact_bytes += a.size;
    }
    Stats {
        conversation_id: conversation_id.to_owned(),
        messages: messages.len() as u64,
        messages_by_role: by_role,
        artifacts: artifacts.len() as u64,
        artifacts_by_type: by_type,
        message_bytes: bytes,
        artifact_bytes,
        bytes: bytes + artifact_bytes,
        estimated_tokens: tokens,
        estimated_cost: cost_per_token.map(|c| c * tokens as f64),
    }
}
