// Deno KV latency against the local disk (denoStorage) in the same run, interleaved.
//   deno run -A --unstable-kv --no-check bench/deno-kv.mjs      (after `make pkg`)
import { ContextManager } from "toolctx";
import { denoStorage } from "toolctx/deno";
import { denoKvStorage } from "toolctx/deno-kv";
import { benchLatency } from "./latency.mjs";

const top = await Deno.makeTempDir({ prefix: "toolctx-bench-kv-" });
const kv = await Deno.openKv(`${top}/kv.sqlite`);
const rows = await benchLatency(
  { "deno: deno (local disk, baseline)": () => denoStorage(), "deno: deno-kv (local SQLite)": () => denoKvStorage({ kv }) },
  (tag) => `${top}/ctx-${tag}`,
  { ContextManager },
);
kv.close();
await Deno.remove(top, { recursive: true });
console.log("Deno KV: ms per save and per load (median of 5 rounds of 200, interleaved with the baseline)");
console.table(rows);
