#!/usr/bin/env node
// Save and load through ContextManager on node fs, against the raw-I/O floor and a
// plain-JS implementation of the seed (bench/seed.mjs), in the same process.
//   node bench/io.mjs [--rounds N] [--explain]          (after `make pkg`)
//
// save: one record at a time (each save awaited, as an agent loop does), at about 1 KB,
//   64 KB and 1 MB of record, in two shapes: an object of search hits and a long text.
//   - floor: JSON.stringify of the same record-shaped object + fs.promises.writeFile
//     (flag "wx", mode 0600: a fresh file, as a record is created) into a fresh folder;
//   - toolctx: saveContext with nodeStorage, persistThreshold 0 (every record written);
//   - seed: SeedContextManager.saveContext (pretty-printed JSON, one writeFile);
//   - for reference, toolctx with nodeStorage({syncCreateMaxBytes: 2 MiB}).
// load: 100 records of 64 KB written by toolctx; loadContexts(paths) against reading
//   them one after another with readFile + JSON.parse (the floor), the seed's
//   loadContexts, and (for reference) all readFile + JSON.parse at once.
// This machine's disk has writeback stalls that can slow one round many times over, so
// the variants of one case run round-robin, save by save (the order rotating), each round
// in fresh folders; each figure is the median over rounds of the mean per save, and a
// ratio is the median of the per-round ratios.

import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { pathToFileURL } from "node:url";
import { ContextManager, memoryStorage } from "toolctx";
import { nodeStorage } from "toolctx/node";
import { SeedContextManager } from "./seed.mjs";

const KB = 1024;
const SIZES = [
  { label: "1 KB", bytes: KB, saves: 300 },
  { label: "64 KB", bytes: 64 * KB, saves: 100 },
  { label: "1 MB", bytes: 1024 * KB, saves: 12 },
];
const LOAD_RECORDS = 100;

const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

/** A grep-like result: `{query, total, hits: [{path, line, score, text}]}` of about `bytes`. */
export function hitsPayload(bytes) {
  const hits = [];
  let size = 40;
  for (let i = 0; size < bytes; i++) {
    const hit = {
      path: `src/${["auth", "billing", "search", "db"][i % 4]}/module_${i % 37}.ts`,
      line: 10 + ((i * 37) % 900),
      score: +(1 / (1 + i)).toFixed(4),
      text: `  const token = await session.verify(request.headers.authorization, { maxAge: ${i} });`,
    };
    size += JSON.stringify(hit).length + 1;
    hits.push(hit);
  }
  return { query: "session.verify", total: hits.length, hits };
}

/** A file's text of about `bytes`: `{path, encoding, content}`. */
export function textPayload(bytes) {
  const lines = [];
  let size = 60;
  for (let i = 0; size < bytes; i++) {
    const line = `export function handler${i}(req, res) { return res.status(200).json({ ok: true, id: ${i} }); }`;
    size += line.length + 2;
    lines.push(line);
  }
  return { path: "src/routes/api.ts", encoding: "utf8", content: lines.join("\n") };
}

const SHAPES = { hits: hitsPayload, text: textPayload };
const argsFor = (shape, i) =>
  shape === "hits" ? { pattern: "session.verify", path: "src", maxResults: 500 + i } : { path: `src/routes/api_${i}.ts` };
const toolFor = (shape) => (shape === "hits" ? "grep" : "readFile");

/** The save variants: each makes a fresh store in `dir` and returns `save(i)`. */
const SAVERS = {
  floor(dir, shape, result) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const toolName = toolFor(shape);
    return (i) => {
      const args = argsFor(shape, i);
      const record = { v: 1, toolName, toolDescription: `${toolName} ${args.path}`, args, timestamp: new Date().toISOString(), result };
      return writeFile(`${dir}/r${i}.json`, JSON.stringify(record), { flag: "wx", mode: 0o600 });
    };
  },
  toolctx(dir, shape, result) {
    const m = new ContextManager({ contextDir: dir, fileSystem: nodeStorage(), persistThreshold: 0 });
    return (i) => m.saveContext(toolFor(shape), argsFor(shape, i), result);
  },
  // Not a target: the same saves without content indexing (indexContentBytes 0), to
  // show what indexing the first 16 KiB of each result costs.
  "toolctx no content index"(dir, shape, result) {
    const m = new ContextManager({ contextDir: dir, fileSystem: nodeStorage(), persistThreshold: 0, indexContentBytes: 0 });
    return (i) => m.saveContext(toolFor(shape), argsFor(shape, i), result);
  },
  // Not a target: the same saves with the adapter's synchronous exclusive create
  // (openSync "wx" + writeSync + closeSync, the documented syncCreateMaxBytes option that
  // bunStorage sets to 1 MiB), to show what the asynchronous fs path costs in Node.
  "toolctx sync create"(dir, shape, result) {
    const storage = nodeStorage({ syncCreateMaxBytes: 2 << 20 });
    const m = new ContextManager({ contextDir: dir, fileSystem: storage, persistThreshold: 0 });
    return (i) => m.saveContext(toolFor(shape), argsFor(shape, i), result);
  },
  seed(dir, shape, result) {
    const m = new SeedContextManager({ contextDir: dir });
    return (i) => m.saveContext(toolFor(shape), argsFor(shape, i), result);
  },
};

async function timeSaves(save, n) {
  const t0 = performance.now();
  for (let i = 0; i < n; i++) await save(i);
  return (performance.now() - t0) / n;
}

async function benchSave(top, rounds) {
  const names = Object.keys(SAVERS);
  const rows = {};
  let dirs = 0;
  const fresh = () => `${top}/s${dirs++}`;
  // Warm-up: JIT, the wasm instance, the folder cache of the file system.
  for (const name of names) {
    for (const shape of Object.keys(SHAPES)) await timeSaves(SAVERS[name](fresh(), shape, SHAPES[shape](64 * KB)), 50);
  }
  rmSync(top, { recursive: true, force: true });
  for (const size of SIZES) {
    for (const shape of Object.keys(SHAPES)) {
      const result = SHAPES[shape](size.bytes);
      const times = Object.fromEntries(names.map((n) => [n, []]));
      for (let r = 0; r < rounds; r++) {
        const savers = names.map((name) => SAVERS[name](fresh(), shape, result));
        const total = names.map(() => 0);
        for (let i = 0; i < size.saves; i++) {
          for (let k = 0; k < names.length; k++) {
            const v = (k + i + r) % names.length;
            const t0 = performance.now();
            await savers[v](i);
            total[v] += performance.now() - t0;
          }
        }
        names.forEach((name, v) => times[name].push(total[v] / size.saves));
        rmSync(top, { recursive: true, force: true });
      }
      const ratio = (name) => median(times[name].map((t, r) => t / times.floor[r]));
      rows[`save ${size.label} ${shape}`] = {
        "floor (ms)": +median(times.floor).toFixed(3),
        "toolctx (ms)": +median(times.toolctx).toFixed(3),
        "seed (ms)": +median(times.seed).toFixed(3),
        "toolctx ÷ floor": +ratio("toolctx").toFixed(2),
        "seed ÷ floor": +ratio("seed").toFixed(2),
        "toolctx sync create ÷ floor": +ratio("toolctx sync create").toFixed(2),
        "no content index ÷ floor": +ratio("toolctx no content index").toFixed(2),
      };
    }
  }
  return rows;
}

async function benchLoad(top, rounds) {
  const dir = `${top}/load`;
  const m = new ContextManager({ contextDir: dir, fileSystem: nodeStorage(), persistThreshold: 0 });
  const result = hitsPayload(64 * KB);
  const paths = [];
  for (let i = 0; i < LOAD_RECORDS; i++) paths.push(await m.saveContext("grep", argsFor("hits", i), result));
  const seed = new SeedContextManager({ contextDir: dir });
  const variants = {
    floor: async () => {
      const out = [];
      for (const p of paths) out.push(JSON.parse(await readFile(p, "utf8")));
      return out;
    },
    toolctx: () => m.loadContexts(paths),
    seed: () => seed.loadContexts(paths),
    "parallel readFile": () => Promise.all(paths.map(async (p) => JSON.parse(await readFile(p, "utf8")))),
  };
  const names = Object.keys(variants);
  const times = Object.fromEntries(names.map((n) => [n, []]));
  for (let r = -3; r < rounds * 3; r++) {
    for (let k = 0; k < names.length; k++) {
      const name = names[(k + r + 3) % names.length];
      const t0 = performance.now();
      const records = await variants[name]();
      const ms = performance.now() - t0;
      if (records.length !== LOAD_RECORDS) throw new Error(`${name} loaded ${records.length} records`);
      if (r >= 0) times[name].push(ms);
    }
  }
  const ratio = (name) => median(times[name].map((t, r) => t / times.floor[r]));
  return {
    [`load ${LOAD_RECORDS} × 64 KB`]: {
      "floor (ms)": +median(times.floor).toFixed(2),
      "toolctx (ms)": +median(times.toolctx).toFixed(2),
      "seed (ms)": +median(times.seed).toFixed(2),
      "toolctx ÷ floor": +ratio("toolctx").toFixed(2),
      "seed ÷ floor": +ratio("seed").toFixed(2),
      "parallel readFile ÷ floor": +ratio("parallel readFile").toFixed(2),
    },
  };
}

/**
 * Where a save's and a load's time goes (`--explain`): each part timed alone, the parts
 * of one case round-robin, medians. ms per save (per load of all records for load).
 */
export async function explainIo({ rounds = 7 } = {}) {
  const top = mkdtempSync(`${tmpdir()}/toolctx-explain-`);
  const encoder = new TextEncoder();
  let dirs = 0;
  const fresh = () => {
    const dir = `${top}/e${dirs++}`;
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    return dir;
  };
  // What wasm-bindgen 0.2 does with a Rust `String` argument: a charCodeAt loop over
  // the ASCII prefix into wasm memory, then encodeInto for the rest.
  const charLoop = (text, into) => {
    let i = 0;
    for (; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c > 0x7f) break;
      into[i] = c;
    }
    if (i < text.length) encoder.encodeInto(text.slice(i), into.subarray(i));
  };
  const rows = {};
  try {
    for (const size of SIZES) {
      for (const shape of Object.keys(SHAPES)) {
        const result = SHAPES[shape](size.bytes);
        const tool = toolFor(shape);
        const json = JSON.stringify({ v: 1, toolName: tool, args: argsFor(shape, 0), timestamp: new Date().toISOString(), result });
        const bytes = encoder.encode(json);
        const scratch = new Uint8Array(bytes.length * 3);
        const parts = {
          "JSON.stringify": () => () => JSON.stringify(result),
          "string → wasm copy (charCodeAt loop)": () => () => charLoop(json, scratch),
          "string → bytes (encodeInto)": () => () => encoder.encodeInto(json, scratch),
          "saveContext, memory storage": () => {
            const m = new ContextManager({ contextDir: "/x", fileSystem: memoryStorage(), persistThreshold: 0, memoryBudget: Infinity });
            return (i) => m.saveContext(tool, argsFor(shape, i), result);
          },
          "nodeStorage write (same bytes)": () => {
            const dir = fresh();
            const s = nodeStorage();
            return (i) => s.write(`${dir}/r${i}.json`, bytes, { exclusive: true });
          },
          "raw writeFile wx (same bytes)": () => {
            const dir = fresh();
            return (i) => writeFile(`${dir}/r${i}.json`, bytes, { flag: "wx", mode: 0o600 });
          },
          "floor (stringify + writeFile)": () => SAVERS.floor(fresh(), shape, result),
          "toolctx saveContext, nodeStorage": () => SAVERS.toolctx(fresh(), shape, result),
        };
        const names = Object.keys(parts);
        const times = Object.fromEntries(names.map((n) => [n, []]));
        for (let r = -1; r < rounds; r++) {
          for (let k = 0; k < names.length; k++) {
            const name = names[(k + r + 1) % names.length];
            const t = await timeSaves(parts[name](), size.saves);
            if (r >= 0) times[name].push(t);
          }
          rmSync(top, { recursive: true, force: true });
        }
        rows[`save ${size.label} ${shape}`] = Object.fromEntries(names.map((n) => [n, +median(times[n]).toFixed(3)]));
      }
    }
    // Load: the floor's two halves, the adapter's reads, the whole loadContexts.
    const dir = fresh();
    const m = new ContextManager({ contextDir: dir, fileSystem: nodeStorage(), persistThreshold: 0 });
    const result = hitsPayload(64 * KB);
    const paths = [];
    for (let i = 0; i < LOAD_RECORDS; i++) paths.push(await m.saveContext("grep", argsFor("hits", i), result));
    const texts = await Promise.all(paths.map((p) => readFile(p, "utf8")));
    const storage = nodeStorage();
    const parts = {
      "readFile, one after another": async () => {
        for (const p of paths) await readFile(p, "utf8");
      },
      "JSON.parse of the texts": () => texts.map((t) => JSON.parse(t)),
      "nodeStorage read, all at once": () => Promise.all(paths.map((p) => storage.read(p, { root: dir }))),
      "floor (readFile + JSON.parse, sequential)": async () => {
        for (const p of paths) JSON.parse(await readFile(p, "utf8"));
      },
      loadContexts: () => m.loadContexts(paths),
    };
    const names = Object.keys(parts);
    const times = Object.fromEntries(names.map((n) => [n, []]));
    for (let r = -3; r < rounds * 3; r++) {
      for (let k = 0; k < names.length; k++) {
        const name = names[(k + r + 3) % names.length];
        const t0 = performance.now();
        await parts[name]();
        if (r >= 0) times[name].push(performance.now() - t0);
      }
    }
    rows[`load ${LOAD_RECORDS} × 64 KB`] = Object.fromEntries(names.map((n) => [n, +median(times[n]).toFixed(2)]));
  } finally {
    rmSync(top, { recursive: true, force: true });
  }
  return rows;
}

/** Targets from issue 5: save ≤ 1.10× the floor at 1 KB, ≤ 1.05× at 64 KB and 1 MB; load ≤ 0.7×. */
export function target(row) {
  if (row.startsWith("load")) return 0.7;
  return row.includes(" 1 KB ") ? 1.1 : 1.05;
}

export async function benchIo({ rounds = 7 } = {}) {
  const top = mkdtempSync(`${tmpdir()}/toolctx-io-`);
  try {
    const rows = await benchSave(`${top}/save`, rounds);
    Object.assign(rows, await benchLoad(top, rounds));
    for (const [name, row] of Object.entries(rows)) row.target = `≤ ${target(name).toFixed(2)}`;
    return rows;
  } finally {
    rmSync(top, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const at = process.argv.indexOf("--rounds");
  const rounds = at > 0 ? Number(process.argv[at + 1]) : 7;
  if (process.argv.includes("--explain")) {
    const rows = await explainIo({ rounds });
    console.log(`Where the time goes: each part alone, ms per save (save rows) or per load of ${LOAD_RECORDS} records (load row), medians of ${rounds} rounds`);
    for (const [name, row] of Object.entries(rows)) {
      console.log(name);
      console.table(row);
    }
    process.exit(0);
  }
  const rows = await benchIo({ rounds });
  console.log(`Save and load on node fs (${tmpdir()}): median ms per save / per load of all records, ${rounds} rounds, round-robin`);
  console.table(rows);
}
