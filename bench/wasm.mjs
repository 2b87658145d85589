#!/usr/bin/env node
// The wasm module: size raw and gzip -9, WebAssembly.compile and instantiation time
// (median of 15 after a warm-up), and the time to `import("toolctx")` in a fresh Node
// process (median of 7), against a fresh process that imports nothing.
//   node bench/wasm.mjs          (after `make pkg`)

import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { gzipSync } from "node:zlib";

const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const pkgDir = dirname(createRequire(import.meta.url).resolve("toolctx/package.json"));

/** The imports the module asks for, each a function that must never be called here. */
function stubImports(module) {
  const imports = {};
  for (const { module: from, name, kind } of WebAssembly.Module.imports(module)) {
    if (kind !== "function") throw new Error(`unexpected ${kind} import ${from}.${name}`);
    imports[from] ??= {};
    imports[from][name] = () => {
      throw new Error(`${from}.${name} called during instantiation`);
    };
  }
  return imports;
}

/** Milliseconds from process start to the end of `code`, measured inside a fresh node. */
function freshProcessMs(code) {
  const script = `${code}; process.stdout.write(String(performance.now()))`;
  const cwd = new URL("..", import.meta.url);
  return Number(execFileSync(process.execPath, ["--input-type=module", "-e", script], { cwd, encoding: "utf8" }));
}

export async function benchWasm({ runs = 15, processes = 7 } = {}) {
  const bytes = readFileSync(join(pkgDir, "toolctx_core_bg.wasm"));
  const gzip = gzipSync(bytes, { level: 9 }).length;

  const compile = [];
  const instantiate = [];
  let module = await WebAssembly.compile(bytes);
  const imports = stubImports(module);
  for (let i = -3; i < runs; i++) {
    let t0 = performance.now();
    module = await WebAssembly.compile(bytes);
    const c = performance.now() - t0;
    t0 = performance.now();
    await WebAssembly.instantiate(module, imports);
    const n = performance.now() - t0;
    if (i >= 0) compile.push(c), instantiate.push(n);
  }

  const bare = [];
  const imported = [];
  for (let i = -1; i < processes; i++) {
    const b = freshProcessMs("");
    const t = freshProcessMs('await import("toolctx")');
    if (i >= 0) bare.push(b), imported.push(t);
  }
  const importMs = median(imported.map((t, i) => t - bare[i]));

  return {
    "wasm raw (KB)": +(bytes.length / 1024).toFixed(1),
    "wasm gzip -9 (KB)": +(gzip / 1024).toFixed(1),
    "WebAssembly.compile (ms)": +median(compile).toFixed(2),
    "instantiate (ms)": +median(instantiate).toFixed(3),
    'import("toolctx"), fresh node (ms)': +importMs.toFixed(1),
  };
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const row = await benchWasm();
  console.log("The wasm module (pkg/toolctx_core_bg.wasm); compile/instantiate median of 15, import median of 7 fresh processes");
  console.table({ [`node ${process.version}`]: row });
}
