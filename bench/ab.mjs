#!/usr/bin/env node
// A/B of two builds of the package: the same saves into memoryStorage (no disk, so the
// figure is the CPU a save costs), both builds loaded in one process and run in turn,
// round after round, the order alternating. For a change to the core that no test can
// time: copy pkg/ aside, rebuild, compare.
//   cp -r pkg /tmp/before && scripts/build-wasm.sh core
//   node bench/ab.mjs /tmp/before pkg [bytes=65536] [rounds=15] [saves=200] [text|hits]
// Prints the median ms per save of each and the median of B ÷ A over the rounds.
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";

const [dirA, dirB] = process.argv.slice(2, 4);
if (!dirA || !dirB) throw new Error("usage: node bench/ab.mjs <package dir A> <package dir B> [bytes] [rounds] [saves] [text|hits]");
const size = Number(process.argv[4] ?? 65536);
const rounds = Number(process.argv[5] ?? 15);
const saves = Number(process.argv[6] ?? 200);
const kind = process.argv[7] ?? "text";

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

const builds = await Promise.all([dirA, dirB].map((dir) => import(pathToFileURL(resolve(dir, "index.node.js")).href)));
const managers = builds.map(({ ContextManager, memoryStorage }) => new ContextManager({ storage: memoryStorage(), persistThreshold: 0 }));
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
console.log(`${kind} ${size} B: A ${median(times[0]).toFixed(4)} ms, B ${median(times[1]).toFixed(4)} ms per save; B ÷ A ${ratio.toFixed(3)}`);
