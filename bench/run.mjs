#!/usr/bin/env node
// Save/load against the raw-I/O floor and the plain-JS seed (bench/io.mjs), the wasm
// module (bench/wasm.mjs) and ranking quality (bench/quality.mjs), then one summary in
// Markdown, as the README's benchmark section takes it (make bench runs this).
//   node bench/run.mjs [--rounds N]          (after `make pkg`)

import { tmpdir } from "node:os";
import { benchIo, target } from "./io.mjs";
import { benchQuality } from "./quality.mjs";
import { benchWasm } from "./wasm.mjs";

const at = process.argv.indexOf("--rounds");
const rounds = at > 0 ? Number(process.argv[at + 1]) : 7;

const io = await benchIo({ rounds });
console.log(`Save and load on node fs (${tmpdir()}): median ms per save / per load of all records, ${rounds} rounds, round-robin`);
console.table(io);
const wasm = await benchWasm();
console.log("The wasm module");
console.table({ [`node ${process.version}`]: wasm });
const quality = await benchQuality();
console.log(`Ranking quality: ${quality.queries} labelled queries over ${quality.records} records`);
console.table(quality.summary);

const ms = (x) => (x < 1 ? x.toFixed(2) : x < 100 ? x.toFixed(1) : Math.round(x).toString());
const ok = (ratio, name) => (ratio <= target(name) ? "yes" : "**no**");
const out = [
  `Summary (node ${process.version}, ${rounds} rounds):`,
  "",
  "| workload | floor | toolctx | plain-JS seed | toolctx ÷ floor | seed ÷ floor | target | met | toolctx, sync create ÷ floor |",
  "|---|---|---|---|---|---|---|---|---|",
  ...Object.entries(io).map(
    ([name, r]) =>
      `| ${name} | ${ms(r["floor (ms)"])} ms | ${ms(r["toolctx (ms)"])} ms | ${ms(r["seed (ms)"])} ms | ${r["toolctx ÷ floor"].toFixed(2)} | ${r["seed ÷ floor"].toFixed(2)} | ${r.target} | ${ok(r["toolctx ÷ floor"], name)} | ${r["toolctx sync create ÷ floor"]?.toFixed(2) ?? ""} |`,
  ),
  "",
  "| wasm raw | gzip -9 | WebAssembly.compile | instantiate | `import(\"toolctx\")` in a fresh node |",
  "|---|---|---|---|---|",
  `| ${wasm["wasm raw (KB)"]} KB | ${wasm["wasm gzip -9 (KB)"]} KB | ${wasm["WebAssembly.compile (ms)"]} ms | ${wasm["instantiate (ms)"]} ms | ${wasm['import("toolctx"), fresh node (ms)']} ms |`,
  "",
  `| ranking (${quality.queries} queries, ${quality.records} records) | P@5 | MRR |`,
  "|---|---|---|",
  ...Object.entries(quality.summary).map(([name, s]) => `| ${name} | ${s["P@5"].toFixed(3)} | ${s.MRR.toFixed(3)} |`),
];
console.log(`\n${out.join("\n")}`);
