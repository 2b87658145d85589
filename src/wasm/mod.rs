//! Everything wasm-bindgen: the exported `ContextManager`, host storage (`JsStorage`),
//! typed JavaScript errors, host defaults, and the TypeScript types of the boundary.

mod body;
mod conversation;
mod errors;
mod host;
mod manager;
mod storage;
mod tasks;
mod types;
mod window;

#[cfg(test)]
mod tests;

use wasm_bindgen::prelude::*;

#[wasm_bindgen(start)]
fn start() {
    std::panic::set_hook(Box::new(|info| {
        console_error_panic_hook::hook(info);
        // The trap that follows leaves the instance unusable: the next call into the
        // module gets a fresh one, and the JS glue fails the calls in flight as INTERNAL.
        wasm_bindgen::handler::schedule_reinit();
        host::notify_trap(&info.to_string());
    }));
}
