//! Plans (src/plan.rs) run by the JavaScript driver: the wasm half.
//!
//! No Rust future runs: an export that starts a plan returns its first step, the driver
//! (`pkg-template/driver.js`, `plan`) does what the step says and calls
//! `__planStep(id, outcomes)` for the next one, until the plan is done. A step, as the
//! driver gets it:
//!
//! - `[0, value, json]`: done, resolve with `value` (`JSON.parse(value)` when `json`);
//!   `[4, error]`: failed, reject with `error`;
//! - `[1, id, host, calls]`: call the host, all at once. `calls` is flat, `fn, args, …`
//!   (`fn` undefined: the host has no such method, the call gives `undefined`); the
//!   outcomes go back flat in the same order, `ok, value or error, …`;
//! - `[2, id, host, lock, name]`: this process's turn at `name` for `host` (its plans
//!   and conversation stores take it one after the other), then `lock.call(host, name,
//!   callback)` (`lock` undefined: the host has none, the turn alone); once the callback runs (the lock is
//!   held), `__planStep(id, [])`; if the lock fails before, `[false, error]`;
//! - `[3, id]`: release that lock; once the host's `lock` settles, `[ok, value or error]`.
//!
//! A lock that fails is handed to the plan ([`Plan::lock_failed`]). The host's values are
//! typed here as [`JsStorage`] types its own calls.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;

use js_sys::Array;
use wasm_bindgen::prelude::*;

use super::errors::to_js;
use super::storage::JsStorage;
use crate::error::{Error, ErrorKind, Result};
use crate::plan::{Plan, Step};
use crate::store::ContextManager;

/// What a plan resolves with in JavaScript.
pub enum Reply {
    /// This value.
    Value(JsValue),
    /// This JSON text, parsed by the driver once the wasm call has returned (`JSON.parse`
    /// run inside a wasm call, with wasm frames on the stack, has crashed Node 20's V8
    /// while deoptimising).
    Json(String),
}

/// A plan in flight.
struct Running {
    /// Whose storage it runs over.
    manager: Rc<ContextManager<JsStorage>>,
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
pub fn start<P, F>(manager: Rc<ContextManager<JsStorage>>, plan: P, reply: F) -> Array
where
    P: Plan + 'static,
    F: FnOnce(P::Output) -> Result<Reply> + 'static,
{
    let id = NEXT.with(|n| {
        n.set(n.get().wrapping_add(1));
        n.get()
    });
    let running = Running { manager, plan: Box::new(plan.map(reply)), asked: Vec::new(), lock: Lock::Free };
    advance(id, running, None)
}

/// The step of a plan that failed (before it began, or with its state dropped).
pub fn failed(err: Error) -> Array {
    finish(Err(err))
}

/// The step of an operation done before it needed a plan: `value`.
pub fn done(value: JsValue) -> Array {
    finish(Ok(Reply::Value(value)))
}

/// The next step of plan `id`, given the outcomes of its last one (see the module docs).
#[wasm_bindgen(js_name = "__planStep")]
pub fn plan_step(id: u32, outcomes: Array) -> Array {
    let Some(mut running) = PLANS.with(|p| p.borrow_mut().remove(&id)) else {
        return failed(Error::new(ErrorKind::Internal, "no plan runs under this id"));
    };
    let ok = |i: u32| outcomes.get(i).as_bool() == Some(true);
    match std::mem::replace(&mut running.lock, Lock::Free) {
        Lock::Taking(name) if outcomes.length() > 0 => {
            let step = running.plan.lock_failed(super::storage::host_failure("lock", &name, outcomes.get(1)));
            advance(id, running, Some(step))
        }
        Lock::Taking(name) => {
            running.lock = Lock::Held(name);
            advance(id, running, None)
        }
        Lock::Releasing(name, result) if !ok(0) => {
            let e = super::storage::host_failure("lock", &name, outcomes.get(1));
            match result {
                Some(result) => {
                    drop(running);
                    finish(result.and(Err(e)))
                }
                None => {
                    let step = running.plan.lock_failed(e);
                    advance(id, running, Some(step))
                }
            }
        }
        Lock::Releasing(_, Some(result)) => {
            drop(running);
            finish(result)
        }
        Lock::Releasing(_, None) => advance(id, running, None),
        lock => {
            running.lock = lock;
            let storage = running.manager.storage();
            let typed = std::mem::take(&mut running.asked)
                .iter()
                .enumerate()
                .map(|(i, op)| storage.outcome(op, ok(2 * i as u32), outcomes.get(2 * i as u32 + 1)))
                .collect();
            let step = running.plan.step(typed);
            advance(id, running, Some(step))
        }
    }
}

/// Steps `running` from `step` (`None`: its next step, given no outcomes) until it needs
/// the driver; keeps it while it runs.
fn advance(id: u32, mut running: Running, step: Option<Step<Reply>>) -> Array {
    let mut next = step;
    let step = loop {
        let storage = running.manager.storage();
        let step = match next.take() {
            Some(step) => step,
            None => running.plan.step(Vec::new()),
        };
        match step {
            Step::Run(ops) => {
                let calls = Array::new();
                for op in &ops {
                    let (f, args) = storage.call_of(op);
                    calls.push(&f);
                    calls.push(&args);
                }
                running.asked = ops;
                break Array::of4(&1.into(), &id.into(), storage.host().0, &calls);
            }
            Step::Lock(name) => match &running.lock {
                Lock::Held(held) => {
                    let error = Error::new(ErrorKind::Internal, "a plan took a lock it holds");
                    running.lock = Lock::Releasing(held.clone(), Some(Err(error)));
                    break Array::of2(&3.into(), &id.into());
                }
                _ => {
                    let lock = storage.lock_fn();
                    let step = Array::of5(&2.into(), &id.into(), storage.host().0, &lock, &name.as_str().into());
                    running.lock = Lock::Taking(name);
                    break step;
                }
            },
            Step::Unlock => match std::mem::replace(&mut running.lock, Lock::Free) {
                Lock::Held(name) => {
                    running.lock = Lock::Releasing(name, None);
                    break Array::of2(&3.into(), &id.into());
                }
                _ => {
                    let error = Error::new(ErrorKind::Internal, "a plan released a lock it did not hold");
                    next = Some(running.plan.lock_failed(error));
                }
            },
            Step::Done(result) => match std::mem::replace(&mut running.lock, Lock::Free) {
                Lock::Held(name) => {
                    running.lock = Lock::Releasing(name, Some(result));
                    break Array::of2(&3.into(), &id.into());
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
fn finish(result: Result<Reply>) -> Array {
    match result {
        Ok(Reply::Value(value)) => Array::of3(&0.into(), &value, &false.into()),
        Ok(Reply::Json(text)) => Array::of3(&0.into(), &text.into(), &true.into()),
        Err(e) => Array::of2(&4.into(), &to_js(e)),
    }
}
