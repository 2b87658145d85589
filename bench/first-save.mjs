#!/usr/bin/env node
// Where Node's import → first save goes, phase by phase: the figure (`import` of
// index.node.js, a memoryStorage manager, one saveContext) in fresh processes, interleaved
// when several packages are given, medians per phase. No profiler: each package is copied
// to a scratch folder and its bundled index.node.js gets a call to `globalThis.__mark(name)`
// at each phase's end (a performance.now() each; the copy is otherwise the package). The
// phases:
// - module graph: from `import()` to the bundle's first statement (Node's loader resolves,
//   reads and compiles index.node.js, adapters/memory.js and clear-tool-uses.js);
// - package evaluated: the bundle's top level up to the entry's own code (the glue's and
//   the package's modules' definitions);
// - core bytes read: readFileSync of toolctx_core_bg.wasm and the glue's import object;
// - core compiled: `new WebAssembly.Module` (V8 compiles the functions lazily, at their
//   first call: their compile is counted in the phases that call them);
// - core instantiated: `new WebAssembly.Instance` and the module's start function;
// - import resolved: the rest of the entry (useRuntime) and the import's settling;
// - memory adapter: `import("toolctx/memory")` (loaded already: a cache hit) and memoryStorage();
// - new ContextManager;
// - save, begin: saveContext until the core's first step, its plan's write (a record
//   name's random characters come from the host's Math.random, an input of the core's);
// - save, write: the driver's loop to the host's write (memory storage);
// - save, done: the write, the plan's next step (the core indexes the record and adds
//   its pointer) and the save's Promise settling.
//
//   node bench/first-save.mjs [runs] [dir ...]   (default: 15 runs of pkg/; each `dir` a built
//                                                 package, e.g. a copy of an older pkg/)
// The same figure without markers: bench/startup.mjs ("ready + save", the file system).

import { execFileSync } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const [runsArg, ...dirArgs] = process.argv.slice(2);
const runs = Number(runsArg ?? 15);
const dirs = dirArgs.length ? dirArgs.map((d) => resolve(d)) : [resolve(new URL("../pkg", import.meta.url).pathname)];
const scratch = mkdtempSync(join(tmpdir(), "toolctx-first-save-"));
process.on("exit", () => rmSync(scratch, { recursive: true, force: true }));

const mark = (name) => `globalThis.__mark?.(${JSON.stringify(name)});`;
/** `text` with `mark` calls at the phases' ends; throws if the bundle no longer has an anchor. */
function instrument(text) {
  const edits = [
    [/^(\/\/ Built by .*\n)/, `$1${mark("module graph")}\n`],
    [/^\/\/ pkg\/index\.node\.js\n/m, `${mark("package evaluated")}\n`],
    [/( *)if \(!\(module instanceof WebAssembly\.Module\)\) \{\n *module = new WebAssembly\.Module\(module\);\n *\}\n/,
      (m, indent) => `${indent}${mark("core bytes read")}\n${m}${indent}${mark("core compiled")}\n`],
    [/return __wbg_finalize_init\(instance, module\);/,
      `{ const ready = __wbg_finalize_init(instance, module); ${mark("core instantiated")} return ready; }`],
    [/(step = this\.#begin\(\{ kind: WORK\.SAVE[^;]*;)/, `$1 ${mark("save, begin")}`],
    [/(case OP\.WRITE:\n)/, `$1 ${mark("save, write")}\n`],
  ];
  for (const [from, to] of edits) {
    if (!from.test(text)) throw new Error(`bench/first-save.mjs: index.node.js has no ${from}; update the bench`);
    text = text.replace(from, to);
  }
  return text;
}

// One process, run as a file (like the script: an \`-e\` script's first import()
// costs Node's loader about 4 ms more): the phases in order, each the ms since the previous mark.
const SCRIPT = `
const phases = [];
let last;
globalThis.__mark = (name) => { const now = performance.now(); phases.push([name, now - last]); last = now; };
const [entry, memory] = process.argv.slice(2);
last = performance.now();
const { ContextManager } = await import(entry);
__mark("import resolved");
const { memoryStorage } = await import(memory);
const storage = memoryStorage();
__mark("memory adapter");
const manager = new ContextManager({ fileSystem: storage, contextDir: "/ctx" });
__mark("new ContextManager");
await manager.saveContext("readFile", { path: "a.ts" }, "export const a = 1;");
__mark("save, done");
process.stdout.write(JSON.stringify(phases));
`;

const script = join(scratch, "first-save.mjs");
writeFileSync(script, SCRIPT);
const copies = dirs.map((dir, i) => {
  const copy = join(scratch, String(i));
  cpSync(dir, copy, { recursive: true });
  writeFileSync(join(copy, "index.node.js"), instrument(readFileSync(join(copy, "index.node.js"), "utf8")));
  return copy;
});
const samples = dirs.map(() => []);
const load = [loadavg()[0]];
for (let i = -1; i < runs; i++) {
  copies.forEach((copy, k) => {
    const out = execFileSync(process.execPath, [script, pathToFileURL(join(copy, "index.node.js")).href,
      pathToFileURL(join(copy, "adapters", "memory.js")).href], { encoding: "utf8" });
    if (i >= 0) samples[k].push(JSON.parse(out));
  });
}
load.push(loadavg()[0]);

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const names = samples[0][0].map(([name]) => name);
const sum = (phases, until) => phases.slice(0, until === undefined ? undefined : phases.findIndex(([n]) => n === until) + 1).reduce((a, [, ms]) => a + ms, 0);
const rows = Object.fromEntries(names.map((name) => [name, Object.fromEntries(dirs.map((dir, k) =>
  [dir, +median(samples[k].map((phases) => phases.find(([n]) => n === name)?.[1] ?? 0)).toFixed(2)]))]));
rows["= import → resolved"] = Object.fromEntries(dirs.map((dir, k) => [dir, +median(samples[k].map((p) => sum(p, "import resolved"))).toFixed(2)]));
rows["= import → first save"] = Object.fromEntries(dirs.map((dir, k) => [dir, +median(samples[k].map((p) => sum(p))).toFixed(2)]));
console.log(`node ${process.version}, ${runs} fresh processes per package (interleaved), medians in ms; load average ${load.map((l) => l.toFixed(2)).join(" → ")}`);
console.table(rows);
