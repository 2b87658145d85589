//! A large result's JSON text stays in JavaScript: `saveContext` encodes it once
//! (`TextEncoder`, native) into a `Uint8Array` that the core holds by handle. The core
//! reads what it needs: the length, the first `contentBytes` bytes for the index, and a
//! hash of the whole (of that copy when it is the whole text, as with the default
//! `contentBytes` of 8 MiB; else read in chunks into one small buffer).
//! The save's plan writes the record as the header the core encodes, the body, then `}`
//! (a `write` op with `parts`, the body found here by handle: [`held`]).

use std::cell::{Cell, RefCell};
use std::collections::HashMap;

use js_sys::{JsString, Uint8Array};
use wasm_bindgen::prelude::*;

use toolctx_core::error::{Error, ErrorKind, Result};
use toolctx_core::store::ResultHasher;

#[wasm_bindgen]
extern "C" {
    type TextEncoder;
    #[wasm_bindgen(constructor)]
    fn new() -> TextEncoder;
    #[wasm_bindgen(method, js_name = encode)]
    fn encode_bytes(this: &TextEncoder, text: &JsString) -> Uint8Array;
    #[wasm_bindgen(method, js_name = encode)]
    fn encode_into_wasm(this: &TextEncoder, text: &JsString) -> Vec<u8>;
}

/// `text` in wasm as UTF-8: `TextEncoder` (native) and one copy, where wasm-bindgen's own
/// string passing converts a long text character by character.
pub fn utf8(text: &JsString) -> Vec<u8> {
    ENCODER.with(|e| e.encode_into_wasm(text))
}

thread_local! {
    static ENCODER: TextEncoder = TextEncoder::new();
    static HELD: RefCell<HashMap<u32, Uint8Array>> = RefCell::new(HashMap::new());
    static NEXT: Cell<u32> = const { Cell::new(0) };
}

/// Bytes hashed per copy into wasm memory.
const CHUNK: u32 = 64 * 1024;

/// A result's UTF-8 bytes, held in JavaScript while its save runs.
pub struct Body {
    handle: u32,
    bytes: Uint8Array,
    /// The first `content_bytes` bytes, cut at a character boundary.
    pub prefix: String,
    /// [`toolctx_core::store::result_hash`] of the whole text.
    pub hash: u64,
    /// The text holds `\u` and `d`: perhaps an escaped lone surrogate, which
    /// `JSON.stringify` writes so (a pair it writes as it is), for the exact check.
    pub escapes_surrogate: bool,
}

impl Body {
    /// Encodes `json` (a `JSON.stringify` result: always well-formed UTF-16) and reads
    /// its first `content_bytes` bytes.
    pub fn new(json: &JsString, content_bytes: usize) -> Result<Body> {
        let bytes = ENCODER.with(|e| e.encode_bytes(json));
        let len = bytes.length();
        let prefix = bytes.subarray(0, len.min(content_bytes.min(u32::MAX as usize) as u32)).to_vec();
        // The whole text in wasm already (the usual case: `contentBytes` is 8 MiB): hashed
        // and scanned there, else read again in chunks.
        let (hash, escapes_surrogate) = match prefix.len() == len as usize {
            true => scan_all(&prefix),
            false => scan(&bytes),
        };
        let prefix = match String::from_utf8(prefix) {
            Ok(prefix) => prefix,
            Err(e) => {
                // The cut fell inside a character: keep the whole ones.
                let valid = e.utf8_error().valid_up_to();
                let mut prefix = e.into_bytes();
                prefix.truncate(valid);
                String::from_utf8(prefix)
                    .map_err(|_| Error::new(ErrorKind::Internal, "TextEncoder produced invalid UTF-8"))?
            }
        };
        let handle = NEXT.with(|n| {
            n.set(n.get().wrapping_add(1));
            n.get()
        });
        HELD.with(|h| h.borrow_mut().insert(handle, bytes.clone()));
        Ok(Body { handle, bytes, prefix, hash, escapes_surrogate })
    }

    /// The handle the storage knows it by.
    pub fn handle(&self) -> u32 {
        self.handle
    }

    /// Its length in bytes.
    pub fn len(&self) -> usize {
        self.bytes.length() as usize
    }

    /// The text, copied into wasm (for a record held in memory).
    pub fn text(&self) -> Result<String> {
        String::from_utf8(self.bytes.to_vec())
            .map_err(|_| Error::new(ErrorKind::Internal, "TextEncoder produced invalid UTF-8"))
    }
}

/// The hash of `bytes` and whether they hold a surrogate's escape (`\\ud…`), in one pass:
/// read into wasm in chunks into one small buffer, never copied whole.
fn scan(bytes: &Uint8Array) -> (u64, bool) {
    let len = bytes.length();
    let mut hasher = ResultHasher::default();
    let mut escape = false;
    let mut buf = vec![0u8; CHUNK.min(len) as usize];
    // The last two bytes of the chunk before, for an escape across two chunks.
    let mut carry: Vec<u8> = Vec::with_capacity(4);
    let mut at = 0;
    while at < len {
        let end = (at + CHUNK).min(len);
        let part = &mut buf[..(end - at) as usize];
        bytes.subarray(at, end).copy_to(part);
        hasher.update(part);
        if !escape {
            carry.extend_from_slice(&part[..part.len().min(2)]);
            escape = surrogate_escape(&carry) || surrogate_escape(part);
            carry.clear();
            carry.extend_from_slice(&part[part.len().saturating_sub(2)..]);
        }
        at = end;
    }
    (hasher.finish(), escape)
}

/// [`scan`] of bytes in wasm memory.
fn scan_all(bytes: &[u8]) -> (u64, bool) {
    let mut hasher = ResultHasher::default();
    hasher.update(bytes);
    (hasher.finish(), surrogate_escape(bytes))
}

/// Whether `bytes` hold `\u` then `d` or `D` (the start of a surrogate's escape).
fn surrogate_escape(bytes: &[u8]) -> bool {
    let mut from = 0;
    while let Some(i) = bytes[from..].iter().position(|&b| b == b'\\') {
        let at = from + i;
        if bytes.get(at + 1) == Some(&b'u') && bytes.get(at + 2).is_some_and(|b| (b | 0x20) == b'd') {
            return true;
        }
        from = at + 1;
    }
    false
}

impl Drop for Body {
    fn drop(&mut self) {
        let _ = HELD.try_with(|h| h.borrow_mut().remove(&self.handle));
    }
}

/// The bytes held under `handle`, if its save is still running.
pub fn held(handle: u32) -> Option<Uint8Array> {
    HELD.with(|h| h.borrow().get(&handle).cloned())
}
