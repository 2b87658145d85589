//! A pointer as the table keeps it ([`Entry`]): packed, with the args and texts it shares
//! with other pointers interned.

use super::holdings::SegmentId;
use super::ResultHasher;
use crate::handle;
use crate::naming::StoredPath;
use crate::record::{from_json, iso_timestamp, push_iso_timestamp, push_json_str, RecordMeta};
use crate::session;
use crate::shared::Shared;
use serde_json::{Number, Value};
use std::collections::HashSet;
use std::rc::Rc;

/// A pointer as it is kept: the tool name, query id and path prefix shared by every
/// pointer that has them (through thin pointers), the args text and hash (as bytes)
/// shared by every pointer with the same args, the path as its parts (its name's hash is
/// the args hash's start), the task id as an `i32`, the timestamp as the path's
/// milliseconds (a record's name holds the instant it was saved), and the fields most
/// pointers lack (a description `describe` does not make, a tool call id, an args hash
/// or timestamp the packed form would not print back, a task id that is not an `i32`)
/// in `rare`. The save order is the index's ([`Index::order`]). A description `describe`
/// makes from the tool name and args is made again, not kept; any other (from a
/// `describe` callback, or another implementation) is.
pub(super) struct Entry {
    /// The path, as its parts when it has the record-name form.
    pub(super) filepath: StoredPath,
    pub(super) tool_name: Shared,
    /// The args text and hash, shared by every pointer that has both (an agent calls a
    /// tool with the same args again and again).
    pub(super) args: Rc<Args>,
    /// The task id when it is an `i32` other than [`NO_TASK`] (else in `rare`).
    pub(super) task: i32,
    pub(super) query_id: Option<Shared>,
    pub(super) size: u32,
    /// Whether this manager wrote the record to storage (see the pointer table's
    /// `orphans`).
    pub(super) written: bool,
    /// A 64-bit hash of the result's JSON text, when this manager saved the record:
    /// with the tool and args hash, what makes two records duplicates.
    /// (High and low halves, all zero when not known: so the entry aligns to 4 bytes in
    /// wasm, not 8; see [`Entry::result_hash`].)
    pub(super) result_hash: [u32; 2],
    /// The index segment holding the record, when this manager knows it
    /// (`super::holdings`).
    pub(super) segment: Option<SegmentId>,
    /// `None` when the pointer has none of its fields (most pointers).
    pub(super) rare: Option<Box<Rare>>,
}

/// A pointer's args: their JSON text, as given, and the args hash as bytes (all zero,
/// and ignored, when [`Rare::args_hash`] holds its text). Pointers with the same text
/// and hash share one ([`Interned::args`]).
#[derive(PartialEq, Eq, Hash)]
pub(super) struct Args {
    pub(super) hash: [u8; 32],
    pub(super) json: Box<str>,
}

/// What pointers share: tool names and query ids (many pointers have each), and args.
#[derive(Default)]
pub(super) struct Interned {
    pub(super) texts: HashSet<Shared>,
    pub(super) args: HashSet<Rc<Args>>,
}

impl Interned {
    pub(super) fn text(&mut self, text: &str) -> Shared {
        match self.texts.get(text) {
            Some(t) => t.clone(),
            None => {
                let t = Shared::from(text);
                self.texts.insert(t.clone());
                t
            }
        }
    }

    pub(super) fn args(&mut self, args: Args) -> Rc<Args> {
        match self.args.get(&args) {
            Some(a) => a.clone(),
            None => {
                let a = Rc::new(args);
                self.args.insert(a.clone());
                a
            }
        }
    }

    /// Drops the args no pointer holds any more.
    pub(super) fn prune(&mut self) {
        self.args.retain(|a| Rc::strong_count(a) > 1);
    }

    pub(super) fn clear(&mut self) {
        self.texts.clear();
        self.args.clear();
    }
}

/// The fields of an [`Entry`] most pointers do not have.
#[derive(Default, PartialEq, Eq)]
pub(super) struct Rare {
    /// The description, when it is not `describe(tool_name, args)`.
    pub(super) tool_description: Option<Box<str>>,
    pub(super) tool_call_id: Option<Box<str>>,
    /// The args hash, when it is not 64 lowercase hex digits.
    pub(super) args_hash: Option<Box<str>>,
    /// The timestamp, when it is not the ISO form of the path's milliseconds (a record
    /// adopted with another name).
    pub(super) timestamp: Option<Stamp>,
    /// The task id, when it is not an integer that fits in an `i32`.
    pub(super) task_id: Option<Number>,
}

/// A timestamp the path does not give: the ISO form of a number of ms, or any text.
#[derive(PartialEq, Eq)]
pub(super) enum Stamp {
    Ms(i64),
    Text(Box<str>),
}

/// [`Entry::task`] when the pointer has no task id, or one kept in [`Rare::task_id`].
pub(super) const NO_TASK: i32 = i32::MIN;

/// The bytes of a 64-digit lowercase hex hash.
pub(super) fn hash_bytes(hex: &str) -> Option<[u8; 32]> {
    let digit = |c: u8| match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        _ => None,
    };
    let mut out = [0u8; 32];
    if hex.len() != 64 {
        return None;
    }
    for (byte, pair) in out.iter_mut().zip(hex.as_bytes().chunks(2)) {
        *byte = digit(pair[0])? << 4 | digit(pair[1])?;
    }
    Some(out)
}

impl Entry {
    /// The pointer of the record at `filepath`. `generated`: whether its description is
    /// the one `describe` makes, when the caller knows (`None`: it is compared here).
    pub(super) fn new(
        filepath: &str,
        meta: RecordMeta,
        size: usize,
        interned: &mut Interned,
        generated: Option<bool>,
    ) -> Self {
        let generated =
            generated.unwrap_or_else(|| Self::generated(&meta.tool_name, &meta.args_json) == meta.tool_description);
        let tool_name = interned.text(&meta.tool_name);
        let query_id = meta.query_id.as_deref().map(|q| interned.text(q));
        let args_hash = hash_bytes(&meta.args_hash);
        let filepath = StoredPath::new(filepath, &args_hash.unwrap_or_default(), |t| interned.text(t));
        let from_path = filepath.ms().is_some_and(|ms| iso_timestamp(ms) == meta.timestamp);
        let task = meta.task_id.as_ref().and_then(|n| n.as_i64()).and_then(|n| i32::try_from(n).ok());
        let task = task.filter(|&n| n != NO_TASK);
        let rare = Rare {
            tool_description: (!generated).then(|| meta.tool_description.into()),
            task_id: meta.task_id.filter(|_| task.is_none()),
            tool_call_id: meta.tool_call_id.map(Into::into),
            args_hash: args_hash.is_none().then(|| meta.args_hash.into()),
            timestamp: (!from_path).then(|| {
                match session::parse_iso_ms(&meta.timestamp).filter(|&ms| iso_timestamp(ms) == meta.timestamp) {
                    Some(ms) => Stamp::Ms(ms),
                    None => Stamp::Text(meta.timestamp.into()),
                }
            }),
        };
        Entry {
            filepath,
            tool_name,
            args: interned.args(Args { hash: args_hash.unwrap_or_default(), json: meta.args_json.into() }),
            task: task.unwrap_or(NO_TASK),
            query_id,
            size: u32::try_from(size).unwrap_or(u32::MAX),
            written: false,
            result_hash: [0, 0],
            segment: None,
            rare: (rare != Rare::default()).then(|| Box::new(rare)),
        }
    }

    pub(super) fn rare(&self) -> Option<&Rare> {
        self.rare.as_deref()
    }

    /// The hash of the result's JSON text, when this manager saved the record.
    pub(super) fn result_hash(&self) -> Option<u64> {
        let [high, low] = self.result_hash;
        Some((u64::from(high) << 32) | u64::from(low)).filter(|&h| h != 0)
    }

    /// Notes the hash of the result's JSON text (a hash of 0 is kept as 1).
    pub(super) fn set_result_hash(&mut self, hash: u64) {
        let hash = hash.max(1);
        self.result_hash = [(hash >> 32) as u32, hash as u32];
    }

    /// Whether the pointer's path is `path`, byte for byte.
    pub(super) fn path_is(&self, path: &str) -> bool {
        self.filepath.is(path, &self.args.hash)
    }

    /// The pointer's path.
    pub(super) fn path_text(&self) -> String {
        self.filepath.text(&self.args.hash)
    }

    pub(super) fn task_id(&self) -> Option<Number> {
        match self.task {
            NO_TASK => self.rare().and_then(|r| r.task_id.clone()),
            n => Some(Number::from(n)),
        }
    }

    pub(super) fn push_args_hash(&self, out: &mut String) {
        match self.rare().and_then(|r| r.args_hash.as_deref()) {
            Some(text) => out.push_str(text),
            None => crate::naming::push_hex(&self.args.hash, out),
        }
    }

    pub(super) fn push_timestamp(&self, out: &mut String) {
        match (self.rare().and_then(|r| r.timestamp.as_ref()), self.filepath.ms()) {
            (Some(Stamp::Text(text)), _) => out.push_str(text),
            (Some(&Stamp::Ms(ms)), _) | (None, Some(ms)) => push_iso_timestamp(ms, out),
            // `Entry::new` keeps the text of any timestamp the path does not give.
            (None, None) => {}
        }
    }

    /// The key duplicates share (`None` when the result is not known): a 32-bit hash, so
    /// a table of them takes 8-byte slots. Two keys may collide (at 100,000 pointers, a
    /// pair or so): the pointer table's `latest_copy` is a hint, and a collision only
    /// costs time.
    pub(super) fn duplicate_key(&self) -> Option<u32> {
        // What `duplicates` compares, fed to one hasher; 0xff (never in UTF-8) ends the name.
        let mut hasher = ResultHasher::default();
        hasher.update(self.tool_name.as_bytes());
        hasher.update(&[0xff]);
        hasher.update(&self.args.hash);
        if let Some(text) = self.rare().and_then(|r| r.args_hash.as_deref()) {
            hasher.update(text.as_bytes());
        }
        hasher.update(&self.result_hash()?.to_le_bytes());
        let h = hasher.finish();
        Some((h >> 32) as u32 ^ h as u32)
    }

    /// Whether `other` holds the same tool, args and result (both saved by this manager).
    pub(super) fn duplicates(&self, other: &Entry) -> bool {
        self.result_hash().is_some()
            && self.result_hash() == other.result_hash()
            && self.tool_name == other.tool_name
            && self.args.hash == other.args.hash
            && self.rare().and_then(|r| r.args_hash.as_ref()) == other.rare().and_then(|r| r.args_hash.as_ref())
    }

    /// The description `describe` makes of a tool name and args text: [`Entry::description`]
    /// makes it again, byte for byte (`describe` is a pure function of the two).
    pub(super) fn generated(tool_name: &str, args_json: &str) -> String {
        let args: Value = from_json(args_json).unwrap_or(Value::Null);
        crate::describe::describe(tool_name, &args)
    }

    /// The pointer's description: the one kept, or the generated one.
    pub(super) fn description(&self) -> std::borrow::Cow<'_, str> {
        match self.rare().and_then(|r| r.tool_description.as_deref()) {
            Some(text) => std::borrow::Cow::Borrowed(text),
            None => std::borrow::Cow::Owned(Self::generated(&self.tool_name, &self.args.json)),
        }
    }

    pub(super) fn meta(&self) -> RecordMeta {
        let (mut args_hash, mut timestamp) = (String::new(), String::new());
        self.push_args_hash(&mut args_hash);
        self.push_timestamp(&mut timestamp);
        RecordMeta {
            tool_name: self.tool_name.to_string(),
            tool_description: self.description().into_owned(),
            args_json: self.args.json.to_string(),
            args_hash,
            timestamp,
            task_id: self.task_id(),
            query_id: self.query_id.as_deref().map(str::to_owned),
            tool_call_id: self.rare().and_then(|r| r.tool_call_id.as_deref()).map(str::to_owned),
        }
    }

    pub(super) fn size(&self) -> usize {
        self.size as usize
    }

    /// The pointer's JSON (SPEC §2 fields, plus `argsHash`, `timestamp`, `size`).
    /// The JS glue copies these fields by name (pkg-template/pointers.js): a new field goes there too.
    /// The digest its handles are made of (SPEC §3: from its file name alone).
    pub(super) fn handle_digest(&self) -> u64 {
        let path = self.path_text();
        handle::digest(crate::paths::file_name(&path))
    }

    /// Its pointer as JSON, its handle `handle_len` base32 characters long.
    pub(super) fn pointer_json(&self, out: &mut String, handle_len: usize) {
        // The tail (the parts after the prefix) holds no `/` and nothing JSON escapes.
        let (head, tail) = self.filepath.split(&self.args.hash);
        let push_path = |out: &mut String, head: &str| {
            push_json_str(out, head);
            out.pop();
            out.push_str(tail.as_str());
            out.push('"');
        };
        out.push_str("{\"filepath\":");
        push_path(out, head);
        out.push_str(",\"filename\":");
        push_path(out, crate::paths::file_name(head));
        out.push_str(",\"handle\":\"");
        handle::push_handle(out, self.handle_digest(), handle_len);
        out.push_str("\",\"toolName\":");
        push_json_str(out, &self.tool_name);
        out.push_str(",\"toolDescription\":");
        push_json_str(out, &self.description());
        out.push_str(",\"args\":");
        out.push_str(&self.args.json);
        if let Some(task) = self.task_id() {
            out.push_str(",\"taskId\":");
            out.push_str(&task.to_string());
        }
        if let Some(query) = &self.query_id {
            out.push_str(",\"queryId\":");
            push_json_str(out, query);
        }
        if let Some(call) = self.rare().and_then(|r| r.tool_call_id.as_deref()) {
            out.push_str(",\"toolCallId\":");
            push_json_str(out, call);
        }
        out.push_str(",\"argsHash\":\"");
        self.push_args_hash(out);
        out.push_str("\",\"timestamp\":\"");
        self.push_timestamp(out);
        out.push_str("\",\"size\":");
        out.push_str(&self.size.to_string());
        out.push('}');
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{iso_timestamp, RecordMeta};
    use serde_json::{Number, Value};

    /// The metadata of a record of tool `t` with no args, described as `description`.
    fn meta(description: &str) -> RecordMeta {
        RecordMeta {
            tool_name: "t".into(),
            tool_description: description.into(),
            args_json: "{}".into(),
            args_hash: "0".repeat(64),
            timestamp: iso_timestamp(0),
            task_id: None,
            query_id: None,
            tool_call_id: None,
        }
    }

    fn entry(path: &str) -> Entry {
        Entry::new(path, meta("t"), 0, &mut Interned::default(), None)
    }

    #[test]
    fn an_entry_gives_back_the_meta_and_path_it_was_made_from() {
        let metas = [
            ("/ctx/t_000000000000_1700000000000_0_aaaa.json", "0".repeat(64), iso_timestamp(1_700_000_000_000), None),
            ("/ctx/notes.json", "ABC".into(), "2024-01-01T00:00:00Z".into(), Some("call_1")),
            ("/ctx/x_y_0123456789ab_1700000000000_7_zz00.json", "01".repeat(32), "yesterday".into(), None),
            ("/ctx/seed_3f2a9c1b_1735012345678_0_k3j9x2.json", "3f2a9c1b".into(), iso_timestamp(-1), Some("")),
        ];
        let mut interned = Interned::default();
        let tasks = [Some(Number::from(3)), None, Number::from_f64(2.0), Some(Number::from(1u64 << 40))];
        for ((path, args_hash, timestamp, call), task_id) in metas.into_iter().zip(tasks) {
            let meta = RecordMeta {
                tool_name: "x_y".into(),
                tool_description: "given".into(),
                args_json: r#"{"a":1}"#.into(),
                args_hash,
                timestamp,
                task_id: task_id.clone(),
                query_id: Some("q".into()),
                tool_call_id: call.map(str::to_owned),
            };
            let e = Entry::new(path, meta.clone(), 5, &mut interned, None);
            assert!(e.meta() == meta, "{path}: {:?} != {meta:?}", e.meta());
            assert_eq!(e.path_text(), path);
            let mut json = String::new();
            e.pointer_json(&mut json, handle::SHORT);
            let v: Value = serde_json::from_str(&json).unwrap();
            assert_eq!((v["filepath"].as_str(), v["argsHash"].as_str()), (Some(path), Some(&*meta.args_hash)));
            assert_eq!((v["timestamp"].as_str(), v["toolCallId"].as_str()), (Some(&*meta.timestamp), call));
            // The same record with the description `describe` makes: not kept.
            let generated_meta = RecordMeta { tool_description: describe_of(&meta), ..meta.clone() };
            let generated = Entry::new(path, generated_meta, 5, &mut interned, None);
            assert!(e.rare.as_ref().is_some_and(|r| r.tool_description.as_deref() == Some("given")));
            assert_eq!(
                (v["taskId"].to_string(), v.get("taskId").is_some()),
                (task_id.as_ref().map_or("null".into(), Number::to_string), task_id.is_some())
            );
            let compact = call.is_none() && meta.args_hash.len() == 64 && meta.timestamp.starts_with("20");
            assert_eq!(generated.rare.is_none(), compact && task_id.is_none_or(|t| t.is_i64()));
            assert!(generated.meta() == RecordMeta { tool_description: describe_of(&meta), ..meta });
        }
    }

    fn describe_of(meta: &RecordMeta) -> String {
        crate::describe::describe(&meta.tool_name, &serde_json::from_str(&meta.args_json).unwrap())
    }

    #[test]
    fn an_entry_is_packed_so_the_pointer_table_stays_small() {
        // One entry per pointer: 100,000 pointers take 100,000 of them. wasm32: the path's
        // parts 20 (its prefix shared, its name's hash the args hash's start), the tool
        // name and query id 8 (shared, through thin pointers), the shared args 4, the
        // result hash 8, the task, the size and the written flag 9, the segment 4, the rare
        // fields 4, padded to 4 (nothing aligns to 8). The args hash and text live once per
        // distinct args, in `Interned::args`; a description `describe` makes is made
        // again; the save order is the index's, the timestamp the path's milliseconds.
        let expected = if cfg!(target_pointer_width = "32") { 60 } else { 80 };
        assert_eq!(std::mem::size_of::<Entry>(), expected);
    }

    #[test]
    fn pointers_with_the_same_args_share_them_until_none_holds_them() {
        let mut interned = Interned::default();
        let make = |interned: &mut Interned, path: &str, args: &str, hash: &str| {
            let meta = RecordMeta {
                tool_name: "t".into(),
                tool_description: "t".into(),
                args_json: args.into(),
                args_hash: hash.into(),
                timestamp: iso_timestamp(0),
                task_id: None,
                query_id: None,
                tool_call_id: None,
            };
            let e = Entry::new(path, meta.clone(), 0, interned, None);
            assert!(e.meta() == meta, "{:?} != {meta:?}", e.meta());
            e
        };
        let (h, other) = ("ab".repeat(32), "cd".repeat(32));
        let a = make(&mut interned, "/ctx/a.json", r#"{"x":1,"y":2}"#, &h);
        let b = make(&mut interned, "/ctx/b.json", r#"{"x":1,"y":2}"#, &h);
        // The same args in another key order (same hash), or the same text with another
        // hash (a record adopted with its own), are other args.
        let c = make(&mut interned, "/ctx/c.json", r#"{"y":2,"x":1}"#, &h);
        let d = make(&mut interned, "/ctx/d.json", r#"{"x":1,"y":2}"#, &other);
        assert!(Rc::ptr_eq(&a.args, &b.args));
        assert!(!Rc::ptr_eq(&a.args, &c.args) && !Rc::ptr_eq(&a.args, &d.args));
        assert_eq!(interned.args.len(), 3);
        drop((a, c));
        interned.prune();
        assert_eq!(interned.args.len(), 2, "b still holds the first args, d its own");
        drop((b, d));
        interned.prune();
        assert!(interned.args.is_empty());
    }

    #[test]
    fn a_timestamp_or_task_id_the_packed_form_cannot_hold_is_kept_apart() {
        let path = "/ctx/t_000000000000_1700000000000_0_aaaa.json";
        let cases = [
            // The path's milliseconds and an i32 task id: nothing apart.
            (iso_timestamp(1_700_000_000_000), Some(Number::from(7)), false),
            // Another instant than the path's, though ISO: kept apart, as text.
            (iso_timestamp(1_700_000_000_001), Some(Number::from(7)), true),
            // The one i32 the packed task id keeps for "none".
            (iso_timestamp(1_700_000_000_000), Some(Number::from(i32::MIN)), true),
            (iso_timestamp(1_700_000_000_000), Some(Number::from(i32::MIN + 1)), false),
            (iso_timestamp(1_700_000_000_000), None, false),
        ];
        for (timestamp, task_id, apart) in cases {
            let meta = RecordMeta {
                tool_name: "t".into(),
                tool_description: "t".into(),
                args_json: "{}".into(),
                args_hash: "0".repeat(64),
                timestamp,
                task_id,
                query_id: None,
                tool_call_id: None,
            };
            let e = Entry::new(path, meta.clone(), 0, &mut Interned::default(), None);
            assert!(e.meta() == meta, "{:?} != {meta:?}", e.meta());
            assert_eq!(e.rare.is_some(), apart, "{meta:?}");
        }
    }

    #[test]
    fn a_generated_description_is_not_kept() {
        // A record name whose milliseconds give the timestamp (0): no rare fields.
        let path = "/ctx/t_000000000000_0000000000000_0_aaaa.json";
        let generated = crate::describe::describe("t", &serde_json::json!({}));
        assert_eq!(generated, "t");
        let with = |description: &str, said_generated: Option<bool>| {
            Entry::new(path, meta(description), 0, &mut Interned::default(), said_generated)
        };
        // The save's own (said generated), or a record read back whose description is
        // the one `describe` makes: made again, not kept.
        for e in [with(&generated, Some(true)), with(&generated, None)] {
            assert!(e.rare.is_none());
            assert_eq!(e.description(), generated);
        }
        // Any other description (a `describe` callback's) is kept, whether the caller
        // compared it already (restoring pointers) or leaves it to `Entry::new`.
        for e in [with("a tool", Some(false)), with("a tool", None)] {
            assert!(e.rare.is_some());
            assert_eq!(e.description(), "a tool");
        }
        assert_eq!(entry("/ctx/a.json").description(), "t");
    }
}
