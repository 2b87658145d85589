//! Everything that awaits: the [`Storage`] trait and its native backends, the runner of
//! plans, and the async API over them, for Rust users and the Rust tests. The core (the
//! crate `toolctx-core`, re-exported at this crate's root) owns no I/O: its workflows are
//! synchronous steps, and these drive them, as the package's JavaScript driver
//! (`pkg-template/driver.js`) does over a host.
//!
//! - [`storage`]: the [`Storage`] contract; [`MemoryStorage`], [`FsStorage`];
//! - [`runner`]: [`run`], a plan run to its end over a storage, and [`block_on`], a small
//!   blocking executor for the async API;
//! - [`manager`]: [`ContextManager`], a [`Manager`](crate::Manager) over a storage;
//! - [`session`]: listing, searching and cleaning sessions;
//! - [`conversation`]: [`ConversationStore`], a
//!   [`Conversations`](crate::conversation::Conversations) over a local and a remote storage;
//! - [`storewide`]: purge, export and import of a context dir;
//! - [`window`]: the window optimiser's edit history, read and written.
//!
//! None of it is compiled into the package's wasm modules (crates/wasm depends on the
//! core alone): they link no async runtime. The wasm tests compile it for wasm32, over
//! the host's storage (no [`FsStorage`] there).

pub mod conversation;
// A file system: not in wasm (the wasm tests run this module over the host's storage).
#[cfg(not(target_arch = "wasm32"))]
mod fs;
pub mod manager;
mod memory;
pub mod runner;
pub mod session;
pub mod storage;
pub mod storewide;
pub mod window;

pub use conversation::ConversationStore;
#[cfg(not(target_arch = "wasm32"))]
pub use fs::FsStorage;
pub use manager::ContextManager;
pub use memory::MemoryStorage;
#[cfg(not(target_arch = "wasm32"))]
pub use runner::block_on;
pub use runner::run;
pub use session::{cleanup_stale_sessions, list_sessions, record_files, remove_session, search_sessions};
pub use storage::{Storage, WriteOptions};
pub use storewide::{export_jsonl, import_jsonl, purge};
