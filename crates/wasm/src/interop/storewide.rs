//! The store-wide operations' arguments and results (`listSessions`, `search`,
//! `cleanupStaleSessions`, `exportRecords`, `importRecords`).

use js_sys::{Array, Object, Reflect};
use wasm_bindgen::prelude::*;

use super::args::get;
use super::selection::score_json;
use toolctx_core::error::{Error, Result};
use toolctx_core::session::{SessionHit, SessionInfo};
use toolctx_core::storewide::{Export, ImportReport};

/// `{key: value, ...}`.
fn object(fields: &[(&str, JsValue)]) -> JsValue {
    let o = Object::new();
    for (key, value) in fields {
        let _ = Reflect::set(&o, &(*key).into(), value);
    }
    o.into()
}

/// `[{id, createdAt, lastActivity, records, bytes}]`.
pub(crate) fn sessions_js(sessions: &[SessionInfo]) -> JsValue {
    let out: Array = sessions
        .iter()
        .map(|info| {
            object(&[
                ("id", info.id.as_str().into()),
                ("createdAt", info.created_at.as_str().into()),
                ("lastActivity", info.last_activity.as_str().into()),
                ("records", (info.records as f64).into()),
                ("bytes", (info.bytes as f64).into()),
            ])
        })
        .collect();
    out.into()
}

/// An array of strings.
pub(crate) fn strings_js(strings: &[String]) -> JsValue {
    strings.iter().map(|s| JsValue::from(s.as_str())).collect::<Array>().into()
}

/// `{jsonl, exported, skipped: [{filename, reason}]}`.
pub(crate) fn export_js(export: Export) -> JsValue {
    let skipped: Array = export
        .skipped
        .iter()
        .map(|s| object(&[("filename", s.filename.as_str().into()), ("reason", s.reason.as_str().into())]))
        .collect();
    object(&[
        ("jsonl", export.jsonl.into()),
        ("exported", (export.exported as f64).into()),
        ("skipped", skipped.into()),
    ])
}

/// The JSON Lines to import: the text, or an `exportRecords` result's `jsonl`.
pub(crate) fn import_text(given: &JsValue) -> Result<String> {
    let text = if given.is_object() { get(given, "jsonl") } else { given.clone() };
    text.as_string().ok_or_else(|| {
        Error::invalid("the records to import must be a string of JSON Lines or an exportRecords result")
    })
}

/// `{imported, unchanged}`.
pub(crate) fn import_report_js(report: &ImportReport) -> JsValue {
    object(&[("imported", (report.imported as f64).into()), ("unchanged", (report.unchanged as f64).into())])
}

/// The hits of `search` as JSON text.
pub(crate) fn hits_json(hits: &[SessionHit]) -> String {
    let mut json = String::from("[");
    for hit in hits {
        if json.len() > 1 {
            json.push(',');
        }
        let e = &hit.entry;
        json.push_str("{\"sessionId\":");
        toolctx_core::record::push_json_str(&mut json, &hit.session_id);
        json.push_str(",\"filepath\":");
        toolctx_core::record::push_json_str(&mut json, &hit.filepath);
        json.push_str(",\"score\":");
        json.push_str(&score_json(hit.score));
        json.push_str(",\"matched\":");
        json.push_str(&serde_json::to_string(&hit.matched).unwrap_or_else(|_| "[]".into()));
        json.push_str(",\"pointer\":{\"filepath\":");
        toolctx_core::record::push_json_str(&mut json, &hit.filepath);
        let filename = hit.filepath.rsplit('/').next().unwrap_or(&hit.filepath);
        json.push_str(",\"filename\":");
        toolctx_core::record::push_json_str(&mut json, filename);
        // The handle (SPEC §3), short as an evicted pointer's (jobs/evict.rs): the manifests
        // alone say nothing of the collisions that lengthen one.
        json.push_str(",\"handle\":\"");
        toolctx_core::handle::push_handle(
            &mut json,
            toolctx_core::handle::digest(filename),
            toolctx_core::handle::SHORT,
        );
        json.push('"');
        json.push_str(",\"toolName\":");
        toolctx_core::record::push_json_str(&mut json, &e.tool_name);
        json.push_str(",\"toolDescription\":");
        toolctx_core::record::push_json_str(&mut json, &e.tool_description);
        json.push_str(",\"args\":");
        json.push_str(e.args.get());
        if let Some(task) = &e.task_id {
            json.push_str(",\"taskId\":");
            json.push_str(&task.to_string());
        }
        if let Some(q) = &e.query_id {
            json.push_str(",\"queryId\":");
            toolctx_core::record::push_json_str(&mut json, q);
        }
        json.push_str(",\"argsHash\":");
        toolctx_core::record::push_json_str(&mut json, &e.args_hash);
        json.push_str(",\"timestamp\":");
        toolctx_core::record::push_json_str(&mut json, &e.created);
        json.push_str(",\"size\":");
        json.push_str(&e.size.to_string());
        json.push_str("}}");
    }
    json.push(']');
    json
}
