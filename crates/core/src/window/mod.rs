//! The context-window optimiser (SPEC §7): pure functions over Anthropic-style message
//! lists, after the seed's context manager (Cline's).
//!
//! [`optimize`] first replaces every duplicate file read but the latest with a short
//! notice ([`duplicates`]); if that saved at least `min_savings` of the characters it
//! stops, otherwise it removes messages from the middle ([`truncate`]) and leaves a
//! notice after the first pair. Every edit is timestamped and recorded in a [`History`],
//! which can be persisted ([`history`]) and rolled back to a checkpoint.
//!
//! ```
//! use serde_json::json;
//! use toolctx_core::window::{optimize, History, OptimizeOptions, DUPLICATE_NOTICE};
//!
//! let read = |id: &str| json!({"role": "assistant", "content": [
//!     {"type": "tool_use", "id": id, "name": "read_file", "input": {"path": "src/app.ts"}}]});
//! let result = |id: &str| json!({"role": "user", "content": [
//!     {"type": "tool_result", "tool_use_id": id, "content": "export const app = 1;\n".repeat(50)}]});
//! let messages = vec![
//!     json!({"role": "user", "content": "Fix the app"}), read("a"), result("a"),
//!     read("b"), result("b"),
//! ];
//! let mut history = History::default();
//! let out = optimize(&messages, &OptimizeOptions::default(), &mut history)?;
//! assert_eq!(out.messages[2]["content"][0]["content"], DUPLICATE_NOTICE);
//! assert_eq!(out.truncated, None); // the duplicate saved enough
//! assert!(out.metrics.chars_after < out.metrics.chars_before);
//! # Ok::<(), toolctx_core::Error>(())
//! ```

pub mod apply;
pub mod duplicates;
pub mod history;
#[doc(hidden)] // the wasm crate's, not part of the API
pub mod json;
pub mod message;
pub mod truncate;

pub use apply::{apply, apply_edits_in_place};
pub use duplicates::{find_file_reads, FileReads, Occurrence, OccurrenceKind, DUPLICATE_NOTICE};
pub use history::{history_path, History, Truncation};
pub use truncate::truncation_range;

use serde_json::Value;

use crate::error::{Error, Result};
use crate::select::estimated_tokens;

/// What replaces removed messages, appended to the message before the range (the
/// seed's wording).
pub const TRUNCATION_NOTICE: &str = "[NOTE] Some previous conversation history with the user has been removed to \
maintain optimal context window length. The initial user task has been retained for continuity, while intermediate \
conversation history has been removed. Keep this in mind as you continue assisting the user. Pay special attention \
to the user's latest messages.";

/// Default share of characters the duplicate pass must save to avoid truncation.
pub const DEFAULT_MIN_SAVINGS: f64 = 0.3;

/// How much of the middle of the conversation a truncation removes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Strategy {
    /// Everything between the first pair and the last message.
    None,
    /// All but the first and the last user–assistant pairs.
    LastTwo,
    /// Half of the messages after the first pair.
    #[default]
    Half,
    /// Three quarters of the messages after the first pair.
    Quarter,
}

impl Strategy {
    /// `"none"`, `"lastTwo"`, `"half"` or `"quarter"`.
    pub fn parse(name: &str) -> Result<Strategy> {
        match name {
            "none" => Ok(Strategy::None),
            "lastTwo" => Ok(Strategy::LastTwo),
            "half" => Ok(Strategy::Half),
            "quarter" => Ok(Strategy::Quarter),
            other => Err(Error::invalid(format!("unknown strategy {other:?} (none, lastTwo, half, quarter)"))),
        }
    }
}

/// What an edit does (the seed's `EditType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EditKind {
    /// A duplicate read (read tool result, `[read_file for ...]` text).
    ReadFile,
    /// A duplicate write (write tool input, `<final_file_content>`).
    WriteFile,
    /// A duplicate `<file_content>` mention.
    FileMention,
    /// The notice that messages were removed.
    TruncationNotice,
}

impl EditKind {
    /// `"readFile"`, `"writeFile"`, `"fileMention"` or `"truncationNotice"`.
    pub fn name(self) -> &'static str {
        match self {
            EditKind::ReadFile => "readFile",
            EditKind::WriteFile => "writeFile",
            EditKind::FileMention => "fileMention",
            EditKind::TruncationNotice => "truncationNotice",
        }
    }

    /// The kind named `name`.
    pub fn parse(name: &str) -> Option<EditKind> {
        [EditKind::ReadFile, EditKind::WriteFile, EditKind::FileMention, EditKind::TruncationNotice]
            .into_iter()
            .find(|k| k.name() == name)
    }
}

/// One edit: the new content of block `block` of message `message` (indices into the
/// original messages). For a text block or a string content it is the new text; for a
/// `tool_result` its new content; for a write tool's `tool_use` its new `input.content`;
/// a truncation notice at `block == number of blocks` is a text block appended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edit {
    /// Milliseconds since the epoch.
    pub ts: i64,
    /// Index of the message.
    pub message: usize,
    /// Index of the block (0 for a string content).
    pub block: usize,
    /// What it does.
    pub kind: EditKind,
    /// The new content.
    pub content: String,
}

impl Edit {
    /// `{ts, message, block, kind, content}`, as JavaScript and the history file see it.
    pub fn to_value(&self) -> Value {
        json::object(vec![
            ("ts", self.ts.into()),
            ("message", self.message.into()),
            ("block", self.block.into()),
            ("kind", self.kind.name().into()),
            ("content", self.content.as_str().into()),
        ])
    }

    /// The edit `value` describes, if it is one.
    pub fn from_value(value: &Value) -> Option<Edit> {
        let index = |k: &str| value.get(k)?.as_u64().and_then(|n| usize::try_from(n).ok());
        Some(Edit {
            ts: value.get("ts")?.as_i64()?,
            message: index("message")?,
            block: index("block")?,
            kind: EditKind::parse(value.get("kind")?.as_str()?)?,
            content: value.get("content")?.as_str()?.to_owned(),
        })
    }
}

/// Tool names whose calls read or write whole files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tools {
    /// Tools whose `tool_result` is a file's content (`read_file`, `Read`...).
    pub read: Vec<String>,
    /// Tools whose `content` input is a file's new content (`write_to_file`, `Write`...).
    pub write: Vec<String>,
}

/// Default read tools (Cline, Claude Code, common agent names).
pub const DEFAULT_READ_TOOLS: &[&str] = &["read_file", "readFile", "Read", "view_file", "read"];
/// Default write tools.
pub const DEFAULT_WRITE_TOOLS: &[&str] =
    &["write_to_file", "writeFile", "write_file", "Write", "replace_in_file", "Edit", "create_file"];

impl Default for Tools {
    fn default() -> Self {
        let owned = |names: &[&str]| names.iter().map(|s| (*s).to_owned()).collect();
        Tools { read: owned(DEFAULT_READ_TOOLS), write: owned(DEFAULT_WRITE_TOOLS) }
    }
}

/// Settings of [`optimize`].
#[derive(Debug, Clone, PartialEq)]
pub struct OptimizeOptions {
    /// Share of characters the duplicate pass must save to skip truncation (default 0.3;
    /// 0 never truncates, above 1 always does).
    pub min_savings: f64,
    /// How much a truncation removes (default `half`, the seed's usual choice).
    pub strategy: Strategy,
    /// Which tools read and write files.
    pub tools: Tools,
    /// Timestamp of the edits made, in milliseconds since the epoch.
    pub now: i64,
}

impl Default for OptimizeOptions {
    fn default() -> Self {
        OptimizeOptions { min_savings: DEFAULT_MIN_SAVINGS, strategy: Strategy::Half, tools: Tools::default(), now: 0 }
    }
}

/// Size before and after (see [`message::Size`]); tokens are estimated at 4 UTF-8
/// bytes a token, as everywhere in the crate.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Metrics {
    /// UTF-16 code units of the messages given.
    pub chars_before: usize,
    /// UTF-16 code units of the messages returned.
    pub chars_after: usize,
    /// Estimated tokens of the messages given.
    pub tokens_before: usize,
    /// Estimated tokens of the messages returned.
    pub tokens_after: usize,
    /// Characters the duplicate pass saved, as a share of the characters of the messages
    /// it looked at (what is compared with `min_savings`).
    pub duplicate_savings: f64,
    /// Blocks replaced by a duplicate notice in this call.
    pub duplicates_replaced: usize,
    /// Messages missing from the result (this call's and earlier truncations).
    pub messages_removed: usize,
}

/// What [`optimize`] returns.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// The optimised messages.
    pub messages: Vec<Value>,
    /// The edits made by this call (also added to the history).
    pub edits: Vec<Edit>,
    /// The range of the messages given that the result leaves out, if any.
    pub truncated: Option<(usize, usize)>,
    /// Sizes.
    pub metrics: Metrics,
}

/// The range of `history` that applies to `n` messages.
fn clamp_range(range: Option<(usize, usize)>, n: usize) -> Option<(usize, usize)> {
    range.filter(|&(start, end)| start <= end && start < n).map(|(start, end)| (start, end.min(n - 1)))
}

/// What [`plan`] returns: the messages edited in place, nothing removed yet.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// All the messages given, with every edit applied (the removed range included).
    pub messages: Vec<Value>,
    /// Indices of the messages an edit changed (outside the removed range), ascending.
    pub changed: Vec<usize>,
    /// The edits made by this call (also added to the history).
    pub edits: Vec<Edit>,
    /// The range of messages to leave out, if any.
    pub truncated: Option<(usize, usize)>,
    /// Sizes.
    pub metrics: Metrics,
}

impl Plan {
    /// The optimised messages: the range removed.
    pub fn into_outcome(self) -> Outcome {
        let Plan { mut messages, edits, truncated, metrics, .. } = self;
        if let Some((start, end)) = truncated {
            messages.drain(start..=end);
        }
        Outcome { messages, edits, truncated, metrics }
    }
}

/// Optimises `messages` (never modified): applies `history`'s edits, replaces duplicate
/// file reads, truncates if that was not enough, records the new edits in `history` and
/// returns the result.
pub fn optimize(messages: &[Value], options: &OptimizeOptions, history: &mut History) -> Result<Outcome> {
    plan(messages.to_vec(), options, history).map(Plan::into_outcome)
}

/// [`optimize`] on messages it may edit in place, reporting which messages changed
/// instead of removing the range (so that a caller holding the original messages can
/// copy only what changed).
pub fn plan(mut messages: Vec<Value>, options: &OptimizeOptions, history: &mut History) -> Result<Plan> {
    message::validate(&messages)?;
    if options.min_savings.is_nan() || options.min_savings < 0.0 {
        return Err(Error::invalid("minSavings must be a number >= 0"));
    }
    let n = messages.len();
    let given: Vec<message::Size> = messages.iter().map(message::size).collect();
    let given_blocks: Vec<usize> = messages.iter().map(message::block_count).collect();
    let deleted = clamp_range(history.deleted_range(), n);
    let kept = |i: usize| !deleted.is_some_and(|(s, e)| (s..=e).contains(&i));
    let mut changed = vec![false; n];
    let mut sizes = given.clone();
    let mut apply_in_place = |messages: &mut Vec<Value>, edits: &[Edit], sizes: &mut Vec<message::Size>| {
        apply::apply_edits_in_place(messages, edits);
        for i in edits.iter().map(|e| e.message).filter(|&i| i < n) {
            changed[i] = true;
            sizes[i] = message::size(&messages[i]);
        }
    };
    apply_in_place(&mut messages, &history.edits, &mut sizes);
    // The first pair is never edited, nor what an earlier truncation removed.
    let reads = find_file_reads(&messages, &options.tools, |i| i >= 2 && kept(i), true);
    let mut edits = duplicates::duplicate_edits(&messages, &reads, options.now);
    let before: usize = (0..n).filter(|&i| kept(i)).map(|i| sizes[i].chars).sum();
    apply_in_place(&mut messages, &edits, &mut sizes);
    let after: usize = (0..n).filter(|&i| kept(i)).map(|i| sizes[i].chars).sum();
    let savings = if before == 0 { 0.0 } else { before.saturating_sub(after) as f64 / before as f64 };
    let duplicates_replaced = edits.len();
    let mut range = deleted;
    if savings < options.min_savings {
        if let Some((start, end)) = truncation_range(&messages, options.strategy, deleted) {
            let notice = Edit {
                ts: options.now,
                message: start - 1,
                block: given_blocks[start - 1],
                kind: EditKind::TruncationNotice,
                content: TRUNCATION_NOTICE.to_owned(),
            };
            apply_in_place(&mut messages, std::slice::from_ref(&notice), &mut sizes);
            edits.push(notice);
            history.truncations.push(Truncation { ts: options.now, range: (start, end) });
            range = Some((start, end));
        }
    }
    history.edits.extend(edits.iter().cloned());
    let removed = |i: &usize| range.is_some_and(|(s, e)| (s..=e).contains(i));
    let total = |sizes: &[message::Size], keep: &dyn Fn(&usize) -> bool| {
        sizes.iter().enumerate().filter(|(i, _)| keep(i)).fold(message::Size::default(), |mut acc, (_, s)| {
            acc.chars += s.chars;
            acc.bytes += s.bytes;
            acc
        })
    };
    let (all_before, all_after) = (total(&given, &|_| true), total(&sizes, &|i| !removed(i)));
    let metrics = Metrics {
        chars_before: all_before.chars,
        chars_after: all_after.chars,
        tokens_before: estimated_tokens(all_before.bytes),
        tokens_after: estimated_tokens(all_after.bytes),
        duplicate_savings: savings,
        duplicates_replaced,
        messages_removed: range.map_or(0, |(s, e)| e - s + 1),
    };
    let changed = (0..n).filter(|i| changed[*i] && !removed(i)).collect();
    Ok(Plan { messages, changed, edits, truncated: range, metrics })
}

/// `messages` as `history` leaves them: its edits applied, its latest range removed.
pub fn apply_history(messages: &[Value], history: &History) -> Result<Vec<Value>> {
    message::validate(messages)?;
    Ok(apply(messages, &history.edits, clamp_range(history.deleted_range(), messages.len())))
}

/// What [`apply_history_in_place`] returns.
#[derive(Debug, Clone, PartialEq)]
pub struct Applied {
    /// All the messages, with the edits applied (the removed range included).
    pub messages: Vec<Value>,
    /// Indices of the messages an edit changed (outside the range), ascending.
    pub changed: Vec<usize>,
    /// The range to remove.
    pub truncated: Option<(usize, usize)>,
}

/// [`apply_history`] in place, reporting what changed instead of removing the range.
pub fn apply_history_in_place(mut messages: Vec<Value>, history: &History) -> Result<Applied> {
    message::validate(&messages)?;
    let range = clamp_range(history.deleted_range(), messages.len());
    apply::apply_edits_in_place(&mut messages, &history.edits);
    let mut edited = vec![false; messages.len()];
    for e in history.edits.iter().filter(|e| e.message < messages.len()) {
        edited[e.message] = true;
    }
    let changed =
        (0..messages.len()).filter(|&i| edited[i] && !range.is_some_and(|(s, e)| (s..=e).contains(&i))).collect();
    Ok(Applied { messages, changed, truncated: range })
}

/// Estimated tokens of messages (see [`Metrics`]).
pub fn estimate_message_tokens(messages: &[Value]) -> usize {
    estimated_tokens(message::total_size(messages).bytes)
}

/// Tokens kept free for the model's answer in a `context_window`-token window: Cline's
/// table — 27,000 for 64k windows, 30,000 for 128k, 40,000 for 200k, otherwise
/// `min(40,000, 20%)` (so 40,000 from 200k tokens up, a fifth below).
pub fn default_reserve(context_window: u64) -> u64 {
    match context_window {
        64_000 => 27_000,
        128_000 => 30_000,
        200_000 => 40_000,
        w => (w / 5).min(40_000),
    }
}

/// Token usage of the last request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Usage {
    /// Input tokens (not cached).
    pub input: u64,
    /// Output tokens.
    pub output: u64,
    /// Tokens read from the prompt cache.
    pub cache_read: u64,
    /// Tokens written to the prompt cache.
    pub cache_write: u64,
}

/// Whether the conversation should be compacted before the next request: the last
/// request's tokens (input + output + cache reads + cache writes, as Cline counts them)
/// reach the window minus the reserve (default [`default_reserve`]).
pub fn should_compact(usage: Usage, context_window: u64, reserve: Option<u64>) -> bool {
    let total =
        usage.input.saturating_add(usage.output).saturating_add(usage.cache_read).saturating_add(usage.cache_write);
    let reserve = reserve.unwrap_or_else(|| default_reserve(context_window));
    total >= context_window.saturating_sub(reserve)
}
