//! What the package's JavaScript asks of the core module (crates/wasm/src/manager/), each a
//! plain object whose `kind` names it (pkg-template/protocol.js names the same kinds; its
//! test compares them):
//!
//! - [`Work`], a manager's workflow, begun by `begin(work)`: the first step of its plan;
//! - [`Query`], answered at once by `query(q)`;
//! - [`Update`], a synchronous change, by `update(u)`;
//! - [`Start`], a workflow begun with no manager of the caller's (`open`, and the
//!   workflows over a whole folder, [`Storewide`]), by the static `ContextManager.start(options, work)`;
//! - [`Compute`], answered at once with no manager, by the static `ContextManager.compute(c)`.
//!
//! Each is read here once into an enum whose fields are typed. The package makes these
//! objects, so a wrong kind or field is `INTERNAL`, naming the field; the user's own values
//! inside them (a save's arguments, a handle, selection options) pass on as the user gave
//! them, checked where they are used with the messages the API documents.

use js_sys::{Array, Uint32Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::args::get;
use super::named::named;
#[cfg(test)]
use super::named::table;
use toolctx_core::error::{Error, ErrorKind, Result};

named! {
    /// A manager's workflow (protocol.js `WORK`).
    pub enum WorkKind {
        /// `saveContext(toolName, args, result, taskOrOptions, queryId)`.
        Save = "save",
        /// `loadContexts(filepaths)`.
        Load = "load",
        /// `selectRelevant`'s ranking: what it needs of the index segments read by range
        /// read first, then ranked in the same step.
        Select = "select",
        Flush = "flush",
        Close = "close",
        EndSession = "endSession",
        Reconcile = "reconcile",
        RebuildIndex = "rebuildIndex",
        Clear = "clear",
        ClearContextDir = "clearContextDir",
        /// The index segment due after saves, if one is (the driver asks after each save).
        PersistIndex = "persistIndex",
    }
}

named! {
    /// A synchronous question to a manager (protocol.js `QUERY`).
    pub enum QueryKind {
        Size = "size",
        SessionId = "sessionId",
        ContextDir = "contextDir",
        /// Changes whenever slots are forgotten or moved (pointers.js).
        Epoch = "epoch",
        /// The `embed` option, while the manager is open.
        Embed = "embed",
        /// Whether a save yields to the event loop before it resolves (records wait for an
        /// index segment past a bound).
        IndexBacklogged = "indexBacklogged",
        ResolveHandle = "resolveHandle",
        PointerAt = "pointerAt",
        Slots = "slots",
        Pointers = "pointers",
        SelectListed = "selectListed",
        QueryVector = "queryVector",
    }
}

named! {
    /// A synchronous change to a manager (protocol.js `UPDATE`).
    pub enum UpdateKind {
        ClearPointers = "clearPointers",
        SetVector = "setVector",
        Debug = "debug",
        /// A slice of idle-time index work: answers whether records still wait.
        IndexSome = "indexSome",
    }
}

named! {
    /// A workflow begun with no manager of the caller's, over the folder and storage its
    /// options name (protocol.js `START`).
    pub enum StartKind {
        /// `ContextManager.open(options)`: its plan makes a manager ready and resolves to it.
        Open = "open",
        ListSessions = "listSessions",
        CleanupStaleSessions = "cleanupStaleSessions",
        ExportRecords = "exportRecords",
        ImportRecords = "importRecords",
        Search = "search",
        Purge = "purge",
        /// Panics in the plan's second step, for the tests of trap handling.
        PanicForTests = "panicForTests",
    }
}

named! {
    /// A computation with no manager, answered at once (protocol.js `COMPUTE`).
    pub enum ComputeKind {
        /// `ContextManager.hashQuery(query)`.
        HashQuery = "hashQuery",
        /// A result's line view (toolctx/tools, through `manager[READER]`).
        Lines = "lines",
        /// The lines of a text that grep_context's linear-time matcher finds a pattern in.
        MatchingLines = "matchingLines",
        /// Panics at once, for the tests of trap handling.
        PanicForTests = "panicForTests",
    }
}

/// `[("WORK", …), ("QUERY", …), ("UPDATE", …), ("START", …), ("COMPUTE", …)]`, for the test
/// that keeps protocol.js equal to them (interop/named.rs).
#[cfg(test)]
pub fn tables() -> Vec<(&'static str, JsValue)> {
    vec![
        ("WORK", table(WorkKind::ALL, WorkKind::constant, WorkKind::name)),
        ("QUERY", table(QueryKind::ALL, QueryKind::constant, QueryKind::name)),
        ("UPDATE", table(UpdateKind::ALL, UpdateKind::constant, UpdateKind::name)),
        ("START", table(StartKind::ALL, StartKind::constant, StartKind::name)),
        ("COMPUTE", table(ComputeKind::ALL, ComputeKind::constant, ComputeKind::name)),
    ]
}

/// A manager's workflow, read.
pub enum Work {
    /// The arguments of `saveContext`, as given.
    Save {
        tool_name: JsValue,
        args: JsValue,
        result: JsValue,
        task_or_options: JsValue,
        query_id: JsValue,
    },
    /// The argument of `loadContexts`, as given.
    Load {
        filepaths: JsValue,
    },
    /// `selectRelevant`'s ranking: `query` and `options` as given, `listed` (pointers.js
    /// `given`) and the query's `vector` (from `queryVector`), each possibly undefined.
    Select {
        query: JsValue,
        options: JsValue,
        listed: JsValue,
        vector: JsValue,
    },
    Flush,
    Close,
    EndSession,
    Reconcile,
    RebuildIndex,
    Clear,
    ClearContextDir,
    PersistIndex,
}

/// A question to a manager, read.
pub enum Query {
    Size,
    SessionId,
    ContextDir,
    Epoch,
    Embed,
    IndexBacklogged,
    /// `resolveHandle(handle)`, as given.
    ResolveHandle {
        handle: JsValue,
    },
    /// The pointer at `filepath`, as JSON text.
    PointerAt {
        filepath: String,
    },
    /// The slots of the pointers `filter` (as given: `{queryId}`, `{taskId}`, undefined) lets through.
    Slots {
        filter: JsValue,
    },
    /// The pointers in `slots`, as the JSON text of an array.
    Pointers {
        slots: Vec<u32>,
    },
    /// `selectRelevantContexts`: the places in `pointers` of the relevant ones.
    SelectListed {
        query: JsValue,
        pointers: JsValue,
        options: JsValue,
        listed: JsValue,
    },
    /// The query's vector, from what the `embed` option returned (as given).
    Vector {
        embedded: JsValue,
    },
}

/// A synchronous change, read.
pub enum Update {
    ClearPointers,
    /// The vector (what the `embed` option returned, as given) of the record at `filepath`.
    SetVector {
        filepath: String,
        embedded: JsValue,
    },
    /// A message for `onDebug`.
    Debug {
        message: String,
        path: Option<String>,
    },
    /// Index some of the saved results waiting (a slice of idle-time work).
    IndexSome,
}

/// A workflow begun with no manager, read (its options, the folder and storage, come beside it).
pub enum Start {
    /// `open(options)`.
    Open,
    /// A workflow over the whole folder.
    Storewide(Storewide),
}

/// A store-wide workflow, read.
pub enum Storewide {
    ListSessions,
    CleanupStaleSessions,
    ExportRecords,
    Purge,
    /// `importRecords(options, jsonl)`: the JSON Lines text or an `exportRecords` result, as given.
    ImportRecords {
        jsonl: JsValue,
    },
    /// `search(options, query, searchOptions)`: as given.
    Search {
        query: JsValue,
        options: JsValue,
    },
    /// `__panicForTestsAsync(message)`: a plan that panics in its second step.
    PanicForTests {
        message: String,
    },
}

/// A computation with no manager, read.
pub enum Compute {
    /// `hashQuery(query)`: the query as given.
    HashQuery {
        query: JsValue,
    },
    /// The line view of the result whose JSON text is `result_json`.
    Lines {
        result_json: String,
    },
    /// The 0-based numbers of the lines of `text` (joined by `\n`) that hold a match of
    /// `pattern` (as the model gave it, the JavaScript literal form read by grep.js).
    MatchingLines {
        pattern: JsValue,
        text: String,
    },
    PanicForTests {
        message: String,
    },
}

impl Work {
    pub fn read(work: &JsValue) -> Result<Work> {
        let r = Request::new(work, "work");
        Ok(match r.kind(WorkKind::named)? {
            WorkKind::Save => Work::Save {
                tool_name: r.any("toolName"),
                args: r.any("args"),
                result: r.any("result"),
                task_or_options: r.any("taskOrOptions"),
                query_id: r.any("queryId"),
            },
            WorkKind::Load => Work::Load { filepaths: r.any("filepaths") },
            WorkKind::Select => Work::Select {
                query: r.any("query"),
                options: r.any("options"),
                listed: r.any("listed"),
                vector: r.any("vector"),
            },
            WorkKind::Flush => Work::Flush,
            WorkKind::Close => Work::Close,
            WorkKind::EndSession => Work::EndSession,
            WorkKind::Reconcile => Work::Reconcile,
            WorkKind::RebuildIndex => Work::RebuildIndex,
            WorkKind::Clear => Work::Clear,
            WorkKind::ClearContextDir => Work::ClearContextDir,
            WorkKind::PersistIndex => Work::PersistIndex,
        })
    }
}

impl Query {
    pub fn read(query: &JsValue) -> Result<Query> {
        let r = Request::new(query, "query");
        Ok(match r.kind(QueryKind::named)? {
            QueryKind::Size => Query::Size,
            QueryKind::SessionId => Query::SessionId,
            QueryKind::ContextDir => Query::ContextDir,
            QueryKind::Epoch => Query::Epoch,
            QueryKind::Embed => Query::Embed,
            QueryKind::IndexBacklogged => Query::IndexBacklogged,
            QueryKind::ResolveHandle => Query::ResolveHandle { handle: r.any("handle") },
            QueryKind::PointerAt => Query::PointerAt { filepath: r.string("filepath")? },
            QueryKind::Slots => Query::Slots { filter: r.any("filter") },
            QueryKind::Pointers => Query::Pointers { slots: r.slots("slots")? },
            QueryKind::SelectListed => Query::SelectListed {
                query: r.any("query"),
                pointers: r.any("pointers"),
                options: r.any("options"),
                listed: r.any("listed"),
            },
            QueryKind::QueryVector => Query::Vector { embedded: r.any("embedded") },
        })
    }
}

impl Update {
    pub fn read(update: &JsValue) -> Result<Update> {
        let r = Request::new(update, "update");
        Ok(match r.kind(UpdateKind::named)? {
            UpdateKind::ClearPointers => Update::ClearPointers,
            UpdateKind::SetVector => Update::SetVector { filepath: r.string("filepath")?, embedded: r.any("embedded") },
            UpdateKind::Debug => Update::Debug { message: r.string("message")?, path: r.opt_string("path")? },
            UpdateKind::IndexSome => Update::IndexSome,
        })
    }
}

impl Start {
    pub fn read(work: &JsValue) -> Result<Start> {
        let r = Request::new(work, "work");
        let storewide = match r.kind(StartKind::named)? {
            StartKind::Open => return Ok(Start::Open),
            StartKind::ListSessions => Storewide::ListSessions,
            StartKind::CleanupStaleSessions => Storewide::CleanupStaleSessions,
            StartKind::ExportRecords => Storewide::ExportRecords,
            StartKind::Purge => Storewide::Purge,
            StartKind::ImportRecords => Storewide::ImportRecords { jsonl: r.any("jsonl") },
            StartKind::Search => Storewide::Search { query: r.any("query"), options: r.any("options") },
            StartKind::PanicForTests => Storewide::PanicForTests { message: r.string("message")? },
        };
        Ok(Start::Storewide(storewide))
    }
}

impl Compute {
    pub fn read(compute: &JsValue) -> Result<Compute> {
        let r = Request::new(compute, "compute");
        Ok(match r.kind(ComputeKind::named)? {
            ComputeKind::HashQuery => Compute::HashQuery { query: r.any("query") },
            ComputeKind::Lines => Compute::Lines { result_json: r.string("resultJson")? },
            ComputeKind::MatchingLines => Compute::MatchingLines { pattern: r.any("pattern"), text: r.string("text")? },
            ComputeKind::PanicForTests => Compute::PanicForTests { message: r.string("message")? },
        })
    }
}

/// A request object being read, and what it is called in errors.
struct Request<'a> {
    value: &'a JsValue,
    what: &'static str,
}

impl<'a> Request<'a> {
    fn new(value: &'a JsValue, what: &'static str) -> Self {
        Request { value, what }
    }

    fn wrong(&self, field: &str, expected: &str) -> Error {
        Error::new(ErrorKind::Internal, format!("{}.{field} must be {expected}", self.what))
    }

    /// Its `kind`, one of those `named` knows.
    fn kind<K>(&self, named: fn(&str) -> Option<K>) -> Result<K> {
        let kind = get(self.value, "kind").as_string();
        kind.as_deref().and_then(named).ok_or_else(|| self.wrong("kind", &format!("a kind it has, not {kind:?}")))
    }

    /// `field` as it is (the user's value, checked where it is used).
    fn any(&self, field: &str) -> JsValue {
        get(self.value, field)
    }

    fn string(&self, field: &str) -> Result<String> {
        self.any(field).as_string().ok_or_else(|| self.wrong(field, "a string"))
    }

    fn opt_string(&self, field: &str) -> Result<Option<String>> {
        match self.any(field) {
            v if v.is_undefined() => Ok(None),
            v => v.as_string().map(Some).ok_or_else(|| self.wrong(field, "a string or undefined")),
        }
    }

    /// Slots: a Uint32Array, or an array of them.
    fn slots(&self, field: &str) -> Result<Vec<u32>> {
        let v = self.any(field);
        if let Some(slots) = v.dyn_ref::<Uint32Array>() {
            return Ok(slots.to_vec());
        }
        let array = v.dyn_ref::<Array>().ok_or_else(|| self.wrong(field, "a Uint32Array"))?;
        let slot = |v: JsValue| v.as_f64().filter(|n| n.fract() == 0.0 && (0.0..=u32::MAX as f64).contains(n));
        array.iter().map(|v| slot(v).map(|n| n as u32).ok_or_else(|| self.wrong(field, "slots (u32)"))).collect()
    }
}
