//! What the core takes from its platform, as inputs (SPEC §0): the clock, the random
//! source and the debug sink. The core never reads a clock or a random source itself and
//! never prints: a store is given these in its options. The native defaults are in
//! the `toolctx` crate (its `platform` module); the wasm exports hand in the host's (`Date.now()`,
//! `Math.random()`, the `onDebug` option); tests hand in their own.

use std::rc::Rc;

/// Milliseconds since the Unix epoch.
pub type Clock = Rc<dyn Fn() -> i64>;

/// Uniform numbers in `[0, 1)`, like `Math.random`: the platform's
/// (`toolctx::platform::random_unit`), or a caller's source (tests, the `random` option).
pub type Random = Rc<dyn Fn() -> crate::Result<f64>>;

/// A debug message for `onDebug`.
#[derive(Debug, Clone, PartialEq)]
pub struct DebugEvent {
    /// What happened.
    pub message: String,
    /// The path concerned, if any.
    pub path: Option<String>,
}

/// Receiver of debug messages.
pub type DebugSink = Rc<dyn Fn(&DebugEvent)>;

/// Sends `message` (and the path it concerns) to `sink`, if there is one.
pub fn debug(sink: Option<&DebugSink>, message: impl Into<String>, path: Option<&str>) {
    if let Some(sink) = sink {
        sink(&DebugEvent { message: message.into(), path: path.map(str::to_owned) });
    }
}
