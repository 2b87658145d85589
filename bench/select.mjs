#!/usr/bin/env node
// Selection over 1k / 10k / 100k pointers of a realistic agent store (reads of a
// 3,000-file repo, greps, code searches, listings, fetched docs, commands), against a
// plain-JS implementation of the seed's algorithm run in the same process (keywords
// split from every description on every query, one JS object per pointer).
// Each figure is the median over 24 three-word queries (7 runs each for the small
// stores). Then memory per pointer at 100k: JS heap + external memory (which holds the
// wasm memory in Node), against the seed's one-object-per-pointer array, each measured in
// a fresh child process (`memoryPerPointer`, which bench/run.mjs uses too).
//   node --expose-gc bench/select.mjs [--json]
import { spawnSync } from "node:child_process";
import { ContextManager, memoryStorage } from "toolctx";

const SIZES = [1_000, 10_000, 100_000];

// ---- a deterministic corpus -------------------------------------------------------------
function rng(seed) {
  let s = seed >>> 0;
  return () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32);
}
const AREAS = ["auth", "billing", "search", "db", "api", "ui", "jobs", "notify", "admin", "reports", "cache", "storage"];
const PARTS = ("session token login logout password reset invoice payment refund subscription plan index query "
  + "ranking crawler schema migration route handler middleware controller component modal form table chart "
  + "worker queue retry email webhook sms user role permission audit export import upload bucket config").split(" ");
const EXT = ["ts", "tsx", "test.ts", "md", "json", "sql"];
const VERBS = ["get", "create", "update", "delete", "validate", "parse", "render", "fetch", "handle", "build"];

export function corpus(n, seed = 7) {
  const r = rng(seed);
  const pick = (xs) => xs[Math.floor(r() * xs.length)];
  const files = Array.from({ length: 3000 }, (_, i) => {
    const area = pick(AREAS);
    return `src/${area}/${pick(PARTS)}/${pick(PARTS)}${pick(PARTS).replace(/^./, (c) => c.toUpperCase())}${i % 7 ? "" : i}.${pick(EXT)}`;
  });
  const ident = () => `${pick(VERBS)}${pick(PARTS).replace(/^./, (c) => c.toUpperCase())}`;
  const calls = [];
  for (let i = 0; i < n; i++) {
    const kind = r();
    if (kind < 0.45) calls.push(["readFile", { path: pick(files) }]);
    else if (kind < 0.65) calls.push(["grep", { pattern: ident(), path: `src/${pick(AREAS)}` }]);
    else if (kind < 0.8) calls.push(["searchCode", { query: `${pick(PARTS)} ${pick(PARTS)} ${pick(AREAS)}` }]);
    else if (kind < 0.88) calls.push(["listDirectory", { path: `src/${pick(AREAS)}/${pick(PARTS)}` }]);
    else if (kind < 0.95) calls.push(["fetchPage", { url: `https://docs.example.com/${pick(AREAS)}/${pick(PARTS)}-${pick(PARTS)}` }]);
    else calls.push(["runCommand", { command: `npm test -- ${pick(AREAS)}/${pick(PARTS)}` }]);
  }
  const queries = Array.from({ length: 24 }, () => `${pick(PARTS)} ${pick(AREAS)} ${ident()}`);
  return { calls, queries };
}

/** The i-th call's query: the store's calls fall into ten agent queries. */
export const queryIdOf = (i) => `query-${i % 10}`;

/** A small result (about 300 B of JSON) for the i-th call: three matching lines. */
export function smallResult(i, args) {
  const where = Object.values(args)[0];
  return { total: 3, lines: [1, 2, 3].map((k) => `${where}:${(i * 7 + k * 13) % 500}: const ${PARTS[(i + k) % PARTS.length]} = await load(${k});`) };
}

/** A storage that keeps nothing, as if every record went to a disk or a remote store. */
const discard = { read: () => undefined, write: () => {}, remove: () => {}, list: () => [] };

// ---- the baseline: the seed's algorithm in plain JS -------------------------------------
function describe(tool, args) {
  return `${tool}: ${Object.entries(args).map(([k, v]) => `${k}=${v}`).join(", ")}`;
}
function seedSelect(query, pointers) {
  const keywords = query.toLowerCase().split(/\s+/).filter((w) => w.length > 2);
  const scored = pointers.map((p) => {
    const words = p.toolDescription.toLowerCase().split(/[^a-z0-9]+/);
    return { p, score: keywords.filter((k) => words.includes(k)).length };
  });
  const hits = scored.filter((s) => s.score > 0).sort((a, b) => b.score - a.score);
  return (hits.length ? hits : scored).map((s) => s.p.filepath);
}
function seedPointers(calls) {
  return calls.map(([tool, args], i) => ({
    filepath: `/bench/${tool}_${i}_${Date.now()}_abcdef.json`,
    toolName: tool,
    toolDescription: describe(tool, args),
    timestamp: new Date().toISOString(),
    taskId: i % 10,
  }));
}

const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
function perQuery(queries, fn, runs) {
  const times = [];
  for (const q of queries) {
    const one = [];
    for (let i = 0; i < runs; i++) {
      const t0 = performance.now();
      fn(q);
      one.push(performance.now() - t0);
    }
    times.push(median(one));
  }
  return median(times);
}
function once(fn, runs = 5) {
  const times = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    fn();
    times.push(performance.now() - t0);
  }
  return median(times);
}

async function build(calls) {
  const m = new ContextManager({ contextDir: "/bench", fileSystem: memoryStorage(), persistThreshold: Infinity, memoryBudget: Infinity });
  for (let i = 0; i < calls.length; i++) await m.saveContext(calls[i][0], calls[i][1], null, i % 10);
  return m;
}

// ---- memory, in a child: `node --expose-gc bench/select.mjs --memory ours|default|content|seed N` ----
async function memoryChild(which, n) {
  const { calls } = corpus(n);
  // The JS heap and the memory outside it: Buffers and, in Node, the wasm memory.
  const measure = () => {
    globalThis.gc();
    globalThis.gc();
    const { heapUsed, external } = process.memoryUsage();
    return { heapUsed, external };
  };
  const before = measure();
  let keep;
  let topTen;
  if (which === "ours") {
    keep = await build(calls);
    // The manager's own bookkeeping only: no record bodies (save with a null result).
  } else if (which === "default") {
    // Small records (about 300 B of result) with the default persistThreshold and
    // memoryBudget: the records held in memory up to the budget count, the storage keeps nothing.
    keep = new ContextManager({ contextDir: "/bench", fileSystem: discard });
    for (let i = 0; i < calls.length; i++) await keep.saveContext(calls[i][0], calls[i][1], smallResult(i, calls[i][1]), i % 10, queryIdOf(i));
  } else if (which === "listed") {
    // "default", then listed and selected as an agent does: getAllPointers once, and per
    // query getPointersForQuery → selectRelevantContexts (the lists themselves are dropped,
    // so what counts is what the manager keeps for having served them).
    keep = new ContextManager({ contextDir: "/bench", fileSystem: discard });
    for (let i = 0; i < calls.length; i++) await keep.saveContext(calls[i][0], calls[i][1], smallResult(i, calls[i][1]), i % 10, queryIdOf(i));
    const { queries } = corpus(n);
    let seen = keep.getAllPointers().length;
    for (let q = 0; q < 10; q++) {
      const mine = keep.getPointersForQuery(queryIdOf(q));
      seen += keep.selectRelevantContexts(queries[q], mine, { limit: 10 }).length;
    }
    if (seen < n) throw new Error("listing lost pointers");
  } else if (which === "content") {
    // Content indexing on: every record has 4 KB of text (words of the corpus), written
    // to a storage that keeps nothing, so only the pointers and the index are measured.
    keep = new ContextManager({ contextDir: "/bench", fileSystem: discard, persistThreshold: 0 });
    const r = rng(11);
    const words = [...PARTS, ...AREAS, ...VERBS.flatMap((v) => PARTS.map((p) => `${v}${p[0].toUpperCase()}${p.slice(1)}`))];
    for (let i = 0; i < calls.length; i++) {
      let text = "";
      while (text.length < 4096) text += `${words[Math.floor(r() * words.length)]} `;
      await keep.saveContext(calls[i][0], calls[i][1], { content: text.slice(0, 4096) }, i % 10);
    }
    const { queries } = corpus(n);
    const times = [];
    for (const q of queries) {
      const t0 = performance.now();
      await keep.selectRelevant(q, { limit: 10 });
      times.push(performance.now() - t0);
    }
    topTen = median(times);
  } else {
    keep = seedPointers(calls);
  }
  const after = measure();
  const heap = (after.heapUsed - before.heapUsed) / n;
  const external = (after.external - before.external) / n;
  // `calls` and `keep` are read after the measure, so neither is collected before it.
  process.stdout.write(JSON.stringify({ perPointer: heap + external, heap, external, kept: keep ? calls.length : 0, topTen }));
}

/** Runs memoryChild in a fresh `node --expose-gc`: `{perPointer, heap, external, topTen?}` in bytes (ms). */
export function memoryPerPointer(which, n) {
  const child = spawnSync(process.execPath, ["--expose-gc", new URL(import.meta.url).pathname, "--memory", which, String(n)], { encoding: "utf8" });
  if (child.status !== 0) throw new Error(child.stderr);
  return JSON.parse(child.stdout);
}

const main = import.meta.url === new URL(process.argv[1], "file:").href || process.argv[1]?.endsWith("bench/select.mjs");
if (process.argv[2] === "--memory") {
  await memoryChild(process.argv[3], Number(process.argv[4]));
  process.exit(0);
}

const rows = {};
for (const n of main ? SIZES : []) {
  const { calls, queries } = corpus(n);
  const m = await build(calls);
  const seed = seedPointers(calls);
  const runs = n >= 100_000 ? 3 : 7;
  const all = m.getAllPointers();
  const select = perQuery(queries, (q) => m.selectRelevantContexts(q, all), runs);
  const top10 = perQuery(queries, (q) => m.selectRelevantContexts(q, all, { limit: 10 }), runs);
  const overlap = perQuery(queries, (q) => m.selectRelevantContexts(q, all, { strategy: "overlap" }), runs);
  const plain = [...all];
  const copy = perQuery(queries.slice(0, 6), (q) => m.selectRelevantContexts(q, plain), runs);
  const seedMs = perQuery(queries, (q) => seedSelect(q, seed), runs);
  const matched = median(queries.map((q) => m.selectRelevantContexts(q, all, { fallback: "none" }).length));
  rows[`${n.toLocaleString("en")} pointers`] = {
    "select (ms)": +select.toFixed(3),
    "top 10 (ms)": +top10.toFixed(3),
    "overlap (ms)": +overlap.toFixed(3),
    "plain array (ms)": +copy.toFixed(2),
    "seed JS (ms)": +seedMs.toFixed(2),
    "seed ÷ ours": +(seedMs / select).toFixed(1),
    "matches": matched,
    "getAllPointers (ms)": +once(() => m.getAllPointers()).toFixed(3),
    "all filepaths (ms)": +once(() => m.getAllPointers().map((p) => p.filepath), 3).toFixed(1),
    "forTask (ms)": +once(() => m.getPointersForTask(3)).toFixed(2),
  };
}

const mem = {};
for (const which of main ? ["ours", "content", "seed"] : []) {
  const out = memoryPerPointer(which, 100_000);
  mem[which] = out.perPointer;
  if (out.topTen !== undefined) mem.contentTopTen = out.topTen;
}

if (!main) {
  // imported for its corpus
} else if (process.argv.includes("--json")) {
  console.log(JSON.stringify({ rows, memory: mem }));
} else {
  console.log("Selection: median over 24 three-word queries; `select` ranks a getAllPointers() array through the");
  console.log("index (found by filepath), `plain array` a copy of it ([...all]), `seed JS` the seed's algorithm.");
  console.table(rows);
  console.log(`Memory at 100,000 pointers (JS heap + external memory, which holds the wasm memory; per pointer): toolctx ${mem.ours.toFixed(0)} B, seed-style JS objects ${mem.seed.toFixed(0)} B`);
  console.log(`... with 4 KB of text per record, content indexed (the default): toolctx ${mem.content.toFixed(0)} B; selectRelevant top 10 over them: ${mem.contentTopTen.toFixed(2)} ms (median of 24 queries)`);
}
