//! Helpers the ContextManager workflow tests share (store.rs, indexing.rs, export.rs).

#![allow(dead_code)] // each test file uses some of them

use std::cell::RefCell;
use std::rc::Rc;

use toolctx::{DebugEvent, MemoryStorage, Options, SaveInput};

pub fn options(dir: &str) -> Options {
    toolctx::options(dir)
}

/// The record files in `storage` (not the index segments beside them).
pub fn record_paths(storage: &MemoryStorage) -> Vec<String> {
    storage.paths().into_iter().filter(|p| !p.contains("/.index/")).collect()
}

/// Options that hold records under 32 KiB in memory (the opt-in `persistThreshold`).
pub fn holding(dir: &str) -> Options {
    let mut o = toolctx::options(dir);
    o.persist_threshold = 32 * 1024;
    o
}

pub fn save<'a>(tool: &'a str, args: &'a str, result: &'a str) -> SaveInput<'a> {
    SaveInput { tool_name: tool, args_json: args, result_json: Some(result), ..SaveInput::default() }
}

pub fn debug_log(o: &mut Options) -> Rc<RefCell<Vec<DebugEvent>>> {
    let log = Rc::new(RefCell::new(Vec::new()));
    let sink = log.clone();
    o.on_debug = Some(Rc::new(move |e: &DebugEvent| sink.borrow_mut().push(e.clone())));
    log
}
