//! `loadContexts`: the load plan (crates/core/src/store/load.rs) over the host's storage; the driver
//! reads and parses the records and resolves with them (docs/protocol.md).

use js_sys::{Array, JSON};

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::JsContextManager;
use crate::plans::{self, Reply};
use toolctx_core::error::{Error, Result};
use toolctx_core::store::LoadRecords;

impl JsContextManager {
    /// `loadContexts(filepaths)`: the first step of its plan, which resolves to the
    /// records, in the order asked. A filepath that is not a string is skipped with an
    /// `onDebug` warning, as a path outside the store is.
    pub(super) fn load_contexts(&self, filepaths: &JsValue) -> Result<JsValue> {
        let list: &Array =
            filepaths.dyn_ref().ok_or_else(|| Error::invalid("filepaths must be an array of strings"))?;
        let mut asked = Vec::with_capacity(list.length() as usize);
        for value in list.iter() {
            match value.as_string() {
                Some(path) => asked.push(path),
                None => {
                    let shown = JSON::stringify(&value)
                        .ok()
                        .and_then(|t| t.as_string())
                        .unwrap_or_else(|| format!("{value:?}"));
                    self.inner.debug(format!("Failed to load {shown}: a filepath must be a string"), None);
                }
            }
        }
        let plan = LoadRecords::new(self.inner.clone(), asked)?;
        Ok(plans::start(self.storage.clone(), plan, |kept| Ok(Reply::Kept(kept))))
    }
}
