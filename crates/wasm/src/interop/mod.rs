//! Every conversion between JavaScript values and the core's types, in one place (the
//! exports around it only call these):
//!
//! - `named`: the enums whose variants cross as fixed strings (kinds), checked against
//!   pkg-template/protocol.js by a test;
//! - `requests`: what the package asks of the core module (a workflow, a query, an update,
//!   a workflow with no manager, a computation);
//! - `args`: an argument or an option read, checked (`INVALID_ARGUMENT` when wrong);
//! - `options`: the options objects of `ContextManager`, `ConversationStore` and
//!   `ContextHistory`;
//! - `json`: JSON text to and from JavaScript values;
//! - `errors`: the core's errors as JavaScript `Error`s with a `code`;
//! - `host`: the runtime's defaults (folder, storage) and the trap hook (host.js);
//! - `storage`: a host storage object (`JsStorage`) and the typing of its outcomes;
//! - `steps`: the step objects of the protocol (docs/protocol.md), built and read;
//! - `body`: result bytes the JavaScript side holds, read by handle;
//! - `selection`: selection's options, embedding vectors, pointer terms and scores;
//! - `storewide`: the static store-wide operations' arguments and results;
//! - `conversation`: the conversation store's arguments, results and step ops;
//! - `window`: the window optimiser's messages in and plan out.

// The kinds of steps and requests (first: its macro serves the modules below).
pub mod named;
// Each module reads its own arguments; the ContextManager reads with all of these.
#[cfg_attr(not(feature = "core"), allow(dead_code))]
pub mod args;
// Held result bytes: made by the core's saveContext, written by the storage of any module.
#[cfg_attr(not(feature = "core"), allow(dead_code))]
pub mod body;
#[cfg(feature = "conversation")]
pub mod conversation;
// The ContextManager uses all of the shared modules; the other modules use parts of them.
#[cfg_attr(not(feature = "core"), allow(dead_code))]
pub mod errors;
pub mod host;
pub mod json;
pub mod options;
#[cfg(feature = "core")]
pub mod requests;
#[cfg(feature = "core")]
pub mod selection;
#[cfg(feature = "core")]
pub mod storewide;
// The step protocol (docs/protocol.md): every step, op and outcome that crosses.
#[cfg_attr(not(feature = "core"), allow(dead_code))]
pub mod steps;
#[cfg_attr(not(feature = "core"), allow(dead_code))]
pub mod storage;
#[cfg(feature = "window")]
pub mod window;
