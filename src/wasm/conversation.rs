//! The exported `ConversationStore` class (SPEC §7) over host storage, with an
//! optional remote host storage to sync to.
//!
//! Its arguments and results are converted in `interop/conversation.rs` (JSON text both
//! ways; `conversation.js` parses the results once the wasm call has returned, as a
//! `JSON.parse` inside a wasm call can crash Node 20's V8: see `__pointers` in
//! `manager/select.rs`).

use std::rc::Rc;

use js_sys::Array;
use wasm_bindgen::prelude::*;

use super::interop::conversation::{
    action_failure, answer_js, failure_in, feed, from_js, ops_js, request, string_arg, to_js,
};
use super::interop::errors::IntoJs;
use super::interop::options::ConversationOptions;
use super::interop::steps::{self, Kind};
use super::interop::storage::{host_failure, JsStorage};
use crate::conversation::{ArtifactInput, Conversations, Decision, MessageInput, Operation, Side, Step, SyncRun};
use crate::error::{Error, ErrorKind, Result};
use crate::plan::Op;

#[wasm_bindgen(typescript_custom_section)]
const TYPES: &'static str = include_str!("conversation.d.ts");

/// The store's state and the host storages its steps run over, side by side.
struct Store {
    core: Conversations,
    local: JsStorage,
    remote: Option<JsStorage>,
}

impl Store {
    fn new(options: ConversationOptions) -> Result<Store> {
        let ConversationOptions { core, local, remote } = options;
        Ok(Store { core: Conversations::new(core, remote.is_some())?, local, remote })
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

/// One operation of a store, run by the driver (conversation.js, driver.js `run`): each
/// `step(outcomes)` answers the last step with its outcomes and gives the next
/// (docs/protocol.md). A writing operation takes the local writers' lock first (`lock`),
/// reads what it needs (`run`: reads and listings), makes its changes in order (`change`;
/// a taken name is drawn again and the changes run on from there), releases the lock
/// (`unlock`), and ends (`done`: the answer as JSON text, or `failed`).
#[wasm_bindgen(js_name = ConversationOp, skip_typescript)]
pub struct JsOperation {
    store: Rc<Store>,
    op: Operation,
    at: OpAt,
    /// It holds the local writers' lock.
    locked: bool,
}

/// Where an operation is: what its last step asked for.
enum OpAt {
    Start,
    Locking,
    Reading(Vec<Op>),
    Changing(Decision),
    /// Releasing the lock; the operation's result.
    Releasing(Result<JsValue>),
    Over,
}

impl JsOperation {
    fn storage(&self) -> &JsStorage {
        &self.store.local
    }

    fn lock_name(&self) -> String {
        let [local, _] = self.store.lock_names();
        local
    }

    /// The next step, given the outcomes of the last.
    fn next(&mut self, outcomes: &Array) -> JsValue {
        let result = match std::mem::replace(&mut self.at, OpAt::Over) {
            OpAt::Start if self.op.exclusive() => {
                self.at = OpAt::Locking;
                return steps::lock(None, self.storage(), &self.lock_name(), true);
            }
            OpAt::Start => self.read(),
            OpAt::Locking => match steps::outcome(&outcomes.get(0)) {
                Ok(_) => {
                    self.locked = true;
                    self.read()
                }
                Err(e) => Err(host_failure("lock", &self.lock_name(), e)),
            },
            OpAt::Reading(asked) => feed(&mut self.op.files, asked, outcomes).and_then(|()| self.read()),
            OpAt::Changing(decision) => match failure_in(outcomes) {
                None => answer_js(self.store.finish(decision)),
                Some((at, err)) => {
                    let error = action_failure(&decision.actions[self.op.done + at], err);
                    self.store.failed(&mut self.op, &decision, at, error).and_then(|()| self.change())
                }
            },
            OpAt::Releasing(result) => {
                let released = steps::outcome(&outcomes.get(0));
                // A release that fails fails the operation, unless it failed already.
                let result = match (result, released) {
                    (Ok(_), Err(e)) => Err(host_failure("lock", &self.lock_name(), e)),
                    (result, _) => result,
                };
                return end(result);
            }
            OpAt::Over => Err(Error::new(ErrorKind::Internal, "an operation was stepped after it ended")),
        };
        match result {
            // A step to take.
            Ok(step) if !matches!(self.at, OpAt::Over) => step,
            // The answer (`Ok`) or the error: the lock released first.
            result if self.locked => {
                self.locked = false;
                self.at = OpAt::Releasing(result);
                steps::unlock(None, self.storage(), &self.lock_name())
            }
            result => end(result),
        }
    }

    /// The reads it still needs, as a step; once it has all, its changes.
    fn read(&mut self) -> Result<JsValue> {
        let needs = self.store.needs(&mut self.op);
        if needs.is_empty() {
            return self.change();
        }
        let step = steps::run(Kind::Run, None, self.storage(), ops_js(&needs));
        self.at = OpAt::Reading(needs);
        Ok(step)
    }

    /// Its changes from where the last stopped, as a step; with none left, its answer
    /// (`at` stays `Over`).
    fn change(&mut self) -> Result<JsValue> {
        let decision = self.store.decide(&mut self.op)?;
        if decision.actions.len() <= self.op.done {
            return answer_js(self.store.finish(decision));
        }
        let step = steps::run(Kind::Change, None, self.storage(), ops_js(&decision.actions[self.op.done..]));
        self.at = OpAt::Changing(decision);
        Ok(step)
    }
}

/// The last step of an operation or a sync: `done` with its answer (JSON text, or
/// `undefined`), or `failed`.
fn end(result: Result<JsValue>) -> JsValue {
    match result {
        Ok(answer) => match answer.as_string() {
            Some(json) => steps::done_json(&json),
            None => steps::done(&answer),
        },
        Err(e) => steps::failed(&super::interop::errors::to_js(e)),
    }
}

#[wasm_bindgen(js_class = ConversationOp)]
impl JsOperation {
    /// The next step, given the outcomes of the last (none for the first).
    pub fn step(&mut self, outcomes: Array) -> JsValue {
        self.next(&outcomes)
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
            Side::Local => Ok(&self.store.local),
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

    /// The operation of `method` (a method of the class) called with `a`, `b`, `c`.
    #[wasm_bindgen(js_name = "__begin")]
    pub fn begin(&self, method: &str, a: JsValue, b: JsValue, c: JsValue) -> Result<JsOperation, JsValue> {
        let request = if method == "appendWithArtifact" {
            let message: MessageInput = from_js(&b, "message").js()?;
            let artifact: ArtifactInput = from_js(&c, "artifact").js()?;
            self.inner.append_request(&string_arg(&a, "conversation id").js()?, message, Some(artifact)).js()?
        } else {
            request(&self.inner, method, &a, &b).js()?
        };
        let op = self.inner.begin(request);
        Ok(JsOperation { store: self.inner.clone(), op, at: OpAt::Start, locked: false })
    }
}
