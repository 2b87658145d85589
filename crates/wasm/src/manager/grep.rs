//! What toolctx/tools reads of a record (references.js and grep.js, through the manager's
//! reader in context-manager.js), as `compute` requests (manager/mod.rs): a result's line
//! view (`lines`, crates/core/src/view.rs), and the lines of a text that grep_context's
//! linear-time matcher (crates/core/src/grep.rs) finds a pattern in.
//!
//! A grep asks for the same pattern once per chunk of lines: the patterns compiled last
//! are kept here, so no compiled pattern crosses the boundary as an object to free.

use std::cell::RefCell;

use serde_json::Value;

use toolctx_core::error::{Error, Result};
use toolctx_core::grep::LinePattern;

/// How many compiled patterns are kept (a few greps of the MCP server's run side by side).
const KEPT: usize = 4;

thread_local! {
    /// The patterns compiled last, the most recently used first.
    static COMPILED: RefCell<Vec<(String, LinePattern)>> = const { RefCell::new(Vec::new()) };
}

/// A result (`resultJson`, its JSON text) as the model reads it: its line view, the lines
/// passages number and the model's tools read and grep.
pub(super) fn lines(result_json: &str) -> Result<String> {
    let result: Value = toolctx_core::record::from_json(result_json)
        .map_err(|e| Error::invalid(format!("the result is not JSON: {e}")))?;
    Ok(toolctx_core::view::lines_of(&result))
}

/// The 0-based numbers of the lines of `text` (joined by `\n`) that hold a match of
/// `pattern`; `INVALID_ARGUMENT`, saying why, when it does not compile.
pub(super) fn matching_lines(pattern: &str, text: &str) -> Result<Vec<u32>> {
    COMPILED.with(|compiled| {
        let mut compiled = compiled.borrow_mut();
        match compiled.iter().position(|(p, _)| p == pattern) {
            Some(at) => compiled[..=at].rotate_right(1),
            None => {
                let made = LinePattern::new(pattern)?;
                compiled.truncate(KEPT - 1);
                compiled.insert(0, (pattern.to_owned(), made));
            }
        }
        Ok(compiled[0].1.matching_lines(text))
    })
}
