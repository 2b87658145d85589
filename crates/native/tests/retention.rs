//! Retention caps (bytes, records, age), `reconcile`, and stale cleanup of the records a
//! crash left out of a session's manifest.

use std::cell::{Cell, RefCell};

use serde_json::Value;
use std::rc::Rc;

use futures_executor::block_on;
use toolctx::session::{Manifest, MANIFEST};
use toolctx::{
    ContextManager, Error, ErrorKind, Filter, MemoryStorage, Options, Retention, SaveInput, SessionChoice, Storage,
    WriteOptions,
};

type Shared = Rc<MemoryStorage>;

const T0: i64 = 1_737_210_622_000; // 2025-01-18T14:30:22Z
const DAY: i64 = 86_400_000;

fn options(session: Option<SessionChoice>, now: Rc<Cell<i64>>) -> Options {
    let mut o = toolctx::options("/ctx");
    o.persist_threshold = 0;
    o.session = session;
    o.clock = Rc::new(move || now.get());
    o
}

fn save(tool: &str) -> SaveInput<'_> {
    SaveInput { tool_name: tool, args_json: "{}", result_json: Some("\"body\""), ..SaveInput::default() }
}

async fn manifest_of(storage: &Shared, id: &str) -> Manifest {
    let bytes = storage.read(&format!("/ctx/sessions/{id}/{MANIFEST}")).await.unwrap().expect("manifest");
    Manifest::parse(&bytes, id).unwrap()
}

/// A record file written into a session folder the way a crashed writer leaves it:
/// the file is there, the manifest never heard of it.
async fn orphan(storage: &Shared, id: &str, rel: &str, at: i64) -> String {
    let path = format!("/ctx/sessions/{id}/{rel}");
    let record = format!(
        r#"{{"v":1,"toolName":"grep","toolDescription":"grep","args":{{}},"argsHash":"{}","timestamp":"{}","result":1}}"#,
        toolctx::args_hash(&serde_json::json!({})).unwrap(),
        toolctx::record::iso_timestamp(at),
    );
    storage.write(&path, record.as_bytes(), WriteOptions::default()).await.unwrap();
    path
}

#[test]
fn stale_cleanup_removes_the_records_a_crash_left_out_of_the_manifest() {
    block_on(async {
        let storage: Shared = Rc::new(MemoryStorage::new());
        let now = Rc::new(Cell::new(T0));
        let m = ContextManager::open(storage.clone(), options(Some(SessionChoice::New), now.clone())).await?;
        m.save(save("t")).await?;
        m.flush().await?;
        let id = m.session_id().unwrap().to_owned();
        // The crash: two records on disk that no manifest write ever listed.
        let a = orphan(&storage, &id, &format!("grep_{}_{T0}_7_abcd.json", "0".repeat(12)), T0).await;
        let b = orphan(&storage, &id, &format!("code/grep_{}_{T0}_8_abcd.json", "0".repeat(12)), T0).await;
        storage.write(&format!("/ctx/sessions/{id}/notes.txt"), b"user file", WriteOptions::default()).await?;
        now.set(T0 + 2 * DAY);
        let removed = toolctx::cleanup_stale_sessions(&storage, "/ctx", now.get(), DAY).await?;
        assert_eq!(removed, std::slice::from_ref(&id));
        let left: Vec<String> = storage.paths().into_iter().filter(|p| p.contains(&id)).collect();
        assert!(!left.contains(&a) && !left.contains(&b), "orphaned records leaked: {left:?}");
        assert_eq!(left, [format!("/ctx/sessions/{id}/notes.txt")], "only the user's file stays");
        Ok::<(), Error>(())
    })
    .unwrap();
}

#[test]
fn a_recent_orphan_keeps_its_session_from_stale_cleanup() {
    block_on(async {
        let storage: Shared = Rc::new(MemoryStorage::new());
        let now = Rc::new(Cell::new(T0));
        let m = ContextManager::open(storage.clone(), options(Some(SessionChoice::New), now.clone())).await?;
        m.save(save("t")).await?;
        m.flush().await?;
        let id = m.session_id().unwrap().to_owned();
        // A writer of the session saved an hour ago; its manifest update never landed.
        let recent = T0 + 2 * DAY - 3_600_000;
        let a = orphan(&storage, &id, &format!("grep_{}_{recent}_3_abcd.json", "0".repeat(12)), recent).await;
        now.set(T0 + 2 * DAY);
        assert!(toolctx::cleanup_stale_sessions(&storage, "/ctx", now.get(), DAY).await?.is_empty());
        assert!(storage.read(&a).await?.is_some());
        Ok::<(), Error>(())
    })
    .unwrap();
}

/// Options with `retention` caps and an `on_evict` that keeps what it was told.
fn capped(session: Option<SessionChoice>, now: Rc<Cell<i64>>, caps: Retention) -> (Options, Rc<RefCell<Vec<Value>>>) {
    let mut o = options(session, now);
    o.retention = caps;
    let told = Rc::new(RefCell::new(Vec::new()));
    let sink = told.clone();
    o.on_evict = Some(Rc::new(move |json: &str| {
        let pointers: Vec<Value> = serde_json::from_str(json).expect("onEvict gets a JSON array");
        sink.borrow_mut().extend(pointers);
    }));
    (o, told)
}

fn filepaths(told: &RefCell<Vec<Value>>) -> Vec<String> {
    told.borrow().iter().map(|p| p["filepath"].as_str().unwrap().to_owned()).collect()
}

fn pointer_paths<S: Storage>(m: &ContextManager<S>) -> Vec<String> {
    let all: Vec<Value> = serde_json::from_str(&m.pointers_json(Filter::ALL)).unwrap();
    all.iter().map(|p| p["filepath"].as_str().unwrap().to_owned()).collect()
}

#[test]
fn max_records_evicts_the_oldest_file_pointer_and_index_entry() {
    block_on(async {
        let storage: Shared = Rc::new(MemoryStorage::new());
        let now = Rc::new(Cell::new(T0));
        let (o, told) = capped(None, now.clone(), Retention { max_records: Some(2), ..Retention::default() });
        let m = ContextManager::new(storage.clone(), o)?;
        let mut saved = Vec::new();
        for tool in ["alpha", "bravo", "charlie", "delta"] {
            saved.push(m.save(save(tool)).await?);
            now.set(now.get() + 1);
        }
        assert_eq!(pointer_paths(&m), saved[2..]);
        assert_eq!(filepaths(&told), saved[..2], "onEvict is told, oldest first");
        assert_eq!(told.borrow()[0]["toolName"], "alpha", "with the whole pointer");
        assert_eq!(storage.read(&saved[0]).await?, None, "the file is removed");
        assert!(storage.read(&saved[3]).await?.is_some());
        let ranked =
            m.rank_all(&toolctx::select::Query::new("alpha"), toolctx::Fallback::None, toolctx::Strategy::Bm25, None);
        assert!(ranked.hits.is_empty(), "an evicted record is not ranked any more");
        assert_eq!(m.len(), 2);
        Ok::<(), Error>(())
    })
    .unwrap();
}

#[test]
fn max_bytes_counts_records_held_in_memory_and_refuses_one_larger_than_the_cap() {
    block_on(async {
        let storage: Shared = Rc::new(MemoryStorage::new());
        let now = Rc::new(Cell::new(T0));
        let (mut o, told) = capped(None, now.clone(), Retention { max_bytes: Some(900), ..Retention::default() });
        o.persist_threshold = 1 << 20; // every record stays in memory
        let m = ContextManager::new(storage.clone(), o)?;
        let body = format!("\"{}\"", "x".repeat(200));
        let input = |tool| SaveInput { result_json: Some(&body), ..save(tool) };
        let a = m.save(input("alpha")).await?;
        let b = m.save(input("bravo")).await?;
        assert!(told.borrow().is_empty(), "two records of ~400 bytes fit in 900");
        let c = m.save(input("charlie")).await?;
        assert_eq!(filepaths(&told), std::slice::from_ref(&a));
        assert_eq!(pointer_paths(&m), [b, c]);
        assert_eq!(m.load(&[a]).await?.len(), 0, "the evicted record is gone from memory too");
        let huge = format!("\"{}\"", "x".repeat(1000));
        let err = m.save(SaveInput { result_json: Some(&huge), ..save("huge") }).await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::TooLarge);
        assert_eq!(m.len(), 2, "a refused record evicts nothing and adds nothing");
        assert!(storage.paths().is_empty());
        Ok::<(), Error>(())
    })
    .unwrap();
}

#[test]
fn max_age_is_enforced_when_a_session_is_resumed_and_on_save() {
    block_on(async {
        let storage: Shared = Rc::new(MemoryStorage::new());
        let now = Rc::new(Cell::new(T0));
        let m = ContextManager::open(storage.clone(), options(Some(SessionChoice::New), now.clone())).await?;
        let id = m.session_id().unwrap().to_owned();
        let old = m.save(save("alpha")).await?;
        now.set(T0 + 10 * 60_000);
        let young = m.save(save("bravo")).await?;
        m.close().await?;
        now.set(T0 + 60 * 60_000);
        let caps = Retention { max_age_ms: Some(55 * 60_000), ..Retention::default() };
        let (o, told) = capped(Some(SessionChoice::Resume(id.clone())), now.clone(), caps);
        let m = ContextManager::open(storage.clone(), o).await?;
        assert_eq!(filepaths(&told), std::slice::from_ref(&old), "the hour-old record goes at open");
        assert_eq!(pointer_paths(&m), std::slice::from_ref(&young));
        assert_eq!(storage.read(&old).await?, None);
        let manifest = manifest_of(&storage, &id).await;
        assert_eq!(manifest.context_files.len(), 1, "and its manifest entry");
        assert!(!manifest.context_index.values().flatten().any(|rel| old.ends_with(rel.as_str())));
        now.set(T0 + 70 * 60_000);
        let fresh = m.save(save("charlie")).await?;
        assert_eq!(filepaths(&told), [old, young.clone()], "a save checks the age cap too");
        m.flush().await?;
        let manifest = manifest_of(&storage, &id).await;
        let kept: Vec<&String> = manifest.context_files.keys().collect();
        assert!(kept.len() == 1 && fresh.ends_with(kept[0].as_str()), "{kept:?}");
        Ok::<(), Error>(())
    })
    .unwrap();
}

#[test]
fn retention_never_touches_another_managers_records_or_adopted_ones() {
    block_on(async {
        let storage: Shared = Rc::new(MemoryStorage::new());
        let now = Rc::new(Cell::new(T0));
        let other = ContextManager::new(storage.clone(), options(None, now.clone()))?;
        let theirs = other.save(save("theirs")).await?;
        let (o, told) = capped(None, now.clone(), Retention { max_records: Some(1), ..Retention::default() });
        let m = ContextManager::new(storage.clone(), o)?;
        assert_eq!(m.rebuild_index().await?, 1, "their record is adopted as a pointer");
        now.set(T0 + 1);
        let a = m.save(save("alpha")).await?;
        now.set(T0 + 2);
        let b = m.save(save("bravo")).await?;
        assert_eq!(filepaths(&told), [a], "only this manager's own record was counted and evicted");
        assert!(storage.read(&theirs).await?.is_some());
        assert_eq!(pointer_paths(&m), [theirs, b]);
        Ok::<(), Error>(())
    })
    .unwrap();
}

#[test]
fn records_whose_pointers_were_cleared_still_count_and_go() {
    block_on(async {
        let storage: Shared = Rc::new(MemoryStorage::new());
        let now = Rc::new(Cell::new(T0));
        let (o, told) = capped(None, now.clone(), Retention { max_records: Some(1), ..Retention::default() });
        let m = ContextManager::new(storage.clone(), o)?;
        let a = m.save(save("alpha")).await?;
        m.clear_pointers();
        now.set(T0 + 1);
        m.save(save("bravo")).await?;
        assert_eq!(filepaths(&told), std::slice::from_ref(&a));
        assert_eq!(told.borrow()[0]["toolName"], "alpha", "the pointer is rebuilt from the file");
        assert_eq!(storage.read(&a).await?, None);
        Ok::<(), Error>(())
    })
    .unwrap();
}

#[test]
fn zero_caps_are_invalid_arguments() {
    let now = Rc::new(Cell::new(T0));
    let mut o = options(None, now);
    o.retention.max_records = Some(0);
    let err = ContextManager::new(MemoryStorage::new(), o).err().unwrap();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument);
}

#[test]
fn reconcile_adopts_the_records_a_crash_left_out_of_the_manifest() {
    block_on(async {
        let storage: Shared = Rc::new(MemoryStorage::new());
        let now = Rc::new(Cell::new(T0));
        let m = ContextManager::open(storage.clone(), options(Some(SessionChoice::New), now.clone())).await?;
        let id = m.session_id().unwrap().to_owned();
        let mine = m.save(save("t")).await?;
        m.flush().await?;
        // A crashed writer of the same session left two records and no manifest entry.
        let a = orphan(&storage, &id, &format!("grep_{}_{T0}_7_abcd.json", "0".repeat(12)), T0).await;
        let b = orphan(&storage, &id, &format!("code/grep_{}_{T0}_8_abcd.json", "0".repeat(12)), T0).await;
        storage
            .write(
                &format!("/ctx/sessions/{id}/grep_{}_{T0}_9_abcd.json", "0".repeat(12)),
                b"{torn",
                WriteOptions::default(),
            )
            .await?;
        let mut adopted = m.reconcile().await?;
        adopted.sort();
        let mut expected = vec![a.clone(), b.clone()];
        expected.sort();
        assert_eq!(adopted, expected);
        assert!(m.reconcile().await?.is_empty(), "nothing is adopted twice");
        let manifest = manifest_of(&storage, &id).await;
        assert_eq!(manifest.context_files.len(), 3);
        assert!(pointer_paths(&m).contains(&a) && pointer_paths(&m).contains(&mine));
        m.end_session().await?;
        let left: Vec<String> = storage.paths().into_iter().filter(|p| p.contains(&id)).collect();
        assert_eq!(left.len(), 1, "endSession removed the adopted records; only the torn file stays: {left:?}");
        Ok::<(), Error>(())
    })
    .unwrap();
}

#[test]
fn reconcile_outside_a_session_adopts_nothing() {
    block_on(async {
        let storage: Shared = Rc::new(MemoryStorage::new());
        let now = Rc::new(Cell::new(T0));
        let other = ContextManager::new(storage.clone(), options(None, now.clone()))?;
        other.save(save("theirs")).await?;
        let m = ContextManager::new(storage.clone(), options(None, now))?;
        assert!(m.reconcile().await?.is_empty());
        assert_eq!(m.len(), 0);
        Ok::<(), Error>(())
    })
    .unwrap();
}

#[test]
fn reconciled_records_count_for_retention() {
    block_on(async {
        let storage: Shared = Rc::new(MemoryStorage::new());
        let now = Rc::new(Cell::new(T0 + 5));
        let (o, told) =
            capped(Some(SessionChoice::New), now.clone(), Retention { max_records: Some(2), ..Retention::default() });
        let m = ContextManager::open(storage.clone(), o).await?;
        let id = m.session_id().unwrap().to_owned();
        m.save(save("t")).await?;
        now.set(T0 + 6);
        m.save(save("u")).await?;
        let a = orphan(&storage, &id, &format!("grep_{}_{T0}_7_abcd.json", "0".repeat(12)), T0).await;
        assert_eq!(m.reconcile().await?, std::slice::from_ref(&a));
        assert_eq!(filepaths(&told), [a], "the orphan is the oldest record: it goes first");
        assert_eq!(m.len(), 2);
        Ok::<(), Error>(())
    })
    .unwrap();
}

#[test]
fn evicted_slots_are_compacted_so_memory_does_not_grow_with_the_records_saved() {
    block_on(async {
        let storage: Shared = Rc::new(MemoryStorage::new());
        let now = Rc::new(Cell::new(T0));
        let (o, _told) = capped(None, now.clone(), Retention { max_records: Some(10), ..Retention::default() });
        let m = ContextManager::new(storage.clone(), o)?;
        let mut saved = Vec::new();
        for i in 0..5000 {
            now.set(T0 + i);
            saved.push(m.save(SaveInput { args_json: &format!(r#"{{"i":{i}}}"#), ..save("grep") }).await?);
        }
        assert_eq!(pointer_paths(&m), saved[4990..]);
        assert!(m.slots_held() <= 2 * toolctx::store::COMPACT_FROM + 10, "{} slots held", m.slots_held());
        let ranked =
            m.rank_all(&toolctx::select::Query::new("grep"), toolctx::Fallback::None, toolctx::Strategy::Bm25, None);
        assert_eq!(ranked.hits.len(), 10, "the index holds the live records only");
        let records = storage.paths().into_iter().filter(|p| !p.contains("/.index/")).count();
        assert_eq!(records, 10, "the records (beside them, the index segments: derived data)");
        Ok::<(), Error>(())
    })
    .unwrap();
}

#[test]
fn content_indexed_at_save_time_outlives_compaction_and_leaves_with_its_record() {
    block_on(async {
        let storage: Shared = Rc::new(MemoryStorage::new());
        let now = Rc::new(Cell::new(T0));
        let (o, _told) = capped(None, now.clone(), Retention { max_records: Some(10), ..Retention::default() });
        let m = ContextManager::new(storage.clone(), o)?;
        let total = 2 * toolctx::store::COMPACT_FROM + 40;
        let mut saved = Vec::new();
        for i in 0..total {
            now.set(T0 + i as i64);
            // Each result names its own word, found only in the content.
            let result = format!(r#""payload word{i}""#);
            saved.push(
                m.save(SaveInput { args_json: &format!(r#"{{"i":{i}}}"#), result_json: Some(&result), ..save("grep") })
                    .await?,
            );
        }
        assert!(m.slots_held() < total, "compaction ran ({} slots held)", m.slots_held());
        let find = |q: &str| {
            let ranked =
                m.rank_all(&toolctx::select::Query::new(q), toolctx::Fallback::None, toolctx::Strategy::Bm25, None);
            ranked.hits.iter().map(|h| m.filepath_of(h.index as u32).unwrap_or_default()).collect::<Vec<_>>()
        };
        let last = total - 1;
        assert_eq!(find(&format!("word{last}")), [saved[last].clone()], "a live record is found by its content");
        assert!(find("word0").is_empty(), "an evicted record's content is not ranked");
        assert_eq!(find("payload").len(), 10, "only the live records, by content");
        Ok::<(), Error>(())
    })
    .unwrap();
}

/// A storage whose writes land at once but answer a few turns later: a reconcile can
/// list and adopt a record whose save has not returned yet.
struct SlowAnswers {
    inner: MemoryStorage,
}

async fn turns(n: usize) {
    for _ in 0..n {
        let mut yielded = false;
        std::future::poll_fn(|cx| {
            if yielded {
                return std::task::Poll::Ready(());
            }
            yielded = true;
            cx.waker().wake_by_ref();
            std::task::Poll::Pending
        })
        .await;
    }
}

impl Storage for SlowAnswers {
    async fn read(&self, path: &str) -> toolctx::Result<Option<Vec<u8>>> {
        self.inner.read(path).await
    }
    async fn write(&self, path: &str, data: &[u8], options: WriteOptions) -> toolctx::Result<()> {
        self.inner.write(path, data, options).await?;
        turns(20).await;
        Ok(())
    }
    async fn remove(&self, path: &str) -> toolctx::Result<()> {
        self.inner.remove(path).await
    }
    async fn list(&self, dir: &str) -> toolctx::Result<Vec<String>> {
        self.inner.list(dir).await
    }
}

#[test]
fn a_reconcile_racing_a_save_leaves_one_pointer_for_the_record() {
    block_on(async {
        let now = Rc::new(Cell::new(T0));
        let m =
            ContextManager::open(SlowAnswers { inner: MemoryStorage::new() }, options(Some(SessionChoice::New), now))
                .await?;
        let save = m.save(SaveInput { result_json: Some("\"payload zebra\""), ..save("grep") });
        let reconcile = async {
            turns(5).await; // the record's file is there; its save has not answered
            m.reconcile().await
        };
        let (path, adopted) = futures_util::future::join(save, reconcile).await;
        let path = path?;
        assert_eq!(adopted?, std::slice::from_ref(&path), "the reconcile saw the file before the save answered");
        assert_eq!(pointer_paths(&m), std::slice::from_ref(&path), "one pointer for one record");
        let ranked =
            m.rank_all(&toolctx::select::Query::new("zebra"), toolctx::Fallback::None, toolctx::Strategy::Bm25, None);
        assert_eq!(ranked.hits.len(), 1, "ranked once, by the content its save indexed");
        Ok::<(), Error>(())
    })
    .unwrap();
}

#[test]
fn an_evicted_record_takes_its_embedding_vector_with_it() {
    block_on(async {
        let storage: Shared = Rc::new(MemoryStorage::new());
        let now = Rc::new(Cell::new(T0));
        let (o, _told) = capped(None, now.clone(), Retention { max_records: Some(2), ..Retention::default() });
        let m = ContextManager::new(storage.clone(), o)?;
        let mut saved = Vec::new();
        for (i, tool) in ["alpha", "bravo", "charlie"].into_iter().enumerate() {
            let path = m.save(save(tool)).await?;
            let mut v = [0.0f32; 4];
            v[i] = 1.0;
            assert_eq!(m.set_vector(&path, &v), m.knows(&path));
            saved.push(path);
            now.set(now.get() + 1);
        }
        assert!(!m.knows(&saved[0]), "alpha was evicted");
        // Every slot taken, the evicted one's too (it stays taken until compaction).
        let all: Vec<(usize, u32)> = (0..3).map(|s| (s as usize, s)).collect();
        let nearest = |q: [f32; 4]| m.nearest(&q, all.clone().into_iter(), 10);
        assert_eq!(nearest([1.0, 0.0, 0.0, 0.0]), Vec::<usize>::new(), "alpha's vector left with it");
        let bravo = nearest([0.2, 1.0, 0.0, 0.0]);
        assert_eq!(bravo.len(), 1);
        assert_eq!(m.filepath_of(bravo[0] as u32).as_deref(), Some(saved[1].as_str()));
        assert!(!m.set_vector(&saved[0], &[0.0, 0.0, 0.0, 1.0]), "no pointer, no vector");
        Ok::<(), Error>(())
    })
    .unwrap();
}
