//! The static store-wide operations (`listSessions`, `search`, `cleanupStaleSessions`,
//! `purge`, `exportRecords`, `importRecords`): plans over the storage and folder their
//! options name.

use js_sys::{Array, Object, Reflect};

use wasm_bindgen::prelude::*;

use super::JsContextManager;
use crate::error::{Error, Result};
use crate::plan::Plan;
use crate::store::Manager;
use crate::wasm::interop::args::{get, opt_size};
use crate::wasm::interop::selection::score_json;
use crate::wasm::plans::{self, Reply};

/// The hits of `search` as JSON text.
pub(super) fn hits_json(hits: &[crate::session::SessionHit]) -> String {
    let mut json = String::from("[");
    for hit in hits {
        if json.len() > 1 {
            json.push(',');
        }
        let e = &hit.entry;
        json.push_str("{\"sessionId\":");
        crate::record::push_json_str(&mut json, &hit.session_id);
        json.push_str(",\"filepath\":");
        crate::record::push_json_str(&mut json, &hit.filepath);
        json.push_str(",\"score\":");
        json.push_str(&score_json(hit.score));
        json.push_str(",\"matched\":");
        json.push_str(&serde_json::to_string(&hit.matched).unwrap_or_else(|_| "[]".into()));
        json.push_str(",\"pointer\":{\"filepath\":");
        crate::record::push_json_str(&mut json, &hit.filepath);
        json.push_str(",\"filename\":");
        crate::record::push_json_str(&mut json, hit.filepath.rsplit('/').next().unwrap_or(&hit.filepath));
        json.push_str(",\"toolName\":");
        crate::record::push_json_str(&mut json, &e.tool_name);
        json.push_str(",\"toolDescription\":");
        crate::record::push_json_str(&mut json, &e.tool_description);
        json.push_str(",\"args\":");
        json.push_str(e.args.get());
        if let Some(task) = &e.task_id {
            json.push_str(",\"taskId\":");
            json.push_str(&task.to_string());
        }
        if let Some(q) = &e.query_id {
            json.push_str(",\"queryId\":");
            crate::record::push_json_str(&mut json, q);
        }
        json.push_str(",\"argsHash\":");
        crate::record::push_json_str(&mut json, &e.args_hash);
        json.push_str(",\"timestamp\":");
        crate::record::push_json_str(&mut json, &e.created);
        json.push_str(",\"size\":");
        json.push_str(&e.size.to_string());
        json.push_str("}}");
    }
    json.push(']');
    json
}

#[wasm_bindgen(js_class = ContextManager)]
impl JsContextManager {
    /// `[{id, createdAt, lastActivity, records, bytes}]` for the sessions of `contextDir`.
    #[wasm_bindgen(js_name = listSessions)]
    pub fn list_sessions(options: JsValue) -> JsValue {
        Self::store_plan(
            options,
            |m| Ok(crate::session::ListSessions::new(m.context_dir())),
            |sessions| {
                let out = Array::new();
                for info in sessions {
                    let o = Object::new();
                    let set = |k: &str, v: JsValue| {
                        let _ = Reflect::set(&o, &k.into(), &v);
                    };
                    set("id", info.id.as_str().into());
                    set("createdAt", info.created_at.as_str().into());
                    set("lastActivity", info.last_activity.as_str().into());
                    set("records", (info.records as f64).into());
                    set("bytes", (info.bytes as f64).into());
                    out.push(&o);
                }
                Ok(Reply::Value(out.into()))
            },
        )
    }

    /// Removes the sessions idle longer than `olderThanMs` (default 24 h): only the files
    /// their manifests track. Resolves to the ids removed.
    #[wasm_bindgen(js_name = cleanupStaleSessions)]
    pub fn cleanup_stale_sessions(options: JsValue) -> JsValue {
        let older_than = match opt_size(&options, "olderThanMs") {
            Ok(v) => v.map_or(crate::session::DEFAULT_STALE_MS, |n| n.min(i64::MAX as usize) as i64),
            Err(e) => return plans::failed(e),
        };
        Self::store_plan(
            options,
            |m| {
                m.check_writable()?;
                let now = (m.options().clock)();
                Ok(crate::session::CleanupStale::new(m.context_dir(), now, older_than))
            },
            |ids| Ok(Reply::Value(ids.iter().map(|id| JsValue::from(id.as_str())).collect::<Array>().into())),
        )
    }

    /// The persisted records of `contextDir` as lossless JSON Lines (one record a line,
    /// every record's bytes recoverable); resolves to `{jsonl, exported, skipped}`, the
    /// files named as records that are not records listed with the reason.
    #[wasm_bindgen(js_name = exportRecords)]
    pub fn export_records(options: JsValue) -> JsValue {
        Self::store_plan(
            options,
            |m| Ok(crate::storewide::ExportJsonl::new(m.context_dir())),
            |export| {
                let skipped = Array::new();
                for s in &export.skipped {
                    let o = Object::new();
                    let _ = Reflect::set(&o, &"filename".into(), &s.filename.as_str().into());
                    let _ = Reflect::set(&o, &"reason".into(), &s.reason.as_str().into());
                    skipped.push(&o);
                }
                let out = Object::new();
                let _ = Reflect::set(&out, &"jsonl".into(), &export.jsonl.into());
                let _ = Reflect::set(&out, &"exported".into(), &(export.exported as f64).into());
                let _ = Reflect::set(&out, &"skipped".into(), &skipped);
                Ok(Reply::Value(out.into()))
            },
        )
    }

    /// Writes the records of an `exportRecords` result (or its `jsonl` text) into
    /// `contextDir`, byte for byte; resolves to `{imported, unchanged}`.
    #[wasm_bindgen(js_name = importRecords)]
    pub fn import_records(options: JsValue, jsonl: JsValue) -> JsValue {
        let text = if jsonl.is_object() { get(&jsonl, "jsonl") } else { jsonl };
        let Some(text) = text.as_string() else {
            return plans::failed(Error::invalid(
                "the records to import must be a string of JSON Lines or an exportRecords result",
            ));
        };
        Self::store_plan(
            options,
            |m| {
                m.check_writable()?;
                Ok(crate::storewide::ImportJsonl::new(m.context_dir(), text))
            },
            |report| {
                let out = Object::new();
                let _ = Reflect::set(&out, &"imported".into(), &(report.imported as f64).into());
                let _ = Reflect::set(&out, &"unchanged".into(), &(report.unchanged as f64).into());
                Ok(Reply::Value(out.into()))
            },
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
            |m| Ok(crate::session::SearchSessions::new(m.context_dir(), &query, limit)),
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
                Ok(crate::storewide::Purge::new(m.context_dir()))
            },
            |removed| Ok(Reply::Value(JsValue::from(removed as f64))),
        )
    }
}

impl JsContextManager {
    /// Starts a store-wide operation over the storage and context dir that `options`
    /// name: the plan `plan` makes, its result made a JavaScript value by `reply`. Its
    /// first step, for the driver (src/wasm/plans.rs).
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
