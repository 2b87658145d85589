//! # toolctx
//!
//! A tool-context store for AI agents. Every tool output is persisted as a JSON record
//! through pluggable storage; a small pointer stays in memory; pointers are filtered by
//! query or task, and the records relevant to the next model call are selected.
//!
//! This crate is the Rust API: the whole logic of `toolctx-core` (crates/core: records,
//! pointers, selection, sessions, conversations, the window optimiser, as synchronous
//! plans that own no I/O), re-exported at this crate's root, and [`native`], which runs
//! it over a [`Storage`] with the platform's clock and random source ([`platform`],
//! [`options`]). The package's wasm modules (crates/wasm) run the same core in
//! JavaScript instead.
//!
//! ```
//! use toolctx::{ContextManager, MemoryStorage, SaveInput};
//! # toolctx::native::block_on(async {
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
//! - [`native`]: everything that awaits, beside the core: the [`Storage`] trait,
//!   [`MemoryStorage`], [`FsStorage`], the runner of plans, and the async API over them
//!   ([`ContextManager`], [`ConversationStore`], sessions, store-wide operations, the
//!   window history);
//! - [`platform`]: the system clock and the OS random source, the defaults [`options`]
//!   and [`conversation_options`] hand to the core.

#![deny(missing_docs)]

pub use toolctx_core::*;

pub mod native;
// The native clock and random source (in wasm the exports hand in the host's).
#[cfg(not(target_arch = "wasm32"))]
pub mod platform;

#[cfg(not(target_arch = "wasm32"))]
pub use native::FsStorage;
pub use native::{
    cleanup_stale_sessions, export_jsonl, import_jsonl, list_sessions, purge, search_sessions, ContextManager,
    ConversationStore, MemoryStorage, Storage, WriteOptions,
};
#[cfg(not(target_arch = "wasm32"))]
pub use platform::{conversation_options, options};
