// The adapters' byte helpers (pkg-template/adapters/base/bytes.js): byteLength tells the
// UTF-8 length of a string without encoding it (the driver reports each record's size
// with it, crates/core/src/store/load.rs), as TextEncoder would encode it.
import assert from "node:assert/strict";
import test from "node:test";
import { byteLength } from "../../pkg-template/adapters/base/bytes.js";

test("byteLength of a string is its UTF-8 length; of bytes, their length", () => {
  const encoder = new TextEncoder();
  for (const text of ["", "ascii {\"a\":1}", "é ü ß", "€ ✓ 中文 日本語", "🙂 𝄞 a🙂b", "\u007f\u0080\u07ff\u0800\uffff", "\ud7ff\ue000", "\ud800", "a\udc00b", "\udbff\udfff", "\ud83d", "x\ud83d\ud83dy"]) {
    assert.equal(byteLength(text), encoder.encode(text).length, JSON.stringify(text));
  }
  const bytes = encoder.encode("bytes é");
  assert.equal(byteLength(bytes), bytes.length);
  assert.equal(byteLength(bytes.buffer), bytes.length);
  assert.equal(byteLength(bytes.subarray(2)), bytes.length - 2);
});
