//! Store-wide operations over the records of a context dir, whoever wrote them: purge,
//! export to JSON Lines, import. Each is a [plan]: synchronous steps that a
//! driver runs (natively the `toolctx` crate's `run`, in wasm the JavaScript driver;
//! `toolctx::storewide_ops` has the async functions that run them natively).

use crate::error::{Error, ErrorKind, Result};
use crate::naming::is_record_filename;
use crate::paths;
use crate::plan::{self, Op, Outcomes, Plan, Step};
use crate::record::{from_json, parse_record, push_json_str};

/// `toolctx::purge` as a plan: list the folder, remove its records at once; the first failure
/// (in name order) is the error.
pub enum Purge {
    /// Nothing asked yet.
    Start(String),
    /// The folder is being listed.
    Listing(String),
    /// Its records are being removed, its segment folder listed.
    Removing(String),
    /// Its segment folder is being emptied, then removed; the records removed. Derived
    /// data: a failure there fails nothing (a leftover segment is refused or stale).
    Segments(usize, String),
    /// Its emptied segment folder is being removed.
    SegmentDir(usize),
    /// Finished.
    Done,
}

impl Purge {
    /// The plan that purges `dir`.
    pub fn new(dir: &str) -> Self {
        Purge::Start(dir.to_owned())
    }
}

impl Plan for Purge {
    type Output = usize;

    fn step(&mut self, outcomes: Outcomes) -> Step<usize> {
        match std::mem::replace(self, Purge::Done) {
            Purge::Start(dir) => {
                let list = Op::List(dir.clone());
                *self = Purge::Listing(dir);
                Step::Run(vec![list])
            }
            Purge::Listing(dir) => match plan::names(plan::only(outcomes)) {
                Err(e) => Step::Done(Err(e)),
                Ok(names) => {
                    let records = names.iter().filter(|n| is_record_filename(n));
                    let mut ops: Vec<Op> = records.map(|n| Op::Remove(paths::join(&dir, n))).collect();
                    let segments = crate::segments::segments_dir(&dir);
                    ops.push(Op::List(segments.clone()));
                    *self = Purge::Removing(segments);
                    Step::Run(ops)
                }
            },
            Purge::Removing(segments) => {
                let mut outcomes = outcomes;
                let listed = outcomes.pop().map_or(Ok(Vec::new()), plan::names);
                let removed = match outcomes.into_iter().try_fold(0, |removed, outcome| outcome.map(|_| removed + 1)) {
                    Ok(removed) => removed,
                    Err(e) => return Step::Done(Err(e)),
                };
                match listed {
                    Ok(names) if !names.is_empty() => {
                        let files = names.iter().filter(|n| !n.ends_with('/'));
                        let ops: Vec<Op> = files.map(|n| Op::Remove(paths::join(&segments, n))).collect();
                        *self = Purge::Segments(removed, segments);
                        Step::Run(ops)
                    }
                    _ => Step::Done(Ok(removed)),
                }
            }
            Purge::Segments(removed, segments) => {
                *self = Purge::SegmentDir(removed);
                Step::Run(vec![Op::RemoveDir(segments)])
            }
            Purge::SegmentDir(removed) => Step::Done(Ok(removed)),
            Purge::Done => Step::Done(Err(plan::stepped_after_done())),
        }
    }
}

/// A record file that an export left out, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    /// Its file name.
    pub filename: String,
    /// Why: it does not parse as a record (torn, corrupt), or it was gone when read.
    pub reason: String,
}

/// What `toolctx::export_jsonl` gives: the JSON Lines, and what went into them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Export {
    /// One line a record.
    pub jsonl: String,
    /// Records exported (the lines of `jsonl`).
    pub exported: usize,
    /// Files named as records that are not in `jsonl`, with the reason.
    pub skipped: Vec<Skipped>,
}

/// `toolctx::export_jsonl` as a plan: list the folder, read its records at once, write the lines.
pub enum ExportJsonl {
    /// Nothing asked yet.
    Start(String),
    /// The folder is being listed.
    Listing(String),
    /// These records (file names, sorted) are being read.
    Reading(Vec<String>),
    /// Finished.
    Done,
}

impl ExportJsonl {
    /// The plan that exports the records of `dir`.
    pub fn new(dir: &str) -> Self {
        ExportJsonl::Start(dir.to_owned())
    }
}

impl Plan for ExportJsonl {
    type Output = Export;

    fn step(&mut self, outcomes: Outcomes) -> Step<Export> {
        match std::mem::replace(self, ExportJsonl::Done) {
            ExportJsonl::Start(dir) => {
                let list = Op::List(dir.clone());
                *self = ExportJsonl::Listing(dir);
                Step::Run(vec![list])
            }
            ExportJsonl::Listing(dir) => match plan::names(plan::only(outcomes)) {
                Err(e) => Step::Done(Err(e)),
                Ok(names) => {
                    let mut names: Vec<String> = names.into_iter().filter(|n| is_record_filename(n)).collect();
                    crate::sort::sort(&mut names);
                    let reads = names.iter().map(|n| Op::Read(paths::join(&dir, n))).collect();
                    *self = ExportJsonl::Reading(names);
                    Step::Run(reads)
                }
            },
            ExportJsonl::Reading(names) => Step::Done(exported(names, outcomes)),
            ExportJsonl::Done => Step::Done(Err(plan::stepped_after_done())),
        }
    }
}

/// The export of the records `names`, from their reads.
fn exported(names: Vec<String>, reads: Outcomes) -> Result<Export> {
    let mut export = Export::default();
    for (name, read) in names.into_iter().zip(reads) {
        let Some(bytes) = plan::bytes(read)? else {
            export.skipped.push(Skipped { filename: name, reason: "removed before it was read".into() });
            continue;
        };
        let checked = parse_record(&bytes).map(|_| ());
        let parsed = checked.and_then(|()| {
            String::from_utf8(bytes).map_err(|e| Error::new(ErrorKind::CorruptRecord, format!("not UTF-8: {e}")))
        });
        let text = match parsed {
            Ok(text) => text,
            Err(e) => {
                export.skipped.push(Skipped { filename: name, reason: e.to_string() });
                continue;
            }
        };
        let out = &mut export.jsonl;
        out.push_str("{\"filename\":");
        push_json_str(out, &name);
        if reads_back_verbatim(&text) {
            out.push_str(",\"record\":");
            out.push_str(&text);
        } else {
            out.push_str(",\"recordText\":");
            push_json_str(out, &text);
        }
        out.push_str("}\n");
        export.exported += 1;
    }
    Ok(export)
}

/// Whether `text` (a record that parses), embedded as a JSON value in one line, is read
/// back as exactly these bytes: no line break inside, nothing before `{` or after `}`.
fn reads_back_verbatim(text: &str) -> bool {
    text.starts_with('{') && text.ends_with('}') && !text.contains(['\n', '\r'])
}

/// What `toolctx::import_jsonl` did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ImportReport {
    /// Records written.
    pub imported: usize,
    /// Records already present with the same bytes.
    pub unchanged: usize,
}

/// `toolctx::import_jsonl` as a plan: one line at a time, in order.
pub struct ImportJsonl {
    dir: String,
    jsonl: String,
    /// Where the lines left start in `jsonl`.
    at: usize,
    /// The number of the line before them (1-based).
    line: usize,
    report: ImportReport,
    /// The record written (exclusively) last, or read back because its name was taken.
    asked: Option<Asked>,
}

enum Asked {
    Written(Line),
    Compared(Line),
}

/// A record of the import: where it goes and its bytes.
struct Line {
    number: usize,
    path: String,
    bytes: Vec<u8>,
}

impl ImportJsonl {
    /// The plan that imports `jsonl` into `dir`.
    pub fn new(dir: &str, jsonl: String) -> Self {
        ImportJsonl { dir: dir.to_owned(), jsonl, at: 0, line: 0, report: ImportReport::default(), asked: None }
    }

    /// The next non-blank line's record, checked; `None` after the last.
    fn next_line(&mut self) -> Option<Result<Line>> {
        #[derive(serde::Deserialize)]
        struct Parsed<'a> {
            #[serde(borrow)]
            filename: std::borrow::Cow<'a, str>,
            #[serde(borrow, default)]
            record: Option<&'a serde_json::value::RawValue>,
            #[serde(borrow, default, rename = "recordText")]
            record_text: Option<std::borrow::Cow<'a, str>>,
        }
        let rest = &self.jsonl[self.at..];
        let (number, line) = {
            let mut lines = rest.split_inclusive('\n');
            loop {
                let raw = lines.next()?;
                self.at += raw.len();
                self.line += 1;
                // As `str::lines`: without its `\n` or `\r\n`.
                let line = raw.strip_suffix('\n').map_or(raw, |l| l.strip_suffix('\r').unwrap_or(l));
                if !line.trim().is_empty() {
                    break (self.line, line);
                }
            }
        };
        let at = |message: String| Error::new(ErrorKind::CorruptRecord, format!("line {number}: {message}"));
        let checked = (|| {
            let parsed: Parsed<'_> = from_json(line).map_err(|e| at(e.to_string()))?;
            if !is_record_filename(&parsed.filename) {
                return Err(at(format!("{:?} is not a record file name", parsed.filename))
                    .with_path(parsed.filename.to_string()));
            }
            let bytes = match (&parsed.record, &parsed.record_text) {
                (Some(raw), None) => raw.get().as_bytes(),
                (None, Some(text)) => text.as_bytes(),
                _ => return Err(at("a line holds either \"record\" or \"recordText\"".into())),
            };
            parse_record(bytes).map_err(|e| at(e.to_string()))?;
            Ok(Line { number, path: paths::join(&self.dir, &parsed.filename), bytes: bytes.to_vec() })
        })();
        Some(checked)
    }
}

impl Plan for ImportJsonl {
    type Output = ImportReport;

    fn step(&mut self, outcomes: Outcomes) -> Step<ImportReport> {
        match self.asked.take() {
            None => {}
            Some(Asked::Written(line)) => match plan::only(outcomes) {
                Ok(_) => self.report.imported += 1,
                Err(e) if e.kind() == ErrorKind::AlreadyExists => {
                    let read = Op::Read(line.path.clone());
                    self.asked = Some(Asked::Compared(line));
                    return Step::Run(vec![read]);
                }
                Err(e) => return Step::Done(Err(e)),
            },
            Some(Asked::Compared(line)) => match plan::bytes(plan::only(outcomes)) {
                Ok(found) if found.as_deref() == Some(&line.bytes[..]) => self.report.unchanged += 1,
                Ok(_) => {
                    let message = format!("line {}: a different record exists under this name", line.number);
                    return Step::Done(Err(Error::new(ErrorKind::CorruptRecord, message).with_path(line.path)));
                }
                Err(e) => return Step::Done(Err(e)),
            },
        }
        match self.next_line() {
            None => Step::Done(Ok(self.report)),
            Some(Err(e)) => Step::Done(Err(e)),
            Some(Ok(line)) => {
                let write = Op::Write { path: line.path.clone(), bytes: line.bytes.clone(), exclusive: true };
                self.asked = Some(Asked::Written(line));
                Step::Run(vec![write])
            }
        }
    }
}
