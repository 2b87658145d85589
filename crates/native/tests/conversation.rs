//! The conversation store over native storage: ids, torn lines, artifacts, stats,
//! pruning, export/import round trips and sync with a remote that fails on purpose.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use futures_executor::block_on;
use toolctx::conversation::{ArtifactInput, Format, MessageInput, PruneOptions, StoreOptions, ToolCall};
use toolctx::{ConversationStore, ErrorKind, FsStorage, MemoryStorage, Storage, WriteOptions};

/// Storage that fails every call while `failing` is set (a remote that is down).
#[derive(Default)]
struct Flaky {
    inner: MemoryStorage,
    failing: Cell<bool>,
    calls: Cell<usize>,
}

impl Flaky {
    fn check(&self) -> toolctx::Result<()> {
        self.calls.set(self.calls.get() + 1);
        if self.failing.get() {
            return Err(toolctx::Error::new(ErrorKind::Storage, "remote is down"));
        }
        Ok(())
    }
}

impl Storage for Flaky {
    async fn read(&self, path: &str) -> toolctx::Result<Option<Vec<u8>>> {
        self.check()?;
        self.inner.read(path).await
    }
    async fn write(&self, path: &str, data: &[u8], options: WriteOptions) -> toolctx::Result<()> {
        self.check()?;
        self.inner.write(path, data, options).await
    }
    async fn remove(&self, path: &str) -> toolctx::Result<()> {
        self.check()?;
        self.inner.remove(path).await
    }
    async fn list(&self, dir: &str) -> toolctx::Result<Vec<String>> {
        self.check()?;
        self.inner.list(dir).await
    }
}

type Events = Rc<RefCell<Vec<String>>>;

fn options(dir: &str, clock: &Rc<Cell<i64>>, events: &Events) -> StoreOptions {
    let mut o = toolctx::conversation_options(dir);
    let c = clock.clone();
    o.clock = Rc::new(move || c.get());
    let e = events.clone();
    o.on_debug = Some(Rc::new(move |ev: &toolctx::DebugEvent| e.borrow_mut().push(ev.message.clone())));
    o
}

fn setup() -> (Rc<Cell<i64>>, Events) {
    (Rc::new(Cell::new(1_735_012_345_678)), Rc::new(RefCell::new(Vec::new())))
}

fn memory_store(clock: &Rc<Cell<i64>>, events: &Events) -> ConversationStore<Rc<MemoryStorage>> {
    ConversationStore::new(Rc::new(MemoryStorage::new()), None, options("/ctx", clock, events)).unwrap()
}

fn msg(role: &str, content: &str) -> MessageInput {
    MessageInput::new(role, content)
}

#[test]
fn ids_are_generated_and_hostile_ones_rejected() {
    block_on(async {
        let (clock, events) = setup();
        let store = memory_store(&clock, &events);
        let conv = store.create_conversation(Some("t".into()), None).await.unwrap();
        assert!(conv.id.starts_with("conv-") && conv.id.len() == 21, "{}", conv.id);
        for bad in ["..", "../x", "a/b", "a\0b", "", "x.json", "C:\\x", "sync-queue/"] {
            let err = store.create_conversation(None, Some(bad.into())).await.unwrap_err();
            assert_eq!(err.kind(), ErrorKind::InvalidArgument, "{bad}");
            assert_eq!(store.conversation(bad).await.unwrap_err().kind(), ErrorKind::InvalidArgument);
            assert_eq!(store.artifact(&conv.id, bad).await.unwrap_err().kind(), ErrorKind::InvalidArgument);
            let mut m = msg("user", "x");
            m.id = Some(bad.into());
            assert_eq!(store.append_message(&conv.id, m).await.unwrap_err().kind(), ErrorKind::InvalidArgument);
        }
        let paths = store.storage().paths();
        assert!(paths.iter().all(|p| p.starts_with("/ctx/conversations/")), "{paths:?}");
        assert_eq!(store.conversation("conv-missing").await.unwrap_err().kind(), ErrorKind::NotFound);
        let given = store.create_conversation(None, Some("my_conv-1".into())).await.unwrap();
        assert_eq!(given.id, "my_conv-1");
        assert_eq!(
            store.create_conversation(None, Some("my_conv-1".into())).await.unwrap_err().kind(),
            ErrorKind::InvalidArgument
        );
        let mut twice = msg("user", "x");
        twice.id = Some("m-1".into());
        store.append_message("my_conv-1", twice.clone()).await.unwrap();
        let err = store.append_message("my_conv-1", twice).await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidArgument, "a message id is used once");
        let m = store.append_message("my_conv-1", msg("robot", "x")).await.unwrap_err();
        assert_eq!(m.kind(), ErrorKind::InvalidArgument);
    });
}

#[test]
fn a_torn_last_line_is_skipped_and_the_next_append_starts_a_new_line() {
    block_on(async {
        let (clock, events) = setup();
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_str().unwrap().to_owned();
        let store: ConversationStore<FsStorage> =
            ConversationStore::new(FsStorage::new(), None, options(&root, &clock, &events)).unwrap();
        let conv = store.create_conversation(None, None).await.unwrap();
        store.append_message(&conv.id, msg("user", "one")).await.unwrap();
        store.append_message(&conv.id, msg("assistant", "two")).await.unwrap();
        let path = format!("{root}/conversations/{}/messages.jsonl", conv.id);
        FsStorage::new().append(&path, br#"{"id":"msg-torn","role":"us"#).await.unwrap();
        // A new store (a restarted process) does not know the tail is torn.
        let store: ConversationStore<FsStorage> =
            ConversationStore::new(FsStorage::new(), None, options(&root, &clock, &events)).unwrap();
        store.append_message(&conv.id, msg("user", "three")).await.unwrap();
        let got: Vec<String> = store.messages(&conv.id, None).await.unwrap().into_iter().map(|m| m.content).collect();
        assert_eq!(got, ["one", "two", "three"]);
        assert!(events.borrow().iter().any(|e| e.contains("torn")), "{:?}", events.borrow());
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text.lines().count(), 4, "the torn line stays on its own line: {text}");
        assert!(text.ends_with("\n"));
        assert_eq!(store.messages(&conv.id, Some("user")).await.unwrap().len(), 2);
    });
}

#[test]
fn artifacts_are_stored_referenced_and_resolved() {
    block_on(async {
        let (clock, events) = setup();
        let store = memory_store(&clock, &events);
        let conv = store.create_conversation(None, None).await.unwrap();
        let big = "line\n".repeat(5000);
        let artifact =
            ArtifactInput { kind: "file".into(), name: "src/auth.ts".into(), content: big.clone(), mime_type: None };
        let (message, meta) =
            store.append_with_artifact(&conv.id, msg("tool", "auth.ts, 5000 lines"), artifact).await.unwrap();
        assert_eq!(message.content, format!("auth.ts, 5000 lines (artifact://{})", meta.id));
        assert_eq!((meta.kind.as_str(), meta.size, meta.mime_type.as_str()), ("file", big.len() as u64, "text/plain"));
        let paths = store.storage().paths();
        let dir = format!("/ctx/conversations/{}/artifacts/{}", conv.id, meta.id);
        assert!(paths.contains(&dir) && paths.contains(&format!("{dir}.meta.json")), "{paths:?}");
        let resolved =
            store.resolve_artifacts(&conv.id, &format!("{} and artifact://art-nope", message.content)).await.unwrap();
        assert_eq!(resolved.len(), 1);
        assert_eq!(resolved[0].1, big.as_bytes());
        assert!(events.borrow().iter().any(|e| e.contains("art-nope")));
        assert_eq!(store.artifact(&conv.id, "art-nope").await.unwrap_err().kind(), ErrorKind::NotFound);
        let meta2 = store
            .store_artifact(
                &conv.id,
                ArtifactInput {
                    kind: "search_result".into(),
                    name: "q".into(),
                    content: "[]".into(),
                    mime_type: Some("application/json".into()),
                },
            )
            .await
            .unwrap();
        assert_eq!(store.list_artifacts(&conv.id).await.unwrap().len(), 2);
        let stats = store.stats(&conv.id, Some(0.5)).await.unwrap();
        assert_eq!(stats.messages, 1);
        assert_eq!(stats.messages_by_role["tool"], 1);
        assert_eq!(stats.messages_by_role["user"], 0);
        assert_eq!(stats.artifacts_by_type["file"], 1);
        assert_eq!(stats.artifacts_by_type["search_result"], 1);
        assert_eq!(stats.artifact_bytes, (big.len() + 2) as u64);
        assert_eq!(stats.estimated_tokens, message.content.len().div_ceil(4) as u64);
        assert_eq!(stats.estimated_cost, Some(stats.estimated_tokens as f64 * 0.5));
        let meta = store.conversation(&conv.id).await.unwrap();
        assert_eq!((meta.message_count, meta.artifact_count), (1, 2));
        assert!(meta2.id.starts_with("art-"));
    });
}

#[test]
fn prune_keeps_the_last_n_within_budget_and_reports_what_it_dropped() {
    block_on(async {
        let (clock, events) = setup();
        let store = memory_store(&clock, &events);
        let conv = store.create_conversation(None, None).await.unwrap();
        for i in 0..30 {
            clock.set(clock.get() + 60_000);
            let (role, content) = match i % 3 {
                0 => ("user", format!("question {i} about the login page")),
                1 => ("assistant", format!("answer {i}: something unrelated entirely, padding padding")),
                _ => ("tool", format!("tool output {i} with a lot of noise noise noise noise")),
            };
            let mut m = msg(role, &content);
            if i == 4 {
                m.tool_calls = Some(vec![ToolCall { name: "readFile".into(), args: None }]);
            }
            store.append_message(&conv.id, m).await.unwrap();
        }
        let all = store.messages(&conv.id, None).await.unwrap();
        let recent: usize = all[20..].iter().map(toolctx::conversation::message_tokens).sum();
        let budget = recent + 40;
        let options = PruneOptions {
            task: "fix the login page".into(),
            max_tokens: budget,
            keep_recent: 10,
            now_ms: clock.get(),
        };
        let report = store.prune(&conv.id, options.clone(), false).await.unwrap();
        assert_eq!(report.kept.len() + report.dropped.len(), 30);
        assert!(report.tokens_after <= budget && report.tokens_after >= recent);
        assert_eq!(report.tokens_before, all.iter().map(toolctx::conversation::message_tokens).sum::<usize>());
        let kept_ids: Vec<&str> = report.kept.iter().map(|m| m.id.as_str()).collect();
        for m in &all[20..] {
            assert!(kept_ids.contains(&m.id.as_str()), "the last 10 always stay");
        }
        // The older messages kept are user messages about the login page (best scores).
        assert!(report.kept[..report.kept.len() - 10].iter().all(|m| m.content.contains("login")));
        assert_eq!(store.messages(&conv.id, None).await.unwrap().len(), 30, "without apply nothing changes");
        let applied = store.prune(&conv.id, options, true).await.unwrap();
        assert_eq!(applied, report);
        let left = store.messages(&conv.id, None).await.unwrap();
        assert_eq!(left, report.kept);
        assert_eq!(store.conversation(&conv.id).await.unwrap().message_count, left.len() as u64);
        // Budget smaller than the recent ones: they stay anyway.
        let tight = PruneOptions { task: String::new(), max_tokens: 1, keep_recent: 10, now_ms: clock.get() };
        assert_eq!(store.prune(&conv.id, tight, false).await.unwrap().kept.len(), 10);
    });
}

#[test]
fn export_then_import_round_trips_byte_identical() {
    block_on(async {
        let (clock, events) = setup();
        let store = memory_store(&clock, &events);
        let conv = store.create_conversation(Some("Auth \u{1F512} \"work\"".into()), None).await.unwrap();
        let mut m = msg("assistant", "calling\ntools ```inline``` é");
        m.tool_calls =
            Some(vec![ToolCall { name: "grep".into(), args: Some(serde_json::json!({"q": "a", "n": 1.5})) }]);
        m.success = Some(true);
        store.append_message(&conv.id, msg("user", "hi")).await.unwrap();
        store.append_message(&conv.id, m).await.unwrap();
        store
            .append_with_artifact(
                &conv.id,
                msg("tool", "out"),
                ArtifactInput {
                    kind: "command_output".into(),
                    name: "npm test".into(),
                    content: "ok ````\n".into(),
                    mime_type: None,
                },
            )
            .await
            .unwrap();
        for format in [Format::Json, Format::Jsonl] {
            let text = store.export(&conv.id, format).await.unwrap();
            let other = memory_store(&clock, &events);
            let meta = other.import(&text, None).await.unwrap();
            assert_eq!(meta, store.conversation(&conv.id).await.unwrap());
            assert_eq!(other.export(&conv.id, format).await.unwrap(), text, "{format:?}");
            assert_eq!(other.list_conversations().await.unwrap().len(), 1);
        }
        let md = store.export(&conv.id, Format::Markdown).await.unwrap();
        assert!(md.starts_with("# Auth \u{1F512} \"work\"\n"));
        assert!(
            md.contains("## 2. assistant") && md.contains("- Tool call: `grep`") && md.contains("`````\nok ````\n")
        );
        assert_eq!(store.import(&md, None).await.unwrap_err().kind(), ErrorKind::InvalidArgument);
        let hostile = store.export(&conv.id, Format::Jsonl).await.unwrap().replace(&conv.id, "../escape");
        assert_eq!(store.import(&hostile, None).await.unwrap_err().kind(), ErrorKind::InvalidArgument);
    });
}

#[test]
fn sync_with_a_failing_remote_loses_nothing_and_merges_both_sides() {
    block_on(async {
        let (clock, events) = setup();
        let remote = Rc::new(Flaky::default());
        let a_local = Rc::new(MemoryStorage::new());
        let mut oa = options("/a", &clock, &events);
        oa.remote_dir = Some("/shared".into());
        oa.retry = toolctx::conversation::Backoff { base_ms: 1000, max_ms: 8000 };
        let a: ConversationStore<Rc<MemoryStorage>, Rc<Flaky>> =
            ConversationStore::new(a_local.clone(), Some(remote.clone()), oa.clone()).unwrap();
        let conv = a.create_conversation(Some("shared".into()), None).await.unwrap();
        a.append_message(&conv.id, msg("user", "from a, 1")).await.unwrap();
        remote.failing.set(true);
        a.append_message(&conv.id, msg("assistant", "from a, 2")).await.unwrap();
        let report = a.sync().await.unwrap();
        assert_eq!(report.pushed, 0);
        let items: Vec<_> = report.failed.iter().filter(|f| f.item != "remote index").collect();
        assert_eq!(items.len(), 3, "create and two appends: {report:?}");
        assert!(items.iter().all(|f| f.attempts == 1 && f.error.contains("remote is down")));
        assert!(report.failed.iter().any(|f| f.item == "remote index"), "the failed pull is reported too");
        assert_eq!(report.pending, 3);
        // Before the backoff is over, the remote is not even tried.
        let calls = remote.calls.get();
        let early = a.sync().await.unwrap();
        assert!(early.failed.iter().all(|f| f.item == "remote index"), "{early:?}");
        assert_eq!(remote.calls.get(), calls + 1, "only the pull tried the remote");
        clock.set(clock.get() + 1000);
        let again = a.sync().await.unwrap();
        assert!(again.failed.iter().filter(|f| f.item != "remote index").all(|f| f.attempts == 2));
        assert_eq!(a.sync_status().await.unwrap(), toolctx::conversation::SyncStatus { pending: 3, failed: 3 });
        // The remote comes back; the backoff (2 s after the second failure) passes.
        remote.failing.set(false);
        clock.set(clock.get() + 2000);
        let ok = a.sync().await.unwrap();
        assert_eq!((ok.pushed, ok.failed.len(), ok.pending), (3, 0, 0), "{ok:?}");
        // A second device appends through the same remote; both sides appended meanwhile.
        let b_local = Rc::new(MemoryStorage::new());
        let mut ob = options("/b", &clock, &events);
        ob.remote_dir = Some("/shared".into());
        let b: ConversationStore<Rc<MemoryStorage>, Rc<Flaky>> =
            ConversationStore::new(b_local, Some(remote.clone()), ob).unwrap();
        let pulled = b.sync().await.unwrap();
        assert_eq!(pulled.pulled, 1);
        assert_eq!(b.messages(&conv.id, None).await.unwrap().len(), 2);
        clock.set(clock.get() + 10);
        b.append_message(&conv.id, msg("user", "from b")).await.unwrap();
        a.append_message(&conv.id, msg("assistant", "from a, 3")).await.unwrap();
        b.sync().await.unwrap();
        a.sync().await.unwrap();
        b.sync().await.unwrap();
        let ma = a.messages(&conv.id, None).await.unwrap();
        let mb = b.messages(&conv.id, None).await.unwrap();
        assert_eq!(ma, mb);
        let contents: Vec<&str> = ma.iter().map(|m| m.content.as_str()).collect();
        assert_eq!(contents.len(), 4);
        for want in ["from a, 1", "from a, 2", "from a, 3", "from b"] {
            assert!(contents.contains(&want), "{contents:?}");
        }
        assert!(ma.windows(2).all(|w| w[0].order_key() <= w[1].order_key()));
        assert_eq!(a.conversation(&conv.id).await.unwrap().message_count, 4);
        // A delete reaches the remote.
        a.delete_conversation(&conv.id).await.unwrap();
        a.sync().await.unwrap();
        assert!(remote.inner.paths().iter().all(|p| !p.contains(&conv.id)), "{:?}", remote.inner.paths());
    });
}

#[test]
fn a_hostile_remote_cannot_make_a_path() {
    block_on(async {
        let (clock, events) = setup();
        let remote = Rc::new(MemoryStorage::new());
        let local = Rc::new(MemoryStorage::new());
        let meta = r#"{"id":"../../escape","createdAt":"2025-01-01T00:00:00.000Z","updatedAt":"2025-01-01T00:00:00.000Z","messageCount":0,"artifactCount":0}"#;
        let index = format!(r#"{{"v":1,"conversations":[{meta}]}}"#);
        remote.write("/r/conversations/index.json", index.as_bytes(), WriteOptions::default()).await.unwrap();
        let renamed = meta.replace("../../escape", "conv-other");
        let index2 = format!(r#"{{"v":1,"conversations":[{}]}}"#, meta.replace("../../escape", "conv-ok"));
        remote.write("/r2/conversations/index.json", index2.as_bytes(), WriteOptions::default()).await.unwrap();
        remote
            .write("/r2/conversations/conv-ok/metadata.json", renamed.as_bytes(), WriteOptions::default())
            .await
            .unwrap();
        for dir in ["/r", "/r2"] {
            let mut o = options("/l", &clock, &events);
            o.remote_dir = Some(dir.into());
            let store: ConversationStore<Rc<MemoryStorage>> =
                ConversationStore::new(local.clone(), Some(remote.clone()), o).unwrap();
            let report = store.sync().await.unwrap();
            assert_eq!((report.pulled, report.failed.len()), (0, 0), "{report:?}");
        }
        assert!(local.paths().iter().all(|p| p.starts_with("/l/conversations/")), "{:?}", local.paths());
        assert!(local.paths().iter().all(|p| !p.contains("escape") && !p.contains("conv-other")));
        assert!(events.borrow().iter().any(|e| e.contains("not a conversation id")));
        assert!(events.borrow().iter().any(|e| e.contains("names conversation")));
    });
}

/// A future that is pending once (waking itself), so that concurrent work interleaves.
struct YieldNow(bool);

impl std::future::Future for YieldNow {
    type Output = ();
    fn poll(mut self: std::pin::Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> std::task::Poll<()> {
        if self.0 {
            return std::task::Poll::Ready(());
        }
        self.0 = true;
        cx.waker().wake_by_ref();
        std::task::Poll::Pending
    }
}

async fn yield_times(n: usize) {
    for _ in 0..n {
        YieldNow(false).await;
    }
}

/// Memory storage whose every call yields before and after it, with a real lock (an
/// async mutex, as a host's `lock` excludes other processes): concurrent work interleaves
/// at every step, as it does over a real disk or network.
#[derive(Default)]
struct Yielding {
    inner: MemoryStorage,
    lock: futures_util::lock::Mutex<()>,
}

impl Storage for Yielding {
    async fn read(&self, path: &str) -> toolctx::Result<Option<Vec<u8>>> {
        yield_times(1).await;
        let out = self.inner.read(path).await;
        yield_times(1).await;
        out
    }
    async fn write(&self, path: &str, data: &[u8], options: WriteOptions) -> toolctx::Result<()> {
        yield_times(1).await;
        let out = self.inner.write(path, data, options).await;
        yield_times(1).await;
        out
    }
    async fn append(&self, path: &str, data: &[u8]) -> toolctx::Result<()> {
        yield_times(1).await;
        let out = self.inner.append(path, data).await;
        yield_times(1).await;
        out
    }
    async fn remove(&self, path: &str) -> toolctx::Result<()> {
        yield_times(1).await;
        let out = self.inner.remove(path).await;
        yield_times(1).await;
        out
    }
    async fn list(&self, dir: &str) -> toolctx::Result<Vec<String>> {
        yield_times(1).await;
        let out = self.inner.list(dir).await;
        yield_times(1).await;
        out
    }
    async fn locked<T>(&self, _name: &str, work: impl std::future::Future<Output = T>) -> toolctx::Result<T> {
        yield_times(1).await;
        let _held = self.lock.lock().await;
        Ok(work.await)
    }
}

type YieldingStore = ConversationStore<Rc<Yielding>, Rc<Yielding>>;

/// Whether the remote's copy of `conv` holds a message with `content`.
async fn remote_has(remote: &Yielding, conv: &str, content: &str) -> bool {
    let path = format!("/remote/conversations/{conv}/messages.jsonl");
    let bytes = remote.inner.read(&path).await.unwrap().unwrap_or_default();
    toolctx::conversation::parse_jsonl(&bytes).messages.iter().any(|m| m.content.starts_with(content))
}

/// A sync that runs while a message (with an artifact) is being appended, started after every possible
/// number of steps of the append: either the message reached the remote, or its queue
/// item is still there (so the next sync pushes it). Both in one store, and across two
/// stores on the same storage (two processes: the storage's lock is all they share).
#[test]
fn a_sync_racing_an_append_never_drops_the_change() {
    block_on(async {
        for two_processes in [false, true] {
            for delay in 0..80 {
                let (clock, events) = setup();
                let local = Rc::new(Yielding::default());
                let remote = Rc::new(Yielding::default());
                let mut o = options("/local", &clock, &events);
                o.remote_dir = Some("/remote".into());
                let writer: YieldingStore =
                    ConversationStore::new(local.clone(), Some(remote.clone()), o.clone()).unwrap();
                let other: YieldingStore = ConversationStore::new(local.clone(), Some(remote.clone()), o).unwrap();
                let syncer = if two_processes { &other } else { &writer };
                let conv = writer.create_conversation(None, None).await.unwrap();
                writer.sync().await.unwrap();
                let artifact =
                    ArtifactInput { kind: "file".into(), name: "a.ts".into(), content: "data".into(), mime_type: None };
                let (appended, synced) = futures_util::future::join(
                    writer.append_with_artifact(&conv.id, msg("tool", "the change"), artifact.clone()),
                    async {
                        yield_times(delay).await;
                        syncer.sync().await
                    },
                )
                .await;
                appended.unwrap();
                let report = synced.unwrap();
                let pending = writer.sync_status().await.unwrap().pending;
                assert!(
                    remote_has(&remote, &conv.id, "the change").await || pending > 0,
                    "two processes: {two_processes}, sync after {delay} steps: the change is neither on the remote nor queued ({report:?})"
                );
                writer.sync().await.unwrap();
                assert!(remote_has(&remote, &conv.id, "the change").await);
                assert_eq!(writer.sync_status().await.unwrap().pending, 0);
            }
        }
    });
}

/// An artifact whose local content is missing is not pushed as an empty one: the item
/// fails with a typed error, stays queued, and the remote gets nothing of it.
#[test]
fn a_missing_artifact_content_fails_the_item_and_writes_nothing() {
    block_on(async {
        let (clock, events) = setup();
        let local = Rc::new(MemoryStorage::new());
        let remote = Rc::new(MemoryStorage::new());
        let mut o = options("/local", &clock, &events);
        o.remote_dir = Some("/remote".into());
        let store: ConversationStore<Rc<MemoryStorage>> =
            ConversationStore::new(local.clone(), Some(remote.clone()), o).unwrap();
        let conv = store.create_conversation(None, None).await.unwrap();
        let art = ArtifactInput { kind: "file".into(), name: "a.ts".into(), content: "data".into(), mime_type: None };
        let meta = store.store_artifact(&conv.id, art).await.unwrap();
        local.remove(&format!("/local/conversations/{}/artifacts/{}", conv.id, meta.id)).await.unwrap();
        let report = store.sync().await.unwrap();
        assert_eq!(report.pushed, 0, "{report:?}");
        assert_eq!(report.failed.len(), 2, "both items fail: {report:?}");
        assert!(report.failed.iter().all(|f| f.code == "NOT_FOUND" && f.error.contains(&meta.id)), "{report:?}");
        assert_eq!(store.sync_status().await.unwrap().pending, 2);
        assert!(remote.paths().is_empty(), "nothing written to the remote: {:?}", remote.paths());
    });
}
