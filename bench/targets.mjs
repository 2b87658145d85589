#!/usr/bin/env node
// The figures of issue 12 that each runtime measures in one process of its own: save and
// load against the raw-I/O floor and the plain-JS seed (bench/io.mjs), then the seed's
// flow and getAllPointers (bench/flow.mjs). bench/run.mjs runs this in Node, Deno and Bun
// and prints the summary; alone:
//   node bench/targets.mjs [--quick] [--rounds N] [--json]
//   deno run -A --no-check bench/targets.mjs [...]
//   bun bench/targets.mjs [...]
// --quick: 3 rounds, stores of 1k and 10k (getAllPointers at 10k); --json: one line of JSON.

import { pathToFileURL } from "node:url";
import { benchFlow } from "./flow.mjs";
import { benchIo } from "./io.mjs";
import { runtime } from "./runtime.mjs";

/** The rounds and store sizes of a full and a quick run. */
export function plan(argv) {
  const quick = argv.includes("--quick");
  const at = argv.indexOf("--rounds");
  return {
    quick,
    rounds: at > 0 ? Number(argv[at + 1]) : quick ? 3 : 7,
    sizes: quick ? [1_000, 10_000] : [1_000, 10_000, 100_000],
  };
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { rounds, sizes } = plan(process.argv);
  const start = performance.now();
  const log = (line) => console.error(`[${runtime.name} ${((performance.now() - start) / 1000).toFixed(0)} s] ${line}`);
  log(`save and load, ${rounds} rounds`);
  const io = await benchIo({ rounds });
  log("seed flow");
  const { flow, pointers } = await benchFlow({ sizes, rounds, log });
  log("done");
  const out = { runtime: runtime.name, version: runtime.version, rounds, io, flow, pointers };
  if (process.argv.includes("--json")) {
    console.log(JSON.stringify(out));
  } else {
    console.table(io);
    console.table(flow);
    console.table({ [`getAllPointers at ${pointers.size}`]: pointers });
  }
}
