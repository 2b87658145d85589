import { ContextManager, memoryStorage } from "toolctx";
import { corpus } from "./bench/select.mjs";
const { calls, queries } = corpus(100000);
const m = new ContextManager({ contextDir: "/bench", fileSystem: memoryStorage(), persistThreshold: Infinity, memoryBudget: Infinity });
for (let i = 0; i < calls.length; i++) await m.saveContext(calls[i][0], calls[i][1], null, i % 10);
const all = m.getAllPointers();
const proto = Object.getPrototypeOf(m);
for (const q of queries.slice(0, 3)) {
  let t0 = performance.now(); const r = m.selectRelevantContexts(q, all); let t1 = performance.now();
  const raw = proto.__selectSlots.call(m, q, new Uint32Array(0), true, undefined); let t2 = performance.now();
  const sp = raw.split("\0"); let t3 = performance.now();
  const lim = m.selectRelevantContexts(q, all, {limit: 20000}); let t4 = performance.now();
  console.log(q, r.length, (t1-t0).toFixed(2), "raw", (t2-t1).toFixed(2), "split", (t3-t2).toFixed(2), "limit", (t4-t3).toFixed(2));
}
