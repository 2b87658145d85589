// Sequential and concurrent loads with the default read bound and with syncReadMaxBytes 256 KiB, interleaved.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { ContextManager } from "toolctx";
import { runtime } from "./runtime.mjs";
import { hitsPayload } from "./io.mjs";
const dir = mkdtempSync(`${tmpdir()}/sy-`);
const w = new ContextManager({ contextDir: dir, fileSystem: runtime.storage(), persistThreshold: 0 });
const result = hitsPayload(64 * 1024);
const paths = [];
for (let i = 0; i < 100; i++) paths.push(await w.saveContext("grep", { i }, result));
const a = new ContextManager({ contextDir: dir, fileSystem: runtime.storage(), persistThreshold: 0 });
const b = new ContextManager({ contextDir: dir, fileSystem: runtime.storage({ syncReadMaxBytes: 256 * 1024 }), persistThreshold: 0 });
const seq = (m) => async () => { for (const p of paths) await m.loadContexts([p]); };
const parts = {
  floor: async () => { for (const p of paths) JSON.parse(await runtime.read(p)); },
  "seq default": seq(a), "seq 256K": seq(b),
  "conc default": () => a.loadContexts(paths), "conc 256K": () => b.loadContexts(paths),
  "raw concurrent": () => Promise.all(paths.map(async (p) => JSON.parse(await runtime.read(p)))),
};
const median = (xs) => [...xs].sort((x, y) => x - y)[xs.length >> 1];
const names = Object.keys(parts); const t = Object.fromEntries(names.map((n) => [n, []]));
const R = Number(process.argv[2] ?? 21);
for (let r = -3; r < R; r++) for (let k = 0; k < names.length; k++) { const n = names[(k + r + 3) % names.length]; const t0 = performance.now(); await parts[n](); if (r >= 0) t[n].push(performance.now() - t0); }
for (const n of names) console.log(n.padEnd(16), median(t[n]).toFixed(2).padStart(8), "ms", median(t[n].map((x, r) => x / t.floor[r])).toFixed(2));
rmSync(dir, { recursive: true });
