//! Plans (src/plan.rs) run by the JavaScript driver: the wasm half.
//!
//! No Rust future runs: an export that starts a plan returns its first step, the driver
//! (`pkg-template/driver.js`, `plan`) does what the step says and calls
//! `__planStep(id, outcomes)` for the next one, until the plan is done. The steps are
//! those of docs/protocol.md, built in src/wasm/interop/steps.rs: `run` (the plan's ops, all at
//! once), `lock` and `unlock` (the storage's named lock, in this process's turn at it),
//! `done` and `failed`; each carries the plan's `id`.
//!
//! A lock that fails is handed to the plan ([`Plan::lock_failed`]). The host's values are
//! typed here as [`JsStorage`] types its own calls.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;

use js_sys::Array;
use wasm_bindgen::prelude::*;

use super::interop::errors::to_js;
use super::interop::steps::{self, Kind};
use super::interop::storage::{host_failure, op_js, outcome_of, JsStorage};
use crate::error::{Error, ErrorKind, Result};
use crate::plan::{Plan, Step};

/// What a plan resolves with in JavaScript. (Each module uses the kinds its plans give:
/// records are kept by the core's alone, JSON answers are not the window's.)
#[cfg_attr(not(feature = "core"), allow(dead_code))]
pub enum Reply {
    /// This value.
    Value(JsValue),
    /// This JSON text, parsed by the driver once the wasm call has returned (`JSON.parse`
    /// run inside a wasm call, with wasm frames on the stack, has crashed Node 20's V8
    /// while deoptimising).
    Json(String),
    /// The records the driver kept in this run, by the numbers it gave them, in order.
    Kept(Vec<u32>),
}

/// A plan in flight.
struct Running {
    /// The storage it runs over.
    storage: Rc<JsStorage>,
    plan: Box<dyn Plan<Output = Reply>>,
    /// The ops of its last [`Step::Run`], whose outcomes the driver hands back.
    asked: Vec<crate::plan::Op>,
    lock: Lock,
}

/// The host lock of a plan.
enum Lock {
    Free,
    /// Asked for, by name.
    Taking(String),
    Held(String),
    /// Being released; the plan's result, when it finished holding the lock.
    Releasing(String, Option<Result<Reply>>),
}

thread_local! {
    static PLANS: RefCell<HashMap<u32, Running>> = RefCell::new(HashMap::new());
    static NEXT: Cell<u32> = const { Cell::new(0) };
}

/// Starts `plan` over the storage of `manager`, its result made a JavaScript value by `reply`: its
/// first step, for the driver.
pub fn start<P, F>(storage: Rc<JsStorage>, plan: P, reply: F) -> JsValue
where
    P: Plan + 'static,
    F: FnOnce(P::Output) -> Result<Reply> + 'static,
{
    let id = NEXT.with(|n| {
        n.set(n.get().wrapping_add(1));
        n.get()
    });
    let running = Running { storage, plan: Box::new(plan.map(reply)), asked: Vec::new(), lock: Lock::Free };
    advance(id, running, None)
}

/// The step of a plan that failed (before it began, or with its state dropped).
pub fn failed(err: Error) -> JsValue {
    finish(Err(err))
}

/// The step of an operation done before it needed a plan: `value`.
#[cfg_attr(not(feature = "core"), allow(dead_code))]
pub fn done(value: JsValue) -> JsValue {
    finish(Ok(Reply::Value(value)))
}

/// The next step of plan `id`, given the outcomes of its last one (see the module docs):
/// one a `run` op, in order; one for a `lock` (held, or not) and an `unlock`.
#[wasm_bindgen(js_name = "__planStep")]
pub fn plan_step(id: u32, outcomes: Array) -> JsValue {
    let Some(mut running) = PLANS.with(|p| p.borrow_mut().remove(&id)) else {
        return failed(Error::new(ErrorKind::Internal, "no plan runs under this id"));
    };
    match std::mem::replace(&mut running.lock, Lock::Free) {
        Lock::Taking(name) => match steps::outcome(&outcomes.get(0)) {
            Err(e) => {
                let step = running.plan.lock_failed(host_failure("lock", &name, e));
                advance(id, running, Some(step))
            }
            Ok(_) => {
                running.lock = Lock::Held(name);
                advance(id, running, None)
            }
        },
        Lock::Releasing(name, result) => match (steps::outcome(&outcomes.get(0)), result) {
            (Err(e), Some(result)) => {
                drop(running);
                finish(result.and(Err(host_failure("lock", &name, e))))
            }
            (Err(e), None) => {
                let step = running.plan.lock_failed(host_failure("lock", &name, e));
                advance(id, running, Some(step))
            }
            (Ok(_), Some(result)) => {
                drop(running);
                finish(result)
            }
            (Ok(_), None) => advance(id, running, None),
        },
        lock => {
            running.lock = lock;
            let typed = std::mem::take(&mut running.asked)
                .iter()
                .enumerate()
                .map(|(i, op)| outcome_of(op, &outcomes.get(i as u32)))
                .collect();
            let step = running.plan.step(typed);
            advance(id, running, Some(step))
        }
    }
}

/// Steps `running` from `step` (`None`: its next step, given no outcomes) until it needs
/// the driver; keeps it while it runs.
fn advance(id: u32, mut running: Running, step: Option<Step<Reply>>) -> JsValue {
    let mut next = step;
    let step = loop {
        let storage = &running.storage;
        let step = match next.take() {
            Some(step) => step,
            None => running.plan.step(Vec::new()),
        };
        match step {
            Step::Run(ops) => match ops.iter().map(op_js).collect::<Result<Array>>() {
                Ok(list) => {
                    running.asked = ops;
                    break steps::run(Kind::Run, Some(id), storage, list);
                }
                Err(e) => next = Some(Step::Done(Err(e))),
            },
            Step::Lock { name, wait } => match &running.lock {
                Lock::Held(held) => {
                    let error = Error::new(ErrorKind::Internal, "a plan took a lock it holds");
                    let step = steps::unlock(Some(id), storage, held);
                    running.lock = Lock::Releasing(held.clone(), Some(Err(error)));
                    break step;
                }
                _ => {
                    let step = steps::lock(Some(id), storage, &name, wait);
                    running.lock = Lock::Taking(name);
                    break step;
                }
            },
            Step::Unlock => match std::mem::replace(&mut running.lock, Lock::Free) {
                Lock::Held(name) => {
                    let step = steps::unlock(Some(id), storage, &name);
                    running.lock = Lock::Releasing(name, None);
                    break step;
                }
                _ => {
                    let error = Error::new(ErrorKind::Internal, "a plan released a lock it did not hold");
                    next = Some(running.plan.lock_failed(error));
                }
            },
            Step::Done(result) => match std::mem::replace(&mut running.lock, Lock::Free) {
                Lock::Held(name) => {
                    let step = steps::unlock(Some(id), storage, &name);
                    running.lock = Lock::Releasing(name, Some(result));
                    break step;
                }
                _ => {
                    drop(running);
                    return finish(result);
                }
            },
        }
    };
    PLANS.with(|p| p.borrow_mut().insert(id, running));
    step
}

/// The last step of a plan: its value, or its error. The plan's state is dropped before
/// (a pass it holds ends the operation).
fn finish(result: Result<Reply>) -> JsValue {
    match result {
        Ok(Reply::Value(value)) => steps::done(&value),
        Ok(Reply::Json(text)) => steps::done_json(&text),
        Ok(Reply::Kept(kept)) => steps::done_kept(&kept),
        Err(e) => steps::failed(&to_js(e)),
    }
}
