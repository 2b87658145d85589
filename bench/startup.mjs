#!/usr/bin/env node
// Where `import("toolctx")` → ready goes in Node: fresh processes, interleaved, medians of
// wall time and CPU time (process.cpuUsage: every thread; on a machine shared with other
// jobs the CPU time is the steadier figure):
// - import: `await import("toolctx")`, as bench/wasm.mjs times it. The core is compiled and
//   instantiated by then (synchronously, so `require("toolctx")` works too): every export
//   is usable when the import resolves, so this is import → ready;
// - ready + save: the same, then `new ContextManager` with the default storage (the file
//   system, in a temporary folder) and a first saveContext, which compiles the wasm
//   functions a save runs (V8 compiles wasm code lazily, at its first call);
// - floor: `await import()` of an empty package (one file, found through node_modules and
//   its package.json exports like toolctx): what Node's module loader costs any package
//   in a fresh node, the part of `import` that is not toolctx's;
// - baseline: `await import("node:path")`, a built-in, which loads no file;
// - compile: `new WebAssembly.Module` of the core's bytes, the first compile in the
//   process (a second compile of the same bytes hits V8's cache, as in bench/wasm.mjs);
// - the package's files that the import loads (NODE_DEBUG=esm), and the node: built-ins.
//   node bench/startup.mjs [runs] [dir]   (after `make pkg`; default 15 runs; `dir`: a built
//                                          package other than pkg/, to compare, e.g. a copy of an older pkg/)

import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const runs = Number(process.argv[2] ?? 15);
const cwd = new URL("..", import.meta.url);
const dir = process.argv[3] ? resolve(process.argv[3]) : dirname(createRequire(import.meta.url).resolve("toolctx/package.json"));
const entry = JSON.stringify(process.argv[3] ? pathToFileURL(join(dir, "index.node.js")).href : "toolctx");
const wasm = join(dir, "toolctx_core_bg.wasm");
const timed = (setup, body) => `${setup}
const c0 = process.cpuUsage(); const t0 = performance.now();
${body}
const wall = performance.now() - t0; const { user, system } = process.cpuUsage(c0);
process.stdout.write(JSON.stringify([wall, (user + system) / 1000]));`;
// The empty package of the floor, and the folder of the saves, in a scratch folder.
const scratch = mkdtempSync(join(tmpdir(), "toolctx-startup-"));
const floor = join(scratch, "node_modules", "floor");
mkdirSync(floor, { recursive: true });
writeFileSync(join(floor, "package.json"), JSON.stringify({ name: "floor", type: "module", exports: { ".": { node: "./index.js", default: "./index.js" } } }));
writeFileSync(join(floor, "index.js"), "export const floor = true;\n");
const saves = JSON.stringify(join(scratch, "context"));
process.on("exit", () => rmSync(scratch, { recursive: true, force: true }));
const scripts = {
  import: timed("", `await import(${entry});`),
  "ready + save": timed("", `const { ContextManager } = await import(${entry});
const manager = new ContextManager({ contextDir: ${saves}, persistThreshold: 0 });
await manager.saveContext("readFile", { path: "a.ts" }, "first");`),
  floor: timed("", 'await import("floor");'),
  baseline: timed("", 'await import("node:path");'),
  compile: timed(`import { readFileSync } from "node:fs"; const bytes = readFileSync(${JSON.stringify(wasm)});`, "new WebAssembly.Module(bytes);"),
};
const node = (script) => execFileSync(process.execPath, ["--input-type=module", "-e", script], {
  cwd: script === scripts.floor ? scratch : cwd, encoding: "utf8",
});
const samples = Object.fromEntries(Object.keys(scripts).map((k) => [k, []]));
for (let i = -1; i < runs; i++) {
  for (const [name, script] of Object.entries(scripts)) {
    const sample = JSON.parse(node(script));
    if (i >= 0) samples[name].push(sample);
  }
}
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
console.table(Object.fromEntries(Object.entries(samples).map(([name, xs]) => [name, {
  "wall ms": +median(xs.map((x) => x[0])).toFixed(1),
  "cpu ms": +median(xs.map((x) => x[1])).toFixed(1),
}])));
const { stderr } = spawnSync(process.execPath, ["--input-type=module", "-e", `await import(${entry});`], {
  cwd, encoding: "utf8", env: { ...process.env, NODE_DEBUG: "esm" },
});
const loaded = [...stderr.matchAll(/Storing (\S+) .*in ModuleLoadMap/g)].map((m) => m[1]).filter((u) => !u.includes("[eval"));
const files = loaded.filter((u) => u.startsWith("file:")).map((u) => u.slice(pathToFileURL(dir).href.length + 1));
const builtins = loaded.filter((u) => u.startsWith("node:"));
console.log(`import(${entry}) loads ${files.length} files of the package (${files.join(", ")}) and ${builtins.join(", ")}`);
