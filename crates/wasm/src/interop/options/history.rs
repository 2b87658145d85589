//! The options of `ContextHistory.open`: its id, where its file lives, and how it is
//! loaded (`discardCorrupt`, `onDebug`), read once when the history is opened.

use js_sys::Function;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::super::args::{get, opt_string};
use super::super::host::storage_from;
use super::super::storage::JsStorage;
use super::{folder, storage_option};
use toolctx_core::error::{Error, Result};
use toolctx_core::window::history;

/// The options of a `ContextHistory`, checked.
pub struct HistoryOptions {
    /// The history's id.
    pub id: String,
    /// Its file: `{contextDir}/window/{id}.json`.
    pub path: String,
    /// The storage the file is in.
    pub storage: JsStorage,
    /// `discardCorrupt`: a file that does not parse loads as an empty history.
    pub discard_corrupt: bool,
    /// `onDebug`: it hears that a corrupt file was discarded.
    pub on_debug: Option<Function>,
}

impl HistoryOptions {
    /// Reads `options`, which must name an `id`.
    pub fn read(options: &JsValue) -> Result<HistoryOptions> {
        if !options.is_object() {
            return Err(Error::invalid("ContextHistory.open needs an options object with an id"));
        }
        let id = get(options, "id").as_string().ok_or_else(|| Error::invalid("id must be a string"))?;
        let on_debug = on_debug(options);
        let given = storage_option(options, "storage", "fileSystem");
        let (_, root) = folder(opt_string(options, "contextDir")?, &given)?;
        let path = history::history_path(&root, &id)?;
        let storage = storage_from(given, &root, &|note| debug_to(&on_debug, note))?;
        let discard_corrupt = get(options, "discardCorrupt").is_truthy();
        Ok(HistoryOptions { id, path, storage, discard_corrupt, on_debug })
    }
}

/// Tells `on_debug` (a history's `onDebug`: it hears the message alone).
pub(crate) fn debug_to(on_debug: &Option<Function>, message: &str) {
    if let Some(f) = on_debug {
        let _ = f.call1(&JsValue::UNDEFINED, &message.into());
    }
}

/// The `onDebug` option of a history (anything else than a function: none).
pub(crate) fn on_debug(options: &JsValue) -> Option<Function> {
    get(options, "onDebug").dyn_into::<Function>().ok()
}
