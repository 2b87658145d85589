//! What toolctx/tools reads of a record (references.js and grep.js, through the manager's
//! reader in context-manager.js): a result's line view (`lines`, crates/core/src/view.rs),
//! and `LinePattern`, grep_context's linear-time line matcher (crates/core/src/grep.rs),
//! compiled once per call of the tool and asked which lines of each chunk of text match.

use serde_json::Value;
use wasm_bindgen::prelude::*;

use super::super::interop::errors::{invalid, IntoJs};
use toolctx_core::error::Error;
use toolctx_core::grep::LinePattern;

/// A result (`resultJson`, its JSON text) as the model reads it: its line view, the lines
/// passages number and the model's tools read and grep.
#[wasm_bindgen(js_name = lines)]
pub fn lines(result_json: &str) -> Result<String, JsValue> {
    let result: Value = toolctx_core::record::from_json(result_json)
        .map_err(|e| Error::invalid(format!("the result is not JSON: {e}")))
        .js()?;
    Ok(toolctx_core::view::lines_of(&result))
}

/// A compiled `grep_context` pattern (internal: toolctx/tools makes it through
/// context-manager.js's `linePattern`).
#[wasm_bindgen(js_name = LinePattern, skip_typescript)]
pub struct JsLinePattern {
    inner: LinePattern,
}

#[wasm_bindgen(js_class = LinePattern)]
impl JsLinePattern {
    /// Compiles `pattern`; `INVALID_ARGUMENT`, saying why, when it is not a string or does
    /// not compile.
    #[wasm_bindgen(constructor)]
    pub fn new(pattern: JsValue) -> Result<JsLinePattern, JsValue> {
        let pattern = pattern.as_string().ok_or_else(|| invalid("pattern must be a string"))?;
        Ok(JsLinePattern { inner: LinePattern::new(&pattern).js()? })
    }

    /// The 0-based numbers of the lines of `text` (joined by `\n`) that hold a match.
    #[wasm_bindgen(js_name = matchingLines)]
    pub fn matching_lines(&self, text: &str) -> Vec<u32> {
        self.inner.matching_lines(text)
    }
}
