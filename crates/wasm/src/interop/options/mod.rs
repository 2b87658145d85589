//! The options objects of `ContextManager` (`manager.rs`), `ConversationStore`
//! (`conversation.rs`) and `ContextHistory` (`history.rs`), read and checked: each option's
//! type and range (`INVALID_ARGUMENT` when wrong), the storage made from the given one or
//! the runtime's default, and the callbacks wrapped for the core.

#[cfg(any(feature = "core", feature = "conversation"))]
use std::rc::Rc;

use wasm_bindgen::prelude::*;

use super::args::get;
#[cfg(any(feature = "core", feature = "conversation"))]
use super::args::opt_function;
use super::host::resolve_context_dir;
use toolctx_core::error::Result;
#[cfg(any(feature = "core", feature = "conversation"))]
use toolctx_core::inputs::Clock;

#[cfg(feature = "conversation")]
mod conversation;
#[cfg(feature = "window")]
pub mod history;
#[cfg(feature = "core")]
mod manager;

#[cfg(feature = "conversation")]
pub use conversation::ConversationOptions;
#[cfg(feature = "window")]
pub use history::HistoryOptions;
#[cfg(feature = "core")]
pub use manager::ManagerOptions;

/// The storage option: `name`, else `alias` (`ContextManager`'s is `fileSystem`, the
/// seed's name, with `storage` its alias; the other classes', the other way round).
fn storage_option(options: &JsValue, name: &str, alias: &str) -> JsValue {
    match get(options, name) {
        v if v.is_undefined() => get(options, alias),
        v => v,
    }
}

/// The store's folder: `given`, else the runtime's default for `storage`; and that folder
/// as paths normalise it (the root the storage is confined to).
fn folder(given: Option<String>, storage: &JsValue) -> Result<(String, String)> {
    let dir = resolve_context_dir(given, storage)?;
    let root = toolctx_core::paths::normalize(&dir).unwrap_or_else(|| dir.clone());
    Ok((dir, root))
}

/// The `clock` option: a function returning milliseconds since the epoch (default
/// `Date.now()`).
#[cfg(any(feature = "core", feature = "conversation"))]
fn clock(options: &JsValue) -> Result<Clock> {
    Ok(match opt_function(options, "clock")? {
        Some(f) => Rc::new(move || f.call0(&JsValue::UNDEFINED).ok().and_then(|v| v.as_f64()).unwrap_or(0.0) as i64),
        None => Rc::new(|| js_sys::Date::now() as i64),
    })
}

/// The default random source: the host's `Math.random()`, as the TypeScript original named
/// its records. Names need to differ, not to be secret (a record's path shows them; a taken
/// name is drawn again), and in Node the first `crypto.getRandomValues` loads WebCrypto,
/// which cost about 2.4 ms of the first save (`bench/README.md`, start-up).
#[cfg(feature = "core")]
fn host_random() -> Result<f64> {
    Ok(js_sys::Math::random())
}

/// `n` characters of `[a-z0-9]` from [`host_random`]'s source.
#[cfg(feature = "conversation")]
fn host_random_chars(n: usize) -> Result<String> {
    Ok(toolctx_core::naming::random_chars(n, || toolctx_core::naming::unit_byte(js_sys::Math::random())))
}
