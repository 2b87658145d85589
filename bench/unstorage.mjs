#!/usr/bin/env node
// unstorage's fs driver through toolctx/unstorage against nodeStorage in the same run, interleaved.
//   node bench/unstorage.mjs      (after `make pkg`)
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { createStorage } from "unstorage";
import fsDriver from "unstorage/drivers/fs";
import memoryDriver from "unstorage/drivers/memory";
import { ContextManager } from "toolctx";
import { nodeStorage } from "toolctx/node";
import { memoryStorage } from "toolctx/memory";
import { unstorageStorage } from "toolctx/unstorage";
import { benchLatency } from "./latency.mjs";

const top = mkdtempSync(`${tmpdir()}/toolctx-bench-unstorage-`);
const rows = await benchLatency(
  {
    "node: node (local disk, baseline)": () => nodeStorage(),
    "node: unstorage fs driver": () => unstorageStorage({ storage: createStorage({ driver: fsDriver({ base: `${top}/unstorage-fs` }) }) }),
    "node: memory": () => memoryStorage(),
    "node: unstorage memory driver": () => unstorageStorage({ storage: createStorage({ driver: memoryDriver() }) }),
  },
  (tag) => `${top}/ctx-${tag}`,
  { ContextManager },
);
rmSync(top, { recursive: true, force: true });
console.log("unstorage bridge: ms per save and per load (median of 5 rounds of 200, interleaved with the baseline)");
console.table(rows);
