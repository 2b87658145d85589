#!/usr/bin/env node
// Where `import("toolctx")` → ready goes in Node: fresh processes, interleaved, medians of
// wall time and CPU time (process.cpuUsage: every thread; on a machine shared with other
// jobs the CPU time is the steadier figure):
// - import: `await import("toolctx")`, as bench/wasm.mjs times it;
// - baseline: `await import("node:path")`, what any dynamic import costs in a fresh node;
// - compile: `new WebAssembly.Module` of the core's bytes, the first compile in the
//   process (a second compile of the same bytes hits V8's cache, as in bench/wasm.mjs);
// - the package's files that the import loads (NODE_DEBUG=esm), and the node: built-ins.
//   node bench/startup.mjs [runs] [dir]   (after `make pkg`; default 15 runs; `dir`: a built
//                                          package other than pkg/, to compare, e.g. a copy of an older pkg/)

import { execFileSync, spawnSync } from "node:child_process";
import { createRequire } from "node:module";
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
const scripts = {
  import: timed("", `await import(${entry});`),
  baseline: timed("", 'await import("node:path");'),
  compile: timed(`import { readFileSync } from "node:fs"; const bytes = readFileSync(${JSON.stringify(wasm)});`, "new WebAssembly.Module(bytes);"),
};
const node = (script, env) => execFileSync(process.execPath, ["--input-type=module", "-e", script], { cwd, encoding: "utf8", env: { ...process.env, ...env } });
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
