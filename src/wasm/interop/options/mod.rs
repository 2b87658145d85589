//! The options objects of `ContextManager` (`manager.rs`) and `ConversationStore`
//! (`conversation.rs`), read and checked: each option's type and range (`INVALID_ARGUMENT`
//! when wrong), the storage made from the given one or the runtime's default, and the
//! callbacks wrapped for the core.

use std::rc::Rc;

use wasm_bindgen::prelude::*;

use super::args::opt_function;
use crate::error::Result;
use crate::store::Clock;

#[cfg(feature = "conversation")]
mod conversation;
#[cfg(feature = "core")]
mod manager;

#[cfg(feature = "conversation")]
pub use conversation::ConversationOptions;
#[cfg(feature = "core")]
pub use manager::ManagerOptions;

/// The `clock` option: a function returning milliseconds since the epoch (default
/// `Date.now()`).
pub(crate) fn clock(options: &JsValue) -> Result<Clock> {
    Ok(match opt_function(options, "clock")? {
        Some(f) => Rc::new(move || f.call0(&JsValue::UNDEFINED).ok().and_then(|v| v.as_f64()).unwrap_or(0.0) as i64),
        None => Rc::new(crate::platform::now_ms),
    })
}
