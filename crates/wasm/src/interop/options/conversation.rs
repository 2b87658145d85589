//! The options of a `ConversationStore`.

use std::rc::Rc;

use js_sys::Function;
use wasm_bindgen::prelude::*;

use super::super::args::{debug_note, debug_sink, get, opt_function, opt_size, opt_string};
use super::super::errors::with_cause;
use super::super::host::storage_from;
use super::super::storage::JsStorage;
use super::{clock, folder, host_random_chars, storage_option};
use toolctx_core::conversation::{Backoff, IdRandom, StoreOptions};
use toolctx_core::error::{Error, ErrorKind, Result};

/// `random`: `(n) => string` of `[a-z0-9]`, or `() => number` in `[0, 1)` like the
/// `ContextManager` option.
fn id_random(f: Function) -> IdRandom {
    Rc::new(move |n: usize| {
        let first = f
            .call1(&JsValue::UNDEFINED, &(n as f64).into())
            .map_err(|e| with_cause(ErrorKind::InvalidArgument, "random threw", e))?;
        if let Some(s) = first.as_string() {
            return Ok(s.chars().take(n).collect());
        }
        let mut next = first.as_f64();
        let out = toolctx_core::naming::random_chars(n, || {
            let x = next.take().or_else(|| f.call0(&JsValue::UNDEFINED).ok().and_then(|v| v.as_f64())).unwrap_or(0.0);
            (x.clamp(0.0, 0.999_999) * 252.0) as u8
        });
        Ok(out)
    })
}

/// The options of a `ConversationStore`, checked: its settings and storages.
pub struct ConversationOptions {
    /// The store's settings.
    pub core: StoreOptions,
    /// Its storage.
    pub local: JsStorage,
    /// The storage it syncs to, if any.
    pub remote: Option<JsStorage>,
}

impl ConversationOptions {
    /// Reads `options` (`undefined` for none).
    pub fn read(options: &JsValue) -> Result<ConversationOptions> {
        if !(options.is_undefined() || options.is_null() || options.is_object()) {
            return Err(Error::invalid("options must be an object"));
        }
        let on_debug = opt_function(options, "onDebug")?;
        let sink = debug_sink(&on_debug);
        let note = debug_note(&sink);
        let given = storage_option(options, "storage", "fileSystem");
        let (dir, root) = folder(opt_string(options, "contextDir")?, &given)?;
        let local = storage_from(given, &root, &note)?;
        let remote_dir = opt_string(options, "remoteDir")?;
        let remote_given = get(options, "remote");
        let remote = if remote_given.is_undefined() || remote_given.is_null() {
            None
        } else {
            Some(storage_from(remote_given, remote_dir.as_deref().unwrap_or(&root), &note)?)
        };
        let clock = clock(options)?;
        let random = match opt_function(options, "random")? {
            Some(f) => id_random(f),
            None => Rc::new(host_random_chars),
        };
        let mut core = StoreOptions::with(dir, clock, random);
        core.remote_dir = remote_dir;
        core.on_debug = sink.clone();
        let retry = get(options, "syncRetry");
        let defaults = Backoff::default();
        core.retry = Backoff {
            base_ms: opt_size(&retry, "baseMs")?.map_or(defaults.base_ms, |n| n as u64),
            max_ms: opt_size(&retry, "maxMs")?.map_or(defaults.max_ms, |n| n as u64),
        };
        Ok(ConversationOptions { core, local, remote })
    }
}
