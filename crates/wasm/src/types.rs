//! The TypeScript types of the boundary: the host interface, records, pointers,
//! options, and the `ContextManager` class (its methods take `JsValue`s, so the
//! class is declared here rather than inferred as `any`).

use wasm_bindgen::prelude::*;

#[wasm_bindgen(typescript_custom_section)]
const TYPES: &'static str = include_str!("types.d.ts");
