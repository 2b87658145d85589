//! `close()`: later operations fail with CLOSED, the operations in flight finish, what
//! is held in memory is written out, and nothing of the manager runs afterwards.

use std::cell::{Cell, RefCell};
use std::future::poll_fn;
use std::task::{Poll, Waker};

use futures_executor::block_on;
use toolctx::{ContextManager, Error, ErrorKind, Filter, MemoryStorage, Options, SaveInput, Storage, WriteOptions};

fn save<'a>(args: &'a str, result: &'a str) -> SaveInput<'a> {
    SaveInput { tool_name: "readFile", args_json: args, result_json: Some(result), ..SaveInput::default() }
}

/// Gives way to the other futures once.
async fn yield_now() {
    let mut yielded = false;
    poll_fn(|cx| {
        if yielded {
            return Poll::Ready(());
        }
        yielded = true;
        cx.waker().wake_by_ref();
        Poll::Pending
    })
    .await
}

/// A memory storage whose record writes wait while `held` is set, which counts the
/// locks held and logs every write.
#[derive(Default)]
struct Gated {
    inner: MemoryStorage,
    held: Cell<bool>,
    waiting: RefCell<Vec<Waker>>,
    locks: Cell<usize>,
    max_locks: Cell<usize>,
    writes: RefCell<Vec<String>>,
    full: Cell<bool>,
}

impl Gated {
    fn release(&self) {
        self.held.set(false);
        self.waiting.take().into_iter().for_each(Waker::wake);
    }
}

impl Storage for Gated {
    async fn read(&self, path: &str) -> toolctx::Result<Option<Vec<u8>>> {
        self.inner.read(path).await
    }
    async fn write(&self, path: &str, data: &[u8], options: WriteOptions) -> toolctx::Result<()> {
        self.writes.borrow_mut().push(path.to_owned());
        if self.full.get() {
            return Err(Error::new(ErrorKind::QuotaExceeded, "disk full"));
        }
        if toolctx::is_record_filename(path.rsplit('/').next().unwrap_or(path)) {
            poll_fn(|cx| {
                if !self.held.get() {
                    return Poll::Ready(());
                }
                self.waiting.borrow_mut().push(cx.waker().clone());
                Poll::Pending
            })
            .await;
        }
        self.inner.write(path, data, options).await
    }
    async fn remove(&self, path: &str) -> toolctx::Result<()> {
        self.inner.remove(path).await
    }
    async fn list(&self, dir: &str) -> toolctx::Result<Vec<String>> {
        self.inner.list(dir).await
    }
    async fn locked<T>(&self, _name: &str, work: impl std::future::Future<Output = T>) -> toolctx::Result<T> {
        self.locks.set(self.locks.get() + 1);
        self.max_locks.set(self.max_locks.get().max(self.locks.get()));
        let out = work.await;
        self.locks.set(self.locks.get() - 1);
        Ok(out)
    }
}

/// Options that hold small records in memory (the opt-in `persistThreshold`).
fn holding() -> Options {
    let mut o = toolctx::options("/ctx");
    o.persist_threshold = 32 * 1024;
    o
}

#[test]
fn after_close_io_fails_closed_pointers_stay_and_close_again_is_a_no_op() {
    block_on(async {
        let m = ContextManager::new(MemoryStorage::new(), holding())?;
        let path = m.save(save(r#"{"path":"a.ts"}"#, r#""small""#)).await?;
        assert!(m.storage().paths().is_empty(), "a small record stays in memory");
        m.close().await?;
        let records: Vec<String> = m.storage().paths().into_iter().filter(|p| !p.contains("/.index/")).collect();
        assert_eq!(records, std::slice::from_ref(&path), "close wrote it out");
        let written = m.storage().paths();
        assert!(m.is_closed());
        let paths = std::slice::from_ref(&path);
        let kinds = [
            m.save(save("{}", "1")).await.err().map(|e| e.kind()),
            m.load(paths).await.err().map(|e| e.kind()),
            m.flush().await.err().map(|e| e.kind()),
            m.clear_context_dir().await.err().map(|e| e.kind()),
            m.clear().await.err().map(|e| e.kind()),
            m.rebuild_index().await.err().map(|e| e.kind()),
            m.end_session().await.err().map(|e| e.kind()),
            m.check_open("selectRelevant").err().map(|e| e.kind()),
        ];
        assert_eq!(kinds, [Some(ErrorKind::Closed); 8]);
        assert_eq!(ErrorKind::Closed.code(), "CLOSED");
        assert_eq!(m.storage().paths(), written, "nothing written or removed after close");
        assert_eq!(m.len(), 1, "the pointers stay readable");
        assert!(m.pointers_json(Filter::ALL).contains(&path));
        m.close().await?;
        Ok::<(), Error>(())
    })
    .unwrap();
}

#[test]
fn close_waits_for_the_save_in_flight_and_leaves_no_lock_held() {
    block_on(async {
        let mut o = toolctx::options("/ctx");
        o.persist_threshold = 0;
        o.session = Some(toolctx::SessionChoice::New);
        let m = ContextManager::new(Gated::default(), o)?;
        m.storage().held.set(true);
        let closed = Cell::new(false);
        let (saved, closing, ()) = futures_util::future::join3(
            m.save(save(r#"{"slow":true}"#, r#""in flight""#)),
            async {
                let r = m.close().await;
                closed.set(true);
                r
            },
            async {
                yield_now().await;
                // close() has begun: a new save is refused at once.
                let late = m.save(save("{}", r#""late""#)).await;
                assert_eq!(late.unwrap_err().kind(), ErrorKind::Closed);
                for _ in 0..10 {
                    yield_now().await;
                }
                assert!(!closed.get(), "close() waits for the save in flight");
                m.storage().release();
            },
        )
        .await;
        let path = saved?;
        closing?;
        let storage = m.storage();
        assert_eq!(storage.locks.get(), 0, "no lock held once close() resolved");
        assert!(storage.max_locks.get() >= 1, "the manifest was written under the session lock");
        assert!(storage.inner.read(&path).await?.is_some());
        let manifest = storage.inner.paths().into_iter().find(|p| p.ends_with(".manifest.json")).unwrap();
        let manifest = String::from_utf8(storage.inner.read(&manifest).await?.unwrap()).unwrap();
        assert!(manifest.contains(path.rsplit('/').next().unwrap()), "the manifest lists the record");
        let writes = storage.writes.borrow().len();
        m.close().await?;
        assert_eq!(storage.writes.borrow().len(), writes, "a second close writes nothing");
        Ok::<(), Error>(())
    })
    .unwrap();
}

#[test]
fn a_close_that_cannot_write_out_keeps_the_manager_open_and_its_records() {
    block_on(async {
        let m = ContextManager::new(Gated::default(), holding())?;
        let path = m.save(save("{}", r#""must survive""#)).await?;
        m.storage().full.set(true);
        assert_eq!(m.close().await.unwrap_err().kind(), ErrorKind::QuotaExceeded);
        assert!(!m.is_closed());
        assert_eq!(m.load(std::slice::from_ref(&path)).await?.len(), 1, "still in memory");
        m.storage().full.set(false);
        m.close().await?;
        assert!(m.storage().inner.read(&path).await?.is_some());
        assert_eq!(m.save(save("{}", "1")).await.unwrap_err().kind(), ErrorKind::Closed);
        Ok::<(), Error>(())
    })
    .unwrap();
}
