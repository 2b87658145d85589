#!/usr/bin/env node
// What the wasm boundary costs the calls that cross it most (issue 34: a typed boundary),
// one package or several side by side in the same run: not a test, figures only.
//   1. loadContexts of 5,000 records in one call: records in storage (memoryStorage,
//      persistThreshold 0: a `readRecord` op each) and records held in memory (a
//      `keepRecord` op each); median of 10 calls after a warm-up.
//   2. selectRelevantContexts over 20,000 pointers: the array getAllPointers handed out
//      (its pointers cross by slot) and a plain copy of it ([...all]: the core reads each
//      element's filepath); median of 10 calls.
// Each package runs in a fresh child process, alternated, so they share the machine's
// state; the baseline is the first package given.
//   node bench/boundary.mjs [dir ...]   (default: pkg/; each `dir` a built package, e.g. a
//                                        copy of an older pkg/)
import { spawnSync } from "node:child_process";
import { resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const LOADED = 5_000;
const LISTED = 20_000;
const RUNS = 10;

const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
async function timed(fn) {
  await fn(); // warm-up: V8 compiles the wasm functions at their first call
  const times = [];
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    await fn();
    times.push(performance.now() - t0);
  }
  return median(times);
}

/** The figures of the package in `dir`, in this process. */
async function measure(dir) {
  const { ContextManager } = await import(pathToFileURL(`${dir}/index.node.js`).href);
  const { memoryStorage } = await import(pathToFileURL(`${dir}/adapters/memory.js`).href);
  const out = {};
  for (const [name, persistThreshold] of [["load, read (ms)", 0], ["load, held (ms)", 1 << 20]]) {
    const m = await ContextManager.open({ contextDir: "/ctx", storage: memoryStorage(), persistThreshold, memoryBudget: 1 << 28 });
    for (let i = 0; i < LOADED; i++) await m.saveContext("readFile", { path: `src/f${i}.ts` }, `export const v${i} = ${i};`);
    const paths = m.getAllPointers().map((p) => p.filepath);
    out[name] = await timed(() => m.loadContexts(paths));
  }
  const m = await ContextManager.open({ contextDir: "/ctx", storage: memoryStorage(), persistThreshold: 1 << 20, memoryBudget: 1 << 28 });
  for (let i = 0; i < LISTED; i++) {
    await m.saveContext("readFile", { path: `src/mod${i}/file${i % 97}.ts` }, `export const v${i} = ${i}; // auth login ${i % 13}`);
  }
  const listed = m.getAllPointers();
  const copy = [...listed];
  out["select, listed (ms)"] = await timed(() => m.selectRelevantContexts("auth login file", listed));
  out["select, plain copy (ms)"] = await timed(() => m.selectRelevantContexts("auth login file", copy));
  return out;
}

const child = process.argv.indexOf("--child");
if (child >= 0) {
  console.log(JSON.stringify(await measure(process.argv[child + 1])));
} else {
  const root = fileURLToPath(new URL("..", import.meta.url));
  const dirs = process.argv.slice(2).length > 0 ? process.argv.slice(2).map((d) => resolve(d)) : [resolve(root, "pkg")];
  const rounds = dirs.map(() => []);
  for (let round = 0; round < 3; round++) {
    dirs.forEach((dir, i) => {
      const run = spawnSync(process.execPath, [fileURLToPath(import.meta.url), "--child", dir], { encoding: "utf8" });
      if (run.status !== 0) throw new Error(`bench/boundary.mjs: ${dir} failed:\n${run.stderr}`);
      rounds[i].push(JSON.parse(run.stdout));
    });
  }
  const table = {};
  dirs.forEach((dir, i) => {
    const row = {};
    for (const key of Object.keys(rounds[i][0])) row[key] = Number(median(rounds[i].map((r) => r[key])).toFixed(2));
    table[dir] = row;
  });
  console.log(`Boundary costs: ${LOADED.toLocaleString()} records loaded in one call, selection over ${LISTED.toLocaleString()} pointers; medians of ${RUNS} calls, then of 3 fresh processes a package.`);
  console.table(table);
}
