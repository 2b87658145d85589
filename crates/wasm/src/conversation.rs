//! The exported `ConversationStore` class (SPEC §7) over host storage, with an
//! optional remote host storage to sync to.
//!
//! Each operation is a plan (`OperationPlan`, crates/core/src/conversation/ops.rs) over the local
//! storage: `perform({kind, ...})` (its kind and named arguments: protocol.js
//! `OPERATION`) starts it in `plans.rs` and gives its first step, which the driver runs (`pkg-template/driver.js`, `plan`), calling `__planStep`
//! for the next; its answer crosses as JSON text, which the driver parses once the wasm
//! call has returned (a `JSON.parse` inside a wasm call can crash Node 20's V8: see
//! `Reply::Json`). A sync is a plan too (`SyncPlan`, crates/core/src/conversation/sync/plan.rs), whose
//! steps run on the local storage or the remote. Arguments and results are converted in
//! `interop/conversation.rs`.

use std::rc::Rc;

use wasm_bindgen::prelude::*;

use super::interop::conversation::{answer_reply, request, to_json};
use super::interop::errors::IntoJs;
use super::interop::options::ConversationOptions;
use super::interop::storage::JsStorage;
use super::plans::{self, Reply};
use toolctx_core::conversation::{Conversations, OperationPlan, SyncPlan};
use toolctx_core::error::Result;

#[wasm_bindgen(typescript_custom_section)]
const TYPES: &'static str = include_str!("conversation.d.ts");

/// The store's state and the host storages its steps run over, side by side.
struct Store {
    core: Rc<Conversations>,
    local: Rc<JsStorage>,
    remote: Option<Rc<JsStorage>>,
}

impl Store {
    fn new(options: ConversationOptions) -> Result<Store> {
        let ConversationOptions { core, local, remote } = options;
        let core = Rc::new(Conversations::new(core, remote.is_some())?);
        Ok(Store { core, local: Rc::new(local), remote: remote.map(Rc::new) })
    }
}

impl std::ops::Deref for Store {
    type Target = Conversations;

    fn deref(&self) -> &Conversations {
        &self.core
    }
}

/// Conversations, messages and artifacts over host storage.
#[wasm_bindgen(js_name = ConversationStore, skip_typescript)]
pub struct JsConversationStore {
    inner: Rc<Store>,
}

#[wasm_bindgen(js_class = ConversationStore)]
impl JsConversationStore {
    /// Panics on purpose, so tests can check that a trap in this module (a wasm module of
    /// its own, crates/wasm/src/lib.rs) becomes an `INTERNAL` error and that the module works
    /// again afterwards. Not part of the API.
    #[wasm_bindgen(js_name = "__panicForTests")]
    pub fn panic_for_tests(message: String) {
        panic!("{message}");
    }

    /// A store over the given (or the runtime's default) storage, syncing to `remote`.
    #[wasm_bindgen(js_name = "__open")]
    pub fn open(options: JsValue) -> Result<JsConversationStore, JsValue> {
        ConversationOptions::read(&options).and_then(Store::new).map(|s| JsConversationStore { inner: Rc::new(s) }).js()
    }

    /// The first step of a sync of the store: its plan's ([`SyncPlan`], whose steps run on
    /// the local storage or the remote), resolving to its report as JSON text; `failed`
    /// (`INVALID_ARGUMENT`) without a remote.
    #[wasm_bindgen(js_name = "__sync")]
    pub fn sync(&self) -> JsValue {
        match SyncPlan::new(self.inner.core.clone()) {
            Ok(plan) => {
                let (local, remote) = (self.inner.local.clone(), self.inner.remote.clone());
                plans::start_synced(local, remote, plan, |report| Ok(Reply::Json(to_json(&report)?)))
            }
            Err(e) => plans::failed(e),
        }
    }

    /// The first step of the operation `op` (`{kind, ...}`: interop/conversation.rs,
    /// `OperationKind`): a plan's (`failed` for arguments it refuses).
    pub fn perform(&self, op: JsValue) -> JsValue {
        match request(&self.inner, &op) {
            Ok(request) => plans::start(
                self.inner.local.clone(),
                OperationPlan::new(self.inner.core.clone(), request),
                answer_reply,
            ),
            Err(e) => plans::failed(e),
        }
    }
}
