//! A native storage with a largest value ([`Storage::max_value_bytes`], a JavaScript
//! storage's `maxValueBytes`) gets no index segment over it: the manager hands the limit to
//! the core, which cuts a segment write in several. Without it, the storage refused the
//! first segment over its limit and no record reached a segment.
//! (tests/js/value-limit.test.mjs is the same test through the package.)

use std::cell::RefCell;
use std::rc::Rc;

use futures_executor::block_on;
use toolctx::select::Query;
use toolctx::{ContextManager, DebugEvent, Error, ErrorKind, Fallback, MemoryStorage, Storage, Strategy, WriteOptions};

mod common;
use common::{debug_log, save};

/// A memory storage that refuses a value over `limit` bytes, as D1's and a Durable
/// Object's rows do, and says so.
struct Limited {
    inner: MemoryStorage,
    limit: usize,
    /// The writes refused: path and size.
    refused: RefCell<Vec<(String, usize)>>,
}

impl Storage for Limited {
    async fn read(&self, path: &str) -> toolctx::Result<Option<Vec<u8>>> {
        self.inner.read(path).await
    }
    async fn read_range(&self, path: &str, offset: u64, len: u64) -> toolctx::Result<Option<Vec<u8>>> {
        self.inner.read_range(path, offset, len).await
    }
    fn reads_ranges(&self) -> bool {
        self.inner.reads_ranges()
    }
    fn max_value_bytes(&self) -> Option<usize> {
        Some(self.limit)
    }
    async fn write(&self, path: &str, data: &[u8], options: WriteOptions) -> toolctx::Result<()> {
        if data.len() > self.limit {
            self.refused.borrow_mut().push((path.to_owned(), data.len()));
            return Err(Error::new(ErrorKind::TooLarge, format!("over the {}-byte value limit", self.limit)));
        }
        self.inner.write(path, data, options).await
    }
    async fn remove(&self, path: &str) -> toolctx::Result<()> {
        self.inner.remove(path).await
    }
    async fn list(&self, dir: &str) -> toolctx::Result<Vec<String>> {
        self.inner.list(dir).await
    }
}

const WORDS: [&str; 14] = [
    "alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa", "lambda", "omicron",
    "sigma", "upsilon",
];

/// A result of 60 words, most of them distinct across records (numbered), so segments
/// grow with the records; it ends in `needle{i}`.
fn text(i: usize) -> String {
    let words = (0..60).map(|k| format!("{}{}", WORDS[(i + k) % WORDS.len()], (i * 31 + k * 7) % 5003));
    format!("{} needle{i}", words.collect::<Vec<_>>().join(" "))
}

/// The first filepath ranked for `query`.
fn first(m: &ContextManager<Rc<Limited>>, query: &str) -> Option<String> {
    let ranking = block_on(m.search(&Query::new(query), Fallback::None, Strategy::Bm25, Some(1))).unwrap();
    ranking.hits.first().and_then(|h| m.filepath_of(h.index as u32))
}

#[test]
fn segments_are_written_within_the_storage_s_largest_value() {
    const RECORDS: usize = 3000;
    let limit = 48 * 1024;
    let storage = Rc::new(Limited { inner: MemoryStorage::new(), limit, refused: RefCell::new(Vec::new()) });
    let mut o = toolctx::options("/limited");
    o.persist_threshold = 0;
    let log = debug_log(&mut o);
    let m = ContextManager::new(storage.clone(), o).unwrap();
    let mut paths = Vec::new();
    for i in 0..RECORDS {
        let (args, result) = (format!(r#"{{"i":{i}}}"#), serde_json::to_string(&text(i)).unwrap());
        paths.push(block_on(m.save(save("grep", &args, &result))).unwrap());
    }
    block_on(m.close()).unwrap();

    // What onDebug says of a segment the storage refused, or of a record no segment holds.
    let failures = |log: &RefCell<Vec<DebugEvent>>| -> Vec<String> {
        let said = log.borrow().iter().map(|e| e.message.clone()).collect::<Vec<_>>();
        said.into_iter().filter(|m| m.contains("index segment") || m.contains("no segment holds")).collect()
    };
    assert_eq!(failures(&log), Vec::<String>::new());
    assert_eq!(*storage.refused.borrow(), [], "no value over the limit was written");
    let segments: Vec<String> = storage.inner.paths().into_iter().filter(|p| p.ends_with(".seg")).collect();
    assert!(segments.len() > 1, "several segments: {segments:?}");
    for path in &segments {
        let bytes = block_on(storage.inner.read(path)).unwrap().unwrap();
        assert!(bytes.len() <= limit, "{path}: {} bytes", bytes.len());
    }
    // `{records}-{ms}-{random}.seg`: each record in one segment.
    let held: usize = segments
        .iter()
        .map(|p| p.trim_start_matches("/limited/.index/").split('-').next().unwrap().parse::<usize>().unwrap())
        .sum();
    assert_eq!(held, RECORDS, "the segments hold every record once: {segments:?}");

    let mut o = toolctx::options("/limited");
    let log = debug_log(&mut o);
    let reopened = block_on(ContextManager::open(storage.clone(), o)).unwrap();
    for i in [0, 1234, RECORDS - 1] {
        assert_eq!(first(&reopened, &format!("needle{i}")), Some(paths[i].clone()), "needle{i}");
    }
    assert_eq!(failures(&log), Vec::<String>::new());
    block_on(reopened.close()).unwrap();
}

#[test]
fn a_largest_value_of_zero_is_refused_when_the_manager_is_made() {
    let storage = Rc::new(Limited { inner: MemoryStorage::new(), limit: 0, refused: RefCell::new(Vec::new()) });
    let err = ContextManager::new(storage, toolctx::options("/zero")).err().expect("refused");
    assert_eq!(err.kind(), ErrorKind::InvalidArgument, "{err}");
}
