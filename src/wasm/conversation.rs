//! The exported `ConversationStore` class (SPEC §7) over host storage, with an
//! optional remote host storage to sync to.
//!
//! Each operation is a plan (`OperationPlan`, src/conversation/ops.rs) over the local
//! storage: `__perform(method, a, b, c)` starts it in `plans.rs` and gives its first
//! step, which the driver runs (`pkg-template/driver.js`, `plan`), calling `__planStep`
//! for the next; its answer crosses as JSON text, which the driver parses once the wasm
//! call has returned (a `JSON.parse` inside a wasm call can crash Node 20's V8: see
//! `Reply::Json`). A sync is steps of its own over the local storage and the remote
//! (`ConversationSync`). Arguments and results are converted in `interop/conversation.rs`.

use std::rc::Rc;

use js_sys::Array;
use wasm_bindgen::prelude::*;

use super::interop::conversation::{
    action_failure, answer_reply, failure_in, feed, from_js, ops_js, request, string_arg, to_js,
};
use super::interop::errors::IntoJs;
use super::interop::options::ConversationOptions;
use super::interop::steps::{self, Kind};
use super::interop::storage::{host_failure, JsStorage};
use super::plans;
use crate::conversation::{ArtifactInput, Conversations, MessageInput, OperationPlan, Side, Step, SyncRun};
use crate::error::{Error, ErrorKind, Result};
use crate::plan::Op;

#[wasm_bindgen(typescript_custom_section)]
const TYPES: &'static str = include_str!("conversation.d.ts");

/// The store's state and the host storages its steps run over, side by side.
struct Store {
    core: Rc<Conversations>,
    local: Rc<JsStorage>,
    remote: Option<JsStorage>,
}

impl Store {
    fn new(options: ConversationOptions) -> Result<Store> {
        let ConversationOptions { core, local, remote } = options;
        Ok(Store { core: Rc::new(Conversations::new(core, remote.is_some())?), local: Rc::new(local), remote })
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

/// The last step of a sync: `done` with its report (JSON text), or `failed`.
fn end(result: Result<JsValue>) -> JsValue {
    match result {
        Ok(answer) => match answer.as_string() {
            Some(json) => steps::done_json(&json),
            None => steps::done(&answer),
        },
        Err(e) => steps::failed(&super::interop::errors::to_js(e)),
    }
}

/// A sync of a store, run by the driver as an operation is (see [`JsOperation`]): its
/// steps read and change the local storage or the remote (each step carries its
/// storage), and take and release the writers' lock of either, one at a time.
#[wasm_bindgen(js_name = ConversationSync, skip_typescript)]
pub struct JsSync {
    store: Rc<Store>,
    run: SyncRun,
    /// What its last step asked for.
    last: SyncAt,
}

/// What a sync's last step asked for.
enum SyncAt {
    Nothing,
    Read(Side, Vec<Op>),
    Change(Vec<Op>),
    Lock(Side),
}

impl JsSync {
    fn storage(&self, side: Side) -> Result<&JsStorage> {
        match side {
            Side::Local => Ok(self.store.local.as_ref()),
            Side::Remote => {
                self.store.remote.as_ref().ok_or_else(|| Error::new(ErrorKind::Internal, "no remote to sync to"))
            }
        }
    }

    fn lock_name(&self, side: Side) -> String {
        let [local, remote] = self.store.lock_names();
        if side == Side::Local {
            local
        } else {
            remote
        }
    }

    /// How the last step went, typed.
    fn last(&mut self, outcomes: &Array) -> Result<()> {
        match std::mem::replace(&mut self.last, SyncAt::Nothing) {
            SyncAt::Nothing => Ok(()),
            SyncAt::Read(side, asked) => feed(self.run.files(side), asked, outcomes),
            SyncAt::Change(plan) => match failure_in(outcomes) {
                Some((at, err)) => Err(action_failure(&plan[at], err)),
                None => Ok(()),
            },
            SyncAt::Lock(side) => {
                steps::outcome(&outcomes.get(0)).map(drop).map_err(|e| host_failure("lock", &self.lock_name(side), e))
            }
        }
    }

    fn next(&mut self, outcomes: &Array) -> Result<JsValue> {
        let last = self.last(outcomes);
        Ok(match self.store.sync_step(&mut self.run, last)? {
            Step::Read(side, needs) => {
                let step = steps::run(Kind::Run, None, self.storage(side)?, ops_js(&needs));
                self.last = SyncAt::Read(side, needs);
                step
            }
            Step::Change(side, plan) => {
                let step = steps::run(Kind::Change, None, self.storage(side)?, ops_js(&plan));
                self.last = SyncAt::Change(plan);
                step
            }
            Step::Lock(side) => {
                let step = steps::lock(None, self.storage(side)?, &self.lock_name(side), true);
                self.last = SyncAt::Lock(side);
                step
            }
            Step::Unlock(side) => {
                self.last = SyncAt::Lock(side);
                steps::unlock(None, self.storage(side)?, &self.lock_name(side))
            }
            Step::Done(report) => end(to_js(&report)),
        })
    }
}

#[wasm_bindgen(js_class = ConversationSync)]
impl JsSync {
    /// The next step, given the outcomes of the last (none for the first).
    pub fn step(&mut self, outcomes: Array) -> JsValue {
        self.next(&outcomes).unwrap_or_else(|e| end(Err(e)))
    }
}

#[wasm_bindgen(js_class = ConversationStore)]
impl JsConversationStore {
    /// Panics on purpose, so tests can check that a trap in this module (a wasm module of
    /// its own, src/wasm/mod.rs) becomes an `INTERNAL` error and that the module works
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

    /// A sync of the store (`INVALID_ARGUMENT` without a remote).
    #[wasm_bindgen(js_name = "__sync")]
    pub fn begin_sync(&self) -> Result<JsSync, JsValue> {
        let run = self.inner.begin_sync().js()?;
        Ok(JsSync { store: self.inner.clone(), run, last: SyncAt::Nothing })
    }

    /// The first step of the operation of `method` (a method of the class) called with
    /// `a`, `b`, `c`: a plan's (`failed` for arguments it refuses).
    #[wasm_bindgen(js_name = "__perform")]
    pub fn perform(&self, method: &str, a: JsValue, b: JsValue, c: JsValue) -> JsValue {
        let request = if method == "appendWithArtifact" {
            from_js::<MessageInput>(&b, "message").and_then(|message| {
                let artifact: ArtifactInput = from_js(&c, "artifact")?;
                self.inner.append_request(&string_arg(&a, "conversation id")?, message, Some(artifact))
            })
        } else {
            request(&self.inner, method, &a, &b)
        };
        match request {
            Ok(request) => plans::start(
                self.inner.local.clone(),
                OperationPlan::new(self.inner.core.clone(), request),
                answer_reply,
            ),
            Err(e) => plans::failed(e),
        }
    }
}
