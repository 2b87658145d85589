//! The host-driven executor: no export returns a Promise, and the core never awaits
//! JavaScript.
//!
//! An operation that needs I/O is a task: a Rust future, started by the export and
//! identified by a number. The future runs only inside [`poll`], which the JS driver
//! (`driver.js`) calls. Where the workflow needs the host (a storage read, a write, a
//! lock, the `embed` callback), it queues a host call and waits; the driver runs the
//! calls it receives from `poll`, hands each result back with [`complete`], and polls
//! again. So every entry into the module is a synchronous call from JavaScript: a
//! panic becomes a trap that the driver catches where it happens (SPEC §9).
//!
//! What `poll` returns, one flat array of entries:
//! - `[0, task, ok, value]`: a task finished (resolved with `value`, or rejected);
//! - `[0, task, true, text, true]`: a task finished with JSON text ([`Done::Json`]),
//!   resolved with `JSON.parse(text)` once `poll` has returned;
//! - `[1, call, this, fn, args]`: call `fn` on `this` with `args`, await it, and
//!   `complete(call, ok, value)`;
//! - `[2, call, this, lockFn, name]`: `this.lockFn(name, callback)`; complete the call
//!   when the callback runs (the lock is held) or when the lock fails before;
//! - `[3, call, lockCall]`: release the lock of `lockCall`, then complete the call with
//!   how the host's `lock` settled;
//! - `[5]`: tasks are ready again (they yielded once their host calls were queued):
//!   start the calls, then poll again.

use std::cell::{Cell, RefCell};
use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};

use js_sys::{Array, Function};
use wasm_bindgen::prelude::*;

type Task = Pin<Box<dyn Future<Output = Result<Done, JsValue>>>>;

/// What a task resolves with: a value, or JSON text that the driver parses after the
/// wasm call has returned. `JSON.parse` run inside a wasm call (wasm frames on the
/// stack) has crashed Node 20's V8 while deoptimising, so results are parsed outside.
pub enum Done {
    Value(JsValue),
    #[cfg_attr(not(feature = "core"), allow(dead_code))]
    Json(String),
}

impl From<JsValue> for Done {
    fn from(value: JsValue) -> Done {
        Done::Value(value)
    }
}

enum Call {
    Waiting(Option<Waker>),
    Settled(Result<JsValue, JsValue>),
}

#[derive(Default)]
struct Runtime {
    next_id: Cell<u32>,
    tasks: RefCell<HashMap<u32, Task>>,
    ready: RefCell<VecDeque<u32>>,
    calls: RefCell<HashMap<u32, Call>>,
    /// What the next `poll` hands to the driver.
    out: RefCell<Vec<JsValue>>,
    /// Host calls queued so far.
    calls_queued: Cell<u64>,
    /// Tasks started so far (for the tests: the common save starts none).
    spawned: Cell<u64>,
}

thread_local! {
    static RUNTIME: Runtime = Runtime::default();
}

impl Runtime {
    fn id(&self) -> u32 {
        let id = self.next_id.get().wrapping_add(1);
        self.next_id.set(id);
        id
    }
}

struct TaskWaker(u32);

impl Wake for TaskWaker {
    fn wake(self: Arc<Self>) {
        RUNTIME.with(|rt| rt.ready.borrow_mut().push_back(self.0));
    }
}

/// Starts `work` as a task and returns its id; the driver settles the caller's Promise
/// when `poll` reports it finished.
pub fn spawn(work: impl Future<Output = Result<JsValue, JsValue>> + 'static) -> u32 {
    spawn_done(async move { work.await.map(Done::Value) })
}

/// [`spawn`] for a task that may finish with JSON text ([`Done::Json`]).
pub fn spawn_done(work: impl Future<Output = Result<Done, JsValue>> + 'static) -> u32 {
    RUNTIME.with(|rt| {
        let id = rt.id();
        rt.spawned.set(rt.spawned.get() + 1);
        rt.tasks.borrow_mut().insert(id, Box::pin(work));
        rt.ready.borrow_mut().push_back(id);
        id
    })
}

/// Whether tasks were woken and wait for the driver's next poll (a synchronous call
/// that ended an operation `close()` waits for wakes it).
#[cfg_attr(not(feature = "core"), allow(dead_code))]
pub fn woken() -> bool {
    RUNTIME.with(|rt| !rt.ready.borrow().is_empty())
}

/// How many tasks were started so far.
#[cfg_attr(not(feature = "core"), allow(dead_code))]
pub fn spawned() -> u64 {
    RUNTIME.with(|rt| rt.spawned.get())
}

/// A task that has already failed with `err` (an argument error of an async method).
pub fn failed(err: JsValue) -> u32 {
    spawn(async move { Err(err) })
}

/// A task that has already finished with `value`.
#[cfg_attr(not(feature = "core"), allow(dead_code))]
pub fn done(value: impl Into<Done> + 'static) -> u32 {
    let value = value.into();
    spawn_done(async move { Ok(value) })
}

/// Runs every task that can make progress; returns what finished and the host calls
/// to run (see the module docs).
// Exported by the module that runs tasks (core): the window and conversation modules run
// none (window.js and conversation.js do their I/O), so their JsStorage's futures, and
// this executor, are not in them.
#[cfg_attr(feature = "core", wasm_bindgen(js_name = "__poll"))]
pub fn poll() -> Array {
    RUNTIME.with(|rt| {
        // In rounds: the tasks ready now; those woken meanwhile run in the next round,
        // unless this one queued host calls, which the driver starts first.
        loop {
            let round: Vec<u32> = rt.ready.borrow_mut().drain(..).collect();
            if round.is_empty() {
                break;
            }
            let queued = rt.calls_queued.get();
            for id in round {
                // Out of the map while it runs: polling may spawn or wake other tasks.
                let Some(mut task) = rt.tasks.borrow_mut().remove(&id) else { continue };
                let waker = Waker::from(Arc::new(TaskWaker(id)));
                match task.as_mut().poll(&mut Context::from_waker(&waker)) {
                    Poll::Pending => {
                        rt.tasks.borrow_mut().insert(id, task);
                    }
                    Poll::Ready(result) => {
                        let entry = match result {
                            Ok(Done::Value(v)) => Array::of4(&0.into(), &id.into(), &true.into(), &v),
                            Ok(Done::Json(text)) => {
                                Array::of5(&0.into(), &id.into(), &true.into(), &text.into(), &true.into())
                            }
                            Err(e) => Array::of4(&0.into(), &id.into(), &false.into(), &e),
                        };
                        rt.out.borrow_mut().push(entry.into());
                    }
                }
            }
            if rt.calls_queued.get() > queued && !rt.ready.borrow().is_empty() {
                rt.out.borrow_mut().push(Array::of1(&5.into()).into());
                break;
            }
        }
        rt.out.take().into_iter().collect()
    })
}

/// The result of a host call that `poll` handed out.
#[cfg_attr(feature = "core", wasm_bindgen(js_name = "__complete"))]
pub fn complete(call: u32, ok: bool, value: JsValue) {
    RUNTIME.with(|rt| {
        let mut calls = rt.calls.borrow_mut();
        // A call whose task is gone (dropped) has no entry any more: nothing to do.
        if let Some(entry) = calls.get_mut(&call) {
            let settled = Call::Settled(if ok { Ok(value) } else { Err(value) });
            if let Call::Waiting(Some(waker)) = std::mem::replace(entry, settled) {
                waker.wake();
            }
        }
    })
}

/// A queued host call, settled by [`complete`].
pub struct HostCall(u32);

impl HostCall {
    fn queue(entry: impl FnOnce(u32) -> Array) -> HostCall {
        RUNTIME.with(|rt| {
            let id = rt.id();
            rt.calls_queued.set(rt.calls_queued.get() + 1);
            rt.calls.borrow_mut().insert(id, Call::Waiting(None));
            rt.out.borrow_mut().push(entry(id).into());
            HostCall(id)
        })
    }

    /// `f.apply(this, args)`, awaited by the driver.
    pub fn new(this: &JsValue, f: &Function, args: &[JsValue]) -> HostCall {
        let args: Array = args.iter().collect();
        HostCall::queue(|id| Array::of5(&1.into(), &id.into(), this, f, &args))
    }

    /// `this.lock(name, callback)` after this process's turn at `name` (`lock` undefined:
    /// the turn only): settles once the lock is held (or failed).
    pub fn lock(this: &JsValue, lock: &JsValue, name: &str) -> HostCall {
        HostCall::queue(|id| Array::of5(&2.into(), &id.into(), this, lock, &name.into()))
    }

    /// Releases the lock that the call `lock_call` took; settles with how the host's
    /// `lock` ended.
    pub fn unlock(lock_call: u32) -> HostCall {
        HostCall::queue(|id| Array::of3(&3.into(), &id.into(), &lock_call.into()))
    }

    /// The call's id (for [`HostCall::unlock`]).
    pub fn id(&self) -> u32 {
        self.0
    }
}

impl Future for HostCall {
    type Output = Result<JsValue, JsValue>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        RUNTIME.with(|rt| {
            let mut calls = rt.calls.borrow_mut();
            match calls.remove(&self.0) {
                Some(Call::Settled(result)) => Poll::Ready(result),
                Some(Call::Waiting(_)) => {
                    calls.insert(self.0, Call::Waiting(Some(cx.waker().clone())));
                    Poll::Pending
                }
                None => Poll::Ready(Err(JsValue::from_str("toolctx: host call polled after it settled"))),
            }
        })
    }
}

impl Drop for HostCall {
    fn drop(&mut self) {
        // try_with: the runtime may be gone when the thread (worker) ends.
        let _ = RUNTIME.try_with(|rt| {
            if let Ok(mut calls) = rt.calls.try_borrow_mut() {
                calls.remove(&self.0);
            }
        });
    }
}
