//! `loadContexts` in steps: which records are held, which to read, and the `read` step
//! the driver runs (docs/protocol.md).

use js_sys::{Array, JSON};

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::JsContextManager;
use crate::error::Result;
use crate::store::{LoadStep, NotLoaded};
use crate::wasm::interop::errors::{invalid, IntoJs};
use crate::wasm::interop::steps::{self, LoadSource, Skip};
use crate::wasm::interop::storage::host_failure;

/// What `__loadBegin` says of a load, gathered ([`JsContextManager::plan_load`]).
#[derive(Default)]
pub(super) struct LoadPlan {
    /// Where the record of each path asked comes from ([`LoadSource`]).
    sources: Vec<u8>,
    /// The texts of the records held in memory, NUL-joined.
    held: String,
    reads: Vec<String>,
}

#[wasm_bindgen(js_class = ContextManager)]
impl JsContextManager {
    /// `loadContexts`, its first step; the driver runs the rest (driver.js, `load`).
    /// `filepaths` as asked, also NUL-joined in `joined` when they are all strings free
    /// of NUL (one crossing for all). Returns a `read` step (docs/protocol.md): `sources`,
    /// a [`LoadSource`] byte per filepath (held in memory, to read, skipped with its `onDebug`
    /// warning given); `held`, the texts of the held ones, NUL-joined (JSON text never
    /// holds a NUL); `paths`, the paths to read, in order. `id` names the load until
    /// `__loadEnd`; 0 when there is nothing to read (the load has ended).
    #[wasm_bindgen(js_name = "__loadBegin")]
    pub fn load_begin(&self, filepaths: JsValue, joined: Option<String>) -> Result<JsValue, JsValue> {
        let loading = self.inner.begin_load().js()?;
        let list: &Array = filepaths.dyn_ref().ok_or_else(|| invalid("filepaths must be an array of strings"))?;
        let mut plan = LoadPlan::default();
        match joined {
            Some(joined) if list.length() > 0 => joined.split('\0').for_each(|asked| self.plan_load(&mut plan, asked)),
            _ => {
                for value in list.iter() {
                    match value.as_string() {
                        Some(asked) => self.plan_load(&mut plan, &asked),
                        None => {
                            let shown = JSON::stringify(&value)
                                .ok()
                                .and_then(|t| t.as_string())
                                .unwrap_or_else(|| format!("{value:?}"));
                            self.inner.debug(format!("Failed to load {shown}: a filepath must be a string"), None);
                            plan.sources.push(LoadSource::Skipped.code());
                        }
                    }
                }
            }
        }
        let mut id = 0;
        if !plan.reads.is_empty() {
            id = self.next_load.get().wrapping_add(1).max(1);
            self.next_load.set(id);
            self.loads.borrow_mut().insert(id, loading);
        }
        Ok(steps::read_records(id, &self.storage, &plan.sources, &plan.held, plan.reads))
    }

    /// The end of load `id` (0: one that read nothing): `skipped`, `[{asked, path, why,
    /// value}]`, each path it skipped after its read, in order ([`Skip`]: the storage has
    /// no such file; its read failed with `value`; what it read is not a whole record,
    /// `value` says why). The `onDebug` warnings are given in that order.
    #[wasm_bindgen(js_name = "__loadEnd")]
    pub fn load_end(&self, id: u32, skipped: JsValue) {
        let loading = self.loads.borrow_mut().remove(&id);
        for s in steps::skipped(&skipped) {
            let why = match s.why {
                Some(Skip::Missing) => NotLoaded::Missing,
                Some(Skip::Unreadable) => NotLoaded::Unreadable(host_failure("read", &s.path, s.value)),
                _ => NotLoaded::NotARecord(s.value.as_string().unwrap_or_default()),
            };
            self.inner.load_skipped(&s.asked, &why);
        }
        drop(loading);
    }
}

impl JsContextManager {
    /// Adds the path `asked` to a load's plan.
    pub(super) fn plan_load(&self, plan: &mut LoadPlan, asked: &str) {
        let kind = match self.inner.load_step(asked) {
            LoadStep::Held(bytes) => match std::str::from_utf8(&bytes) {
                Ok(text) if !text.contains('\0') => {
                    if !plan.held.is_empty() {
                        plan.held.push('\0'); // a record's text is never empty
                    }
                    plan.held.push_str(text);
                    LoadSource::Held
                }
                _ => {
                    self.inner.load_skipped(asked, &NotLoaded::NotARecord("not UTF-8 JSON text".to_owned()));
                    LoadSource::Skipped
                }
            },
            LoadStep::Read(path) => {
                plan.reads.push(path);
                LoadSource::Read
            }
            LoadStep::Skipped => LoadSource::Skipped,
        };
        plan.sources.push(kind.code());
    }
}
