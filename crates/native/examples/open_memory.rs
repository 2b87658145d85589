//! Heap bytes a native manager holds after `open()` of a store and after ranking queries:
//! `cargo run --release -p toolctx --example open_memory -- <contextDir> [queries.json]`.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use futures_executor::block_on;
use toolctx::select::Query;
use toolctx::{ContextManager, Fallback, FsStorage, Strategy};

struct Counting;
static HELD: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn held(n: usize) {
    PEAK.fetch_max(n, Ordering::Relaxed);
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        held(HELD.fetch_add(layout.size(), Ordering::Relaxed) + layout.size());
        System.alloc(layout)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        HELD.fetch_sub(layout.size(), Ordering::Relaxed);
        System.dealloc(ptr, layout)
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        held(HELD.fetch_add(new_size, Ordering::Relaxed) + new_size);
        HELD.fetch_sub(layout.size(), Ordering::Relaxed);
        System.realloc(ptr, layout, new_size)
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

fn mib(n: usize) -> String {
    format!("{:.1} MiB", n as f64 / 1048576.0)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let dir = args.next().expect("a contextDir");
    let queries: Vec<String> = args
        .next()
        .map(|p| serde_json::from_str::<Vec<serde_json::Value>>(&std::fs::read_to_string(p).unwrap()).unwrap())
        .unwrap_or_default()
        .into_iter()
        .filter_map(|q| {
            q.get("query").and_then(|q| q.as_str()).map(str::to_owned).or_else(|| q.as_str().map(str::to_owned))
        })
        .collect();
    let before = HELD.load(Ordering::Relaxed);
    let started = std::time::Instant::now();
    let m = block_on(ContextManager::open(FsStorage::new(), toolctx::options(&dir))).unwrap();
    let peak = PEAK.swap(0, Ordering::Relaxed);
    println!(
        "open: {} ms, {} records, held {}, peak {}",
        started.elapsed().as_millis(),
        m.len(),
        mib(HELD.load(Ordering::Relaxed) - before),
        mib(peak - before)
    );
    let started = std::time::Instant::now();
    for q in &queries {
        block_on(m.search(&Query::new(q), Fallback::None, Strategy::Bm25, Some(10))).unwrap();
    }
    let (ms, n) = (started.elapsed().as_secs_f64() * 1000.0, queries.len());
    let (held, peak) = (HELD.load(Ordering::Relaxed) - before, PEAK.load(Ordering::Relaxed) - before);
    println!(
        "after {n} queries ({:.1} ms a query, mean): held {}, peak {}",
        ms / n.max(1) as f64,
        mib(held),
        mib(peak)
    );
    // Again, from what the cache kept.
    let started = std::time::Instant::now();
    for q in &queries {
        block_on(m.search(&Query::new(q), Fallback::None, Strategy::Bm25, Some(10))).unwrap();
    }
    println!("again: {:.1} ms a query", started.elapsed().as_secs_f64() * 1000.0 / n.max(1) as f64);
}
