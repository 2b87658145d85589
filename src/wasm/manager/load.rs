//! `loadContexts` in steps: which records are held, which to read, and the `read` step
//! the driver runs (docs/protocol.md).

use js_sys::{Array, JSON};

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::JsContextManager;
use crate::error::Result;
use crate::store::{LoadStep, NotLoaded};
use crate::wasm::interop::errors::{invalid, IntoJs};
use crate::wasm::interop::steps::{self, LoadPlan, Skip};
use crate::wasm::interop::storage::host_failure;

#[wasm_bindgen(js_class = ContextManager)]
impl JsContextManager {
    /// `loadContexts`, its first step; the driver runs the rest (driver.js, `load`).
    /// `filepaths` as asked. Returns a `read` step (docs/protocol.md, [`steps::read_records`]):
    /// the paths to read and the texts of the records held in memory, each with its place
    /// in `filepaths`; a path in neither is skipped, its `onDebug` warning given. `id`
    /// names the load until `__loadEnd`; 0 when there is nothing to read (the load has
    /// ended).
    #[wasm_bindgen(js_name = "__loadBegin")]
    pub fn load_begin(&self, filepaths: JsValue) -> Result<JsValue, JsValue> {
        let loading = self.inner.begin_load().js()?;
        let list: &Array = filepaths.dyn_ref().ok_or_else(|| invalid("filepaths must be an array of strings"))?;
        let mut plan = LoadPlan::default();
        for (at, value) in list.iter().enumerate() {
            match value.as_string() {
                Some(asked) => self.plan_load(&mut plan, at as u32, &asked),
                None => {
                    let shown = JSON::stringify(&value)
                        .ok()
                        .and_then(|t| t.as_string())
                        .unwrap_or_else(|| format!("{value:?}"));
                    self.inner.debug(format!("Failed to load {shown}: a filepath must be a string"), None);
                }
            }
        }
        let mut id = 0;
        if !plan.reads.is_empty() {
            id = self.next_load.get().wrapping_add(1).max(1);
            self.next_load.set(id);
            self.loads.borrow_mut().insert(id, loading);
        }
        Ok(steps::read_records(id, &self.storage, &plan))
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
    /// Adds the path `asked`, at place `at` of the filepaths asked, to a load's plan.
    pub(super) fn plan_load(&self, plan: &mut LoadPlan, at: u32, asked: &str) {
        match self.inner.load_step(asked) {
            LoadStep::Held(bytes) => match std::str::from_utf8(&bytes) {
                Ok(text) => {
                    plan.held.push(text.to_owned());
                    plan.held_at.push(at);
                }
                Err(_) => self.inner.load_skipped(asked, &NotLoaded::NotARecord("not UTF-8 JSON text".to_owned())),
            },
            LoadStep::Read(path) => {
                plan.reads.push(path);
                plan.read_at.push(at);
            }
            LoadStep::Skipped => {}
        }
    }
}
