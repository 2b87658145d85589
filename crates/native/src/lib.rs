//! # toolctx
//!
//! A tool-context store for AI agents. Every tool output is persisted as a JSON record
//! through pluggable storage; a small pointer stays in memory; pointers are filtered by
//! query or task, and the records relevant to the next model call are selected.
//!
//! This crate is the Rust API: the whole logic of `toolctx-core` (crates/core: records,
//! pointers, selection, sessions, conversations, the window optimiser, as synchronous
//! plans that own no I/O), re-exported at this crate's root, and everything that awaits,
//! which runs it over a [`Storage`] with the platform's clock and random source
//! ([`platform`], [`options`]). The package's wasm modules (crates/wasm) run the same core
//! in JavaScript instead: they depend on the core alone and link no async runtime.
//!
//! ```
//! use toolctx::{ContextManager, MemoryStorage, SaveInput};
//! # toolctx::block_on(async {
//! let manager = ContextManager::new(MemoryStorage::new(), toolctx::options("/store"))?;
//! let path = manager
//!     .save(SaveInput {
//!         tool_name: "readFile",
//!         args_json: r#"{"path":"src/auth/login.ts"}"#,
//!         result_json: Some(r#""export function login() {}""#),
//!         ..SaveInput::default()
//!     })
//!     .await?;
//! assert!(path.starts_with("/store/readFile_"));
//! let records = manager.load(&[path]).await?;
//! assert_eq!(records.len(), 1);
//! # Ok::<(), toolctx::Error>(())
//! # }).unwrap();
//! ```
//!
//! ## Contents
//!
//! - the core's modules and items (see `toolctx-core`'s docs: records, pointers,
//!   handles and file names): [`error`], [`naming`], [`record`], [`select`], [`plan`],
//!   [`store`] ([`Manager`], [`Options`]), [`session`], [`conversation`], [`window`] and
//!   the rest;
//! - everything that awaits, beside the core, each module's items at this crate's root:
//!   - [`storage`]: the [`Storage`] contract and [`WriteOptions`]; [`MemoryStorage`] and
//!     [`FsStorage`], its backends here;
//!   - [`runner`]: [`run`], a plan run to its end over a storage, and [`block_on`], a
//!     small blocking executor for the async API;
//!   - [`manager`]: [`ContextManager`], a [`Manager`] over a storage;
//!   - [`conversation_store`]: [`ConversationStore`], a
//!     [`Conversations`](conversation::Conversations) over a local and a remote storage;
//!   - [`session_ops`]: listing, searching and cleaning sessions ([`session`]'s plans run);
//!   - [`storewide_ops`]: purge, export and import of a context dir ([`storewide`]'s);
//!   - [`window_history`]: the window optimiser's edit history, read and written;
//! - [`platform`]: the system clock and the OS random source, the defaults [`options`]
//!   and [`conversation_options`] hand to the core.
//!
//! The wasm tests (crates/wasm/src/tests.rs) compile the modules that await for wasm32,
//! over the host's storage: there is no [`FsStorage`], [`block_on`] or [`platform`] there.

#![deny(missing_docs)]

// The core's API (crates/core/src/lib.rs), all of it but spelled out, so that what this
// crate offers is written here: an item the core adds is not this crate's until it is
// listed. A `ContextManager` derefs to a `Manager` and a `ConversationStore` to a
// `Conversations`, so the types of the core's steps are this crate's API too.
//
// The modules.
pub use toolctx_core::{
    conversation, describe, error, grep, handle, inputs, naming, paths, plan, record, retention, segments, session,
    store, storewide, view, window,
};
// The search engine (the crate toolctx-search), shown with the rest.
#[doc(inline)]
pub use toolctx_core::select;

// The error, names and hashes, descriptions, retention.
pub use toolctx_core::{
    args_hash, canonical_json, hash_query, is_record_filename, sanitize_tool_name, tool_words, Error, ErrorKind,
    Result, Retention,
};

// The search engine's words and strategies.
pub use toolctx_core::{keywords, tokenize, Fallback, Scored, Strategy, Terms};

// Sessions, as listed and searched.
pub use toolctx_core::{SessionHit, SessionInfo};

// The manager, its options, and the types of its steps.
pub use toolctx_core::{
    result_hash, Candidate, DebugEvent, Export, Filter, HostBody, ImportReport, Listed, LoadStep, Loading, Manager,
    NotLoaded, Options, ResultHasher, SaveInput, SessionChoice, Skipped,
};

pub mod conversation_store;
// A file system: not in wasm (the wasm tests run the rest over the host's storage).
#[cfg(not(target_arch = "wasm32"))]
mod fs;
pub mod manager;
mod memory;
// The native clock and random source (in wasm the exports hand in the host's).
#[cfg(not(target_arch = "wasm32"))]
pub mod platform;
pub mod runner;
pub mod session_ops;
pub mod storage;
pub mod storewide_ops;
pub mod window_history;

pub use conversation_store::ConversationStore;
#[cfg(not(target_arch = "wasm32"))]
pub use fs::FsStorage;
pub use manager::ContextManager;
pub use memory::MemoryStorage;
#[cfg(not(target_arch = "wasm32"))]
pub use platform::{conversation_options, options};
#[cfg(not(target_arch = "wasm32"))]
pub use runner::block_on;
pub use runner::run;
pub use session_ops::{cleanup_stale_sessions, list_sessions, record_files, remove_session, search_sessions};
pub use storage::{Storage, WriteOptions};
pub use storewide_ops::{export_jsonl, import_jsonl, purge};
