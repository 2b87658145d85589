//! The static store-wide operations (`listSessions`, `search`, `cleanupStaleSessions`,
//! `purge`, `exportRecords`, `importRecords`): plans over the storage and folder their
//! options name, begun by `ContextManager.start(options, work)` (manager/mod.rs).

use wasm_bindgen::prelude::*;

use super::JsContextManager;
use crate::interop::args::opt_size;
use crate::interop::requests::Storewide;
use crate::interop::storewide::{export_js, hits_json, import_report_js, import_text, sessions_js, strings_js};
use crate::plans::{self, Reply};
use toolctx_core::error::{Error, Result};

/// The first step of the store-wide workflow `work` over the folder and storage that
/// `options` name (a failed step when they are wrong).
pub(super) fn begin(options: JsValue, work: Storewide) -> JsValue {
    let (m, storage) = match JsContextManager::build(options.clone()) {
        Ok((manager, _)) => (manager.inner, manager.storage),
        Err(e) => return plans::failed(e),
    };
    let result = match work {
        // `[{id, createdAt, lastActivity, records, bytes}]` for the sessions of `contextDir`.
        Storewide::ListSessions => {
            let plan = toolctx_core::session::ListSessions::new(m.context_dir());
            Ok(plans::start(storage, plan, |sessions| Ok(Reply::Value(sessions_js(&sessions)))))
        }
        // Removes the sessions idle longer than `olderThanMs` (default 24 h): only the
        // files their manifests track. Resolves to the ids removed.
        Storewide::CleanupStaleSessions => opt_size(&options, "olderThanMs").and_then(|older_than| {
            let older_than =
                older_than.map_or(toolctx_core::session::DEFAULT_STALE_MS, |n| n.min(i64::MAX as usize) as i64);
            m.check_writable()?;
            let now = (m.options().clock)();
            let plan = toolctx_core::session::CleanupStale::new(m.context_dir(), now, older_than);
            Ok(plans::start(storage, plan, |ids| Ok(Reply::Value(strings_js(&ids)))))
        }),
        // The persisted records of `contextDir` as lossless JSON Lines (one record a line,
        // every record's bytes recoverable); resolves to `{jsonl, exported, skipped}`, the
        // files named as records that are not records listed with the reason.
        Storewide::ExportRecords => {
            let plan = toolctx_core::storewide::ExportJsonl::new(m.context_dir());
            Ok(plans::start(storage, plan, |export| Ok(Reply::Value(export_js(export)))))
        }
        // Writes the records of an `exportRecords` result (or its `jsonl` text) into
        // `contextDir`, byte for byte; resolves to `{imported, unchanged}`.
        Storewide::ImportRecords { jsonl } => import_text(&jsonl).and_then(|text| {
            m.check_writable()?;
            let plan = toolctx_core::storewide::ImportJsonl::new(m.context_dir(), text);
            Ok(plans::start(storage, plan, |report| Ok(Reply::Value(import_report_js(&report)))))
        }),
        // `[{sessionId, filepath, score, matched, pointer}]`: the best `limit` (default 10)
        // records of every session of `contextDir` for `query`, ranked from the sessions'
        // manifests alone; as JSON text, parsed by the driver.
        Storewide::Search { query, options } => search_args(&query, &options).map(|(query, limit)| {
            let plan = toolctx_core::session::SearchSessions::new(m.context_dir(), &query, limit);
            plans::start(storage, plan, |hits| Ok(Reply::Json(hits_json(&hits))))
        }),
        // Removes every toolctx record of `contextDir` (files named as records), whoever
        // wrote them, and nothing else; resolves to the number removed.
        Storewide::Purge => m.check_writable().map(|()| {
            let plan = toolctx_core::storewide::Purge::new(m.context_dir());
            plans::start(storage, plan, |removed| Ok(Reply::Value(JsValue::from(removed as f64))))
        }),
        Storewide::PanicForTests { message } => {
            Ok(plans::start(storage, PanicInStep(message, false), |()| Ok(Reply::Value(JsValue::UNDEFINED))))
        }
    };
    result.unwrap_or_else(plans::failed)
}

/// `search`'s query and its `limit` option (default 10).
fn search_args(query: &JsValue, options: &JsValue) -> Result<(String, usize)> {
    let query = query.as_string().ok_or_else(|| Error::invalid("query must be a string"))?;
    Ok((query, opt_size(options, "limit")?.unwrap_or(10)))
}

/// A plan that asks for nothing, then panics at its next step (`__panicForTestsAsync`):
/// the message, and whether it has asked.
struct PanicInStep(String, bool);

impl toolctx_core::plan::Plan for PanicInStep {
    type Output = ();

    fn step(&mut self, _: toolctx_core::plan::Outcomes) -> toolctx_core::plan::Step<()> {
        if !self.1 {
            self.1 = true;
            return toolctx_core::plan::Step::Run(Vec::new());
        }
        panic!("{}", self.0);
    }
}
