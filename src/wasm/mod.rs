//! Everything wasm-bindgen: the exported `ContextManager`, host storage (`JsStorage`),
//! typed JavaScript errors, host defaults, and the TypeScript types of the boundary.

mod errors;
mod host;
mod manager;
mod storage;
mod types;

#[cfg(test)]
mod tests;

use wasm_bindgen::prelude::*;

#[wasm_bindgen(start)]
fn start() {
    console_error_panic_hook::set_once();
}
