#!/usr/bin/env node
// The wasm modules: every pkg/*.wasm, raw and gzip -9, WebAssembly.compile and
// instantiation time (median of 15 after a warm-up), and which of them
// `import { ContextManager } from "toolctx"` loads in Node (a fresh process that notes the
// bytes of every module compiled, then saves one record). Then the time from import to
// ready: `performance.now()` around `await import("toolctx")` inside a fresh Node process
// (median of 15), and for reference the same plus a first saveContext (memory storage).
//   node bench/wasm.mjs          (after `make pkg`)

import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { gzipSync } from "node:zlib";

const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const pkgDir = dirname(createRequire(import.meta.url).resolve("toolctx/package.json"));
const sha256 = (bytes) => createHash("sha256").update(bytes).digest("hex");

/** The imports a module asks for, each a function that must never be called here; null if it asks for more than functions. */
function stubImports(module) {
  const imports = {};
  for (const { module: from, name, kind } of WebAssembly.Module.imports(module)) {
    if (kind !== "function") return null;
    imports[from] ??= {};
    imports[from][name] = () => {
      throw new Error(`${from}.${name} called during instantiation`);
    };
  }
  return imports;
}

/** Runs an ES module `script` in a fresh node in the repository (so "toolctx" resolves) and returns its stdout. */
function freshNode(script) {
  const cwd = new URL("..", import.meta.url);
  return execFileSync(process.execPath, ["--input-type=module", "-e", script], { cwd, encoding: "utf8" });
}

// Notes the SHA-256 of the bytes of every module compiled (whichever WebAssembly entry
// point the package uses), imports toolctx, saves one record, and prints the hashes.
const LOADED_PROBE = `
import { createHash } from "node:crypto";
const seen = [];
const note = (source) => {
  const bytes = ArrayBuffer.isView(source) ? new Uint8Array(source.buffer, source.byteOffset, source.byteLength)
    : source instanceof ArrayBuffer ? new Uint8Array(source) : null;
  if (bytes) seen.push(createHash("sha256").update(bytes).digest("hex"));
};
const { Module, compile, instantiate } = WebAssembly;
function NotingModule(source, options) {
  note(source);
  return new Module(source, options);
}
NotingModule.prototype = Module.prototype;
Object.assign(NotingModule, { imports: Module.imports, exports: Module.exports, customSections: Module.customSections });
WebAssembly.Module = NotingModule;
WebAssembly.compile = (source, ...rest) => (note(source), compile(source, ...rest));
WebAssembly.instantiate = (source, ...rest) => (note(source), instantiate(source, ...rest));
const { ContextManager, memoryStorage } = await import("toolctx");
await new ContextManager({ contextDir: "/probe", fileSystem: memoryStorage() }).saveContext("probe", { i: 1 }, { ok: true });
process.stdout.write(JSON.stringify(seen));
`;

const IMPORT_MS = `const t0 = performance.now(); await import("toolctx"); process.stdout.write(String(performance.now() - t0));`;
const IMPORT_SAVE_MS = `const t0 = performance.now(); const { ContextManager, memoryStorage } = await import("toolctx");
await new ContextManager({ contextDir: "/probe", fileSystem: memoryStorage() }).saveContext("probe", { i: 1 }, { ok: true });
process.stdout.write(String(performance.now() - t0));`;

/**
 * @returns {Promise<{modules: {file: string, raw: number, gzip: number, compileMs: number, instantiateMs: number | null, loaded: boolean}[],
 *   unidentified: number, importMs: number, importSaveMs: number}>} sizes in bytes
 */
export async function benchWasm({ runs = 15, processes = 15 } = {}) {
  const loaded = JSON.parse(freshNode(LOADED_PROBE));
  const modules = [];
  for (const file of readdirSync(pkgDir).filter((f) => f.endsWith(".wasm")).sort()) {
    const bytes = readFileSync(join(pkgDir, file));
    const compile = [];
    const instantiate = [];
    let module = await WebAssembly.compile(bytes);
    const imports = stubImports(module);
    for (let i = -3; i < runs; i++) {
      let t0 = performance.now();
      module = await WebAssembly.compile(bytes);
      const c = performance.now() - t0;
      t0 = performance.now();
      if (imports) await WebAssembly.instantiate(module, imports);
      const n = performance.now() - t0;
      if (i >= 0) compile.push(c), instantiate.push(n);
    }
    modules.push({
      file,
      raw: bytes.length,
      gzip: gzipSync(bytes, { level: 9 }).length,
      compileMs: +median(compile).toFixed(2),
      instantiateMs: imports ? +median(instantiate).toFixed(3) : null,
      loaded: loaded.includes(sha256(bytes)),
    });
  }
  const known = new Set(modules.filter((m) => m.loaded).map((m) => m.file));
  const importMs = [];
  const importSaveMs = [];
  for (let i = -1; i < processes; i++) {
    const a = Number(freshNode(IMPORT_MS));
    const b = Number(freshNode(IMPORT_SAVE_MS));
    if (i >= 0) importMs.push(a), importSaveMs.push(b);
  }
  return {
    modules,
    // Modules compiled from bytes that are no pkg/*.wasm file (none expected).
    unidentified: new Set(loaded).size - known.size,
    importMs: +median(importMs).toFixed(1),
    importSaveMs: +median(importSaveMs).toFixed(1),
  };
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const wasm = await benchWasm();
  console.log("The wasm modules (pkg/*.wasm): bytes; compile/instantiate median of 15; loaded by import { ContextManager } from \"toolctx\"");
  console.table(Object.fromEntries(wasm.modules.map(({ file, ...m }) => [file, m])));
  console.log(`import("toolctx") → ready in a fresh node: ${wasm.importMs} ms; with a first saveContext: ${wasm.importSaveMs} ms (medians of 15)`);
}
