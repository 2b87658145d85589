//! toolctx-wasm: everything wasm-bindgen, over toolctx-core: the exports (`manager/`: `ContextManager`; `conversation.rs`;
//! `window.rs`; `plans.rs`, the plans' stepping), the TypeScript types of the boundary
//! (`types.rs` and the `*.d.ts` beside it), and in `interop/` every conversion between
//! JavaScript values and the core's types.
//!
//! The package ships three wasm modules built from this crate, one per cargo feature
//! (scripts/build-wasm.sh): `core` (ContextManager: hashing, selection, sessions),
//! `conversation` (ConversationStore) and `window` (the context-window optimiser). Each
//! feature compiles only its own exported boundary; what every module needs (host
//! storage, host defaults, errors, the panic hook) is shared.
//!
//! Only a wasm32 build has anything in it: natively the crate is empty (the workspace's
//! `cargo test` runs the core through the `toolctx` crate instead).

#![cfg(target_arch = "wasm32")]

#[cfg(feature = "conversation")]
mod conversation;
mod interop;
#[cfg(feature = "core")]
mod manager;
// Every module's operations that need I/O run as plans (crates/core/src/plan.rs) stepped through `__planStep`.
#[cfg(any(feature = "core", feature = "conversation", feature = "window"))]
mod plans;
#[cfg(feature = "core")]
mod types;
#[cfg(feature = "window")]
mod window;

#[cfg(test)]
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

// `private`: run when the module is instantiated (`__wbindgen_start`), not exported to
// JavaScript as well.
#[wasm_bindgen(start, private)]
fn start() {
    // The panic's message and location reach the caller in the INTERNAL error (host.js),
    // with no console output of its own (console_error_panic_hook's cost 1.5 KB).
    std::panic::set_hook(Box::new(|info| {
        // The instance is abandoned: the next call into the module gets a fresh one. `onTrap`
        // (host.js) fails this module's calls in flight and throws the INTERNAL error, which
        // unwinds this call's frames (as `wasm_bindgen::throw_val` does: no destructors run,
        // nothing of this instance is used again), so every entry, constructors included,
        // ends in it.
        wasm_bindgen::handler::schedule_reinit();
        interop::host::notify_trap(MODULE, &info.to_string());
    }));
}
