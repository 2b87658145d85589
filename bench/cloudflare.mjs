#!/usr/bin/env node
// toolctx/cloudflare latency inside workerd (npm miniflare on 127.0.0.1, its local R2, KV
// and SQLite Durable Object simulators; nothing remote): ms per save and per load through
// a ContextManager, with memory storage in the same worker as the baseline, the adapters
// interleaved round by round; and the requests each save and load makes to the binding
// (R2, KV; the SQL statements and transactions for the Durable Object, the StorageHost
// calls for memory), without and with a session (whose manifest writes are coalesced). Local simulators, not Cloudflare's
// network: the figures compare adapters and count requests, they are not production latency.
//
//   node bench/cloudflare.mjs          (after `make pkg`)

import { fileURLToPath } from "node:url";
import { bundleForWorkerd } from "../tests/edge/bundle.mjs";
import { startWorkerd } from "../tests/edge/runtimes.mjs";

const ADAPTERS = ["memory", "r2", "kv", "do"];
const ROUNDS = 5;
const N = 200;
const SIZE = 4096;

const entry = fileURLToPath(new URL("./cloudflare-worker.mjs", import.meta.url));
const workerd = await startWorkerd(await bundleForWorkerd(entry), [
  { name: "bench", r2Buckets: ["BUCKET"], kvNamespaces: ["KV"], durableObjects: { STORE: { className: "Store", useSQLite: true } } },
]);

const run = (adapter, session, n = N) => workerd.fetch("bench", `/${adapter}?n=${n}&size=${SIZE}&session=${session ? 1 : 0}`);
const median = (xs) => xs.sort((a, b) => a - b)[xs.length >> 1];

try {
  for (const adapter of ADAPTERS) await run(adapter, false, 20); // warm-up
  const samples = Object.fromEntries(ADAPTERS.map((a) => [a, { save: [], load: [] }]));
  const calls = {};
  for (let r = 0; r < ROUNDS; r++) {
    for (const adapter of ADAPTERS) {
      const { save, load, saveCalls, loadCalls } = await run(adapter, false);
      samples[adapter].save.push(save);
      samples[adapter].load.push(load);
      calls[adapter] = { saveCalls, loadCalls };
    }
  }
  for (const adapter of ADAPTERS) calls[adapter].session = await run(adapter, true);

  const fmt = (x) => x.toFixed(3).padStart(8);
  const show = (o) => Object.entries(o).map(([k, v]) => `${v} ${k}`).join(" + ") || "none";
  console.log(`toolctx/cloudflare in workerd (miniflare ${(await import("miniflare/package.json", { with: { type: "json" } })).default.version}, local simulators), ${N} records of ${SIZE} B, median of ${ROUNDS} rounds`);
  console.log("adapter   ms/save  ms/load  ×memory(save, load)  requests per save             per load         per save in a session");
  const base = { save: median(samples.memory.save), load: median(samples.memory.load) };
  for (const adapter of ADAPTERS) {
    const save = median(samples[adapter].save);
    const load = median(samples[adapter].load);
    const ratio = `${(save / base.save).toFixed(1)}, ${(load / base.load).toFixed(1)}`.padEnd(19);
    console.log(
      `${adapter.padEnd(8)}${fmt(save)} ${fmt(load)}  ${ratio}  ${show(calls[adapter].saveCalls).padEnd(28)}  ${show(calls[adapter].loadCalls).padEnd(15)}  ${show(calls[adapter].session.saveCalls)}`,
    );
  }
} finally {
  await workerd.dispose();
}
