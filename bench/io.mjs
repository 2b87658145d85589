#!/usr/bin/env node
// Save and load through ContextManager on the runtime's file storage (nodeStorage,
// denoStorage or bunStorage), against the raw-I/O floor and a plain-JS implementation of
// the seed (bench/seed.mjs), in the same process. Runs in Node, Deno and Bun (bench/runtime.mjs).
//   node bench/io.mjs [--rounds N] [--explain] [--load]          (after `make pkg`)
//   deno run -A --no-check bench/io.mjs [...]; bun bench/io.mjs [...]
// --load: the load rows only (the two targets of issue 12 for loadContexts).
//
// save: one record at a time (each save awaited, as an agent loop does), at about 1 KB,
//   64 KB and 1 MB of record, in two shapes: an object of search hits and a long text.
//   - floor: JSON.stringify of the same record-shaped object + the runtime's plain
//     whole-file write (bench/runtime.mjs) into a fresh folder;
//   - toolctx: saveContext with the runtime's storage, persistThreshold 0 (every record written);
//   - seed: SeedContextManager.saveContext (pretty-printed JSON, one writeFile);
//   - not targets (`node bench/io.mjs` only): toolctx without content indexing, and with
//     nodeStorage({syncCreateMaxBytes: 2 MiB}).
// load: 100 records of 64 KB written by toolctx, against reading them one after another
//   with the runtime's read + JSON.parse (the floor):
//   - sequential: loadContexts([path]) for one path after another, each awaited;
//   - concurrent: loadContexts(paths), all in one call; for reference, all the raw reads
//     + JSON.parse at once (Promise.all), and the seed's loadContexts (sequential).
// This machine's disk has writeback stalls that can slow one round many times over, so
// the variants of one case run round-robin, save by save (the order rotating), each round
// in fresh folders; each figure is the median over rounds of the mean per save, and a
// ratio is the median of the per-round ratios.

import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { pathToFileURL } from "node:url";
import { ContextManager, memoryStorage } from "toolctx";
import { runtime } from "./runtime.mjs";
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

/** A fresh manager on the runtime's storage in `dir`, writing every record; `save(i)` saves the i-th call. */
function toolctxSaver(options) {
  return (dir, shape, result) => {
    const m = new ContextManager({ contextDir: dir, fileSystem: runtime.storage(), persistThreshold: 0, ...options });
    return (i) => m.saveContext(toolFor(shape), argsFor(shape, i), result);
  };
}

/** The save variants the targets are about: each makes a fresh store in `dir` and returns `save(i)`. */
const SAVERS = {
  floor(dir, shape, result) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const toolName = toolFor(shape);
    return (i) => {
      const args = argsFor(shape, i);
      const record = { v: 1, toolName, toolDescription: `${toolName} ${args.path}`, args, timestamp: new Date().toISOString(), result };
      return runtime.write(`${dir}/r${i}.json`, JSON.stringify(record));
    };
  },
  toolctx: toolctxSaver(),
  seed(dir, shape, result) {
    const m = new SeedContextManager({ contextDir: dir });
    return (i) => m.saveContext(toolFor(shape), argsFor(shape, i), result);
  },
};

/** Not targets (`node bench/io.mjs`): what content indexing and the asynchronous fs path cost. */
const NODE_EXTRAS = {
  // The same saves without content indexing (indexContentBytes 0): what indexing the
  // first 16 KiB of each result costs.
  "toolctx no content index": toolctxSaver({ indexContentBytes: 0 }),
  // The same saves with the adapter's synchronous exclusive create (openSync "wx" +
  // writeSync + closeSync, the documented syncCreateMaxBytes option that bunStorage sets
  // to 1 MiB): what the asynchronous fs path costs in Node.
  "toolctx sync create"(dir, shape, result) {
    const storage = runtime.storage({ syncCreateMaxBytes: 2 << 20 });
    const m = new ContextManager({ contextDir: dir, fileSystem: storage, persistThreshold: 0 });
    return (i) => m.saveContext(toolFor(shape), argsFor(shape, i), result);
  },
};

async function timeSaves(save, n) {
  const t0 = performance.now();
  for (let i = 0; i < n; i++) await save(i);
  return (performance.now() - t0) / n;
}


/**
 * Runs `variants` (name → async fn) round-robin, `rounds` times after `warm` warm-up
 * rounds, the order rotating; returns name → the list of ms per round. `check` sees each result.
 */
async function roundRobin(variants, rounds, warm, check = () => {}) {
  const names = Object.keys(variants);
  const times = Object.fromEntries(names.map((n) => [n, []]));
  for (let r = -warm; r < rounds; r++) {
    for (let k = 0; k < names.length; k++) {
      const name = names[(k + r + warm) % names.length];
      const t0 = performance.now();
      check(name, await variants[name]());
      if (r >= 0) times[name].push(performance.now() - t0);
    }
  }
  return times;
}

/** The median over rounds of `times[name][r] ÷ times[base][r]`. */
const ratio = (times, name, base) => median(times[name].map((t, r) => t / times[base][r]));

async function benchSave(top, rounds, savers) {
  const names = Object.keys(savers);
  const rows = {};
  let dirs = 0;
  const fresh = () => `${top}/s${dirs++}`;
  // Warm-up: JIT, the wasm instance, the folder cache of the file system.
  for (const name of names) {
    for (const shape of Object.keys(SHAPES)) await timeSaves(savers[name](fresh(), shape, SHAPES[shape](64 * KB)), 50);
  }
  rmSync(top, { recursive: true, force: true });
  for (const size of SIZES) {
    for (const shape of Object.keys(SHAPES)) {
      const result = SHAPES[shape](size.bytes);
      const times = Object.fromEntries(names.map((n) => [n, []]));
      for (let r = 0; r < rounds; r++) {
        const save = names.map((name) => savers[name](fresh(), shape, result));
        const total = names.map(() => 0);
        for (let i = 0; i < size.saves; i++) {
          for (let k = 0; k < names.length; k++) {
            const v = (k + i + r) % names.length;
            const t0 = performance.now();
            await save[v](i);
            total[v] += performance.now() - t0;
          }
        }
        names.forEach((name, v) => times[name].push(total[v] / size.saves));
        rmSync(top, { recursive: true, force: true });
      }
      const row = {
        "floor (ms)": +median(times.floor).toFixed(3),
        "toolctx (ms)": +median(times.toolctx).toFixed(3),
        "seed (ms)": +median(times.seed).toFixed(3),
      };
      for (const name of names.filter((n) => n !== "floor")) row[`${name} ÷ floor`] = +ratio(times, name, "floor").toFixed(2);
      rows[`save ${size.label} ${shape}`] = row;
    }
  }
  return rows;
}

async function benchLoad(top, rounds) {
  const dir = `${top}/load`;
  const m = new ContextManager({ contextDir: dir, fileSystem: runtime.storage(), persistThreshold: 0 });
  const result = hitsPayload(64 * KB);
  const paths = [];
  for (let i = 0; i < LOAD_RECORDS; i++) paths.push(await m.saveContext("grep", argsFor("hits", i), result));
  // For reference (not a target): the same loads with every read asynchronous, so the
  // figure shows what the adapters' blocking reads of small files (syncReadMaxBytes) give.
  const asyncReads = new ContextManager({ contextDir: dir, fileSystem: runtime.storage({ syncReadMaxBytes: 0 }), readOnly: true });
  const seed = new SeedContextManager({ contextDir: dir });
  const times = await roundRobin(
    {
      floor: async () => {
        const out = [];
        for (const p of paths) out.push(JSON.parse(await runtime.read(p)));
        return out;
      },
      "toolctx sequential": async () => {
        const out = [];
        for (const p of paths) out.push(...(await m.loadContexts([p])));
        return out;
      },
      "toolctx sequential, async reads": async () => {
        const out = [];
        for (const p of paths) out.push(...(await asyncReads.loadContexts([p])));
        return out;
      },
      "toolctx concurrent": () => m.loadContexts(paths),
      "raw concurrent": () => Promise.all(paths.map(async (p) => JSON.parse(await runtime.read(p)))),
      seed: () => seed.loadContexts(paths),
    },
    rounds * 3,
    3,
    (name, records) => {
      if (records.length !== LOAD_RECORDS) throw new Error(`${name} loaded ${records.length} records`);
    },
  );
  const ms = (name) => +median(times[name]).toFixed(2);
  const over = (name, base = "floor") => +ratio(times, name, base).toFixed(2);
  const label = `load ${LOAD_RECORDS} × 64 KB`;
  return {
    [`${label} sequential`]: {
      "floor (ms)": ms("floor"),
      "toolctx (ms)": ms("toolctx sequential"),
      "seed (ms)": ms("seed"),
      "toolctx ÷ floor": over("toolctx sequential"),
      "seed ÷ floor": over("seed"),
      "toolctx, async reads ÷ floor": over("toolctx sequential, async reads"),
    },
    [`${label} concurrent`]: {
      "floor (ms)": ms("floor"),
      "toolctx (ms)": ms("toolctx concurrent"),
      "raw concurrent (ms)": ms("raw concurrent"),
      "toolctx ÷ floor": over("toolctx concurrent"),
      "toolctx ÷ raw concurrent": over("toolctx concurrent", "raw concurrent"),
      "raw concurrent ÷ floor": over("raw concurrent"),
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
          "storage write (same bytes)": () => {
            const dir = fresh();
            const s = runtime.storage();
            return (i) => s.write(`${dir}/r${i}.json`, bytes, { exclusive: true });
          },
          "raw write (same text)": () => {
            const dir = fresh();
            return (i) => runtime.write(`${dir}/r${i}.json`, json);
          },
          "floor (stringify + raw write)": () => SAVERS.floor(fresh(), shape, result),
          "toolctx saveContext, runtime storage": () => SAVERS.toolctx(fresh(), shape, result),
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
    const m = new ContextManager({ contextDir: dir, fileSystem: runtime.storage(), persistThreshold: 0 });
    const result = hitsPayload(64 * KB);
    const paths = [];
    for (let i = 0; i < LOAD_RECORDS; i++) paths.push(await m.saveContext("grep", argsFor("hits", i), result));
    const texts = await Promise.all(paths.map((p) => runtime.read(p)));
    const storage = runtime.storage();
    const times = await roundRobin(
      {
        "raw read, one after another": async () => {
          for (const p of paths) await runtime.read(p);
        },
        "JSON.parse of the texts": () => texts.map((t) => JSON.parse(t)),
        "storage read, all at once": () => Promise.all(paths.map((p) => storage.read(p, { root: dir }))),
        "floor (raw read + JSON.parse, sequential)": async () => {
          for (const p of paths) JSON.parse(await runtime.read(p));
        },
        loadContexts: () => m.loadContexts(paths),
      },
      rounds * 3,
      3,
    );
    rows[`load ${LOAD_RECORDS} × 64 KB`] = Object.fromEntries(Object.entries(times).map(([n, t]) => [n, +median(t).toFixed(2)]));
  } finally {
    rmSync(top, { recursive: true, force: true });
  }
  return rows;
}

/**
 * Targets from issue 12, on "toolctx ÷ floor": a save ≤ 1.05× at every size (and below the
 * seed's ratio in the same run); a load ≤ 1.0× sequential and ≤ 0.7× concurrent.
 */
export function target(row) {
  if (row.startsWith("load")) return row.endsWith("concurrent") ? 0.7 : 1.0;
  return 1.05;
}

/** Whether a row of benchIo meets its target. */
export function met(name, row) {
  const ratio = row["toolctx ÷ floor"];
  return ratio <= target(name) && (!name.startsWith("save") || ratio < row["seed ÷ floor"]);
}

/**
 * Save and load rows (name → figures), in the runtime running this. `extras` adds the
 * save variants that are not targets (Node); `saves: false` leaves the save rows out.
 */
export async function benchIo({ rounds = 7, extras = false, saves = true } = {}) {
  const top = mkdtempSync(`${tmpdir()}/toolctx-io-`);
  try {
    const rows = saves ? await benchSave(`${top}/save`, rounds, extras ? { ...SAVERS, ...NODE_EXTRAS } : SAVERS) : {};
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
  const rows = process.argv.includes("--load")
    ? await benchIo({ rounds, saves: false })
    : await benchIo({ rounds, extras: runtime.name === "node" });
  console.log(`Save and load on ${runtime.name} ${runtime.version} (${tmpdir()}): median ms per save / per load of all records, ${rounds} rounds, round-robin`);
  console.table(rows);
}
