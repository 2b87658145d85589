//! The static store-wide operations (`listSessions`, `search`, `cleanupStaleSessions`,
//! `purge`, `exportRecords`, `importRecords`): plans over the storage and folder their
//! options name.

use wasm_bindgen::prelude::*;

use super::JsContextManager;
use crate::interop::args::opt_size;
use crate::interop::storewide::{export_js, hits_json, import_report_js, import_text, sessions_js, strings_js};
use crate::plans::{self, Reply};
use toolctx_core::error::{Error, Result};
use toolctx_core::plan::Plan;
use toolctx_core::store::Manager;

#[wasm_bindgen(js_class = ContextManager)]
impl JsContextManager {
    /// `[{id, createdAt, lastActivity, records, bytes}]` for the sessions of `contextDir`.
    #[wasm_bindgen(js_name = listSessions)]
    pub fn list_sessions(options: JsValue) -> JsValue {
        Self::store_plan(
            options,
            |m| Ok(toolctx_core::session::ListSessions::new(m.context_dir())),
            |sessions| Ok(Reply::Value(sessions_js(&sessions))),
        )
    }

    /// Removes the sessions idle longer than `olderThanMs` (default 24 h): only the files
    /// their manifests track. Resolves to the ids removed.
    #[wasm_bindgen(js_name = cleanupStaleSessions)]
    pub fn cleanup_stale_sessions(options: JsValue) -> JsValue {
        let older_than = match opt_size(&options, "olderThanMs") {
            Ok(v) => v.map_or(toolctx_core::session::DEFAULT_STALE_MS, |n| n.min(i64::MAX as usize) as i64),
            Err(e) => return plans::failed(e),
        };
        Self::store_plan(
            options,
            |m| {
                m.check_writable()?;
                let now = (m.options().clock)();
                Ok(toolctx_core::session::CleanupStale::new(m.context_dir(), now, older_than))
            },
            |ids| Ok(Reply::Value(strings_js(&ids))),
        )
    }

    /// The persisted records of `contextDir` as lossless JSON Lines (one record a line,
    /// every record's bytes recoverable); resolves to `{jsonl, exported, skipped}`, the
    /// files named as records that are not records listed with the reason.
    #[wasm_bindgen(js_name = exportRecords)]
    pub fn export_records(options: JsValue) -> JsValue {
        Self::store_plan(
            options,
            |m| Ok(toolctx_core::storewide::ExportJsonl::new(m.context_dir())),
            |export| Ok(Reply::Value(export_js(export))),
        )
    }

    /// Writes the records of an `exportRecords` result (or its `jsonl` text) into
    /// `contextDir`, byte for byte; resolves to `{imported, unchanged}`.
    #[wasm_bindgen(js_name = importRecords)]
    pub fn import_records(options: JsValue, jsonl: JsValue) -> JsValue {
        let text = match import_text(&jsonl) {
            Ok(text) => text,
            Err(e) => return plans::failed(e),
        };
        Self::store_plan(
            options,
            |m| {
                m.check_writable()?;
                Ok(toolctx_core::storewide::ImportJsonl::new(m.context_dir(), text))
            },
            |report| Ok(Reply::Value(import_report_js(&report))),
        )
    }

    /// `[{sessionId, filepath, score, matched, pointer}]`: the best `limit` (default 10)
    /// records of every session of `contextDir` for `query`, ranked from the sessions'
    /// manifests alone.
    pub fn search(options: JsValue, query: JsValue, search_options: JsValue) -> JsValue {
        let Some(query) = query.as_string() else {
            return plans::failed(Error::invalid("query must be a string"));
        };
        let limit = match opt_size(&search_options, "limit") {
            Ok(limit) => limit.unwrap_or(10),
            Err(e) => return plans::failed(e),
        };
        // The hits go back as JSON text, parsed by the driver.
        Self::store_plan(
            options,
            |m| Ok(toolctx_core::session::SearchSessions::new(m.context_dir(), &query, limit)),
            |hits| Ok(Reply::Json(hits_json(&hits))),
        )
    }

    /// Removes every toolctx record of `contextDir` (files named as records), whoever
    /// wrote them, and nothing else; resolves to the number removed.
    pub fn purge(options: JsValue) -> JsValue {
        Self::store_plan(
            options,
            |m| {
                m.check_writable()?;
                Ok(toolctx_core::storewide::Purge::new(m.context_dir()))
            },
            |removed| Ok(Reply::Value(JsValue::from(removed as f64))),
        )
    }
}

impl JsContextManager {
    /// Starts a store-wide operation over the storage and context dir that `options`
    /// name: the plan `plan` makes, its result made a JavaScript value by `reply`. Its
    /// first step, for the driver (crates/wasm/src/plans.rs).
    pub(super) fn store_plan<P: Plan + 'static>(
        options: JsValue,
        plan: impl FnOnce(&Manager) -> Result<P>,
        reply: impl FnOnce(P::Output) -> Result<Reply> + 'static,
    ) -> JsValue {
        let manager = match Self::build(options) {
            Ok((manager, _)) => manager,
            Err(e) => return plans::failed(e),
        };
        match plan(&manager.inner) {
            Ok(plan) => plans::start(manager.storage.clone(), plan, reply),
            Err(e) => plans::failed(e),
        }
    }
}
