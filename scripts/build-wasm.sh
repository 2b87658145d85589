#!/usr/bin/env bash
# Builds the package's three wasm modules into pkg/, one per cargo feature of
# crates/wasm (crates/wasm/src/lib.rs):
# toolctx_core (ContextManager), toolctx_conversation (ConversationStore) and toolctx_window
# (the context-window optimiser). Each: cargo build, wasm-bindgen's JS glue (--target web),
# then binaryen's wasm-opt from npm (node_modules/.bin, never the system's).
#   scripts/build-wasm.sh [--keep-names] [module...]
# --keep-names builds into target/wasm-names/ instead, with the function names kept
# through wasm-opt (-g), for `twiggy top` and `twiggy dominators`.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/node_modules/.bin:${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"

out=pkg
names=()
if [ "${1:-}" = "--keep-names" ]; then
  out=target/wasm-names
  names=(-g)
  shift
fi
modules=("$@")
[ ${#modules[@]} -gt 0 ] || modules=(core conversation window)

# The features the module is built for, exactly those of package.json's engines (Node 20+,
# current browsers, Deno, Bun, workerd).
WASM_OPT_FLAGS=(-Oz --converge --strip-producers --strip-target-features --enable-bulk-memory --enable-nontrapping-float-to-int --enable-sign-ext --enable-mutable-globals)
# The start function (crates/wasm/src/lib.rs, `#[wasm_bindgen(start, private)]`) runs through
# `__wbindgen_start`; the export of its own that rustc leaves beside it is called by nothing.
WASM_OPT_FLAGS+=(--remove-exports --pass-arg=remove-exports@start)
built=target/wasm32-unknown-unknown/wasm/toolctx_wasm.wasm

for module in "${modules[@]}"; do
  # The features change which exports are compiled, so cargo relinks on every switch.
  cargo build -p toolctx-wasm --profile wasm --target wasm32-unknown-unknown --no-default-features --features "$module"
  wasm-bindgen --target web --out-dir "$out" --out-name "toolctx_$module" "$built"
  wasm-opt "${WASM_OPT_FLAGS[@]}" "${names[@]}" "$out/toolctx_${module}_bg.wasm" -o "$out/toolctx_${module}_bg.wasm"
done
