//! The runner: a [plan](crate::plan) run to its end over a [`Storage`], awaiting the
//! storage and nothing else (the package's JavaScript driver runs the same plans over a
//! host), and [`block_on`], a small blocking executor for the async API.

#[cfg(not(target_arch = "wasm32"))]
use std::future::Future;
#[cfg(not(target_arch = "wasm32"))]
use std::sync::Arc;
#[cfg(not(target_arch = "wasm32"))]
use std::task::{Context, Wake, Waker};

use std::future::poll_fn;
use std::rc::Rc;
use std::task::Poll;

use futures_util::lock::Mutex;

use crate::error::{Error, ErrorKind, Result};
use crate::plan::{Op, Outcome, Outcomes, Place, Plan, RecordOutcome, Step};
use crate::record::parse_record;
use crate::storage::{Storage, WriteOptions};

/// Runs `plan` to its end over `storage` (the native driver).
pub async fn run<S: Storage, P: Plan>(storage: &S, plan: P) -> Result<P::Output> {
    run_in_turn(storage, &Mutex::new(()), plan).await.map(|(output, _)| output)
}

/// The records a run kept ([`Op::ReadRecord`], [`Op::KeepRecord`]), by the number its
/// [`RecordOutcome::Kept`] gave.
pub type Kept = Vec<Rc<[u8]>>;

/// [`run`], each lock the plan takes inside `turn` first (a manager's turn at its locks:
/// its plans take them one after the other, whatever the storage's lock does; in wasm the
/// driver keeps these turns); with the records the run kept.
pub(crate) async fn run_in_turn<S: Storage, P: Plan>(
    storage: &S,
    turn: &Mutex<()>,
    plan: P,
) -> Result<(P::Output, Kept)> {
    run_over(Places { store: storage, remote: None::<&S> }, turn, plan).await
}

/// [`run_in_turn`] of a plan that also runs steps on `remote` ([`Place::Remote`]); the
/// turn is taken for the store's locks only.
pub(crate) async fn run_synced<S: Storage, R: Storage, P: Plan>(
    store: &S,
    remote: &R,
    turn: &Mutex<()>,
    plan: P,
) -> Result<P::Output> {
    run_over(Places { store, remote: Some(remote) }, turn, plan).await.map(|(output, _)| output)
}

/// The storages a run's steps go to ([`Place`]).
struct Places<'a, S, R> {
    store: &'a S,
    remote: Option<&'a R>,
}

impl<S: Storage, R: Storage> Places<'_, S, R> {
    /// Runs `ops` at `place`: every one, or (`change`) up to the first that fails.
    async fn perform(&self, place: Place, ops: &[Op], change: bool, kept: &mut Kept) -> Outcomes {
        match (place, self.remote) {
            (Place::Store, _) => perform_ops(self.store, ops, change, kept).await,
            (Place::Remote, Some(remote)) => perform_ops(remote, ops, change, kept).await,
            (Place::Remote, None) => ops.iter().map(|_| Err(no_remote())).collect(),
        }
    }

    /// `work` under the lock `name` at `place`.
    async fn locked<T>(&self, place: Place, name: &str, work: impl std::future::Future<Output = T>) -> Result<T> {
        match (place, self.remote) {
            (Place::Store, _) => self.store.locked(name, work).await,
            (Place::Remote, Some(remote)) => remote.locked(name, work).await,
            (Place::Remote, None) => Err(no_remote()),
        }
    }
}

/// A step on a remote in a run that has none (a bug).
fn no_remote() -> Error {
    Error::new(ErrorKind::Internal, "a plan asked for a remote this run has none of")
}

async fn run_over<S: Storage, R: Storage, P: Plan>(
    places: Places<'_, S, R>,
    turn: &Mutex<()>,
    mut plan: P,
) -> Result<(P::Output, Kept)> {
    let mut kept = Kept::new();
    let mut step = plan.step(Vec::new());
    loop {
        step = match step {
            Step::Run(ops) => plan.step(places.perform(plan.place(), &ops, false, &mut kept).await),
            Step::Change(ops) => plan.step(places.perform(plan.place(), &ops, true, &mut kept).await),
            Step::Lock { name, wait } => {
                let place = plan.place();
                // Not waiting (`wait: false`) is for this manager's own turn: the native
                // storages' locks (the Storage trait's default) exclude no one else.
                let _turn = match (place, wait) {
                    (Place::Remote, _) => None,
                    (Place::Store, true) => Some(turn.lock().await),
                    (Place::Store, false) => match turn.try_lock() {
                        Some(turn) => Some(turn),
                        None => {
                            step = plan.lock_failed(held_elsewhere(&name));
                            continue;
                        }
                    },
                };
                // The plan runs on under the lock until it releases it, or finishes.
                let mut inside = None;
                match places.locked(place, &name, until_unlocked(&places, &mut plan, &mut inside, &mut kept)).await {
                    Ok(()) => match inside {
                        Some(step) => step,
                        None => plan.step(Vec::new()),
                    },
                    // Taking it or releasing it failed: the plan hears it (unless it is done).
                    Err(e) => match inside {
                        Some(Step::Done(result)) => Step::Done(result.and(Err(e))),
                        _ => plan.lock_failed(e),
                    },
                }
            }
            Step::Unlock => plan.lock_failed(Error::new(ErrorKind::Internal, "a plan released a lock it did not hold")),
            Step::Wait => match changed(&plan).await {
                true => plan.step(Vec::new()),
                false => Step::Done(Err(Error::new(ErrorKind::Internal, "a plan waited that cannot be woken"))),
            },
            Step::Done(result) => return result.map(|output| (output, kept)),
        }
    }
}

/// Resolves at the next change `plan` is woken by ([`Plan::wake_on_change`]); `false`
/// at once when it cannot be woken.
async fn changed<P: Plan>(plan: &P) -> bool {
    let mut asked = false;
    poll_fn(|cx| {
        if asked {
            return Poll::Ready(true);
        }
        asked = true;
        match plan.wake_on_change(cx.waker()) {
            true => Poll::Pending,
            false => Poll::Ready(false),
        }
    })
    .await
}

/// Why a lock asked without waiting was not taken.
fn held_elsewhere(name: &str) -> Error {
    Error::new(ErrorKind::Storage, format!("the lock {name} is held (not waited for)"))
}

/// Steps `plan` while it holds a lock, until it releases it (`inside` stays `None`) or
/// finishes (`inside`: its last step).
async fn until_unlocked<S: Storage, R: Storage, P: Plan>(
    places: &Places<'_, S, R>,
    plan: &mut P,
    inside: &mut Option<Step<P::Output>>,
    kept: &mut Kept,
) {
    let mut outcomes = Vec::new();
    loop {
        match plan.step(std::mem::take(&mut outcomes)) {
            Step::Run(ops) => outcomes = places.perform(plan.place(), &ops, false, kept).await,
            Step::Change(ops) => outcomes = places.perform(plan.place(), &ops, true, kept).await,
            Step::Unlock => return,
            Step::Lock { .. } => {
                *inside = Some(Step::Done(Err(Error::new(ErrorKind::Internal, "a plan took a lock it holds"))));
                return;
            }
            Step::Wait => {
                *inside = Some(Step::Done(Err(Error::new(ErrorKind::Internal, "a plan waited holding a lock"))));
                return;
            }
            done => {
                *inside = Some(done);
                return;
            }
        }
    }
}

/// Runs `ops` over `storage`, one after the other (or, `change`, up to the first that
/// fails): native storages do their I/O in the call (and in wasm only the tests'
/// `awaited.rs` storage comes here), so nothing is gained by polling them together.
async fn perform_ops<S: Storage>(storage: &S, ops: &[Op], change: bool, kept: &mut Kept) -> Outcomes {
    let mut outcomes = Vec::with_capacity(ops.len());
    for op in ops {
        let outcome = perform_one(storage, op, kept).await;
        let failed = outcome.is_err();
        outcomes.push(outcome);
        if change && failed {
            break;
        }
    }
    outcomes
}

/// Runs `op` over `storage`; a record it reads or is given is checked and kept in `kept`.
async fn perform_one<S: Storage>(storage: &S, op: &Op, kept: &mut Kept) -> Result<Outcome> {
    match op {
        Op::ReadRecord(path) => {
            Ok(Outcome::Record(storage.read(path).await?.map_or(RecordOutcome::Missing, |bytes| keep(kept, bytes))))
        }
        Op::KeepRecord { text, .. } => Ok(Outcome::Record(keep(kept, text.clone().into_bytes()))),
        Op::Read(path) => storage.read(path).await.map(Outcome::Read),
        Op::ReadRange { path, offset, len } => storage.read_range(path, *offset, *len).await.map(Outcome::Read),
        Op::List(dir) => storage.list(dir).await.map(Outcome::List),
        Op::Write { path, bytes, exclusive } => {
            storage.write(path, bytes, WriteOptions { exclusive: *exclusive }).await.map(|()| Outcome::Done)
        }
        Op::WriteParts { path, head, body, tail, exclusive } => {
            let options = WriteOptions { exclusive: *exclusive };
            storage.write_parts(path, head, *body, tail, options).await.map(|()| Outcome::Done)
        }
        Op::Append { path, bytes } => storage.append(path, bytes).await.map(|()| Outcome::Done),
        Op::Remove(path) => storage.remove(path).await.map(|()| Outcome::Done),
        Op::RemoveDir(path) => storage.remove_dir(path).await.map(|()| Outcome::Done),
    }
}

/// `bytes` kept when they are a whole record, else why not.
fn keep(kept: &mut Kept, bytes: Vec<u8>) -> RecordOutcome {
    match parse_record(&bytes) {
        Ok(_) => {
            let size = bytes.len();
            kept.push(Rc::from(bytes));
            RecordOutcome::Kept { at: kept.len() as u32 - 1, size }
        }
        Err(e) => RecordOutcome::NotARecord(e.to_string()),
    }
}

/// Runs `future` to its end on this thread, parking it while the future waits: the
/// blocking executor of the async API, for Rust users with no runtime of their own (the
/// native storages do their I/O inside their calls, so a future of theirs never waits on
/// another thread; one that does is woken by it).
///
/// ```
/// use toolctx::{block_on, ContextManager, MemoryStorage, SaveInput};
/// let manager = ContextManager::new(MemoryStorage::new(), toolctx::options("/store"))?;
/// let input = SaveInput { tool_name: "grep", args_json: "{}", result_json: Some("\"hit\""), ..SaveInput::default() };
/// let path = block_on(manager.save(input))?;
/// assert_eq!(block_on(manager.load(&[path]))?.len(), 1);
/// # Ok::<(), toolctx::Error>(())
/// ```
#[cfg(not(target_arch = "wasm32"))]
pub fn block_on<F: Future>(future: F) -> F::Output {
    /// Wakes the thread that runs the future.
    struct Unpark(std::thread::Thread);

    impl Wake for Unpark {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
    }

    let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut cx = Context::from_waker(&waker);
    let mut future = std::pin::pin!(future);
    loop {
        if let Poll::Ready(output) = future.as_mut().poll(&mut cx) {
            return output;
        }
        std::thread::park();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::bytes;
    use crate::MemoryStorage;
    use std::cell::RefCell;

    /// A memory storage whose lock logs when it is taken and released, and what ran under it.
    #[derive(Default)]
    struct Logged {
        files: MemoryStorage,
        log: RefCell<Vec<String>>,
        /// Its lock fails, before running the work.
        lock_fails: bool,
    }

    impl Storage for Logged {
        async fn read(&self, path: &str) -> Result<Option<Vec<u8>>> {
            self.log.borrow_mut().push(format!("read {path}"));
            self.files.read(path).await
        }
        async fn write(&self, path: &str, data: &[u8], options: WriteOptions) -> Result<()> {
            self.files.write(path, data, options).await
        }
        async fn remove(&self, path: &str) -> Result<()> {
            self.files.remove(path).await
        }
        async fn list(&self, dir: &str) -> Result<Vec<String>> {
            self.files.list(dir).await
        }
        async fn locked<T>(&self, name: &str, work: impl std::future::Future<Output = T>) -> Result<T> {
            self.log.borrow_mut().push(format!("lock {name}"));
            if self.lock_fails {
                return Err(Error::new(ErrorKind::Storage, "the lock failed"));
            }
            let out = work.await;
            self.log.borrow_mut().push("unlock".into());
            Ok(out)
        }
    }

    /// Reads `a` under the lock `l`, then `b` after it; with `fail_locked`, fails under the lock.
    struct Sample {
        at: u8,
        fail_locked: bool,
    }

    impl Plan for Sample {
        type Output = Vec<Option<Vec<u8>>>;

        fn step(&mut self, outcomes: Outcomes) -> Step<Self::Output> {
            self.at += 1;
            match self.at {
                1 => Step::Lock { name: "l".into(), wait: true },
                2 => Step::Run(vec![Op::Read("a".into())]),
                3 if self.fail_locked => Step::Done(Err(Error::invalid("failed under the lock"))),
                3 => Step::Unlock,
                4 => Step::Run(vec![Op::Read("b".into()), Op::Read("a".into())]),
                _ => Step::Done(outcomes.into_iter().map(bytes).collect()),
            }
        }
    }

    #[test]
    fn a_plan_runs_its_ops_under_the_lock_it_takes_and_hands_back_their_outcomes_in_order() {
        let storage = Logged::default();
        block_on(storage.files.write("a", b"A", WriteOptions::default())).unwrap();
        let out = block_on(run(&storage, Sample { at: 0, fail_locked: false })).unwrap();
        assert_eq!(out, vec![None, Some(b"A".to_vec())]);
        assert_eq!(*storage.log.borrow(), ["lock l", "read a", "unlock", "read b", "read a"]);
    }

    #[test]
    fn a_plan_that_ends_holding_the_lock_has_it_released_then_fails() {
        let storage = Logged::default();
        let err = block_on(run(&storage, Sample { at: 0, fail_locked: true })).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidArgument, "{err}");
        assert_eq!(*storage.log.borrow(), ["lock l", "read a", "unlock"]);
    }

    /// Takes the lock `l` (waiting for it when `.1`); hears its failure and reads `b` instead.
    struct Hears(Option<Error>, bool);

    impl Plan for Hears {
        type Output = String;

        fn step(&mut self, outcomes: Outcomes) -> Step<String> {
            match self.0.take() {
                None if outcomes.is_empty() => Step::Lock { name: "l".into(), wait: self.1 },
                Some(e) if outcomes.is_empty() => Step::Run(vec![Op::Read(format!("b {}", e.kind().code()))]),
                _ => Step::Done(Ok(format!("{:?}", outcomes.len()))),
            }
        }

        fn lock_failed(&mut self, e: Error) -> Step<String> {
            self.0 = Some(e);
            self.step(Vec::new())
        }
    }

    #[test]
    fn a_plan_hears_that_its_lock_failed_and_goes_on_while_by_default_it_fails() {
        let storage = Logged { lock_fails: true, ..Logged::default() };
        assert_eq!(block_on(run(&storage, Hears(None, true))).unwrap(), "1");
        assert_eq!(*storage.log.borrow(), ["lock l", "read b STORAGE"]);
        let err = block_on(run(&storage, Sample { at: 0, fail_locked: false })).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Storage, "{err}");
    }

    #[test]
    fn a_lock_asked_without_waiting_fails_at_once_while_the_managers_turn_is_held() {
        let storage = Logged::default();
        let turn = Mutex::new(());
        let busy = turn.try_lock().unwrap();
        assert_eq!(block_on(run_in_turn(&storage, &turn, Hears(None, false))).unwrap().0, "1");
        assert_eq!(*storage.log.borrow(), ["read b STORAGE"], "the storage's lock is never asked");
        drop(busy);
    }

    #[test]
    fn a_mapped_plan_gives_its_result_through_the_function() {
        let storage = Logged::default();
        let plan = Sample { at: 0, fail_locked: false }.map(|reads| Ok(reads.len()));
        assert_eq!(block_on(run(&storage, plan)).unwrap(), 2);
    }

    #[test]
    fn block_on_waits_for_a_wake_from_another_thread() {
        use std::future::Future;
        use std::sync::atomic::{AtomicBool, Ordering};
        use std::sync::{Arc, Mutex as StdMutex};
        use std::task::{Context, Poll, Waker};
        /// Pending until another thread sets `done` and wakes it.
        struct Later {
            done: Arc<AtomicBool>,
            waker: Arc<StdMutex<Option<Waker>>>,
        }
        impl Future for Later {
            type Output = &'static str;
            fn poll(self: std::pin::Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<&'static str> {
                if self.done.load(Ordering::SeqCst) {
                    return Poll::Ready("woken");
                }
                *self.waker.lock().unwrap() = Some(cx.waker().clone());
                Poll::Pending
            }
        }
        let (done, waker) = (Arc::new(AtomicBool::new(false)), Arc::new(StdMutex::new(None::<Waker>)));
        let (d, w) = (done.clone(), waker.clone());
        let other = std::thread::spawn(move || loop {
            if let Some(waker) = w.lock().unwrap().take() {
                d.store(true, Ordering::SeqCst);
                waker.wake();
                return;
            }
            std::thread::yield_now();
        });
        assert_eq!(block_on(Later { done, waker }), "woken");
        other.join().unwrap();
    }
}
