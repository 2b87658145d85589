//! Pruning by relevance (the seed's scoring): recency, role, tool calls, success and
//! keyword match to the current task. The last `keep_recent` messages always stay;
//! older ones are kept best first while they fit the token budget.

use super::messages::{parse_timestamp, Message, Role};
use super::stats::message_tokens;
use crate::select::{index_tokens, keywords};

/// Messages always kept by default.
pub const DEFAULT_KEEP_RECENT: usize = 10;

/// What to prune for.
#[derive(Debug, Clone)]
pub struct PruneOptions {
    /// The current task: messages sharing its keywords score higher.
    pub task: String,
    /// The token budget (estimated as in stats).
    pub max_tokens: usize,
    /// The most recent messages always kept.
    pub keep_recent: usize,
    /// "Now", in milliseconds since the epoch, for recency.
    pub now_ms: i64,
}

/// What pruning keeps and drops, both in conversation order.
#[derive(Debug, Clone, PartialEq)]
pub struct Pruned {
    /// The messages kept.
    pub kept: Vec<Message>,
    /// The messages dropped.
    pub dropped: Vec<Message>,
    /// Tokens of all messages.
    pub tokens_before: usize,
    /// Tokens of the kept ones.
    pub tokens_after: usize,
}

/// A message's relevance: recency 0-100 (100 minus its age in hours), role (user and
/// system 100, assistant 50, tool 25), tool calls 50, success 25 (a failure 0, unknown
/// 25), keywords 0-50 (the share of the task's keywords among the message's words).
pub fn score(message: &Message, task_keywords: &[String], now_ms: i64) -> f64 {
    let age_hours = parse_timestamp(&message.timestamp).map_or(f64::INFINITY, |t| (now_ms - t) as f64 / 3_600_000.0);
    let mut score = (100.0 - age_hours.max(0.0)).max(0.0);
    score += match message.role {
        Role::User | Role::System => 100.0,
        Role::Assistant => 50.0,
        Role::Tool => 25.0,
    };
    if message.tool_calls.as_ref().is_some_and(|c| !c.is_empty()) {
        score += 50.0;
    }
    if message.success != Some(false) {
        score += 25.0;
    }
    if !task_keywords.is_empty() {
        // Indexed as a record's text is, so a task's words match in any case.
        let mut words = Vec::new();
        index_tokens(&message.content, &mut words);
        let hits = task_keywords.iter().filter(|k| words.contains(k)).count();
        score += 50.0 * hits as f64 / task_keywords.len() as f64;
    }
    score
}

/// Prunes `messages` (in conversation order).
pub fn prune(messages: &[Message], options: &PruneOptions) -> Pruned {
    let tokens: Vec<usize> = messages.iter().map(message_tokens).collect();
    let tokens_before = tokens.iter().sum();
    let split = messages.len().saturating_sub(options.keep_recent);
    let mut keep = vec![false; messages.len()];
    let mut used = 0usize;
    for i in split..messages.len() {
        keep[i] = true;
        used += tokens[i];
    }
    let task = keywords(&options.task);
    let mut older: Vec<(f64, usize)> = (0..split).map(|i| (score(&messages[i], &task, options.now_ms), i)).collect();
    // Best first; on a tie the newer message.
    crate::sort::sort_by(&mut older, |a, b| b.0.total_cmp(&a.0).then(b.1.cmp(&a.1)));
    for (_, i) in older {
        if used + tokens[i] <= options.max_tokens {
            keep[i] = true;
            used += tokens[i];
        }
    }
    let (mut kept, mut dropped) = (Vec::new(), Vec::new());
    for (m, k) in messages.iter().zip(keep) {
        if k {
            kept.push(m.clone())
        } else {
            dropped.push(m.clone())
        }
    }
    Pruned { kept, dropped, tokens_before, tokens_after: used }
}
