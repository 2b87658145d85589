#!/usr/bin/env node
// A/B of two builds of the package: the same saves into memoryStorage (no disk, so the
// figure is the CPU a save costs) or, with `fs`, each build's nodeStorage in a fresh
// temporary folder; both builds loaded in one process and run in turn, round after round,
// the order alternating. For a change that no test can time: copy pkg/ aside, rebuild,
// compare (Node; `bun bench/ab.mjs …` for Bun).
//   cp -r pkg /tmp/before && make pkg
//   node bench/ab.mjs /tmp/before pkg [bytes=65536] [rounds=15] [saves=200] [text|hits] [memory|fs]
// Prints the median ms per save of each and the median of B ÷ A over the rounds.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const [dirA, dirB] = process.argv.slice(2, 4);
if (!dirA || !dirB) throw new Error("usage: node bench/ab.mjs <package dir A> <package dir B> [bytes] [rounds] [saves] [text|hits]");
const size = Number(process.argv[4] ?? 65536);
const rounds = Number(process.argv[5] ?? 15);
const saves = Number(process.argv[6] ?? 200);
const kind = process.argv[7] ?? "text";
const storage = process.argv[8] ?? "memory";

// The two shapes of bench/io.mjs: a long text, and an object of search hits.
const text = Array.from({ length: Math.ceil(size / 64) }, (_, i) => `line ${i}: the quick brown fox jumps over ${i % 97} lazy dogs ok\n`).join("").slice(0, size);
const hits = {
  query: "session.verify",
  hits: Array.from({ length: Math.ceil(size / 100) }, (_, i) => ({
    path: `src/auth/module_${i % 37}.ts`,
    line: i,
    text: `const token = await session.verify(request.headers.authorization, { maxAge: ${i} });`,
  })),
};
const payload = kind === "text" ? text : hits;

const load = (dir, file) => import(pathToFileURL(resolve(dir, file)).href);
const builds = await Promise.all([dirA, dirB].map((dir) => load(dir, "index.node.js")));
const adapters = await Promise.all([dirA, dirB].map((dir) => load(dir, "adapters/node.js")));
const scratch = mkdtempSync(join(tmpdir(), "toolctx-ab-"));
process.on("exit", () => rmSync(scratch, { recursive: true, force: true }));
const managers = builds.map(({ ContextManager, memoryStorage }, b) => storage === "fs"
  ? new ContextManager({ contextDir: join(scratch, `b${b}`), storage: adapters[b].nodeStorage(), persistThreshold: 0 })
  : new ContextManager({ storage: memoryStorage(), persistThreshold: 0 }));
const times = [[], []];
let call = 0;
// Two warm-up rounds, not counted.
for (let r = -2; r < rounds; r++) {
  for (const b of r % 2 ? [1, 0] : [0, 1]) {
    const t0 = performance.now();
    for (let i = 0; i < saves; i++) await managers[b].saveContext("readFile", { path: `f${call++}.txt` }, payload);
    if (r >= 0) times[b].push((performance.now() - t0) / saves);
  }
}
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const ratio = median(times[0].map((a, r) => times[1][r] / a));
console.log(`${kind} ${size} B, ${storage}: A ${median(times[0]).toFixed(4)} ms, B ${median(times[1]).toFixed(4)} ms per save; B ÷ A ${ratio.toFixed(3)}`);
