#!/usr/bin/env node
// Pointer lists at scale (issue 12): not a test, figures only.
//   1. getAllPointers at 100,000 pointers, every element touched (filepath, args, taskId):
//      the first call, a repeated call, and a call after one more save.
//   2. Memory per pointer at 100,000 small records (JS heap + external, which holds the
//      wasm memory; after GC), each scenario in a fresh child process, and what a first
//      getAllPointers adds (the JS mirror of the pointers):
//      - "pointers": persistThreshold 0 into a storage that keeps nothing, so only the
//        pointer table, the index and the bookkeeping are counted;
//      - "default": the bench/select.mjs scenario (memoryStorage, records held in memory).
//   3. The seed flow, getPointersForQuery -> selectRelevantContexts -> loadContexts of the
//      top 10, at 1k / 10k / 100k records on disk (node fs, persistThreshold 0; 20 query
//      ids, so a query lists 5% of the pointers), against the plain-JS seed of
//      bench/seed.mjs on the same corpus in the same run; median over 24 queries x 3
//      rounds after a warm-up pass, per stage (list, select, load) and for the whole flow;
//      and toolctx's fast path for it: selectRelevant(query, {queryId, limit: 10}) -> loadContexts.
//   node --expose-gc bench/pointers.mjs [--json] [--sizes 1000,10000]
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { ContextManager, memoryStorage } from "toolctx";
import { nodeStorage } from "toolctx/node";
import { SeedContextManager } from "./seed.mjs";
import { corpus } from "./select.mjs";

const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const arg = (name) => {
  const i = process.argv.indexOf(name);
  return i < 0 ? undefined : process.argv[i + 1];
};

function touch(pointers) {
  let n = 0;
  for (const p of pointers) n += p.filepath.length + Object.keys(p.args).length + (p.taskId ?? 0);
  return n;
}

async function fill(m, calls, queryIds = 20) {
  const BATCH = 64;
  for (let i = 0; i < calls.length; i += BATCH) {
    const batch = [];
    for (let j = i; j < Math.min(calls.length, i + BATCH); j++) {
      const [tool, args] = calls[j];
      batch.push(m.saveContext(tool, args, { ok: true, n: j }, j % 10, `q${j % queryIds}`));
    }
    await Promise.all(batch);
  }
}

// ---- 1. getAllPointers ------------------------------------------------------------------
async function getAll(n) {
  const { calls } = corpus(n);
  const m = new ContextManager({ contextDir: "/bench", fileSystem: memoryStorage(), persistThreshold: Infinity, memoryBudget: Infinity });
  await fill(m, calls);
  const time = (fn) => {
    const t0 = performance.now();
    fn();
    return performance.now() - t0;
  };
  const first = time(() => touch(m.getAllPointers()));
  const repeated = median(Array.from({ length: 7 }, () => time(() => touch(m.getAllPointers()))));
  const appended = [];
  for (let i = 0; i < 5; i++) {
    await m.saveContext("readFile", { path: `extra${i}.ts` }, null);
    appended.push(time(() => touch(m.getAllPointers())));
  }
  const forTask = median(Array.from({ length: 5 }, () => time(() => touch(m.getPointersForTask(3)))));
  return { "first call (ms)": +first.toFixed(1), "repeated (ms)": +repeated.toFixed(1), "after a save (ms)": +median(appended).toFixed(1), "getPointersForTask, 10% (ms)": +forTask.toFixed(1) };
}

// ---- 2. memory, in a child: node --expose-gc bench/pointers.mjs --child <scenario> N ------
async function memoryChild(which, n) {
  const { calls } = corpus(n);
  const core = new URL("../node_modules/toolctx/toolctx_core.js", import.meta.url);
  const { memory } = await import(core.href).then((mod) => mod.initSync({ module: readFileSync(new URL("toolctx_core_bg.wasm", core)) }));
  // Node counts the wasm memory's ArrayBuffer in `external`: heap + external is the total.
  const measure = () => {
    globalThis.gc();
    globalThis.gc();
    const u = process.memoryUsage();
    return { heap: u.heapUsed, external: u.external, wasm: memory.buffer.byteLength };
  };
  const discard = { read: () => undefined, write: () => {}, remove: () => {}, list: () => [] };
  const make = () => which === "pointers"
    ? new ContextManager({ contextDir: "/bench", fileSystem: discard, persistThreshold: 0 })
    : new ContextManager({ contextDir: "/bench", fileSystem: memoryStorage(), persistThreshold: Infinity, memoryBudget: Infinity });
  // Warm up (code paths compiled, one-time allocations made) on a throwaway manager.
  const warm = make();
  for (let i = 0; i < 200; i++) await warm.saveContext(calls[i][0], calls[i][1], null, i % 10, `q${i % 20}`);
  warm.getAllPointers();
  const m = make();
  const before = measure();
  for (let i = 0; i < calls.length; i++) await m.saveContext(calls[i][0], calls[i][1], null, i % 10, `q${i % 20}`);
  const after = measure();
  m.getAllPointers();
  const listed = measure();
  const per = (a, b, k) => (b[k] - a[k]) / n;
  process.stdout.write(JSON.stringify({
    heap: per(before, after, "heap"),
    external: per(before, after, "external"),
    wasm: per(before, after, "wasm"),
    total: per(before, after, "heap") + per(before, after, "external"),
    mirror: per(after, listed, "heap") + per(after, listed, "external"),
    size: m.size,
    calls: calls.length, // kept alive to the end: the corpus is not part of the figure
  }));
}

// ---- 3. the seed flow -------------------------------------------------------------------
async function seedFlow(n) {
  const { calls, queries } = corpus(n);
  const top = mkdtempSync(`${tmpdir()}/toolctx-pointers-`);
  try {
    const ours = new ContextManager({ contextDir: `${top}/ours`, fileSystem: nodeStorage(), persistThreshold: 0 });
    const seed = new SeedContextManager({ contextDir: `${top}/seed` });
    await fill(ours, calls);
    await fill(seed, calls);
    const times = {};
    for (const name of ["ours", "seed"]) for (const stage of ["flow", "list", "select", "load"]) times[`${name} ${stage}`] = [];
    times.fast = [];
    // toolctx's fast path for the same question: no pointer object made to rank.
    const fast = async (q, i) => {
      const t0 = performance.now();
      const top = await ours.selectRelevant(q, { queryId: `q${i % 20}`, limit: 10 });
      await ours.loadContexts(top.map((s) => s.filepath));
      times.fast.push(performance.now() - t0);
    };
    const flow = async (name, m, q, i) => {
      const t0 = performance.now();
      const pointers = m.getPointersForQuery(`q${i % 20}`);
      const t1 = performance.now();
      const paths = m.selectRelevantContexts(q, pointers).slice(0, 10);
      const t2 = performance.now();
      await m.loadContexts(paths);
      const t3 = performance.now();
      times[`${name} flow`].push(t3 - t0);
      times[`${name} list`].push(t1 - t0);
      times[`${name} select`].push(t2 - t1);
      times[`${name} load`].push(t3 - t2);
    };
    // A first pass (not timed): both sides warm, toolctx's pointer mirror filled.
    for (let i = 0; i < queries.length; i++) {
      await flow("ours", ours, queries[i], i);
      await flow("seed", seed, queries[i], i);
    }
    for (const k of Object.keys(times)) times[k] = [];
    for (let round = 0; round < 3; round++) {
      for (const [name, m] of round % 2 ? [["seed", seed], ["ours", ours]] : [["ours", ours], ["seed", seed]]) {
        for (let i = 0; i < queries.length; i++) await flow(name, m, queries[i], i);
      }
      for (let i = 0; i < queries.length; i++) await fast(queries[i], i);
    }
    await ours.close();
    const row = {};
    for (const stage of ["flow", "list", "select", "load"]) {
      const o = median(times[`ours ${stage}`]);
      const sd = median(times[`seed ${stage}`]);
      row[`${stage}: toolctx / seed (ms)`] = `${o.toFixed(2)} / ${sd.toFixed(2)}`;
      if (stage === "flow") row["toolctx ÷ seed"] = +(o / sd).toFixed(2);
      if (stage === "flow") row["fast path ÷ seed"] = +(median(times.fast) / sd).toFixed(2);
    }
    return row;
  } finally {
    rmSync(top, { recursive: true, force: true });
  }
}

if (process.argv[2] === "--child") {
  await memoryChild(process.argv[3], Number(process.argv[4]));
  process.exit(0);
}

const out = { getAllPointers: {}, memory: {}, seedFlow: {} };
out.getAllPointers["100,000 pointers"] = await getAll(100_000);
for (const which of ["pointers", "default"]) {
  const child = spawnSync(process.execPath, ["--expose-gc", new URL(import.meta.url).pathname, "--child", which, "100000"], { encoding: "utf8" });
  if (child.status !== 0) throw new Error(child.stderr);
  const r = JSON.parse(child.stdout);
  out.memory[which] = {
    "heap B": +r.heap.toFixed(0), "external B (wasm included)": +r.external.toFixed(0), "wasm B": +r.wasm.toFixed(0),
    "total B per pointer": +r.total.toFixed(0), "+ after getAllPointers (B)": +r.mirror.toFixed(0),
  };
}
const sizes = (arg("--sizes") ?? "1000,10000,100000").split(",").map(Number);
for (const n of sizes) out.seedFlow[`${n.toLocaleString("en")} records`] = await seedFlow(n);

if (process.argv.includes("--json")) console.log(JSON.stringify(out));
else {
  console.log("getAllPointers, every element touched:");
  console.table(out.getAllPointers);
  console.log("Memory per pointer at 100,000 small records (after GC):");
  console.table(out.memory);
  console.log("Seed flow: getPointersForQuery -> selectRelevantContexts -> loadContexts(top 10), median of 24 queries x 3 rounds:");
  console.table(out.seedFlow);
}
