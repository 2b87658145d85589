#!/usr/bin/env node
// Selection over 1k / 10k / 100k pointers against a plain-JS implementation of the
// seed's algorithm (keywords split from every description on every query, one JS object
// per pointer), in the same process. Also getAllPointers. Medians of 7 runs.
//   node bench/select.mjs
import { ContextManager, memoryStorage } from "toolctx";

const TOOLS = ["readFile", "grep", "searchCode", "listDirectory", "fetchPage"];
const WORDS = "auth login session token user error cache index query route handler config build test parse render".split(" ");
const QUERY = "auth token error";

function seedSelect(query, pointers) {
  const keywords = query.toLowerCase().split(/\s+/).filter((w) => w.length > 2);
  const scored = pointers.map((p) => {
    const words = p.toolDescription.toLowerCase().split(/[^a-z0-9]+/);
    return { p, score: keywords.filter((k) => words.includes(k)).length };
  });
  const hits = scored.filter((s) => s.score > 0).sort((a, b) => b.score - a.score);
  return (hits.length ? hits : scored).map((s) => s.p.filepath);
}

const median = (xs) => xs.sort((a, b) => a - b)[xs.length >> 1];
function time(fn, runs = 7) {
  const out = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    fn();
    out.push(performance.now() - t0);
  }
  return median(out);
}

const rows = {};
for (const n of [1_000, 10_000, 100_000]) {
  const m = new ContextManager({ contextDir: "/bench", fileSystem: memoryStorage(), persistThreshold: Infinity, memoryBudget: Infinity });
  for (let i = 0; i < n; i++) {
    const w = (k) => WORDS[(i * 7 + k * 13) % WORDS.length];
    await m.saveContext(TOOLS[i % TOOLS.length], { path: `src/${w(1)}/${w(2)}_${i}.ts`, q: `${w(3)} ${w(4)}` }, i);
  }
  const all = time(() => m.getAllPointers(), 3);
  const pointers = m.getAllPointers();
  const ours = time(() => m.selectRelevantContexts(QUERY, pointers));
  const overlap = time(() => m.selectRelevantContexts(QUERY, pointers, { strategy: "overlap" }));
  const seed = time(() => seedSelect(QUERY, pointers));
  rows[`${n.toLocaleString()} pointers`] = {
    "select bm25 (ms)": +ours.toFixed(2),
    "select overlap (ms)": +overlap.toFixed(2),
    "plain-JS seed (ms)": +seed.toFixed(2),
    "bm25 ÷ seed": +(ours / seed).toFixed(2),
    "getAllPointers (ms)": +all.toFixed(1),
  };
}
console.log(`Selection, query "${QUERY}" (median of 7), getAllPointers (median of 3)`);
console.table(rows);
