#!/usr/bin/env node
// Every target of issue 12, in one Markdown summary table per runtime, as the README's
// benchmark section takes it (make bench runs this):
//   - in Node, Deno and Bun, one process each (bench/targets.mjs, run one after another,
//     its variants interleaved round-robin): save and load against the raw-I/O floor and
//     the plain-JS seed, the seed's flow, getAllPointers at 100k;
//   - in Node: memory per pointer at 100k (bench/select.mjs, a fresh `node --expose-gc`),
//     saved, and after an agent's listing (which leaves the JS pointer mirror behind),
//     the wasm modules and import → ready (bench/wasm.mjs), ranking quality (bench/quality.mjs).
// Deno and Bun are the binaries of node_modules/.bin (npm packages "deno" and "bun").
//   node bench/run.mjs [--quick] [--rounds N] [--runtimes node,deno,bun]          (after `make pkg`)

import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { met } from "./io.mjs";
import { benchQuality } from "./quality.mjs";
import { memoryPerPointer } from "./select.mjs";
import { plan } from "./targets.mjs";
import { benchWasm } from "./wasm.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
const script = fileURLToPath(new URL("targets.mjs", import.meta.url));
const COMMANDS = {
  node: [process.execPath, [script]],
  deno: [`${root}node_modules/.bin/deno`, ["run", "-A", "--no-check", script]],
  bun: [`${root}node_modules/.bin/bun`, [script]],
};

const { quick, rounds, sizes } = plan(process.argv);
const at = process.argv.indexOf("--runtimes");
const runtimes = at > 0 ? process.argv[at + 1].split(",") : Object.keys(COMMANDS);
const passed = process.argv.slice(2).filter((a, i, all) => a !== "--runtimes" && all[i - 1] !== "--runtimes");

const results = [];
for (const name of runtimes) {
  const [command, args] = COMMANDS[name];
  const child = spawnSync(command, [...args, ...passed, "--json"], { cwd: root, encoding: "utf8", stdio: ["ignore", "pipe", "inherit"], maxBuffer: 1 << 26 });
  if (child.status !== 0) throw new Error(`${name} exited with ${child.status ?? child.signal}`);
  results.push(JSON.parse(child.stdout.trim().split("\n").at(-1)));
}
const largest = sizes.at(-1);
console.error(`[node] memory per pointer at ${largest}`);
const memory = memoryPerPointer("default", largest);
const listed = memoryPerPointer("listed", largest);
console.error("[node] wasm modules and import → ready");
const wasm = await benchWasm({ processes: quick ? 5 : 15 });
const quality = await benchQuality();
console.error(`[node] all done in ${(performance.now() / 1000).toFixed(0)} s`);

// ---- the details -----------------------------------------------------------------------
for (const r of results) {
  console.log(`\n${r.runtime} ${r.version}: save and load (median ms per save / per load of all records; ratios: medians of the per-round ratios, ${r.rounds} rounds)`);
  console.table(r.io);
  console.log(`${r.runtime}: the seed's flow (ms per flow, mean over 24 queries, median of ${r.rounds} rounds) and getAllPointers at ${r.pointers.size}`);
  console.table({ ...r.flow, [`getAllPointers at ${r.pointers.size}`]: r.pointers });
}
console.log("\nThe wasm modules (bytes)");
console.table(Object.fromEntries(wasm.modules.map(({ file, ...m }) => [file, m])));
console.log(`Ranking quality: ${quality.queries} labelled queries over ${quality.records} records`);
console.table(quality.summary);

// ---- the summary, one table per runtime ------------------------------------------------
const yes = (ok) => (ok ? "yes" : "**no**");
const ms = (x) => (x < 1 ? x.toFixed(2) : x < 100 ? x.toFixed(1) : Math.round(x).toLocaleString("en"));
const kb = (bytes) => `${(bytes / 1000).toFixed(1)} KB`;
const count = (n) => n.toLocaleString("en");

function runtimeRows(r) {
  const rows = [];
  for (const [name, row] of Object.entries(r.io)) {
    const ratio = row["toolctx ÷ floor"].toFixed(2);
    if (name.startsWith("save")) {
      rows.push([`${name}: toolctx ÷ floor (seed ÷ floor)`, `${ratio} (${row["seed ÷ floor"].toFixed(2)})`, "≤ 1.05, below the seed", yes(met(name, row))]);
    } else if (name.endsWith("sequential")) {
      rows.push([`${name}: toolctx ÷ floor (seed ÷ floor)`, `${ratio} (${row["seed ÷ floor"].toFixed(2)})`, "≤ 1.00", yes(met(name, row))]);
    } else {
      rows.push([`${name}: toolctx ÷ sequential floor (÷ raw concurrent)`, `${ratio} (${row["toolctx ÷ raw concurrent"].toFixed(2)})`, "≤ 0.70", yes(met(name, row))]);
    }
  }
  for (const [name, row] of Object.entries(r.flow)) {
    rows.push([`${name}: toolctx ÷ seed (ms per flow)`, `${row["toolctx ÷ seed"].toFixed(2)} (${ms(row["toolctx (ms)"])} / ${ms(row["seed (ms)"])})`, "< 1", yes(row["toolctx ÷ seed"] < 1)]);
  }
  const p = r.pointers;
  rows.push([`getAllPointers at ${count(p.size)}, every filepath read (seed)`, `${ms(p["toolctx (ms)"])} ms (${ms(p["seed (ms)"])} ms)`, "≤ 50 ms", yes(p["toolctx (ms)"] <= 50)]);
  rows.push([`structuredClone(getAllPointers()) at ${count(p.size)}`, p.structuredClone ? "yes" : "no", "yes", yes(p.structuredClone)]);
  return rows;
}

function nodeRows() {
  const loaded = wasm.modules.filter((m) => m.loaded);
  const sum = (ms, key) => ms.reduce((s, m) => s + m[key], 0);
  const rawLoaded = sum(loaded, "raw");
  const gzipLoaded = sum(loaded, "gzip");
  const rawAll = sum(wasm.modules, "raw");
  return [
    [`memory per pointer at ${count(largest)} saved (heap + external, after GC)`, `${Math.round(memory.perPointer)} B (heap ${Math.round(memory.heap)} + external ${Math.round(memory.external)})`, "≤ 300 B", yes(memory.perPointer <= 300)],
    [`... once listed as an agent does (getAllPointers, getPointersForQuery → selectRelevantContexts; the JS mirror counts)`, `${Math.round(listed.perPointer)} B (heap ${Math.round(listed.heap)} + external ${Math.round(listed.external)})`, "≤ 300 B", yes(listed.perPointer <= 300)],
    ['`import("toolctx")` → ready, fresh node (with a first save)', `${wasm.importMs} ms (${wasm.importSaveMs} ms)`, "≤ 10 ms", yes(wasm.importMs <= 10)],
    [
      `wasm loaded by \`import { ContextManager }\`: ${loaded.map((m) => m.file).join(", ")}${wasm.unidentified ? ` + ${wasm.unidentified} unidentified` : ""}`,
      `${kb(rawLoaded)} raw / ${kb(gzipLoaded)} gzip`,
      "≤ 250 KB raw, ≤ 100 KB gzip",
      yes(rawLoaded <= 250_000 && gzipLoaded <= 100_000 && !wasm.unidentified),
    ],
    [`all wasm modules: ${wasm.modules.map((m) => `${m.file} ${kb(m.raw)} / ${kb(m.gzip)}`).join(", ")}`, `${kb(rawAll)} raw`, "≤ 450 KB raw", yes(rawAll <= 450_000)],
  ];
}

const tables = results.map((r) => [`${r.runtime} ${r.version}`, [...runtimeRows(r), ...(r.runtime === "node" ? nodeRows() : [])]]);
if (!results.some((r) => r.runtime === "node")) tables.push([`node ${process.version}`, nodeRows()]);
const out = [];
for (const [title, rows] of tables) {
  out.push("", `**${title}** (${rounds} rounds${quick ? ", quick" : ""})`, "", "| figure | measured | target | met |", "|---|---|---|---|");
  for (const row of rows) out.push(`| ${row.join(" | ")} |`);
}
out.push("", `| ranking (${quality.queries} queries, ${quality.records} records) | P@5 | MRR |`, "|---|---|---|");
for (const [name, s] of Object.entries(quality.summary)) out.push(`| ${name} | ${s["P@5"].toFixed(3)} | ${s.MRR.toFixed(3)} |`);
console.log(`\nSummary (KB = 1,000 bytes):\n${out.join("\n")}`);
