//! Plans (crates/core/src/plan.rs) run by the JavaScript driver: the wasm half.
//!
//! No Rust future runs: an export that starts a plan returns its first step, the driver
//! (`pkg-template/driver.js`, `plan`) does what the step says and calls
//! `__planStep(id, outcomes)` for the next one, until the plan is done. The steps are
//! those of docs/protocol.md, built in crates/wasm/src/interop/steps.rs: `run` (the plan's ops, all at
//! once), `change` (in order, up to the first that fails), `lock` and `unlock` (the
//! storage's named lock, in this process's turn at it), `wait`, `done` and `failed`; each
//! carries the plan's `id`, and each that does I/O the storage it runs on: the plan's, or
//! the remote of a plan that syncs ([`Plan::place`]).
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
use toolctx_core::error::{Error, ErrorKind, Result};
use toolctx_core::plan::{Place, Plan, Step};

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
    /// The storage it runs over, and the remote of one that syncs ([`Place`]).
    storage: Rc<JsStorage>,
    remote: Option<Rc<JsStorage>>,
    plan: Box<dyn Plan<Output = Reply>>,
    /// The ops of its last [`Step::Run`] or [`Step::Change`], whose outcomes the driver
    /// hands back.
    asked: Vec<toolctx_core::plan::Op>,
    lock: Lock,
}

impl Running {
    /// The storage at `place`.
    fn at(&self, place: Place) -> Result<Rc<JsStorage>> {
        match place {
            Place::Store => Ok(self.storage.clone()),
            Place::Remote => self
                .remote
                .clone()
                .ok_or_else(|| Error::new(ErrorKind::Internal, "a plan asked for a remote it has not")),
        }
    }
}

/// The host lock of a plan: its name, and where it is held.
enum Lock {
    Free,
    /// Asked for.
    Taking(String, Place),
    Held(String, Place),
    /// Being released; the plan's result, when it finished holding the lock.
    Releasing(String, Option<Result<Reply>>),
}

thread_local! {
    static PLANS: RefCell<HashMap<u32, Running>> = RefCell::new(HashMap::new());
    static NEXT: Cell<u32> = const { Cell::new(0) };
}

/// Starts `plan` over `storage`, its result made a JavaScript value by `reply`: its first
/// step, for the driver.
pub fn start<P, F>(storage: Rc<JsStorage>, plan: P, reply: F) -> JsValue
where
    P: Plan + 'static,
    F: FnOnce(P::Output) -> Result<Reply> + 'static,
{
    start_synced(storage, None, plan, reply)
}

/// [`start`] of a plan that also runs steps on `remote` ([`Place::Remote`]).
pub fn start_synced<P, F>(storage: Rc<JsStorage>, remote: Option<Rc<JsStorage>>, plan: P, reply: F) -> JsValue
where
    P: Plan + 'static,
    F: FnOnce(P::Output) -> Result<Reply> + 'static,
{
    let id = NEXT.with(|n| {
        n.set(n.get().wrapping_add(1));
        n.get()
    });
    let running = Running { storage, remote, plan: Box::new(plan.map(reply)), asked: Vec::new(), lock: Lock::Free };
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
        Lock::Taking(name, place) => match steps::outcome(&outcomes.get(0)) {
            Err(e) => {
                let step = running.plan.lock_failed(host_failure("lock", &name, e));
                advance(id, running, Some(step))
            }
            Ok(_) => {
                running.lock = Lock::Held(name, place);
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
            // A `change` answers the ops it ran: up to the first that failed.
            let typed = std::mem::take(&mut running.asked)
                .iter()
                .take(outcomes.length() as usize)
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
        let step = match next.take() {
            Some(step) => step,
            None => running.plan.step(Vec::new()),
        };
        match step_js(id, &mut running, step) {
            Ok(step) => break step,
            Err(Next::Step(step)) => next = Some(step),
            Err(Next::Finish(result)) => {
                drop(running);
                return finish(result);
            }
        }
    };
    PLANS.with(|p| p.borrow_mut().insert(id, running));
    step
}

/// What [`step_js`] answers besides a step for the driver.
enum Next {
    /// Step the plan on from this step, with no driver in between.
    Step(Step<Reply>),
    /// The plan is over, with this result.
    Finish(Result<Reply>),
}

/// `step` of plan `id` as the driver gets it, `running`'s lock and asked ops noted.
fn step_js(id: u32, running: &mut Running, step: Step<Reply>) -> std::result::Result<JsValue, Next> {
    let place = running.plan.place();
    let here = |running: &Running, place| running.at(place).map_err(|e| Next::Step(Step::Done(Err(e))));
    match step {
        Step::Run(ops) => ops_step(id, running, Kind::Run, ops, &*here(running, place)?),
        Step::Change(ops) => ops_step(id, running, Kind::Change, ops, &*here(running, place)?),
        Step::Lock { name, wait } => match std::mem::replace(&mut running.lock, Lock::Free) {
            Lock::Held(held, at) => {
                let error = Error::new(ErrorKind::Internal, "a plan took a lock it holds");
                let step = steps::unlock(Some(id), &*here(running, at)?, &held);
                running.lock = Lock::Releasing(held, Some(Err(error)));
                Ok(step)
            }
            _ => {
                let step = steps::lock(Some(id), &*here(running, place)?, &name, wait);
                running.lock = Lock::Taking(name, place);
                Ok(step)
            }
        },
        Step::Unlock => match std::mem::replace(&mut running.lock, Lock::Free) {
            Lock::Held(name, at) => {
                let step = steps::unlock(Some(id), &*here(running, at)?, &name);
                running.lock = Lock::Releasing(name, None);
                Ok(step)
            }
            _ => {
                let error = Error::new(ErrorKind::Internal, "a plan released a lock it did not hold");
                Err(Next::Step(running.plan.lock_failed(error)))
            }
        },
        Step::Wait => Ok(steps::wait(id)),
        Step::Done(result) => match std::mem::replace(&mut running.lock, Lock::Free) {
            Lock::Held(name, at) => {
                let step = steps::unlock(Some(id), &*here(running, at)?, &name);
                running.lock = Lock::Releasing(name, Some(result));
                Ok(step)
            }
            _ => Err(Next::Finish(result)),
        },
    }
}

/// A `run` or `change` step of `ops` over `storage`.
fn ops_step(
    id: u32,
    running: &mut Running,
    kind: Kind,
    ops: Vec<toolctx_core::plan::Op>,
    storage: &JsStorage,
) -> std::result::Result<JsValue, Next> {
    match ops.iter().map(op_js).collect::<Result<Array>>() {
        Ok(list) => {
            running.asked = ops;
            Ok(steps::run(kind, Some(id), storage, list))
        }
        Err(e) => Err(Next::Step(Step::Done(Err(e)))),
    }
}

/// The last step of a plan: its value, or its error. The plan's state is dropped before
/// (a pass it holds ends the operation). Also the one step of an operation done before
/// it needed a plan.
pub fn finish(result: Result<Reply>) -> JsValue {
    match result {
        Ok(Reply::Value(value)) => steps::done(&value),
        Ok(Reply::Json(text)) => steps::done_json(&text),
        Ok(Reply::Kept(kept)) => steps::done_kept(&kept),
        Err(e) => steps::failed(&to_js(e)),
    }
}
