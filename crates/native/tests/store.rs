//! The ContextManager workflow over native storage (memory and std::fs).

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use futures_executor::block_on;
use toolctx::{
    ContextManager, Error, ErrorKind, Fallback, Filter, FsStorage, Listed, LoadStep, MemoryStorage, SaveInput, Storage,
    WriteOptions,
};

mod common;
use common::{debug_log, holding, options, record_paths, save};

#[test]
fn save_then_load_round_trips_the_record() {
    block_on(async {
        let m = ContextManager::new(MemoryStorage::new(), options("/ctx"))?;
        let path = m.save(save("readFile", r#"{"path":"src/a.ts"}"#, r#"{"text":"hi"}"#)).await?;
        let name = path.strip_prefix("/ctx/").unwrap();
        assert!(toolctx::is_record_filename(name), "{name}");
        assert_eq!(m.storage().paths(), std::slice::from_ref(&path));
        let loaded = m.load(std::slice::from_ref(&path)).await?;
        let record: serde_json::Value = serde_json::from_slice(&loaded[0]).unwrap();
        assert_eq!(record["v"], 1);
        assert_eq!(record["args"]["path"], "src/a.ts");
        assert_eq!(record["result"]["text"], "hi");
        assert_eq!(record["toolDescription"], "read file: path=src/a.ts");
        assert!(record.get("taskId").is_none() && record.get("queryId").is_none());
        Ok::<(), Error>(())
    })
    .unwrap();
}

#[test]
fn every_record_is_in_storage_when_its_save_resolves_by_default() {
    block_on(async {
        let m = ContextManager::new(MemoryStorage::new(), toolctx::options("/ctx"))?;
        let a = m.save(save("grep", r#"{"q":"x"}"#, "1")).await?;
        let b = m.save(save("readFile", r#"{"path":"a.ts"}"#, r#""small""#)).await?;
        assert_eq!(m.storage().paths(), [a, b], "nothing is held back, however small");
        Ok::<(), Error>(())
    })
    .unwrap();
}

#[test]
fn small_records_stay_in_memory_until_flushed() {
    block_on(async {
        let m = ContextManager::new(MemoryStorage::new(), holding("/ctx"))?;
        let path = m.save(save("grep", r#"{"q":"x"}"#, "1")).await?;
        assert!(m.storage().paths().is_empty(), "a small record is not written");
        assert_eq!(m.load(std::slice::from_ref(&path)).await?.len(), 1);
        m.flush().await?;
        assert_eq!(record_paths(m.storage()), [path], "flush wrote it out (and a segment of its terms)");
        Ok::<(), Error>(())
    })
    .unwrap();
}

#[test]
fn a_load_step_gives_the_bytes_held_in_memory_the_confined_path_to_read_or_skips() {
    block_on(async {
        let mut o = holding("/ctx");
        let log = debug_log(&mut o);
        let m = ContextManager::new(MemoryStorage::new(), o)?;
        let a = m.save(save("grep", r#"{"q":"a"}"#, "1")).await?;
        let b = m.save(save("grep", r#"{"q":"b"}"#, "2")).await?;
        let asked = [b.as_str(), a.as_str(), b.as_str()];
        let loading = m.begin_load()?;
        let held: Vec<Vec<u8>> = asked
            .iter()
            .map(|p| match m.load_step(p) {
                LoadStep::Held(_, bytes) => bytes.to_vec(),
                _ => panic!("{p} is held in memory"),
            })
            .collect();
        drop(loading);
        let loaded: Vec<Vec<u8>> = m.load(&asked.map(str::to_owned)).await?.iter().map(|r| r.to_vec()).collect();
        assert_eq!(held, loaded, "what a load gives");
        let unnormal = a.replace("/ctx/", "/ctx/sub/../");
        assert!(matches!(m.load_step(&unnormal), LoadStep::Held(..)), "confined as a load is");
        assert!(matches!(m.load_step("/elsewhere/x.json"), LoadStep::Skipped), "outside the context dir");
        assert_eq!(
            log.borrow().last().map(|e| (e.message.as_str(), e.path.as_deref())),
            Some(("Failed to load /elsewhere/x.json: outside the context dir", Some("/elsewhere/x.json")))
        );
        m.flush().await?;
        m.save(save("grep", r#"{"q":"c"}"#, "3")).await?;
        assert!(
            matches!(m.load_step(&unnormal), LoadStep::Read(p) if p == a),
            "written out: read at the confined path"
        );
        m.close().await?;
        assert_eq!(m.begin_load().err().map(|e| e.kind()), Some(ErrorKind::Closed), "closed: a load rejects");
        Ok::<(), Error>(())
    })
    .unwrap();
}

#[test]
fn a_listed_slot_resolves_while_its_pointer_is_current_and_never_to_another() {
    block_on(async {
        let mut o = toolctx::options("/ctx");
        o.retention.max_records = Some(2);
        let m = ContextManager::new(MemoryStorage::new(), o)?;
        let a = m.save(save("grep", r#"{"q":"a"}"#, "1")).await?;
        let b = m.save(save("grep", r#"{"q":"b"}"#, "2")).await?;
        let (epoch, slots) = (m.epoch(), m.slots(Filter::ALL));
        assert_eq!(
            slots.iter().map(|&s| m.resolve_slot(epoch, s)).collect::<Vec<_>>(),
            [Some(Listed::Slot(slots[0])), Some(Listed::Slot(slots[1]))]
        );
        m.save(save("grep", r#"{"q":"c"}"#, "3")).await?; // evicts a
        assert_eq!(m.resolve_slot(epoch, slots[0]), Some(Listed::Gone(a)));
        assert_eq!(m.resolve_slot(epoch, slots[1]), Some(Listed::Slot(slots[1])));
        assert_eq!(m.resolve_slot(epoch, 99), None, "no such slot");
        m.clear_pointers();
        m.save(save("grep", r#"{"q":"d"}"#, "4")).await?;
        assert_eq!(m.resolve_slot(epoch, slots[0]), None, "the epoch moved: slot 0 is d's now");
        assert!(m.slot_of(&b).is_none());
        Ok::<(), Error>(())
    })
    .unwrap();
}

#[test]
fn memory_budget_writes_out_the_oldest() {
    block_on(async {
        let mut o = holding("/ctx");
        o.memory_budget = 1000;
        let m = ContextManager::new(MemoryStorage::new(), o)?;
        let mut paths = Vec::new();
        for i in 0..10 {
            let result = format!("\"{}\"", "x".repeat(200 + i));
            paths.push(m.save(save("t", "{}", &result)).await?);
        }
        let written = m.storage().paths();
        assert!(!written.is_empty() && written.len() < 10);
        assert!(written.contains(&paths[0]), "the oldest went out first");
        assert!(!written.contains(&paths[9]), "the newest stays in memory");
        assert_eq!(m.load(&paths).await?.len(), 10, "both kinds load");
        Ok::<(), Error>(())
    })
    .unwrap();
}

#[test]
fn a_taken_name_draws_a_new_random_part_and_never_replaces() {
    block_on(async {
        let storage = Rc::new(MemoryStorage::new());
        let fixed = |calls: Rc<Cell<u32>>| {
            let mut o = options("/ctx");
            o.clock = Rc::new(|| 1_700_000_000_000);
            // The same first name for both managers, then varying parts.
            o.random = Rc::new(move || {
                calls.set(calls.get() + 1);
                Ok(if calls.get() <= 4 { 0.5 } else { (calls.get() % 36) as f64 / 36.0 })
            });
            o
        };
        let a = ContextManager::new(storage.clone(), fixed(Rc::new(Cell::new(0))))?;
        let b = ContextManager::new(storage.clone(), fixed(Rc::new(Cell::new(0))))?;
        let pa = a.save(save("t", "{}", "\"first\"")).await?;
        let pb = b.save(save("t", "{}", "\"second\"")).await?;
        assert_ne!(pa, pb);
        let first = storage.read(&pa).await?.unwrap();
        assert!(String::from_utf8(first).unwrap().contains("\"first\""));
        Ok::<(), Error>(())
    })
    .unwrap();
}

/// Gives way to the other futures once: wakes itself and returns `Pending`.
async fn yield_now() {
    let mut yielded = false;
    std::future::poll_fn(|cx| {
        if yielded {
            return std::task::Poll::Ready(());
        }
        yielded = true;
        cx.waker().wake_by_ref();
        std::task::Poll::Pending
    })
    .await
}

/// A storage whose every call yields a different number of times (deterministically,
/// by call number) before it runs, so concurrent operations really interleave and
/// complete out of the order they were called in. Records the paths written, in the
/// order the writes completed.
#[derive(Default)]
struct Yielding {
    inner: MemoryStorage,
    calls: Cell<u32>,
    completed: RefCell<Vec<String>>,
}

impl Yielding {
    async fn turn(&self) {
        let call = self.calls.get();
        self.calls.set(call + 1);
        // 0..=12 yields; 7 is coprime to 13, so neighbouring calls wait very differently.
        for _ in 0..(call * 7) % 13 {
            yield_now().await;
        }
    }
}

impl Storage for Yielding {
    async fn read(&self, path: &str) -> toolctx::Result<Option<Vec<u8>>> {
        self.turn().await;
        self.inner.read(path).await
    }
    async fn write(&self, path: &str, data: &[u8], options: WriteOptions) -> toolctx::Result<()> {
        self.turn().await;
        self.inner.write(path, data, options).await?;
        self.completed.borrow_mut().push(path.to_owned());
        Ok(())
    }
    async fn remove(&self, path: &str) -> toolctx::Result<()> {
        self.turn().await;
        self.inner.remove(path).await
    }
    async fn list(&self, dir: &str) -> toolctx::Result<Vec<String>> {
        self.turn().await;
        self.inner.list(dir).await
    }
}

#[test]
fn concurrent_saves_keep_call_order() {
    block_on(async {
        let m = ContextManager::new(Yielding::default(), options("/ctx"))?;
        let args: Vec<String> = (0..50).map(|i| format!("{{\"i\":{i}}}")).collect();
        let saves = args.iter().map(|a| m.save(save("t", a, "null")));
        let paths: Vec<String> = futures_util::future::try_join_all(saves).await?;
        // The writes really completed out of call order...
        let completed = m.storage().completed.borrow().clone();
        assert_eq!(completed.len(), 50);
        assert_ne!(completed, paths, "the storage must make the saves interleave");
        // ...and the pointers are still in call order.
        let listed: serde_json::Value = serde_json::from_str(&m.pointers_json(Filter::ALL)).unwrap();
        let order: Vec<i64> = listed.as_array().unwrap().iter().map(|p| p["args"]["i"].as_i64().unwrap()).collect();
        assert_eq!(order, (0..50).collect::<Vec<_>>());
        let unique: std::collections::HashSet<_> = paths.iter().collect();
        assert_eq!(unique.len(), 50);
        Ok::<(), Error>(())
    })
    .unwrap();
}

#[test]
fn load_skips_outside_missing_and_torn_files_with_a_warning() {
    block_on(async {
        let mut o = options("/ctx");
        let log = debug_log(&mut o);
        let m = ContextManager::new(MemoryStorage::new(), o)?;
        let good = m.save(save("t", "{}", "[1,2,3]")).await?;
        let bytes = m.storage().read(&good).await?.unwrap();
        let torn = "/ctx/t_000000000000_1700000000000_9_aaaa.json".to_owned();
        m.storage().write(&torn, &bytes[..bytes.len() / 2], WriteOptions::default()).await?;
        m.storage().write("/secret.json", &bytes, WriteOptions::default()).await?;
        let asked =
            ["/ctx/../secret.json", "/secret.json", &torn, "/ctx/missing.json", &good, "ctx/x.json"].map(String::from);
        let loaded = m.load(&asked).await?;
        assert_eq!(loaded.len(), 1);
        assert_eq!(&*loaded[0], &bytes[..]);
        let log = log.borrow();
        let skipped: Vec<&str> =
            log.iter().filter(|e| e.message.starts_with("Failed to load ")).map(|e| e.message.as_str()).collect();
        assert_eq!(skipped.len(), 5, "{skipped:?}");
        for asked in asked.iter().filter(|p| **p != good) {
            let hit = log.iter().find(|e| e.message.starts_with(&format!("Failed to load {asked}: ")));
            assert_eq!(hit.and_then(|e| e.path.as_deref()), Some(asked.as_str()), "{skipped:?}");
        }
        Ok::<(), Error>(())
    })
    .unwrap();
}

/// A storage that fails every write after creating a partial file.
struct FailingWrites {
    inner: MemoryStorage,
    kind: ErrorKind,
}

impl Storage for FailingWrites {
    async fn read(&self, path: &str) -> toolctx::Result<Option<Vec<u8>>> {
        self.inner.read(path).await
    }
    async fn write(&self, path: &str, data: &[u8], options: WriteOptions) -> toolctx::Result<()> {
        self.inner.write(path, &data[..data.len() / 2], options).await?;
        Err(Error::new(self.kind, "disk full").with_path(path))
    }
    async fn remove(&self, path: &str) -> toolctx::Result<()> {
        self.inner.remove(path).await
    }
    async fn list(&self, dir: &str) -> toolctx::Result<Vec<String>> {
        self.inner.list(dir).await
    }
}

#[test]
fn a_failed_save_writes_nothing_and_adds_no_pointer() {
    block_on(async {
        let storage = FailingWrites { inner: MemoryStorage::new(), kind: ErrorKind::QuotaExceeded };
        let m = ContextManager::new(storage, options("/ctx"))?;
        let err = m.save(save("t", "{}", "1")).await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::QuotaExceeded);
        assert!(m.is_empty());
        assert!(m.storage().inner.paths().is_empty(), "the partial file was removed");
        for (args, result, kind) in [
            ("[1]", "1", ErrorKind::InvalidArgument),
            (r#"{"s":"\ud800"}"#, "1", ErrorKind::NotSerializable),
            ("{}", r#"["\udc00"]"#, ErrorKind::NotSerializable),
        ] {
            assert_eq!(m.save(save("t", args, result)).await.unwrap_err().kind(), kind, "{args} {result}");
        }
        let mut o = options("/ctx");
        o.max_record_bytes = 100;
        let small = ContextManager::new(MemoryStorage::new(), o)?;
        let big = format!("\"{}\"", "x".repeat(200));
        assert_eq!(small.save(save("t", "{}", &big)).await.unwrap_err().kind(), ErrorKind::TooLarge);
        assert!(small.storage().paths().is_empty());
        Ok::<(), Error>(())
    })
    .unwrap();
}

#[test]
fn a_save_whose_every_name_is_taken_fails_with_the_last_taken_as_cause() {
    block_on(async {
        let storage = FailingWrites { inner: MemoryStorage::new(), kind: ErrorKind::AlreadyExists };
        let m = ContextManager::new(storage, options("/ctx"))?;
        let err = m.save(save("t", "{}", "1")).await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Storage);
        let cause = std::error::Error::source(&err).and_then(|c| c.downcast_ref::<Error>()).expect("a cause");
        assert_eq!(cause.kind(), ErrorKind::AlreadyExists);
        assert_eq!(m.storage().inner.paths().len(), toolctx::store::NAME_ATTEMPTS, "one name tried per attempt");
        assert!(m.is_empty());
        Ok::<(), Error>(())
    })
    .unwrap();
}

#[test]
fn clear_removes_only_this_managers_records() {
    block_on(async {
        let storage = Rc::new(MemoryStorage::new());
        storage.write("/ctx/notes.txt", b"keep", WriteOptions::default()).await?;
        let other = ContextManager::new(storage.clone(), options("/ctx"))?;
        let theirs = other.save(save("t", "{}", "1")).await?;
        let mine = ContextManager::new(storage.clone(), options("/ctx"))?;
        let p = mine.save(save("t", "{}", "2")).await?;
        mine.clear_pointers();
        mine.clear_context_dir().await?;
        let left = storage.paths();
        assert!(left.contains(&theirs) && left.contains(&"/ctx/notes.txt".to_owned()));
        assert!(!left.contains(&p));
        Ok::<(), Error>(())
    })
    .unwrap();
}

#[test]
fn pointer_paths_print_back_and_what_this_manager_wrote_survives_forgetting_its_pointers() {
    block_on(async {
        let storage = Rc::new(MemoryStorage::new());
        // An adopted record under a name of another form, and another manager's record.
        let odd = "/ctx/d_ir/read_file_3f2a9c1b_1735012345678_007_k3j9x2.json";
        let seedlike = toolctx::ContextManager::new(storage.clone(), options("/ctx/d_ir"))?;
        let seeded = seedlike.save(save("seed", "{}", "0")).await?;
        storage.write(odd, &storage.read(&seeded).await?.unwrap(), WriteOptions::default()).await?;
        storage.remove(&seeded).await?;
        let other = ContextManager::new(storage.clone(), options("/ctx/d_ir"))?;
        let theirs = other.save(save("t", "{}", "1")).await?;
        let mine = ContextManager::new(storage.clone(), options("/ctx/d_ir"))?;
        let mut saved = Vec::new();
        for tool in ["read_file", "a b/c\"é", "_", "x".repeat(80).as_str(), ""] {
            saved.push(mine.save(save(tool, r#"{"k":"v"}"#, "2")).await?);
        }
        let listed = |m: &ContextManager<Rc<MemoryStorage>>| -> Vec<String> {
            let all: serde_json::Value = serde_json::from_str(&m.pointers_json(Filter::default())).unwrap();
            let all = all.as_array().unwrap().clone();
            for p in &all {
                let path = p["filepath"].as_str().unwrap();
                assert_eq!(p["filename"].as_str(), path.rsplit('/').next(), "{p}");
                assert_eq!(m.slot_of(path).and_then(|s| m.filepath_of(s)).as_deref(), Some(path));
            }
            all.iter().map(|p| p["filepath"].as_str().unwrap().to_owned()).collect()
        };
        assert_eq!(listed(&mine), saved);
        // Forgotten, then found again by a rebuild (with the adopted and foreign records):
        // the records this manager wrote are still the ones it removes.
        mine.clear_pointers();
        assert_eq!(mine.rebuild_index().await?, saved.len() + 2);
        let mut all = listed(&mine);
        all.sort();
        let mut expected = [saved.clone(), vec![odd.to_owned(), theirs.clone()]].concat();
        expected.sort();
        assert_eq!(all, expected);
        mine.clear_context_dir().await?;
        let mut left: Vec<String> = storage.paths().into_iter().filter(|p| !p.contains("/.index/")).collect();
        left.sort();
        let mut kept = vec![odd.to_owned(), theirs];
        kept.sort();
        assert_eq!(left, kept);
        Ok::<(), Error>(())
    })
    .unwrap();
}

#[test]
fn fs_storage_writes_private_files_and_keeps_others() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = dir.path().join("ctx").to_string_lossy().into_owned();
    block_on(async {
        let m = ContextManager::new(FsStorage::new(), options(&ctx))?;
        let p = m.save(save("readFile", r#"{"path":"a"}"#, "\"text\"")).await?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(std::fs::metadata(&p).unwrap().permissions().mode() & 0o777, 0o600);
            assert_eq!(std::fs::metadata(&ctx).unwrap().permissions().mode() & 0o777, 0o700);
        }
        std::fs::write(format!("{ctx}/keep.json"), "{}").unwrap();
        assert_eq!(m.load(std::slice::from_ref(&p)).await?.len(), 1);
        let listed = m.storage().list(&ctx).await?;
        assert_eq!(listed.len(), 2);
        m.clear().await?;
        assert!(std::fs::metadata(&p).is_err());
        assert!(std::fs::metadata(format!("{ctx}/keep.json")).is_ok());
        assert!(m.is_empty());
        Ok::<(), Error>(())
    })
    .unwrap();
}

#[test]
fn rebuild_then_clear_keeps_the_records_another_manager_wrote() {
    block_on(async {
        let storage = Rc::new(MemoryStorage::new());
        let a = ContextManager::new(storage.clone(), options("/ctx"))?;
        let mut theirs = Vec::new();
        for i in 0..5 {
            theirs.push(a.save(save("readFile", &format!(r#"{{"path":"f{i}.ts"}}"#), "1")).await?);
        }
        let b = ContextManager::new(storage.clone(), options("/ctx"))?;
        let own = b.save(save("grep", "{}", "2")).await?;
        assert_eq!(b.rebuild_index().await?, 6, "b adopts a's five records and has its own");
        b.clear().await?;
        assert_eq!(b.len(), 0);
        assert_eq!(a.load(&theirs).await?.len(), 5, "a loads 5 of 5");
        assert_eq!(storage.read(&own).await?, None, "b's own record is gone");
        // Adopting again after the clear changes nothing either.
        assert_eq!(b.rebuild_index().await?, 5);
        b.clear_context_dir().await?;
        assert_eq!(a.load(&theirs).await?.len(), 5);
        Ok::<(), Error>(())
    })
    .unwrap();
}

/// A storage that holds result bodies, as the wasm host does: it writes them, and the
/// core never sees them.
#[derive(Clone)]
struct Holding {
    inner: Rc<MemoryStorage>,
    bodies: Rc<RefCell<std::collections::HashMap<u32, Vec<u8>>>>,
    /// Times a body was copied out of the host (`body`: the default `write_parts`).
    copied_out: Rc<Cell<usize>>,
}

impl Storage for Holding {
    async fn read(&self, path: &str) -> toolctx::Result<Option<Vec<u8>>> {
        self.inner.read(path).await
    }
    async fn write(&self, path: &str, data: &[u8], options: WriteOptions) -> toolctx::Result<()> {
        self.inner.write(path, data, options).await
    }
    async fn remove(&self, path: &str) -> toolctx::Result<()> {
        self.inner.remove(path).await
    }
    async fn list(&self, dir: &str) -> toolctx::Result<Vec<String>> {
        self.inner.list(dir).await
    }
    fn body(&self, handle: u32) -> Option<Vec<u8>> {
        self.copied_out.set(self.copied_out.get() + 1);
        self.bodies.borrow().get(&handle).cloned()
    }
    async fn write_parts(
        &self,
        path: &str,
        head: &[u8],
        body: u32,
        tail: &[u8],
        options: WriteOptions,
    ) -> toolctx::Result<()> {
        let whole = [head, &self.bodies.borrow()[&body], tail].concat();
        self.inner.write(path, &whole, options).await
    }
}

#[test]
fn a_result_the_host_holds_is_stored_byte_for_byte_as_the_same_text_would_be() {
    block_on(async {
        let result = format!(r#"{{"lines":["login","AuthError"],"text":"{}"}}"#, "é login ".repeat(3000));
        // persistThreshold past the record's size: the text is held in memory, the body
        // the host holds is written all the same (its bytes never cross into the core).
        for threshold in [0, 1 << 20] {
            let mut o = options("/ctx");
            o.persist_threshold = threshold;
            o.clock = Rc::new(|| 1_700_000_000_000);
            let fixed = || -> toolctx::store::Random { Rc::new(|| Ok(0.5)) };
            o.random = fixed();
            let text = ContextManager::new(MemoryStorage::new(), o.clone())?;
            o.random = fixed();
            let holding = Holding {
                inner: Rc::new(MemoryStorage::new()),
                bodies: Rc::new(RefCell::new([(7, result.clone().into_bytes())].into())),
                copied_out: Rc::new(Cell::new(0)),
            };
            let held = ContextManager::new(holding, o)?;
            let args = r#"{"path":"src/auth/login.ts"}"#;
            let a = text.save(save("readFile", args, &result)).await?;
            let mut prefix_end = 16 * 1024;
            while !result.is_char_boundary(prefix_end) {
                prefix_end -= 1;
            }
            let body = toolctx::HostBody {
                handle: 7,
                len: result.len(),
                prefix: &result[..prefix_end],
                hash: toolctx::result_hash(Some(result.as_bytes())),
            };
            let with_body = || SaveInput {
                tool_name: "readFile",
                args_json: args,
                result_body: Some(body),
                ..SaveInput::default()
            };
            let b = held.save(with_body()).await?;
            assert_eq!(a, b, "same name");
            assert_eq!(text.pointers_json(Filter::ALL), held.pointers_json(Filter::ALL), "same pointer");
            assert_eq!(text.load(std::slice::from_ref(&a)).await?, held.load(std::slice::from_ref(&b)).await?);
            let written = held.storage().inner.read(&b).await?.expect("written, whatever persistThreshold");
            assert_eq!(written, text.load(std::slice::from_ref(&a)).await?[0].to_vec(), "byte for byte");
            assert_eq!(held.storage().copied_out.get(), 0, "the body is written by the host, never copied");
            let (fallback, strategy) = (Fallback::None, toolctx::Strategy::Bm25);
            for manager in [&*text, &*held] {
                let query = toolctx::select::query_for("AuthError", strategy, true);
                assert_eq!(manager.rank_all(&query, fallback, strategy, None).hits.len(), 1, "its content is indexed");
            }
            // The same body again: the hash the host handed over makes the two saves
            // copies of one result.
            held.save(with_body()).await?;
            let first = held.slots(Filter::ALL)[0];
            assert!(held.has_later_copy(first), "the hash is the host's");
        }
        Ok::<(), Error>(())
    })
    .unwrap();
}

#[test]
fn the_result_hash_is_the_same_whatever_the_chunks() {
    let text: Vec<u8> = (0..1000u32).flat_map(|i| i.to_le_bytes()).collect();
    let whole = toolctx::result_hash(Some(&text));
    for chunk in [1, 3, 7, 8, 9, 64, 999] {
        let mut h = toolctx::ResultHasher::default();
        for part in text.chunks(chunk) {
            h.update(part);
        }
        assert_eq!(h.finish(), whole, "chunks of {chunk}");
    }
    assert_ne!(toolctx::result_hash(Some(b"[1]")), toolctx::result_hash(Some(b"[2]")));
    assert_ne!(toolctx::result_hash(Some(b"")), toolctx::result_hash(None));
}
