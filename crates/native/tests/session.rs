//! Sessions over native storage: manifests, resume, rebuild, end, listing, stale cleanup.

use std::cell::Cell;
use std::rc::Rc;

use futures_executor::block_on;
use toolctx::session::{parse_iso_ms, Manifest, MANIFEST};
use toolctx::{
    ContextManager, Error, ErrorKind, Filter, MemoryStorage, Options, SaveInput, SessionChoice, Storage, WriteOptions,
};

type Shared = Rc<MemoryStorage>;

fn options(session: SessionChoice, now: Rc<Cell<i64>>) -> Options {
    let mut o = toolctx::options("/ctx");
    o.persist_threshold = 0;
    o.session = Some(session);
    o.clock = Rc::new(move || now.get());
    o
}

fn save<'a>(tool: &'a str, args: &'a str, category: Option<&str>) -> SaveInput<'a> {
    SaveInput {
        tool_name: tool,
        args_json: args,
        result_json: Some("\"body\""),
        category: category.map(str::to_owned),
        ..SaveInput::default()
    }
}

async fn manifest_of(storage: &Shared, id: &str) -> Manifest {
    let bytes = storage.read(&format!("/ctx/sessions/{id}/{MANIFEST}")).await.unwrap().expect("manifest");
    Manifest::parse(&bytes, id).unwrap()
}

const T0: i64 = 1_737_210_622_000; // 2025-01-18T14:30:22Z

#[test]
fn a_new_session_keeps_its_records_and_manifest_in_its_folder() {
    block_on(async {
        let storage: Shared = Rc::new(MemoryStorage::new());
        let now = Rc::new(Cell::new(T0));
        let m = ContextManager::open(storage.clone(), options(SessionChoice::New, now.clone())).await?;
        let id = m.session_id().unwrap().to_owned();
        assert!(id.starts_with("20250118-143022-"), "{id}");
        let a = m.save(save("readFile", r#"{"path":"src/auth/login.ts"}"#, Some("code"))).await?;
        let b = m.save(save("grep", r#"{"pattern":"auth"}"#, None)).await?;
        assert!(a.starts_with(&format!("/ctx/sessions/{id}/code/readFile_")));
        assert!(b.starts_with(&format!("/ctx/sessions/{id}/grep_")));
        now.set(T0 + 5_000);
        m.flush().await?;
        let manifest = manifest_of(&storage, &id).await;
        assert_eq!(manifest.session_id, id);
        assert_eq!(manifest.created_at, "2025-01-18T14:30:22.000Z");
        assert_eq!(manifest.last_activity, "2025-01-18T14:30:27.000Z");
        assert_eq!(manifest.context_files.len(), 2);
        let entry = manifest.context_files.keys().find(|k| k.starts_with("code/")).unwrap();
        assert!(manifest.context_index["auth"].contains(entry));
        assert_eq!(manifest.context_files[entry].for_tool, "readFile");
        let sessions = toolctx::list_sessions(&storage, "/ctx").await?;
        assert_eq!(sessions.len(), 1);
        assert_eq!((sessions[0].id.as_str(), sessions[0].records), (id.as_str(), 2));
        assert!(m.save(save("t", "{}", Some("../x"))).await.is_err(), "a category cannot climb");
        Ok::<(), Error>(())
    })
    .unwrap();
}

/// Counts reads of record files.
struct CountingReads {
    inner: Shared,
    reads: Cell<usize>,
}

impl Storage for CountingReads {
    async fn read(&self, path: &str) -> toolctx::Result<Option<Vec<u8>>> {
        if !path.ends_with(MANIFEST) && !path.contains("/.index/") {
            self.reads.set(self.reads.get() + 1);
        }
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
}

#[test]
fn resume_restores_every_pointer_reading_only_unlisted_records() {
    block_on(async {
        let storage: Shared = Rc::new(MemoryStorage::new());
        let now = Rc::new(Cell::new(T0));
        let m = ContextManager::open(storage.clone(), options(SessionChoice::New, now.clone())).await?;
        let id = m.session_id().unwrap().to_owned();
        for i in 0..10 {
            m.save(save("grep", &format!("{{\"i\":{i}}}"), (i % 2 == 0).then_some("code"))).await?;
        }
        m.flush().await?;
        // Three more saves within the coalescing window: on disk, but not in the manifest.
        for i in 10..13 {
            m.save(save("grep", &format!("{{\"i\":{i}}}"), None)).await?;
        }
        assert_eq!(manifest_of(&storage, &id).await.context_files.len(), 10);
        let before = m.pointers_json(Filter::ALL);
        drop(m); // a crash: no flush

        let counting = CountingReads { inner: storage.clone(), reads: Cell::new(0) };
        let resumed = ContextManager::open(counting, options(SessionChoice::Resume(id.clone()), now.clone())).await?;
        assert_eq!(resumed.pointers_json(Filter::ALL), before, "same pointers, same order");
        assert_eq!(resumed.storage().reads.get(), 3, "only the records the manifest did not list were read");
        assert_eq!(manifest_of(&storage, &id).await.context_files.len(), 13, "resume brings the manifest up to date");
        Ok::<(), Error>(())
    })
    .unwrap();
}

#[test]
fn a_corrupt_manifest_is_rebuilt_and_torn_records_removed() {
    block_on(async {
        let storage: Shared = Rc::new(MemoryStorage::new());
        let now = Rc::new(Cell::new(T0));
        let m = ContextManager::open(storage.clone(), options(SessionChoice::New, now.clone())).await?;
        let id = m.session_id().unwrap().to_owned();
        let p = m.save(save("readFile", r#"{"path":"a"}"#, None)).await?;
        m.flush().await?;
        let dir = format!("/ctx/sessions/{id}");
        storage.write(&format!("{dir}/{MANIFEST}"), b"{not json", WriteOptions::default()).await?;
        let torn = format!("{dir}/t_000000000000_1737210622000_9_aaaa.json");
        storage.write(&torn, b"{\"v\":1,\"toolName\":", WriteOptions::default()).await?;
        let resumed =
            ContextManager::open(storage.clone(), options(SessionChoice::Resume(id.clone()), now.clone())).await?;
        assert_eq!(resumed.len(), 1);
        assert_eq!(manifest_of(&storage, &id).await.context_files.len(), 1);
        assert!(storage.read(&torn).await?.is_some(), "resume only skips a torn file");
        assert_eq!(resumed.rebuild_index().await?, 1);
        assert!(storage.read(&torn).await?.is_none(), "rebuildIndex removes it");
        assert!(storage.read(&p).await?.is_some());
        let missing =
            ContextManager::open(storage.clone(), options(SessionChoice::Resume("20200101-000000-zzzz".into()), now))
                .await;
        assert_eq!(missing.err().map(|e| e.kind()), Some(ErrorKind::NotFound));
        Ok::<(), Error>(())
    })
    .unwrap();
}

#[test]
fn ending_a_session_removes_what_it_tracks_and_nothing_else() {
    block_on(async {
        let storage: Shared = Rc::new(MemoryStorage::new());
        let now = Rc::new(Cell::new(T0));
        let a = ContextManager::open(storage.clone(), options(SessionChoice::New, now.clone())).await?;
        let b = ContextManager::open(storage.clone(), options(SessionChoice::New, now.clone())).await?;
        let id = a.session_id().unwrap().to_owned();
        a.save(save("t", "{}", Some("code"))).await?;
        a.save(save("t", "{}", None)).await?;
        let kept = b.save(save("t", "{}", None)).await?;
        storage.write("/ctx/notes.txt", b"mine", WriteOptions::default()).await?;
        a.end_session().await?;
        let left = storage.paths();
        assert!(left.iter().all(|p| !p.contains(&id)), "{left:?}");
        assert!(left.contains(&kept) && left.contains(&"/ctx/notes.txt".to_owned()));
        // A file the session did not write stays, and so does its folder.
        let c = ContextManager::open(storage.clone(), options(SessionChoice::New, now.clone())).await?;
        c.save(save("t", "{}", None)).await?;
        let foreign = format!("/ctx/sessions/{}/user-notes.md", c.session_id().unwrap());
        storage.write(&foreign, b"keep", WriteOptions::default()).await?;
        c.clear_context_dir().await?;
        assert_eq!(storage.paths().iter().filter(|p| p.contains(c.session_id().unwrap())).count(), 1);
        Ok::<(), Error>(())
    })
    .unwrap();
}

#[test]
fn stale_cleanup_removes_only_idle_sessions_it_can_date() {
    block_on(async {
        let storage: Shared = Rc::new(MemoryStorage::new());
        let now = Rc::new(Cell::new(T0));
        let old = ContextManager::open(storage.clone(), options(SessionChoice::New, now.clone())).await?;
        old.save(save("t", "{}", None)).await?;
        old.flush().await?;
        let old_id = old.session_id().unwrap().to_owned();
        storage.write(&format!("/ctx/sessions/{old_id}/user.txt"), b"not ours", WriteOptions::default()).await?;
        now.set(T0 + 2 * 86_400_000);
        let fresh = ContextManager::open(storage.clone(), options(SessionChoice::New, now.clone())).await?;
        fresh.save(save("t", "{}", None)).await?;
        fresh.flush().await?;
        // Sessions whose last_activity is no date, or in the future, are left alone.
        let odd = ["20240101-000000-odd1", "20240101-000000-odd2"];
        for (id, last) in odd.iter().zip(["last tuesday", "2999-01-01T00:00:00Z"]) {
            let m =
                format!(r#"{{"session_id":"{id}","created_at":"x","last_activity":"{last}","context_files":{{}}}}"#);
            storage.write(&format!("/ctx/sessions/{id}/{MANIFEST}"), m.as_bytes(), WriteOptions::default()).await?;
        }
        let removed = toolctx::cleanup_stale_sessions(&storage, "/ctx", now.get(), 86_400_000).await?;
        assert_eq!(removed, std::slice::from_ref(&old_id));
        let left = storage.paths();
        assert_eq!(
            left.iter().filter(|p| p.contains(&old_id)).collect::<Vec<_>>(),
            [&format!("/ctx/sessions/{old_id}/user.txt")]
        );
        assert_eq!(toolctx::list_sessions(&storage, "/ctx").await?.len(), 3);
        let listed = toolctx::list_sessions(&storage, "/ctx").await?;
        let mine = listed.iter().find(|s| s.id == fresh.session_id().unwrap()).unwrap();
        assert_eq!(parse_iso_ms(&mine.last_activity), Some(now.get()));
        Ok::<(), Error>(())
    })
    .unwrap();
}

#[test]
fn two_managers_on_one_session_keep_each_others_entries() {
    block_on(async {
        let storage: Shared = Rc::new(MemoryStorage::new());
        let now = Rc::new(Cell::new(T0));
        let a = ContextManager::open(storage.clone(), options(SessionChoice::New, now.clone())).await?;
        let id = a.session_id().unwrap().to_owned();
        let b = ContextManager::open(storage.clone(), options(SessionChoice::Resume(id.clone()), now.clone())).await?;
        a.save(save("a", "{}", None)).await?;
        b.save(save("b", "{}", None)).await?;
        a.flush().await?;
        b.flush().await?;
        a.flush().await?;
        assert_eq!(manifest_of(&storage, &id).await.context_files.len(), 2);
        Ok::<(), Error>(())
    })
    .unwrap();
}

/// A session that crashed at `T0 + 10 ms`: three records in its manifest, two more on disk
/// that the manifest does not list yet. Returns its id and the paths of all five.
async fn crashed_session(storage: &Shared, now: &Rc<Cell<i64>>) -> Result<(String, Vec<String>), Error> {
    now.set(T0);
    let m = ContextManager::open(storage.clone(), options(SessionChoice::New, now.clone())).await?;
    let mut paths = Vec::new();
    for i in 0..3 {
        paths.push(m.save(save("grep", &format!("{{\"i\":{i}}}"), None)).await?);
    }
    m.flush().await?;
    now.set(T0 + 10);
    for i in 3..5 {
        paths.push(m.save(save("grep", &format!("{{\"i\":{i}}}"), Some("code"))).await?);
    }
    let id = m.session_id().unwrap().to_owned();
    assert_eq!(manifest_of(storage, &id).await.context_files.len(), 3, "the manifest lags behind");
    Ok((id, paths)) // dropped without flush: a crash
}

#[test]
fn resuming_a_crashed_session_indexes_it_without_moving_last_activity() {
    block_on(async {
        let storage: Shared = Rc::new(MemoryStorage::new());
        let now = Rc::new(Cell::new(T0));
        let (id, paths) = crashed_session(&storage, &now).await?;
        now.set(T0 + 2 * 86_400_000);
        let resumed =
            ContextManager::open(storage.clone(), options(SessionChoice::Resume(id.clone()), now.clone())).await?;
        assert_eq!(resumed.len(), 5);
        let manifest = manifest_of(&storage, &id).await;
        assert_eq!(manifest.context_files.len(), 5, "resume brings the index up to date");
        assert_eq!(
            parse_iso_ms(&manifest.last_activity),
            Some(T0 + 10),
            "last_activity is the last write in the session (the newest record), not the resume"
        );
        resumed.flush().await?;
        assert_eq!(parse_iso_ms(&manifest_of(&storage, &id).await.last_activity), Some(T0 + 10), "nothing to flush");
        let removed = toolctx::cleanup_stale_sessions(&storage, "/ctx", now.get(), 86_400_000).await?;
        assert_eq!(removed, std::slice::from_ref(&id), "an idle session stays collectable after a resume");
        assert!(paths.iter().all(|p| !storage.paths().contains(p)));
        // A save is activity: it moves last_activity.
        let (id, _) = crashed_session(&storage, &now).await?;
        now.set(T0 + 2 * 86_400_000);
        let resumed =
            ContextManager::open(storage.clone(), options(SessionChoice::Resume(id.clone()), now.clone())).await?;
        resumed.save(save("t", "{}", None)).await?;
        resumed.flush().await?;
        assert_eq!(parse_iso_ms(&manifest_of(&storage, &id).await.last_activity), Some(now.get()));
        assert!(toolctx::cleanup_stale_sessions(&storage, "/ctx", now.get(), 86_400_000).await?.is_empty());
        Ok::<(), Error>(())
    })
    .unwrap();
}

#[test]
fn ending_a_resumed_session_removes_what_its_manifest_tracks_and_nothing_else() {
    block_on(async {
        let storage: Shared = Rc::new(MemoryStorage::new());
        let now = Rc::new(Cell::new(T0));
        let (id, paths) = crashed_session(&storage, &now).await?;
        let resumed =
            ContextManager::open(storage.clone(), options(SessionChoice::Resume(id.clone()), now.clone())).await?;
        // Another manager of the session saves after the resume; its manifest update is
        // coalesced (not on disk yet), and a user keeps notes in the folder.
        let other =
            ContextManager::open(storage.clone(), options(SessionChoice::Resume(id.clone()), now.clone())).await?;
        let late = other.save(save("late", "{}", None)).await?;
        let notes = format!("/ctx/sessions/{id}/notes.md");
        storage.write(&notes, b"mine", WriteOptions::default()).await?;
        let flat = ContextManager::new(storage.clone(), {
            let mut o = options(SessionChoice::New, now.clone());
            o.session = None;
            o
        })?;
        let outside = flat.save(save("flat", "{}", None)).await?;
        resumed.end_session().await?;
        let left = storage.paths();
        assert!(paths.iter().all(|p| !left.contains(p)), "the five tracked records are gone: {left:?}");
        for kept in [&late, &notes, &outside] {
            assert!(left.contains(kept), "{kept} stays: {left:?}");
        }
        Ok::<(), Error>(())
    })
    .unwrap();
}

/// Logs every call that could change the store: writes, removals, appends, locks.
struct Spy {
    inner: Shared,
    calls: std::cell::RefCell<Vec<String>>,
}

impl Storage for Spy {
    async fn read(&self, path: &str) -> toolctx::Result<Option<Vec<u8>>> {
        self.inner.read(path).await
    }
    async fn write(&self, path: &str, data: &[u8], options: WriteOptions) -> toolctx::Result<()> {
        self.calls.borrow_mut().push(format!("write {path}"));
        self.inner.write(path, data, options).await
    }
    async fn remove(&self, path: &str) -> toolctx::Result<()> {
        self.calls.borrow_mut().push(format!("remove {path}"));
        self.inner.remove(path).await
    }
    async fn list(&self, dir: &str) -> toolctx::Result<Vec<String>> {
        self.inner.list(dir).await
    }
    async fn append(&self, path: &str, data: &[u8]) -> toolctx::Result<()> {
        self.calls.borrow_mut().push(format!("append {path}"));
        self.inner.append(path, data).await
    }
    async fn remove_dir(&self, path: &str) -> toolctx::Result<()> {
        self.calls.borrow_mut().push(format!("removeDir {path}"));
        self.inner.remove_dir(path).await
    }
    async fn locked<T>(&self, name: &str, work: impl std::future::Future<Output = T>) -> toolctx::Result<T> {
        self.calls.borrow_mut().push(format!("lock {name}"));
        Ok(work.await)
    }
}

#[test]
fn a_read_only_open_of_a_crashed_session_reads_it_whole_and_writes_nothing() {
    block_on(async {
        let storage: Shared = Rc::new(MemoryStorage::new());
        let now = Rc::new(Cell::new(T0));
        let (id, paths) = crashed_session(&storage, &now).await?;
        let torn = format!("/ctx/sessions/{id}/t_000000000000_1737210622000_9_aaaa.json");
        storage.write(&torn, b"{\"v\":1,", WriteOptions::default()).await?;
        let manifest_path = format!("/ctx/sessions/{id}/{MANIFEST}");
        let before = storage.read(&manifest_path).await?;
        now.set(T0 + 2 * 86_400_000);
        let spy = Spy { inner: storage.clone(), calls: Default::default() };
        let mut o = options(SessionChoice::Resume(id.clone()), now.clone());
        o.read_only = true;
        let ro = ContextManager::open(spy, o).await?;
        assert_eq!(ro.len(), 5, "the records the manifest lacks are read too");
        assert_eq!(ro.load(&paths).await?.len(), 5);
        assert_eq!(ro.rebuild_index().await?, 5, "rebuilt in memory; the torn file stays");
        let refused = ro.save(save("t", "{}", None)).await.err().map(|e| e.kind());
        assert_eq!(refused, Some(ErrorKind::ReadOnly));
        assert_eq!(ro.clear_context_dir().await.err().map(|e| e.kind()), Some(ErrorKind::ReadOnly));
        assert_eq!(ro.clear().await.err().map(|e| e.kind()), Some(ErrorKind::ReadOnly));
        assert_eq!(ro.end_session().await.err().map(|e| e.kind()), Some(ErrorKind::ReadOnly));
        assert_eq!(ro.len(), 5, "a refused clear keeps the pointers");
        ro.flush().await?;
        assert!(ro.storage().calls.borrow().is_empty(), "{:?}", ro.storage().calls.borrow());
        assert_eq!(storage.read(&manifest_path).await?, before, "the manifest is as it was");
        assert!(storage.read(&torn).await?.is_some());
        let mut new = options(SessionChoice::New, now.clone());
        new.read_only = true;
        let invalid = ContextManager::new(storage.clone(), new).err().map(|e| e.kind());
        assert_eq!(invalid, Some(ErrorKind::InvalidArgument), "a new session cannot be read-only");
        let removed = toolctx::cleanup_stale_sessions(&storage, "/ctx", now.get(), 86_400_000).await?;
        assert_eq!(removed, [id]);
        Ok::<(), Error>(())
    })
    .unwrap();
}

#[test]
fn manifest_keywords_are_the_metadata_words_as_written() {
    block_on(async {
        let storage: Shared = Rc::new(MemoryStorage::new());
        let now = Rc::new(Cell::new(T0));
        let m = ContextManager::open(storage.clone(), options(SessionChoice::New, now.clone())).await?;
        let id = m.session_id().unwrap().to_owned();
        let input = SaveInput {
            tool_name: "readFile",
            args_json: r#"{"path":"src/billing/refunds.ts"}"#,
            result_json: Some(r#""kubernetes deployment""#),
            ..SaveInput::default()
        };
        m.save(input).await?;
        m.flush().await?;
        let manifest = manifest_of(&storage, &id).await;
        let entry = manifest.context_files.values().next().unwrap();
        assert!(entry.keywords.contains(&"refunds".to_owned()), "{:?}", entry.keywords);
        assert!(!entry.keywords.iter().any(|k| k == "refund" || k == "kubernetes"), "{:?}", entry.keywords);
        Ok::<(), Error>(())
    })
    .unwrap();
}

#[test]
fn search_ranks_the_records_of_every_session_from_their_manifests() {
    block_on(async {
        let storage: Shared = Rc::new(MemoryStorage::new());
        let now = Rc::new(Cell::new(T0));
        let a = ContextManager::open(storage.clone(), options(SessionChoice::New, now.clone())).await?;
        let refunds = a.save(save("readFile", r#"{"path":"src/billing/refunds.ts"}"#, None)).await?;
        a.save(save("grep", r#"{"pattern":"TODO"}"#, None)).await?;
        a.flush().await?;
        now.set(T0 + 60_000);
        let b = ContextManager::open(storage.clone(), options(SessionChoice::New, now.clone())).await?;
        let refund = b.save(save("searchCode", r#"{"query":"refund webhook"}"#, None)).await?;
        b.flush().await?;
        let hits = toolctx::search_sessions(&*storage, "/ctx", "refund webhooks", 10).await?;
        let found: Vec<(&str, &str)> = hits.iter().map(|h| (h.session_id.as_str(), h.filepath.as_str())).collect();
        assert_eq!(found, [(b.session_id().unwrap(), refund.as_str()), (a.session_id().unwrap(), refunds.as_str())]);
        assert_eq!(hits[0].matched, ["refund", "webhooks"]);
        assert_eq!(hits[1].entry.tool_name, "readFile");
        assert_eq!(toolctx::search_sessions(&*storage, "/ctx", "refund", 1).await?.len(), 1);
        assert!(toolctx::search_sessions(&*storage, "/ctx", "kubernetes", 10).await?.is_empty());
        Ok::<(), Error>(())
    })
    .unwrap();
}

/// A record whose metadata says nothing of what its result holds.
fn read_with_content<'a>(path: &'a str, content: &'a str) -> SaveInput<'a> {
    SaveInput { tool_name: "readFile", args_json: path, result_json: Some(content), ..SaveInput::default() }
}

#[test]
fn the_manifest_keeps_the_top_content_terms_apart_and_bounded() {
    block_on(async {
        let storage: Shared = Rc::new(MemoryStorage::new());
        let now = Rc::new(Cell::new(T0));
        let m = ContextManager::open(storage.clone(), options(SessionChoice::New, now.clone())).await?;
        let id = m.session_id().unwrap().to_owned();
        let many: Vec<String> = (0..200).map(|i| format!("word{i}")).collect();
        let text = format!("\"kubernetes kubernetes kubernetes deployments {}\"", many.join(" "));
        m.save(read_with_content(r#"{"path":"src/deploy.ts"}"#, &text)).await?;
        m.flush().await?;
        let manifest = manifest_of(&storage, &id).await;
        let entry = manifest.context_files.values().next().unwrap();
        assert!(!entry.keywords.iter().any(|k| k.starts_with("kubernetes")), "keywords stay the metadata's");
        assert_eq!(entry.content_terms.len(), toolctx::session::MAX_CONTENT_TERMS, "bounded");
        assert_eq!(entry.content_terms.get("kubernet"), Some(&3), "stems, with their counts, most frequent kept");
        assert_eq!(entry.content_length, 204);
        Ok::<(), Error>(())
    })
    .unwrap();
}

#[test]
fn rebuild_index_ranks_every_word_of_the_records_it_reads() {
    block_on(async {
        let storage: Shared = Rc::new(MemoryStorage::new());
        let now = Rc::new(Cell::new(T0));
        let m = ContextManager::open(storage.clone(), options(SessionChoice::New, now.clone())).await?;
        let id = m.session_id().unwrap().to_owned();
        // 40 words said twice, and the one looked for said once: not among the 16 a
        // manifest entry keeps.
        let many: Vec<String> = (0..40).map(|i| format!("word{i} word{i}")).collect();
        let text = format!("\"{} rollout\"", many.join(" "));
        let deploy = m.save(read_with_content(r#"{"path":"src/deploy.ts"}"#, &text)).await?;
        m.flush().await?;
        drop(m);
        let rebuilt = ContextManager::open(storage.clone(), options(SessionChoice::Resume(id), now.clone())).await?;
        assert_eq!(rebuilt.rebuild_index().await?, 1);
        let ranked = rebuilt.rank_all(
            &toolctx::select::Query::new("rollout"),
            toolctx::Fallback::None,
            toolctx::Strategy::Bm25,
            None,
        );
        let found: Vec<String> = ranked.hits.iter().filter_map(|h| rebuilt.filepath_of(h.index as u32)).collect();
        assert_eq!(found, [deploy], "read whole by rebuildIndex, ranked on all of it");
        Ok::<(), Error>(())
    })
    .unwrap();
}

#[test]
fn a_record_the_manifest_did_not_list_ranks_on_all_of_its_content_after_a_resume() {
    block_on(async {
        let storage: Shared = Rc::new(MemoryStorage::new());
        let now = Rc::new(Cell::new(T0));
        let m = ContextManager::open(storage.clone(), options(SessionChoice::New, now.clone())).await?;
        let id = m.session_id().unwrap().to_owned();
        m.save(read_with_content(r#"{"path":"src/a.ts"}"#, r#""first""#)).await?;
        m.flush().await?;
        // Saved within the coalescing window, then a crash: on disk, not in the manifest.
        let many: Vec<String> = (0..40).map(|i| format!("word{i} word{i}")).collect();
        let text = format!("\"{} rollout\"", many.join(" "));
        let deploy = m.save(read_with_content(r#"{"path":"src/deploy.ts"}"#, &text)).await?;
        assert_eq!(manifest_of(&storage, &id).await.context_files.len(), 1);
        drop(m);
        let resumed = ContextManager::open(storage.clone(), options(SessionChoice::Resume(id), now.clone())).await?;
        let ranked = resumed.rank_all(
            &toolctx::select::Query::new("rollout"),
            toolctx::Fallback::None,
            toolctx::Strategy::Bm25,
            None,
        );
        let found: Vec<String> = ranked.hits.iter().filter_map(|h| resumed.filepath_of(h.index as u32)).collect();
        assert_eq!(found, [deploy], "read whole by the resume, ranked on all of it");
        Ok::<(), Error>(())
    })
    .unwrap();
}

#[test]
fn a_resumed_session_finds_a_record_by_a_word_of_its_content() {
    block_on(async {
        let storage: Shared = Rc::new(MemoryStorage::new());
        let now = Rc::new(Cell::new(T0));
        let m = ContextManager::open(storage.clone(), options(SessionChoice::New, now.clone())).await?;
        let id = m.session_id().unwrap().to_owned();
        let deploy = m.save(read_with_content(r#"{"path":"src/a.ts"}"#, r#""kubernetes deployment rollout""#)).await?;
        m.save(read_with_content(r#"{"path":"src/b.ts"}"#, r#""billing refunds""#)).await?;
        m.flush().await?;
        drop(m);
        let resumed = ContextManager::open(storage.clone(), options(SessionChoice::Resume(id), now.clone())).await?;
        let ranked = resumed.rank_all(
            &toolctx::select::Query::new("kubernetes"),
            toolctx::Fallback::None,
            toolctx::Strategy::Bm25,
            None,
        );
        let found: Vec<String> = ranked.hits.iter().filter_map(|h| resumed.filepath_of(h.index as u32)).collect();
        assert_eq!(found, std::slice::from_ref(&deploy), "ranked on its content, restored from the manifest");
        let hits = toolctx::search_sessions(&*storage, "/ctx", "deployments", 10).await?;
        let found: Vec<&str> = hits.iter().map(|h| h.filepath.as_str()).collect();
        assert_eq!(found, [deploy.as_str()], "search reads the content terms of the manifests");
        Ok::<(), Error>(())
    })
    .unwrap();
}
