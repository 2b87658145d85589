//! Everything wasm-bindgen: the exported `ContextManager`, host storage (`JsStorage`),
//! typed JavaScript errors, host defaults, and the TypeScript types of the boundary.
//!
//! The package ships three wasm modules built from this crate, one per cargo feature
//! (scripts/build-wasm.sh): `core` (ContextManager: hashing, selection, sessions),
//! `conversation` (ConversationStore) and `window` (the context-window optimiser). Each
//! feature compiles only its own exported boundary; what every module needs (host
//! storage, host defaults, errors, the panic hook) is shared.

#[cfg(any(feature = "core", feature = "conversation"))]
mod args;
// Held result bytes: made by the core's saveContext, written by the storage of any module.
#[cfg_attr(not(feature = "core"), allow(dead_code))]
mod body;
#[cfg(feature = "conversation")]
mod conversation;
// The ContextManager uses all of the shared modules; the other modules use parts of them.
#[cfg_attr(not(feature = "core"), allow(dead_code))]
mod errors;
mod host;
mod json;
#[cfg(feature = "core")]
mod manager;
#[cfg(feature = "core")]
mod plans;
// The step protocol (docs/protocol.md): every step, op and outcome that crosses.
#[cfg_attr(not(feature = "core"), allow(dead_code))]
mod steps;
#[cfg_attr(not(feature = "core"), allow(dead_code))]
mod storage;
#[cfg(feature = "core")]
mod types;
#[cfg(feature = "window")]
mod window;

#[cfg(all(test, feature = "native"))]
mod awaited;
#[cfg(all(test, feature = "core"))]
mod tests;

use wasm_bindgen::prelude::*;

/// This module's name, for `onTrap` (host.js): the calls in flight that a trap fails are its own.
#[cfg(feature = "core")]
const MODULE: &str = "core";
#[cfg(all(feature = "conversation", not(feature = "core")))]
const MODULE: &str = "conversation";
#[cfg(all(feature = "window", not(any(feature = "core", feature = "conversation"))))]
const MODULE: &str = "window";
#[cfg(not(any(feature = "core", feature = "conversation", feature = "window")))]
const MODULE: &str = "none";

#[wasm_bindgen(start)]
fn start() {
    // The panic's message and location reach the caller in the INTERNAL error (extras.js),
    // with no console output of its own (console_error_panic_hook's cost 1.5 KB).
    std::panic::set_hook(Box::new(|info| {
        // The instance is abandoned: the next call into the module gets a fresh one. `onTrap`
        // (host.js) fails this module's calls in flight and throws the INTERNAL error, which
        // unwinds this call's frames (as `wasm_bindgen::throw_val` does: no destructors run,
        // nothing of this instance is used again), so every entry, constructors included,
        // ends in it.
        wasm_bindgen::handler::schedule_reinit();
        host::notify_trap(MODULE, &info.to_string());
    }));
}
