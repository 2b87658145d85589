//! # toolctx-core
//!
//! A tool-context store for AI agents. Every tool output is persisted as a JSON record
//! through pluggable storage; a small pointer stays in memory; pointers are filtered by
//! query or task, and the records relevant to the next model call are selected.
//!
//! This crate is the whole logic, sans-IO: it owns no storage, reads no clock and no
//! random source (its options take them as inputs, [`inputs`]), and awaits nothing. Its
//! workflows are [plans](plan) of synchronous steps that a driver runs: natively the
//! `toolctx` crate (crates/native: the `Storage` trait, the memory and file-system
//! storages, the runner, the platform's clock and random source, and the async API,
//! `ContextManager` and the rest, with this crate's API re-exported at its root); in
//! WebAssembly the `toolctx-wasm` crate (crates/wasm), whose exports hand each step to
//! the package's JavaScript driver. Rust users depend on `toolctx`; its docs have the
//! examples that save and load.
//!
//! ## Records, pointers, handles and file names
//!
//! - A **record** is one UTF-8 JSON file per tool output: `{"v":1,"toolName",
//!   "toolDescription","args","argsHash","timestamp","result"}` and, when given,
//!   `queryId`, `taskId`, `toolCallId` ([`record`]). The args hash is the SHA-256 of the
//!   args' canonical JSON (RFC 8785), so equal args hash alike whatever their key order.
//! - A **file name** is `{tool}_{hash12}_{ms13}_{counter}_{random4}.json`: the sanitised
//!   tool name, the args hash's first 12 hex digits, the save instant in epoch
//!   milliseconds, the manager's counter and four random `[a-z0-9]`. One grammar
//!   recognises records everywhere ([`is_record_filename`]), the TypeScript original's
//!   names included. An index segment lives in `.index/`, a name no record can take.
//! - A **pointer** is what stays in memory: the record's path, tool name, description,
//!   args hash, timestamp, ids and size, never its result.
//! - A **handle** is what the model sees and passes back: `ctx:` and 10 base32
//!   characters of a hash of the file name (12 when two records of a store share the
//!   short one), the same in every process ([`handle`]).
//!
//! ```
//! use toolctx_core::{args_hash, handle, is_record_filename, naming::record_filename, sanitize_tool_name};
//! let args: serde_json::Value = serde_json::from_str(r#"{"path":"a.ts","lines":10}"#)?;
//! let reordered: serde_json::Value = serde_json::from_str(r#"{"lines":10,"path":"a.ts"}"#)?;
//! let hash = args_hash(&args)?;
//! assert_eq!(hash, args_hash(&reordered)?, "canonical JSON: key order does not matter");
//! let name = record_filename(&sanitize_tool_name("read file"), &hash, 1_795_811_832_434, 2, "80nz");
//! assert_eq!(name, format!("read-file_{}_1795811832434_2_80nz.json", &hash[..12]));
//! assert!(is_record_filename(&name));
//! let h = handle::handle(handle::digest(&name), handle::SHORT);
//! assert!(h.starts_with("ctx:") && h.len() == 14);
//! assert_eq!(handle::parse(&h).as_deref(), Some(&h[4..]));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! ## Contents
//!
//! - [`error`]: the one [`Error`] type and its [`ErrorKind`] codes;
//! - [`naming`]: filenames, tool-name sanitising, the canonical args hash, `hashQuery`;
//! - [`describe`](mod@describe): tool descriptions;
//! - [`record`]: the record and pointer encodings;
//! - [`select`]: tokeniser, indexed terms, ranking;
//! - [`view`]: a result as the model reads it, in numbered lines;
//! - [`grep`]: `grep_context`'s line matcher, linear-time whatever the pattern;
//! - [`paths`]: path normalising and confinement;
//! - [`plan`]: the storage operations a synchronous step asks for, and their outcomes;
//! - [`inputs`]: the clock, the random source and the debug sink, the core's inputs;
//! - [`session`]: session ids, the manifest, listing and stale cleanup;
//! - [`handle`]: a record's handle, `ctx:` and base32 (what the model sees and passes back);
//! - [`retention`]: caps by bytes, records and age over the records a manager owns;
//! - [`store`]: [`Manager`], the workflow as synchronous steps, owning no storage (one
//!   file per part: save, load, pointers, close, clear, restore, jobs, the persisted
//!   index);
//! - `lifecycle` (internal): open, closing, closed, and the operations in flight;
//! - [`conversation`]: [`Conversations`](conversation::Conversations): messages, artifacts, stats,
//!   pruning, export/import and sync, as synchronous steps;
//! - [`window`]: the context-window optimiser (duplicate reads, truncation, edit history);
//! - everything that awaits is beside the core, in the `toolctx` crate: the `Storage`
//!   trait, `MemoryStorage`, `FsStorage`, the runner of plans, and the async API over
//!   them (`ContextManager`, `ConversationStore`, sessions, store-wide operations, the
//!   window history). The package's wasm modules do not compile it.

#![deny(missing_docs)]

pub mod conversation;
pub mod describe;
pub mod error;
pub mod grep;
pub mod handle;
pub mod inputs;
mod lifecycle;
pub mod naming;
pub(crate) use toolctx_search::paged;
pub mod paths;
pub mod plan;
pub mod record;
pub mod retention;
pub mod segments;
pub use toolctx_search as select;
pub mod session;
mod shared;
pub(crate) use toolctx_search::sort;
pub mod store;
pub mod storewide;
#[cfg(test)]
mod testing;
pub mod view;
pub mod window;

pub use describe::{describe, tool_words};
pub use error::{Error, ErrorKind, Result};
pub use naming::{args_hash, canonical_json, hash_query, is_record_filename, sanitize_tool_name};
pub use retention::Retention;
pub use select::{keywords, tokenize, Fallback, Scored, Strategy, Terms};
pub use session::{SessionHit, SessionInfo};
pub use store::{
    result_hash, Candidate, DebugEvent, Export, Filter, HostBody, ImportReport, Listed, LoadStep, Loading, Manager,
    NotLoaded, Options, ResultHasher, SaveInput, SessionChoice, Skipped,
};
