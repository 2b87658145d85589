//! Duplicate file reads (the seed's `FileReadOptimizer`): every place a file's full
//! content appears in the conversation, and the edits that replace all but the latest
//! with [`DUPLICATE_NOTICE`].
//!
//! A file's content appears as
//! - the `tool_result` of a read tool (`read_file`, `Read`...) whose `tool_use` input
//!   names a `path` or `file_path` and asks for no line range (`toolResult`);
//! - the `content` input of a write tool (`write_to_file`, `Write`...) (`toolInput`);
//! - the seed's Cline text form, `[read_file for 'path'] Result:` followed by the
//!   content in the same or the next text block of a user message (`readFileText`);
//! - `<final_file_content path="...">...</final_file_content>` in a user message's text
//!   or in a tool result (`finalFileContent`), what write/replace tools report;
//! - `<file_content path="...">...</file_content>` mentions in a user message's text or
//!   in a tool result (`fileMention`).
//!
//! Paths are compared exactly (case-sensitive), as the seed does.

use std::collections::HashMap;
use std::ops::Range;

use serde_json::Value;

use super::message::{self, Block};
use super::{Edit, EditKind, Tools};

/// What replaces a duplicate file read (the seed's wording).
pub const DUPLICATE_NOTICE: &str = "[[NOTE] This file read has been removed to save space in the context window. \
Refer to the latest file read for the most up to date version of this file.]";

/// Input fields that make a read partial (a line range), hence not a copy of the file.
const PARTIAL_READ_FIELDS: &[&str] =
    &["offset", "limit", "start_line", "end_line", "line_start", "line_end", "view_range", "line_range", "ranges"];

/// Where one copy of a file's content was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OccurrenceKind {
    /// A read tool's `tool_result`.
    ToolResult,
    /// A write tool's `content` input.
    ToolInput,
    /// The Cline text form `[read_file for 'path'] Result:`.
    ReadFileText,
    /// `<final_file_content path="...">`.
    FinalFileContent,
    /// `<file_content path="...">`.
    FileMention,
}

impl OccurrenceKind {
    /// The name JavaScript sees.
    pub fn name(self) -> &'static str {
        match self {
            OccurrenceKind::ToolResult => "toolResult",
            OccurrenceKind::ToolInput => "toolInput",
            OccurrenceKind::ReadFileText => "readFileText",
            OccurrenceKind::FinalFileContent => "finalFileContent",
            OccurrenceKind::FileMention => "fileMention",
        }
    }

    fn edit_kind(self) -> EditKind {
        match self {
            OccurrenceKind::ToolResult | OccurrenceKind::ReadFileText => EditKind::ReadFile,
            OccurrenceKind::ToolInput | OccurrenceKind::FinalFileContent => EditKind::WriteFile,
            OccurrenceKind::FileMention => EditKind::FileMention,
        }
    }
}

/// What part of the block holds the content.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    /// The whole block (its text, or a tool result's content).
    Whole,
    /// A write tool's `input.content`.
    Input,
    /// A byte range of the block's text.
    Span(Range<usize>),
}

/// One copy of a file's content.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Occurrence {
    /// Index of the message.
    pub message: usize,
    /// Index of the block in the message (0 for a string content).
    pub block: usize,
    /// How it was recognised.
    pub kind: OccurrenceKind,
    part: Part,
}

/// Every copy of one file's content, in conversation order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileReads {
    /// The path, as written in the conversation.
    pub path: String,
    /// The copies, oldest first.
    pub occurrences: Vec<Occurrence>,
}

enum ToolKind {
    Read,
    Write,
}

/// Every file whose content appears in the messages `scan(i)` admits, in order of first
/// appearance; with `duplicates_only`, only files that appear more than once.
pub fn find_file_reads(
    messages: &[Value],
    tools: &Tools,
    scan: impl Fn(usize) -> bool,
    duplicates_only: bool,
) -> Vec<FileReads> {
    // Read tool calls by id, wherever they are (a call may sit before the scanned part):
    // id -> index in `read_paths`. (One map type throughout keeps the wasm small.)
    let mut read_paths: Vec<&str> = Vec::new();
    let mut reads_by_id: HashMap<&str, usize> = HashMap::new();
    for m in messages.iter().filter(|m| !message::is_user(m)) {
        for b in message::blocks(m) {
            if let Block::ToolUse { id, name, input } = b {
                if let (Some(ToolKind::Read), Some(path)) = (tool_kind(tools, name), full_file_path(input)) {
                    reads_by_id.insert(id, read_paths.len());
                    read_paths.push(path);
                }
            }
        }
    }
    // Files in order of first appearance; path -> index in `files`.
    let mut files: Vec<FileReads> = Vec::new();
    let mut file_of: HashMap<String, usize> = HashMap::new();
    let mut found = |path: &str, message: usize, block: usize, kind: OccurrenceKind, part: Part| {
        let occurrence = Occurrence { message, block, kind, part };
        let f = match file_of.get(path) {
            Some(&f) => f,
            None => {
                file_of.insert(path.to_owned(), files.len());
                files.push(FileReads { path: path.to_owned(), occurrences: Vec::new() });
                files.len() - 1
            }
        };
        files[f].occurrences.push(occurrence);
    };
    for (i, m) in messages.iter().enumerate() {
        if !scan(i) {
            continue;
        }
        let blocks = message::blocks(m);
        if !message::is_user(m) {
            for (b, block) in blocks.iter().enumerate() {
                if let Block::ToolUse { name, input, .. } = block {
                    let content = input.get("content").and_then(Value::as_str);
                    if let (Some(ToolKind::Write), Some(path), Some(_)) =
                        (tool_kind(tools, name), full_file_path(input), content)
                    {
                        found(path, i, b, OccurrenceKind::ToolInput, Part::Input);
                    }
                }
            }
            continue;
        }
        let mut b = 0;
        while b < blocks.len() {
            match blocks[b] {
                Block::Text(text) => {
                    if let Some((path, header_end)) = read_file_header(text, tools) {
                        if !text[header_end..].trim().is_empty() {
                            let start = header_end + usize::from(text[header_end..].starts_with('\n'));
                            found(path, i, b, OccurrenceKind::ReadFileText, Part::Span(start..text.len()));
                        } else if let Some(Block::Text(_)) = blocks.get(b + 1) {
                            // The content is the next block, which is not scanned for tags.
                            found(path, i, b + 1, OccurrenceKind::ReadFileText, Part::Whole);
                            b += 1;
                        }
                    } else {
                        for (path, span, kind) in tags(text) {
                            found(path, i, b, kind, Part::Span(span));
                        }
                    }
                }
                Block::ToolResult { tool_use_id, content, is_error } => {
                    if let Some(&r) = reads_by_id.get(tool_use_id) {
                        if !is_error {
                            found(read_paths[r], i, b, OccurrenceKind::ToolResult, Part::Whole);
                        }
                    } else if let Some(text) = message::result_text(content) {
                        for (path, span, kind) in tags(&text) {
                            found(path, i, b, kind, Part::Span(span));
                        }
                    }
                }
                Block::ToolUse { .. } | Block::Other(_) => {}
            }
            b += 1;
        }
    }
    if duplicates_only {
        files.retain(|f| f.occurrences.len() > 1);
    }
    files
}

fn tool_kind(tools: &Tools, name: &str) -> Option<ToolKind> {
    if tools.read.iter().any(|t| t == name) {
        Some(ToolKind::Read)
    } else if tools.write.iter().any(|t| t == name) {
        Some(ToolKind::Write)
    } else {
        None
    }
}

/// The `path` / `file_path` of a tool input that reads or writes a whole file.
fn full_file_path(input: &Value) -> Option<&str> {
    let obj = input.as_object()?;
    if PARTIAL_READ_FIELDS.iter().any(|f| obj.get(*f).is_some_and(|v| !v.is_null())) {
        return None;
    }
    ["path", "file_path", "filePath"].iter().find_map(|k| obj.get(*k)?.as_str()).filter(|p| !p.is_empty())
}

/// `[read_file for 'path'] Result:` at the start of `text` (for a read tool): the path and
/// where the header ends.
fn read_file_header<'a>(text: &'a str, tools: &Tools) -> Option<(&'a str, usize)> {
    let rest = text.strip_prefix('[')?;
    let (tool, rest) = rest.split_once(" for '")?;
    if !tools.read.iter().any(|t| t == tool) {
        return None;
    }
    let (path, _) = rest.split_once("'] Result:")?;
    if path.is_empty() || path.contains('\n') {
        return None;
    }
    let header_end = 1 + tool.len() + " for '".len() + path.len() + "'] Result:".len();
    Some((path, header_end))
}

const TAGS: [(&str, &str, OccurrenceKind); 2] = [
    ("<final_file_content path=\"", "</final_file_content>", OccurrenceKind::FinalFileContent),
    ("<file_content path=\"", "</file_content>", OccurrenceKind::FileMention),
];

/// The `<file_content path="...">` and `<final_file_content path="...">` elements of a
/// text: path, the byte range of the content between the tags, kind; in text order.
/// An element without its closing tag is not a copy of the file and is ignored.
pub fn tags(text: &str) -> Vec<(&str, Range<usize>, OccurrenceKind)> {
    let mut out = Vec::new();
    let mut from = 0;
    // The next element of either kind, in text order.
    while let Some((at, (open, close, kind))) =
        TAGS.iter().filter_map(|tag| text[from..].find(tag.0).map(|at| (from + at, *tag))).min_by_key(|(at, _)| *at)
    {
        let path_start = at + open.len();
        let Some(path_len) = text[path_start..].find('"') else { break };
        let path = &text[path_start..path_start + path_len];
        let after_quote = path_start + path_len + 1;
        // Allow other attributes after the path: the element's text starts after `>`.
        let Some(gt) = text[after_quote..].find('>') else { break };
        let inner_start = after_quote + gt + 1;
        let Some(end) = text[inner_start..].find(close) else { break };
        let inner_end = inner_start + end;
        if !path.is_empty() && !path.contains('\n') {
            out.push((path, inner_start..inner_end, kind));
        }
        from = inner_end + close.len();
    }
    out
}

/// The edits (stamped `now`) that replace every occurrence but the latest of each file
/// with [`DUPLICATE_NOTICE`]. Blocks that already read so get no edit.
pub fn duplicate_edits(messages: &[Value], reads: &[FileReads], now: i64) -> Vec<Edit> {
    // The older copies, per message (in message order without sorting).
    let mut per_message: Vec<Vec<&Occurrence>> = vec![Vec::new(); messages.len()];
    for file in reads {
        if let Some((_latest, older)) = file.occurrences.split_last() {
            for o in older.iter().filter(|o| o.message < messages.len()) {
                per_message[o.message].push(o);
            }
        }
    }
    let mut edits = Vec::new();
    for (m, mut older) in per_message.into_iter().enumerate() {
        // All replacements of one block go into one edit: its full new content.
        while let Some(block) = older.iter().map(|o| o.block).min() {
            let (here, rest): (Vec<&Occurrence>, Vec<&Occurrence>) = older.into_iter().partition(|o| o.block == block);
            older = rest;
            if let Some(edit) = block_edit(&messages[m], m, block, &here, now) {
                edits.push(edit);
            }
        }
    }
    edits
}

/// The edit replacing `occurrences` (all in block `block` of message `m`), or `None`
/// when the block already reads so.
fn block_edit(message: &Value, m: usize, block: usize, occurrences: &[&Occurrence], now: i64) -> Option<Edit> {
    let first = occurrences.first()?;
    let current = current_content(message, block, &first.part);
    // A whole block or a write input becomes the notice; spans are replaced in place.
    let content = if occurrences.iter().any(|o| !matches!(o.part, Part::Span(_))) {
        DUPLICATE_NOTICE.to_owned()
    } else {
        let text = current.as_deref()?;
        let mut spans: Vec<&Range<usize>> = Vec::with_capacity(occurrences.len());
        for o in occurrences {
            if let Part::Span(span) = &o.part {
                // Insertion in text order (a handful of spans; no sort code in the wasm).
                let at = spans.iter().position(|s| s.start > span.start).unwrap_or(spans.len());
                spans.insert(at, span);
            }
        }
        let mut out = String::with_capacity(text.len());
        let mut at = 0;
        for span in spans {
            if span.start < at || span.end > text.len() {
                continue;
            }
            out.push_str(&text[at..span.start]);
            out.push_str(DUPLICATE_NOTICE);
            at = span.end;
        }
        out.push_str(&text[at..]);
        out
    };
    (current.as_deref() != Some(content.as_str())).then(|| Edit {
        ts: now,
        message: m,
        block,
        kind: first.kind.edit_kind(),
        content,
    })
}

/// The text an edit of `part` would replace: the block's text, a tool result's text,
/// or a write tool's `input.content`.
fn current_content(message: &Value, block: usize, part: &Part) -> Option<String> {
    match (message::blocks(message).get(block)?, part) {
        (Block::ToolUse { input, .. }, Part::Input) => input.get("content")?.as_str().map(str::to_owned),
        (Block::Text(t), _) => Some((*t).to_owned()),
        (Block::ToolResult { content, .. }, _) => message::result_text(content),
        _ => None,
    }
}
