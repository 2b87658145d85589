//! The persisted index (SPEC §4): `open()` of a store restores every record from its index
//! segments, ranked as the process that saved it ranked it, without reading the records;
//! a missing, torn, stale or foreign segment is detected and its records read instead; a
//! writer stopped mid-merge loses nothing; a record rewritten under its name is ranked by
//! what it holds once it is read.
//!
//! Over 600 lines: one concept, the persisted index, with its storage probe (a storage
//! that counts reads, reads ranges or not, and can be stopped anywhere) shared by every test.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use futures_executor::block_on;
use toolctx::select::Query;
use toolctx::{
    ContextManager, DebugEvent, Error, ErrorKind, Fallback, Filter, MemoryStorage, Options, SaveInput, SessionChoice,
    Storage, Strategy, WriteOptions,
};

type Shared = Rc<MemoryStorage>;

/// A storage over a shared memory storage that counts reads of record files and can be
/// stopped: past `stop_after` writes into the segment folder, every operation fails, as
/// if the process had been killed there.
struct Probe {
    inner: Shared,
    record_reads: Cell<usize>,
    index_writes: Cell<usize>,
    stop_after: Cell<Option<usize>>,
    /// Reads of segments fail (a storage that answers 503 for them).
    failing_segment_reads: Cell<bool>,
    /// It reads ranges (the index reads its segments by range), as its memory storage does.
    ranges: Cell<bool>,
    /// Segments read whole, and ranges read.
    segment_reads: Cell<usize>,
    range_reads: Cell<usize>,
    /// A range read yields to the executor once before it answers (a storage over the
    /// network), so operations in flight interleave.
    yielding: Cell<bool>,
}

/// A future that is pending once, then ready: one turn back to the executor.
struct YieldOnce(bool);

impl std::future::Future for YieldOnce {
    type Output = ();
    fn poll(mut self: std::pin::Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> std::task::Poll<()> {
        if std::mem::replace(&mut self.0, true) {
            return std::task::Poll::Ready(());
        }
        cx.waker().wake_by_ref();
        std::task::Poll::Pending
    }
}

impl Probe {
    fn new(inner: &Shared) -> Probe {
        Probe {
            inner: inner.clone(),
            record_reads: Cell::new(0),
            index_writes: Cell::new(0),
            stop_after: Cell::new(None),
            failing_segment_reads: Cell::new(false),
            ranges: Cell::new(true),
            segment_reads: Cell::new(0),
            range_reads: Cell::new(0),
            yielding: Cell::new(false),
        }
    }

    fn stopped(&self) -> toolctx::Result<()> {
        match self.stop_after.get() {
            Some(n) if self.index_writes.get() > n => Err(Error::new(ErrorKind::Storage, "killed")),
            _ => Ok(()),
        }
    }
}

impl Storage for Probe {
    async fn read(&self, path: &str) -> toolctx::Result<Option<Vec<u8>>> {
        self.stopped()?;
        if self.failing_segment_reads.get() && path.ends_with(".seg") {
            return Err(Error::new(ErrorKind::Storage, "503 Slow Down"));
        }
        if path.ends_with(".json") && !path.ends_with(".manifest.json") {
            self.record_reads.set(self.record_reads.get() + 1);
        }
        if path.ends_with(".seg") {
            self.segment_reads.set(self.segment_reads.get() + 1);
        }
        self.inner.read(path).await
    }
    async fn read_range(&self, path: &str, offset: u64, len: u64) -> toolctx::Result<Option<Vec<u8>>> {
        self.stopped()?;
        if self.failing_segment_reads.get() && path.ends_with(".seg") {
            return Err(Error::new(ErrorKind::Storage, "503 Slow Down"));
        }
        self.range_reads.set(self.range_reads.get() + 1);
        if self.yielding.get() {
            YieldOnce(false).await;
        }
        self.inner.read_range(path, offset, len).await
    }
    fn reads_ranges(&self) -> bool {
        self.ranges.get()
    }
    async fn write(&self, path: &str, data: &[u8], options: WriteOptions) -> toolctx::Result<()> {
        self.stopped()?;
        if path.contains("/.index/") {
            self.index_writes.set(self.index_writes.get() + 1);
        }
        self.inner.write(path, data, options).await?;
        self.stopped()
    }
    async fn remove(&self, path: &str) -> toolctx::Result<()> {
        self.stopped()?;
        if path.contains("/.index/") {
            self.index_writes.set(self.index_writes.get() + 1);
        }
        self.inner.remove(path).await?;
        self.stopped()
    }
    async fn list(&self, dir: &str) -> toolctx::Result<Vec<String>> {
        self.stopped()?;
        self.inner.list(dir).await
    }
}

const TEXTS: [&str; 6] = [
    "fn parse_header(bytes: &[u8]) -> Header {\n    // the header parser\n}\n",
    "src/a.rs:1: fn parse_header\nsrc/b.rs:9: let header = None;\n",
    "# Parsing\nHeaders are parsed lazily; the body never is.\n",
    "commit 1a2b3c\n    Fix the retry loop of the uploader\n",
    "Cargo.toml\nsrc/\nsrc/lib.rs\nsrc/upload.rs\n",
    "error[E0382]: borrow of moved value: `header`\n",
];

fn save_all(m: &ContextManager<impl Storage>, from: usize, n: usize) -> Vec<String> {
    let mut paths = Vec::new();
    for i in from..from + n {
        let args = format!("{{\"path\":\"src/f{i}.rs\"}}");
        let result = serde_json::to_string(&format!("{} (file {i})", TEXTS[i % TEXTS.len()])).unwrap();
        let input =
            SaveInput { tool_name: "readFile", args_json: &args, result_json: Some(&result), ..SaveInput::default() };
        paths.push(block_on(m.save(input)).unwrap());
    }
    paths
}

/// The ranking of `query` over every pointer: filepaths and scores, best first.
fn ranked(m: &ContextManager<impl Storage>, query: &str) -> Vec<(String, String)> {
    let ranking = block_on(m.search(&Query::new(query), Fallback::None, Strategy::Bm25, None)).unwrap();
    ranking.hits.iter().map(|h| (m.filepath_of(h.index as u32).unwrap(), format!("{:.9}", h.score))).collect()
}

const QUERIES: [&str; 5] = ["header parser", "parsed lazily", "retry loop uploader", "f3", "borrow of moved value"];

fn rankings(m: &ContextManager<impl Storage>) -> Vec<Vec<(String, String)>> {
    QUERIES.iter().map(|q| ranked(m, q)).collect()
}

fn paths_of(m: &ContextManager<impl Storage>) -> Vec<String> {
    let all: serde_json::Value = serde_json::from_str(&m.pointers_json(Filter::ALL)).unwrap();
    let mut paths: Vec<String> =
        all.as_array().unwrap().iter().map(|p| p["filepath"].as_str().unwrap().to_owned()).collect();
    paths.sort();
    paths
}

fn logged(o: &mut Options) -> Rc<RefCell<Vec<String>>> {
    let log = Rc::new(RefCell::new(Vec::new()));
    let sink = log.clone();
    o.on_debug = Some(Rc::new(move |e: &DebugEvent| sink.borrow_mut().push(e.message.clone())));
    log
}

/// Options of `/ctx` for the session `choice`.
fn in_session(choice: SessionChoice) -> Options {
    let mut o = toolctx::options("/ctx");
    o.session = Some(choice);
    o
}

fn open(storage: &Shared, o: Options) -> (ContextManager<Probe>, usize) {
    let m = block_on(ContextManager::open(Probe::new(storage), o)).unwrap();
    let reads = m.storage().record_reads.get();
    (m, reads)
}

#[test]
fn open_restores_every_record_from_segments_ranked_as_saved_without_reading_records() {
    let storage: Shared = Rc::new(MemoryStorage::new());
    let a = block_on(ContextManager::open(storage.clone(), toolctx::options("/ctx"))).unwrap();
    let saved = save_all(&a, 0, 30);
    let before = rankings(&a);
    block_on(a.close()).unwrap();

    let (b, reads) = open(&storage, toolctx::options("/ctx"));
    assert_eq!(reads, 0, "no record read: every one is in a segment");
    let mut saved = saved;
    saved.sort();
    assert_eq!(paths_of(&b), saved);
    assert_eq!(rankings(&b), before, "ranked as the process that saved them ranked them");
    assert!(before[0].len() >= 5 && before[3].len() == 1, "{before:?}");
}

#[test]
fn a_record_rewritten_under_its_name_is_ranked_by_what_it_holds_once_read() {
    let storage: Shared = Rc::new(MemoryStorage::new());
    let a = block_on(ContextManager::open(storage.clone(), toolctx::options("/ctx"))).unwrap();
    let saved = save_all(&a, 0, 12);
    block_on(a.close()).unwrap();
    // Another program rewrites one record under its name: other words, another size.
    let target = &saved[5];
    let now = rewrite(&storage, target, "thread quokka panicked at zanzibar.rs");

    let mut o = toolctx::options("/ctx");
    let log = logged(&mut o);
    let (b, _) = open(&storage, o);
    let order = paths_of(&b);
    let found = |m: &ContextManager<Probe>, q: &str| ranked(m, q).into_iter().map(|(p, _)| p).collect::<Vec<_>>();
    assert!(found(&b, "borrow of moved value").contains(target), "ranked from its segment until read");
    let loaded = block_on(b.load(std::slice::from_ref(target))).unwrap();
    assert_eq!(&*loaded[0], &now[..]);
    assert_eq!(found(&b, "quokka zanzibar"), std::slice::from_ref(target));
    assert!(!found(&b, "borrow of moved value").contains(target));
    assert!(log.borrow().iter().any(|m| m.contains("changed under its name")), "{:?}", log.borrow());
    assert_eq!(paths_of(&b), order, "the same pointers");
    let all: serde_json::Value = serde_json::from_str(&b.pointers_json(Filter::ALL)).unwrap();
    let pointer = all.as_array().unwrap().iter().find(|p| p["filepath"] == target.as_str()).unwrap();
    assert_eq!(pointer["size"], now.len());
    let position = |m: &ContextManager<Probe>| {
        let all: serde_json::Value = serde_json::from_str(&m.pointers_json(Filter::ALL)).unwrap();
        all.as_array().unwrap().iter().position(|p| p["filepath"] == target.as_str())
    };
    assert_eq!(position(&b), Some(5), "in its place in save order");
    // A record read again whose size is as indexed is not indexed again.
    log.borrow_mut().clear();
    block_on(b.load(&saved[..4])).unwrap();
    assert!(log.borrow().is_empty(), "{:?}", log.borrow());
    block_on(b.close()).unwrap();
    // The segment b wrote holds it as it is now.
    let (c, reads) = open(&storage, toolctx::options("/ctx"));
    assert_eq!(reads, 0);
    assert_eq!(found(&c, "quokka zanzibar"), std::slice::from_ref(target));
    assert!(!found(&c, "borrow of moved value").contains(target));
}

/// Rewrites the record at `path` under its name: its result becomes `text`.
fn rewrite(storage: &Shared, path: &str, text: &str) -> Vec<u8> {
    let bytes = block_on(storage.read(path)).unwrap().unwrap();
    let mut record: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    record["result"] = serde_json::json!(text);
    let now = serde_json::to_vec(&record).unwrap();
    block_on(storage.write(path, &now, WriteOptions { exclusive: false })).unwrap();
    now
}

#[test]
fn a_merge_keeps_a_rewritten_record_as_the_newest_segment_holds_it() {
    let storage: Shared = Rc::new(MemoryStorage::new());
    let a = block_on(ContextManager::open(storage.clone(), toolctx::options("/ctx"))).unwrap();
    let saved = save_all(&a, 0, 12);
    block_on(a.close()).unwrap();
    rewrite(&storage, &saved[5], "thread quokka panicked at zanzibar.rs");
    // Indexed again when read: the next segment holds it as it is now, the first as it was
    // (the next is the larger: a merge takes the smaller first).
    let b = block_on(ContextManager::open(storage.clone(), toolctx::options("/ctx"))).unwrap();
    block_on(b.load(std::slice::from_ref(&saved[5]))).unwrap();
    save_all(&b, 50, 20);
    block_on(b.close()).unwrap();
    // Small segments until ten of level 0 merge.
    for i in 0..12 {
        let m = block_on(ContextManager::open(storage.clone(), toolctx::options("/ctx"))).unwrap();
        save_all(&m, 100 + i, 1);
        block_on(m.close()).unwrap();
    }
    let segments = storage.paths().into_iter().filter(|p| p.ends_with(".seg")).count();
    assert!(segments < 10, "a merge happened: {segments} segments");
    let (c, reads) = open(&storage, toolctx::options("/ctx"));
    assert_eq!(reads, 0);
    let found = |q: &str| ranked(&c, q).into_iter().map(|(p, _)| p).collect::<Vec<_>>();
    assert_eq!(found("quokka zanzibar"), std::slice::from_ref(&saved[5]));
    assert!(!found("borrow of moved value").contains(&saved[5]));
}

#[test]
fn a_segment_merged_for_its_records_gone_never_makes_a_stale_copy_the_newest() {
    // A record rewritten under its name and read again is written into a newer segment:
    // the older one has lost it (`store/holdings.rs`), half of its two records, so it is
    // merged on its own. Its copy of the record is stale: a merge that kept it would
    // write it into the newest segment, the one a reader takes the record from.
    let storage: Shared = Rc::new(MemoryStorage::new());
    let a = block_on(ContextManager::open(storage.clone(), toolctx::options("/ctx"))).unwrap();
    let saved = save_all(&a, 0, 2);
    block_on(a.close()).unwrap();
    let now = rewrite(&storage, &saved[1], "thread quokka panicked at zanzibar.rs");
    let b = block_on(ContextManager::open(storage.clone(), toolctx::options("/ctx"))).unwrap();
    block_on(b.load(std::slice::from_ref(&saved[1]))).unwrap();
    block_on(b.close()).unwrap();
    for round in 0..3 {
        let mut o = toolctx::options("/ctx");
        let log = logged(&mut o);
        let (c, reads) = open(&storage, o);
        assert_eq!(reads, 0, "round {round}");
        let found = |q: &str| ranked(&c, q).into_iter().map(|(p, _)| p).collect::<Vec<_>>();
        assert_eq!(found("quokka zanzibar"), std::slice::from_ref(&saved[1]), "round {round}");
        assert!(!found("borrow of moved value").contains(&saved[1]), "round {round}");
        block_on(c.load(std::slice::from_ref(&saved[1]))).unwrap();
        assert!(
            !log.borrow().iter().any(|m| m.contains("changed under its name")),
            "round {round}: {:?}",
            log.borrow()
        );
        let all: serde_json::Value = serde_json::from_str(&c.pointers_json(Filter::ALL)).unwrap();
        let pointer = all.as_array().unwrap().iter().find(|p| p["filepath"] == saved[1].as_str()).unwrap();
        assert_eq!(pointer["size"], now.len(), "round {round}");
        save_all(&c, 10 + round, 1);
        block_on(c.close()).unwrap();
    }
}

#[test]
fn a_segment_whose_header_does_not_parse_is_merged_away_not_written_again() {
    use toolctx::select::segment::{encode, ToWrite};
    let storage: Shared = Rc::new(MemoryStorage::new());
    let a = ContextManager::new(storage.clone(), toolctx::options("/ctx")).unwrap();
    let saved = save_all(&a, 0, 3);
    drop(a); // no segment written
    let name = saved[1].rsplit('/').next().unwrap();
    let empty = toolctx::Terms::default();
    let bytes = encode(&[ToWrite::from_terms(name, 10, "{not a header", &empty)]);
    block_on(storage.write("/ctx/.index/1-1-abcd.seg", &bytes, WriteOptions::default())).unwrap();
    // Each writer reads the record again (a newer segment holds it as it is): the segment
    // whose header does not parse goes, not rewritten as the newest at every write.
    for round in 0..3 {
        let (m, _) = open(&storage, toolctx::options("/ctx"));
        save_all(&m, 10 + round, 1);
        block_on(m.close()).unwrap();
        let unparsed = segment_files(&storage)
            .into_iter()
            .filter(|p| block_on(storage.read(p)).unwrap().unwrap().windows(13).any(|w| w == b"{not a header"))
            .count();
        assert_eq!(unparsed, 0, "round {round}: {:?}", segment_files(&storage));
    }
}

#[test]
fn a_rewritten_record_of_a_session_is_indexed_again_once() {
    let storage: Shared = Rc::new(MemoryStorage::new());
    let a = block_on(ContextManager::open(storage.clone(), in_session(SessionChoice::New))).unwrap();
    let id = a.session_id().unwrap().to_owned();
    let saved = save_all(&a, 0, 12);
    block_on(a.close()).unwrap();
    let now = rewrite(&storage, &saved[5], "thread quokka panicked at zanzibar.rs");
    let resume = || {
        let mut o = in_session(SessionChoice::Resume(id.clone()));
        let log = logged(&mut o);
        (open(&storage, o).0, log)
    };
    let (b, log) = resume();
    block_on(b.load(std::slice::from_ref(&saved[5]))).unwrap();
    assert!(log.borrow().iter().any(|m| m.contains("changed under its name")), "{:?}", log.borrow());
    block_on(b.close()).unwrap();
    // The manifest says what it holds now: a later resume does not find it changed.
    let (c, log) = resume();
    let all: serde_json::Value = serde_json::from_str(&c.pointers_json(Filter::ALL)).unwrap();
    let pointer = all.as_array().unwrap().iter().find(|p| p["filepath"] == saved[5].as_str()).unwrap();
    assert_eq!(pointer["size"], now.len());
    block_on(c.load(std::slice::from_ref(&saved[5]))).unwrap();
    assert!(!log.borrow().iter().any(|m| m.contains("changed under its name")), "{:?}", log.borrow());
    assert_eq!(ranked(&c, "quokka zanzibar").len(), 1);
}

#[test]
fn a_store_read_by_range_ranks_as_one_read_whole_in_any_index_memory() {
    let storage: Shared = Rc::new(MemoryStorage::new());
    let a = block_on(ContextManager::open(storage.clone(), toolctx::options("/ctx"))).unwrap();
    save_all(&a, 0, 40);
    block_on(a.close()).unwrap();
    for round in 0..3 {
        // Segments of a few sizes: a merge of ten, and ones left small.
        let m = block_on(ContextManager::open(storage.clone(), toolctx::options("/ctx"))).unwrap();
        save_all(&m, 100 + round * 7, 7);
        block_on(m.close()).unwrap();
    }
    let whole = Probe::new(&storage);
    whole.ranges.set(false);
    let eager = block_on(ContextManager::open(whole, toolctx::options("/ctx"))).unwrap();
    let want = rankings(&eager);
    assert!(eager.storage().segment_reads.get() > 0 && eager.storage().range_reads.get() == 0);
    for memory in [32 * 1024 * 1024, 1024, 0] {
        let mut o = toolctx::options("/ctx");
        o.index_memory = memory;
        let (lazy, reads) = open(&storage, o);
        assert_eq!(reads, 0);
        assert_eq!(lazy.storage().segment_reads.get(), 0, "no segment read whole");
        assert_eq!(rankings(&lazy), want, "indexMemory {memory}");
        assert_eq!(rankings(&lazy), want, "again, from what is kept (indexMemory {memory})");
        assert!(lazy.storage().range_reads.get() > 0);
    }
    // Not prepared (the synchronous seed ranking): records of segments read by range are
    // ranked by their metadata; a record saved here by its content too.
    let (lazy, _) = open(&storage, toolctx::options("/ctx"));
    let content_word = Query::new("lazily");
    assert!(lazy.rank_all(&content_word, Fallback::None, Strategy::Bm25, None).hits.is_empty());
    assert!(!lazy.rank_all(&Query::new("f3"), Fallback::None, Strategy::Bm25, None).hits.is_empty());
    let saved = save_all(&lazy, 500, 3);
    let found = lazy.rank_all(&content_word, Fallback::None, Strategy::Bm25, None);
    let paths: Vec<String> = found.hits.iter().map(|h| lazy.filepath_of(h.index as u32).unwrap()).collect();
    assert_eq!(paths, [saved[0].clone()], "the one saved here whose text says 'lazily' (TEXTS[500 % 6])");
}

#[test]
fn searches_in_flight_together_over_a_segment_merged_away_rank_the_rest_as_read_whole() {
    let storage: Shared = Rc::new(MemoryStorage::new());
    let mut rounds = Vec::new();
    for round in 0..3 {
        let m = block_on(ContextManager::open(storage.clone(), toolctx::options("/ctx"))).unwrap();
        rounds.push(save_all(&m, round * 7, 7));
        block_on(m.close()).unwrap();
    }
    let segments = segment_files(&storage);
    assert_eq!(segments.len(), 3, "{segments:?}");
    let (lazy, _) = open(&storage, toolctx::options("/ctx"));
    lazy.storage().yielding.set(true);
    // Another process merges the first segment away: both searches find it gone while
    // each has reads of the other segments in flight.
    let gone = block_on(storage.read(&segments[0])).unwrap().unwrap();
    block_on(storage.remove(&segments[0])).unwrap();
    let (qa, qb) = (Query::new("header parser"), Query::new("retry loop uploader"));
    let search = |q| lazy.search(q, Fallback::None, Strategy::Bm25, None);
    let (a, b) = block_on(futures_util::future::join(search(&qa), search(&qb)));
    // The records the other two segments hold rank as a store read whole ranks them.
    let name = |p: &String| p.rsplit('/').next().unwrap().to_owned();
    let in_gone = |p: &String| gone.windows(name(p).len()).any(|w| w == name(p).as_bytes());
    let held: Vec<String> = rounds.concat().into_iter().filter(|p| !in_gone(p)).collect();
    assert_eq!(held.len(), 14);
    let whole = Probe::new(&storage);
    whole.ranges.set(false);
    let eager = block_on(ContextManager::open(whole, toolctx::options("/ctx"))).unwrap();
    for (got, q) in [(a, "header parser"), (b, "retry loop uploader")] {
        let got: Vec<String> = got.unwrap().hits.iter().map(|h| lazy.filepath_of(h.index as u32).unwrap()).collect();
        let want: Vec<String> = ranked(&eager, q).into_iter().map(|(p, _)| p).filter(|p| held.contains(p)).collect();
        assert!(!want.is_empty(), "{q}");
        assert_eq!(got.into_iter().filter(|p| held.contains(p)).collect::<Vec<_>>(), want, "{q}");
    }
}

#[test]
fn records_no_segment_holds_are_read_and_then_get_one() {
    let storage: Shared = Rc::new(MemoryStorage::new());
    let a = block_on(ContextManager::open(storage.clone(), toolctx::options("/ctx"))).unwrap();
    save_all(&a, 0, 10);
    block_on(a.close()).unwrap();
    // A second writer that exits without close(): its records are in no segment.
    let b = block_on(ContextManager::open(storage.clone(), toolctx::options("/ctx"))).unwrap();
    save_all(&b, 10, 4);
    let before = rankings(&b);
    drop(b);

    let (c, reads) = open(&storage, toolctx::options("/ctx"));
    assert_eq!(reads, 4, "only the four records no segment holds are read");
    assert_eq!(rankings(&c), before);
    let (d, reads) = open(&storage, toolctx::options("/ctx"));
    assert_eq!(reads, 0, "the open wrote a segment of what it read");
    assert_eq!(rankings(&d), before);
    // Read-only: it reads what no segment holds and writes nothing.
    let e = block_on(ContextManager::open(storage.clone(), toolctx::options("/ctx"))).unwrap();
    save_all(&e, 14, 2);
    drop(e);
    let files = storage.paths();
    let mut ro = toolctx::options("/ctx");
    ro.read_only = true;
    let (f, reads) = open(&storage, ro);
    assert_eq!((reads, f.len()), (2, 16));
    assert_eq!(storage.paths(), files, "a read-only open writes nothing");
}

#[test]
fn a_torn_foreign_or_stale_segment_is_never_trusted() {
    for damage in ["torn", "foreign", "stale"] {
        let storage: Shared = Rc::new(MemoryStorage::new());
        let a = block_on(ContextManager::open(storage.clone(), toolctx::options("/ctx"))).unwrap();
        let saved = save_all(&a, 0, 12);
        block_on(a.close()).unwrap();
        let segment = storage.paths().into_iter().find(|p| p.contains("/.index/")).expect("close wrote a segment");
        let bytes = block_on(storage.read(&segment)).unwrap().unwrap();
        match damage {
            "torn" => block_on(storage.write(&segment, &bytes[..bytes.len() / 2], WriteOptions::default())).unwrap(),
            "foreign" => {
                block_on(storage.write(&segment, b"{\"not\":\"a segment\"}", WriteOptions::default())).unwrap()
            }
            _ => {
                // Two records removed behind the segment's back.
                for p in &saved[..2] {
                    block_on(storage.remove(p)).unwrap();
                }
            }
        }
        // What a fresh index of the records on disk ranks.
        let reference = Rc::new(MemoryStorage::new());
        for p in storage.paths().into_iter().filter(|p| !p.contains("/.index/")) {
            block_on(reference.write(&p, &block_on(storage.read(&p)).unwrap().unwrap(), WriteOptions::default()))
                .unwrap();
        }
        let (want, _) = open(&reference, toolctx::options("/ctx"));

        let mut o = toolctx::options("/ctx");
        let log = logged(&mut o);
        let (b, reads) = open(&storage, o);
        let live = if damage == "stale" { 10 } else { 12 };
        assert_eq!(b.len(), live, "{damage}");
        assert_eq!(
            reads,
            if damage == "stale" { 0 } else { 12 },
            "{damage}: the records of a refused segment are read"
        );
        assert_eq!(rankings(&b), rankings(&want), "{damage}");
        if damage != "stale" {
            assert!(log.borrow().iter().any(|m| m.contains("segment was refused")), "{damage}: {:?}", log.borrow());
            assert!(block_on(storage.read(&segment)).unwrap().is_none(), "{damage}: the refused segment is removed");
            let (_, reads) = open(&storage, toolctx::options("/ctx"));
            assert_eq!(reads, 0, "{damage}: rebuilt from the records");
        }
    }
}

#[test]
fn a_writer_stopped_anywhere_in_a_merge_loses_nothing_and_counts_nothing_twice() {
    // Ten closes write ten segments of a level: the tenth merges them (its segment's
    // write, the merged one's, then ten removals). Stop the tenth writer after each of
    // these, in turn.
    for stop in 0..12 {
        let storage: Shared = Rc::new(MemoryStorage::new());
        let mut saved = Vec::new();
        let mut before = Vec::new();
        for round in 0..10 {
            let probe = Probe::new(&storage);
            if round == 9 {
                probe.stop_after.set(Some(stop));
            }
            let m = ContextManager::new(probe, toolctx::options("/ctx")).unwrap();
            saved.extend(save_all(&m, round * 3, 3));
            if round == 9 {
                let mut ro = toolctx::options("/ctx");
                ro.read_only = true;
                let all = block_on(ContextManager::open(storage.clone(), ro)).unwrap();
                before = rankings(&all);
            }
            let _ = block_on(m.close());
        }
        let segments = storage.paths().into_iter().filter(|p| p.contains("/.index/")).count();
        let (m, reads) = open(&storage, toolctx::options("/ctx"));
        saved.sort();
        assert_eq!(paths_of(&m), saved, "stop {stop}: every record, once ({segments} segments)");
        assert_eq!(rankings(&m), before, "stop {stop}");
        assert!(reads <= 3, "stop {stop}: at most the stopped writer's records are read ({reads})");
    }
    // Not stopped: one merged segment is left.
    let storage: Shared = Rc::new(MemoryStorage::new());
    for round in 0..10 {
        let m = ContextManager::new(storage.clone(), toolctx::options("/ctx")).unwrap();
        save_all(&m, round * 3, 3);
        block_on(m.close()).unwrap();
    }
    let segments: Vec<String> = storage.paths().into_iter().filter(|p| p.contains("/.index/")).collect();
    assert_eq!(segments.len(), 1, "{segments:?}");
    assert!(segments[0].starts_with("/ctx/.index/30-"), "{segments:?}");
}

/// A storage whose listing and reads lag its removals, as an eventually consistent store's
/// (Workers KV: up to 60 s): a segment removed is still listed and read as it was. Past 100
/// writes into the segment folder every write fails (a merge that never ends is cut short).
struct Lagging {
    inner: Shared,
    ghosts: RefCell<std::collections::BTreeMap<String, Vec<u8>>>,
    index_writes: Cell<usize>,
}

impl Storage for Lagging {
    async fn read(&self, path: &str) -> toolctx::Result<Option<Vec<u8>>> {
        let ghost = self.ghosts.borrow().get(path).cloned();
        match ghost {
            Some(bytes) => Ok(Some(bytes)),
            None => self.inner.read(path).await,
        }
    }
    async fn write(&self, path: &str, data: &[u8], options: WriteOptions) -> toolctx::Result<()> {
        if path.ends_with(".seg") {
            self.index_writes.set(self.index_writes.get() + 1);
            if self.index_writes.get() > 100 {
                return Err(Error::new(ErrorKind::Storage, "no more writes"));
            }
        }
        self.inner.write(path, data, options).await
    }
    async fn remove(&self, path: &str) -> toolctx::Result<()> {
        if path.ends_with(".seg") {
            if let Some(bytes) = self.inner.read(path).await? {
                self.ghosts.borrow_mut().insert(path.to_owned(), bytes);
            }
        }
        self.inner.remove(path).await
    }
    async fn list(&self, dir: &str) -> toolctx::Result<Vec<String>> {
        let mut names = self.inner.list(dir).await?;
        let prefix = format!("{dir}/");
        for ghost in self.ghosts.borrow().keys() {
            if let Some(name) = ghost.strip_prefix(&prefix).filter(|n| !names.iter().any(|m| m == n)) {
                names.push(name.to_owned());
            }
        }
        Ok(names)
    }
}

#[test]
fn a_merge_job_ends_when_the_listing_still_shows_the_segments_it_removed() {
    // After a merge the folder is planned again; a listing that still shows the merge's
    // inputs (read as they were) must not make them inputs again, and again.
    let storage: Shared = Rc::new(MemoryStorage::new());
    for round in 0..9 {
        let m = ContextManager::new(storage.clone(), toolctx::options("/ctx")).unwrap();
        save_all(&m, round * 3, 3);
        block_on(m.close()).unwrap();
    }
    let lagging = Lagging { inner: storage.clone(), ghosts: RefCell::default(), index_writes: Cell::new(0) };
    let m = ContextManager::new(lagging, toolctx::options("/ctx")).unwrap();
    save_all(&m, 27, 3);
    block_on(m.close()).unwrap();
    assert_eq!(m.storage().index_writes.get(), 2, "its segment, then the ten merged into one");
    assert_eq!(segment_files(&storage).len(), 1);
    let (m, reads) = open(&storage, toolctx::options("/ctx"));
    assert_eq!((m.len(), reads), (30, 0));
}

#[test]
fn a_resumed_session_ranks_from_its_segments_and_ending_it_removes_them() {
    let storage: Shared = Rc::new(MemoryStorage::new());
    let a = block_on(ContextManager::open(storage.clone(), in_session(SessionChoice::New))).unwrap();
    let id = a.session_id().unwrap().to_owned();
    save_all(&a, 0, 20);
    let before = rankings(&a);
    block_on(a.close()).unwrap();

    let (b, reads) = open(&storage, in_session(SessionChoice::Resume(id.clone())));
    assert_eq!(reads, 0, "every record from the segment");
    assert_eq!(rankings(&b), before, "ranked on all of their content, not the manifest's 16 terms");
    block_on(b.end_session()).unwrap();
    let left: Vec<String> = storage.paths().into_iter().filter(|p| p.contains(&id)).collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn every_pointer_has_a_short_handle_that_every_manager_of_the_store_resolves_alike() {
    let storage: Shared = Rc::new(MemoryStorage::new());
    let a = block_on(ContextManager::open(storage.clone(), toolctx::options("/ctx"))).unwrap();
    let saved = save_all(&a, 0, 20);
    block_on(a.close()).unwrap();
    fn handles(m: &ContextManager<impl Storage>) -> Vec<(String, String)> {
        let all: serde_json::Value = serde_json::from_str(&m.pointers_json(Filter::ALL)).unwrap();
        let mut out: Vec<(String, String)> = all
            .as_array()
            .unwrap()
            .iter()
            .map(|p| (p["handle"].as_str().unwrap().to_owned(), p["filepath"].as_str().unwrap().to_owned()))
            .collect();
        out.sort();
        out
    }
    let (b, _) = open(&storage, toolctx::options("/ctx"));
    let found = handles(&b);
    assert_eq!(found.len(), saved.len());
    for (h, path) in &found {
        assert_eq!(h.len(), 14, "{h}");
        assert!(h.starts_with("ctx:") && h[4..].bytes().all(|c| c.is_ascii_lowercase() || (b'2'..=b'7').contains(&c)));
        let slot = b.slot_of_handle(h).unwrap().expect("resolves");
        assert_eq!(b.filepath_of(slot).as_deref(), Some(path.as_str()));
        assert_eq!(b.slot_of_handle(&h.to_uppercase()).unwrap(), Some(slot), "any case");
    }
    let distinct: std::collections::HashSet<&String> = found.iter().map(|(h, _)| h).collect();
    assert_eq!(distinct.len(), found.len(), "unique in the store");
    // The manager that saved them printed the same handles.
    let a2 = block_on(ContextManager::open(storage.clone(), toolctx::options("/ctx"))).unwrap();
    assert_eq!(handles(&a2), found);
    assert_eq!(b.slot_of_handle("ctx:aaaaaaaaaa").unwrap(), None);
    assert_eq!(b.slot_of_handle("toolctx://x.json").unwrap(), None, "not a handle");
}

#[test]
fn a_record_whose_header_in_a_segment_does_not_parse_is_read_instead() {
    use toolctx::select::segment::{encode, ToWrite};
    let storage: Shared = Rc::new(MemoryStorage::new());
    let a = ContextManager::new(storage.clone(), toolctx::options("/ctx")).unwrap();
    let saved = save_all(&a, 0, 3);
    let before = rankings(&a);
    drop(a); // no segment written
    let name = saved[1].rsplit('/').next().unwrap();
    let empty = toolctx::Terms::default();
    let bytes = encode(&[ToWrite::from_terms(name, 10, "{not a header", &empty)]);
    block_on(storage.write("/ctx/.index/1-1-abcd.seg", &bytes, WriteOptions::default())).unwrap();
    let mut o = toolctx::options("/ctx");
    let log = logged(&mut o);
    let (b, reads) = open(&storage, o);
    assert_eq!((reads, b.len()), (3, 3), "all three read: two in no segment, one whose header does not parse");
    assert_eq!(rankings(&b), before);
    assert!(log.borrow().iter().any(|m| m.contains("header that does not parse")), "{:?}", log.borrow());
}

fn segment_files(storage: &Shared) -> Vec<String> {
    storage.paths().into_iter().filter(|p| p.contains("/.index/") && p.ends_with(".seg")).collect()
}

#[test]
fn a_rebuild_replaces_the_segments_that_hold_records_as_they_were() {
    let storage: Shared = Rc::new(MemoryStorage::new());
    let a = block_on(ContextManager::open(storage.clone(), toolctx::options("/ctx"))).unwrap();
    let input = SaveInput {
        tool_name: "env",
        args_json: "{}",
        result_json: Some("\"TOKEN=abc123secret\""),
        ..SaveInput::default()
    };
    let path = block_on(a.save(input)).unwrap();
    save_all(&a, 0, 5);
    block_on(a.close()).unwrap();
    // The user redacts the record by hand, then rebuilds the index.
    let record: serde_json::Value = serde_json::from_slice(&block_on(storage.read(&path)).unwrap().unwrap()).unwrap();
    let mut redacted = record.clone();
    redacted["result"] = serde_json::json!("TOKEN=[redacted]");
    block_on(storage.write(&path, redacted.to_string().as_bytes(), WriteOptions::default())).unwrap();
    let b = ContextManager::new(storage.clone(), toolctx::options("/ctx")).unwrap();
    block_on(b.rebuild_index()).unwrap();
    assert_eq!(segment_files(&storage).len(), 1, "the rebuild's segment replaced the older one");
    let (c, reads) = open(&storage, toolctx::options("/ctx"));
    assert_eq!(reads, 0);
    assert!(ranked(&c, "abc123secret").is_empty(), "nothing ranks on what the record no longer holds");
    assert_eq!(ranked(&c, "redacted").len(), 1);
}

#[test]
fn a_merge_whose_reads_fail_removes_nothing() {
    let storage: Shared = Rc::new(MemoryStorage::new());
    for round in 0..10 {
        let probe = Probe::new(&storage);
        probe.failing_segment_reads.set(round == 9);
        let m = ContextManager::new(probe, toolctx::options("/ctx")).unwrap();
        save_all(&m, round * 2, 2);
        block_on(m.close()).unwrap();
    }
    assert_eq!(segment_files(&storage).len(), 10, "the tenth close could not read the inputs: they stay");
    let (m, reads) = open(&storage, toolctx::options("/ctx"));
    assert_eq!((m.len(), reads), (20, 0));
}

#[test]
fn a_writer_that_never_closes_writes_a_segment_once_enough_records_wait() {
    let storage: Shared = Rc::new(MemoryStorage::new());
    let a = ContextManager::new(storage.clone(), toolctx::options("/ctx")).unwrap();
    save_all(&a, 0, 300);
    // A record without a result has nothing to index: it waits as it is.
    let bare = SaveInput { tool_name: "ping", args_json: "{}", result_json: None, ..SaveInput::default() };
    block_on(a.save(bare)).unwrap();
    block_on(a.close()).unwrap();
    let files = segment_files(&storage);
    assert_eq!(files.len(), 2, "one in the background after 256 records, one at close: {files:?}");
    let (b, reads) = open(&storage, toolctx::options("/ctx"));
    assert_eq!((b.len(), reads), (301, 0), "the record without a result is in a segment too");
    // A writer that exits without close(): only what waited after the background segment is read.
    let c = ContextManager::new(storage.clone(), toolctx::options("/ctx")).unwrap();
    save_all(&c, 1000, 300);
    drop(c);
    let (d, reads) = open(&storage, toolctx::options("/ctx"));
    assert_eq!(d.len(), 601);
    assert!(reads > 0 && reads < 300 - 255 + 1, "{reads}");
}

/// Saves `n` records asked by the query `q_one` (their query id), from number `from`.
fn save_for_query(m: &ContextManager<impl Storage>, from: usize, n: usize) {
    for i in from..from + n {
        let args = format!("{{\"path\":\"src/q{i}.rs\"}}");
        let input = SaveInput {
            tool_name: "readFile",
            args_json: &args,
            result_json: Some("\"text\""),
            query_id: Some("q_one".into()),
            ..SaveInput::default()
        };
        block_on(m.save(input)).unwrap();
    }
}

#[test]
fn a_store_opened_from_segments_and_records_read_whole_lists_every_record_of_a_query() {
    let storage: Shared = Rc::new(MemoryStorage::new());
    let a = block_on(ContextManager::open(storage.clone(), toolctx::options("/ctx"))).unwrap();
    save_for_query(&a, 0, 10);
    block_on(a.close()).unwrap(); // in a segment
    let b = block_on(ContextManager::open(storage.clone(), toolctx::options("/ctx"))).unwrap();
    save_for_query(&b, 10, 3); // in no segment: read whole at the next open
    drop(b);
    for ranges in [true, false] {
        let probe = Probe::new(&storage);
        probe.ranges.set(ranges);
        let m = block_on(ContextManager::open(probe, toolctx::options("/ctx"))).unwrap();
        assert_eq!(m.slots(Filter::query("q_one")).len(), 13, "read by range: {ranges}");
    }
}
