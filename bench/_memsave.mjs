// ms per 64 KB text save into memory storage, and with indexContentBytes: 0, interleaved.
import { ContextManager, memoryStorage } from "toolctx";
import { textPayload, hitsPayload } from "/work/main/bench/io.mjs";
const shape = process.argv[2] ?? "text";
const result = (shape === "text" ? textPayload : hitsPayload)(64 * 1024);
const run = (opts, n = 500) => { const m = new ContextManager({ contextDir: "/x", fileSystem: memoryStorage(), persistThreshold: 0, memoryBudget: Infinity, ...opts }); return async () => { const t0 = performance.now(); for (let i = 0; i < n; i++) await m.saveContext("readFile", { path: `src/a${i}.ts` }, result); return (performance.now() - t0) / n; }; };
const t = { full: [], noindex: [] };
for (let r = 0; r < 7; r++) { t.full.push(await run({})()); t.noindex.push(await run({ indexContentBytes: 0 })()); }
const med = (a) => a.sort((x, y) => x - y)[a.length >> 1];
console.log(shape, "full", med(t.full).toFixed(3), "no content index", med(t.noindex).toFixed(3), "index share", (med(t.full) - med(t.noindex)).toFixed(3));
