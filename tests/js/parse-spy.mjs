// A JSON.parse run inside a wasm call can crash Node 20's V8 (see `pointers` in
// crates/wasm/src/manager/select.rs), so results cross as JSON text and are parsed once the call has
// returned. `parsedInsideWasm(fn)` runs `fn` with JSON.parse watched and resolves to the
// start of every text parsed while a wasm frame was on the stack.
export async function parsedInsideWasm(fn) {
  const inWasm = [];
  const parse = JSON.parse;
  JSON.parse = function spy(text, reviver) {
    if (new Error().stack.includes("wasm://")) inWasm.push(String(text).slice(0, 60));
    return parse.call(this, text, reviver);
  };
  try {
    await fn();
  } finally {
    JSON.parse = parse;
  }
  return inWasm;
}
