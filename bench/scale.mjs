#!/usr/bin/env node
// Query latency at 5,000 and at 50,000 records, toolctx beside MiniSearch 7
// (default settings, the same fields) in the same process (issue 24's target: p50 and
// p95 ≤ 1/3 of MiniSearch's at both sizes).
//
// Records are real text: the .js, .ts and .md files of node_modules under 64 KB as file
// reads, then grep hits (one matching line of such a file, `{file, line, text}` objects,
// as a grep tool returns them) until the count is reached. Queries: 300 comment lines of
// those files (4 to 12 words), as a developer's question quotes code comments.
// toolctx ranks with selectRelevantContexts over every pointer (the synchronous ranking)
// and with selectRelevant (the engine, passages of the first hits included).
//   node bench/scale.mjs [sizes, comma-separated]        (after `make pkg`)
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import MiniSearch from "minisearch";
import { ContextManager } from "toolctx";
import { memoryStorage } from "toolctx/memory";

const SIZES = (process.argv[2] ?? "5000,50000").split(",").map(Number);
const QUERIES = 300;
const MAX = Math.max(...SIZES);

const files = [];
(function walk(dir) {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return;
  }
  for (const d of entries) {
    const p = join(dir, d.name);
    if (d.isDirectory()) walk(p);
    else if (/\.(js|ts|md)$/.test(d.name) && statSync(p).size < 64 * 1024) files.push(p);
  }
})("node_modules");
files.sort();

const texts = files.map((path) => readFileSync(path, "utf8"));
const records = texts.slice(0, MAX).map((text, i) => ({ toolName: "readFile", args: { path: files[i] }, result: text }));
const comment = /^\s*(?:\/\/|\*|#)\s+([A-Za-z][^\n]{20,120})$/;
const queries = [];
for (let i = 0; records.length < MAX && i < texts.length * 50; i++) {
  const f = i % texts.length;
  const lines = texts[f].split("\n");
  const line = Math.floor(i / texts.length) * 7 + 3;
  if (line >= lines.length || lines[line].trim().length < 8) continue;
  records.push({ toolName: "grep", args: { pattern: lines[line].trim().split(/\W+/).filter(Boolean)[0] ?? "x", path: files[f] }, result: { hits: [{ file: files[f], line: line + 1, text: lines[line].trim().slice(0, 200) }] } });
}
for (let f = 0; queries.length < QUERIES && f < texts.length; f += 7) {
  for (const line of texts[f].split("\n")) {
    const m = comment.exec(line);
    const words = m?.[1].split(/\s+/).length ?? 0;
    if (m && words >= 4 && words <= 12) {
      queries.push(m[1]);
      break;
    }
  }
}

const percentile = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];
const resultText = (r) => (typeof r === "string" ? r : JSON.stringify(r));

console.log(`${records.length} records available (${files.length} file reads, then grep hits), ${queries.length} queries`);
for (const size of SIZES) {
  const some = records.slice(0, size);
  const m = new ContextManager({ contextDir: "/scale", fileSystem: memoryStorage() });
  for (const r of some) await m.saveContext(r.toolName, r.args, r.result);
  m.selectRelevantContexts("warm up", m.getAllPointers());
  const pointers = m.getAllPointers();
  const ms = new MiniSearch({ fields: ["toolName", "description", "args", "content"] });
  ms.addAll(some.map((r, id) => ({ id, toolName: r.toolName, description: JSON.stringify(r.args), args: JSON.stringify(r.args), content: resultText(r.result) })));
  const times = { seed: [], engine: [], minisearch: [] };
  for (let round = 0; round < 2; round++) {
    for (const q of queries) {
      let t = performance.now();
      m.selectRelevantContexts(q, pointers);
      times.seed.push(performance.now() - t);
      t = performance.now();
      ms.search(q);
      times.minisearch.push(performance.now() - t);
      t = performance.now();
      await m.selectRelevant(q, { limit: 10 });
      times.engine.push(performance.now() - t);
    }
  }
  const row = (name, xs) => `${name.padEnd(44)} p50 ${percentile(xs, 50).toFixed(2).padStart(7)} ms  p95 ${percentile(xs, 95).toFixed(2).padStart(7)} ms`;
  console.log(`\n${size.toLocaleString("en-US")} records:`);
  console.log(row("toolctx selectRelevantContexts (ranking)", times.seed), `  ÷ MiniSearch p50 ${(percentile(times.seed, 50) / percentile(times.minisearch, 50)).toFixed(2)}, p95 ${(percentile(times.seed, 95) / percentile(times.minisearch, 95)).toFixed(2)}`);
  console.log(row("toolctx selectRelevant (top 10, passages)", times.engine));
  console.log(row("MiniSearch search", times.minisearch));
}
