// The seed's own flow, as its README shows it: getPointersForQuery → selectRelevantContexts
// → loadContexts of the top 10, the same code run on toolctx and on the plain-JS seed
// (bench/seed.mjs), round-robin; and getAllPointers over the largest store, every element
// read. Runs in Node, Deno and Bun.
//
// The stores: the realistic agent store of bench/select.mjs (1k / 10k / 100k calls over a
// 3,000-file repository), each call with a small result (about 300 B) and one of ten
// queryIds, so a query's pointers are a tenth of the store. Both keep their records in
// memory, so the flow times the pointers, the ranking and the record parsing, not a disk
// (bench/io.mjs times the disk): toolctx with memoryStorage() and its default
// persistThreshold and memoryBudget (records past the budget go to the storage), the seed
// with a Map as its injected file system.

import { ContextManager, memoryStorage } from "toolctx";
import { corpus, queryIdOf, smallResult } from "./select.mjs";
import { memoryFileSystem, SeedContextManager } from "./seed.mjs";

const TOP = 10;
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

/** The seed README's example, word for word but for the slice to the top 10. */
async function seedFlow(manager, query, queryId) {
  const pointers = manager.getPointersForQuery(queryId);
  const relevantPaths = manager.selectRelevantContexts(query, pointers).slice(0, TOP);
  const contexts = await manager.loadContexts(relevantPaths);
  if (contexts.length !== relevantPaths.length || contexts.length === 0) throw new Error(`loaded ${contexts.length} of ${relevantPaths.length}`);
}

async function stores(n) {
  const { calls, queries } = corpus(n);
  const toolctx = new ContextManager({ contextDir: "/bench/flow", fileSystem: memoryStorage() });
  const seed = new SeedContextManager({ contextDir: "/bench/flow", fileSystem: memoryFileSystem() });
  // One store after the other: saved in turn, Node took three times as long (garbage
  // collection over both heaps).
  for (const manager of [toolctx, seed]) {
    for (let i = 0; i < n; i++) await manager.saveContext(calls[i][0], calls[i][1], smallResult(i, calls[i][1]), i % 10, queryIdOf(i));
  }
  return { managers: { toolctx, seed }, queries };
}

/** ms to get every pointer and read every element's filepath (median of `runs`). */
function getAllPointersMs(manager, runs) {
  const times = [];
  for (let r = 0; r < runs; r++) {
    const t0 = performance.now();
    let chars = 0;
    for (const pointer of manager.getAllPointers()) chars += pointer.filepath.length;
    times.push(performance.now() - t0);
    if (chars === 0) throw new Error("no filepaths");
  }
  return median(times);
}

/** Whether structuredClone copies getAllPointers() whole. */
function clones(manager) {
  const all = manager.getAllPointers();
  try {
    const copy = structuredClone(all);
    return copy.length === all.length && copy.every((p, i) => p.filepath === all[i].filepath);
  } catch {
    return false;
  }
}

/**
 * Per store size: ms per flow (median over rounds of the mean over 24 queries) and
 * toolctx ÷ seed (median of the per-round ratios); at the largest size, getAllPointers.
 * @returns {Promise<{flow: Record<string, object>, pointers: object}>}
 */
export async function benchFlow({ sizes = [1_000, 10_000, 100_000], rounds = 7, log = () => {} } = {}) {
  const flow = {};
  let pointers;
  for (const n of sizes) {
    let t0 = performance.now();
    const { managers, queries } = await stores(n);
    log(`flow: ${n.toLocaleString("en")} records saved into both stores in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    const names = Object.keys(managers);
    const times = Object.fromEntries(names.map((name) => [name, []]));
    for (let r = -1; r < rounds; r++) {
      const total = names.map(() => 0);
      for (const [q, query] of queries.entries()) {
        for (let k = 0; k < names.length; k++) {
          const v = (k + q + r + 1) % names.length;
          t0 = performance.now();
          await seedFlow(managers[names[v]], query, queryIdOf(q));
          total[v] += performance.now() - t0;
        }
      }
      if (r >= 0) names.forEach((name, v) => times[name].push(total[v] / queries.length));
    }
    flow[`seed flow ${n.toLocaleString("en")}`] = {
      "toolctx (ms)": +median(times.toolctx).toFixed(3),
      "seed (ms)": +median(times.seed).toFixed(3),
      "toolctx ÷ seed": +median(times.toolctx.map((t, r) => t / times.seed[r])).toFixed(2),
    };
    if (n === sizes.at(-1)) {
      pointers = {
        size: n,
        "toolctx (ms)": +getAllPointersMs(managers.toolctx, 5).toFixed(2),
        "seed (ms)": +getAllPointersMs(managers.seed, 5).toFixed(2),
        structuredClone: clones(managers.toolctx),
      };
    }
  }
  return { flow, pointers };
}
