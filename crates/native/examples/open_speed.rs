//! How long `open()` of a store takes natively, from its index segments (bench/open.mjs
//! measures it through the package; `KEEP=1 node bench/open.mjs` leaves a store to point
//! this at).
//!   cargo run --release -p toolctx --example open_speed DIR
//! Prints the record count and the time of three opens, read-only.

use std::time::Instant;

use toolctx::{block_on, ContextManager, FsStorage};

fn main() {
    let Some(dir) = std::env::args().nth(1) else {
        eprintln!("usage: cargo run --release -p toolctx --example open_speed DIR");
        std::process::exit(2);
    };
    for _ in 0..3 {
        let mut options = toolctx::options(&dir);
        options.read_only = true;
        let started = Instant::now();
        match block_on(ContextManager::open(FsStorage::new(), options)) {
            Ok(m) => println!("open: {} records in {:?}", m.len(), started.elapsed()),
            Err(e) => {
                eprintln!("open failed: {e}");
                std::process::exit(1);
            }
        }
    }
}
