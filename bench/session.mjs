#!/usr/bin/env node
// What a session and retention add to a save (Node, nodeStorage, persistThreshold 0): saves
// of about 1 KB and 64 KB of search hits, one at a time (each awaited), against the raw-I/O
// floor of bench/io.mjs (JSON.stringify + the runtime's whole-file write), in the same process:
//   - toolctx: no session, no retention (a save with no follow-up);
//   - session: `session: true` (the manifest written at most once a second or every 64 records);
//   - retention: `retention: {maxRecords: 1e6}` (checked after every save; nothing to evict);
//   - evicting: `retention: {maxRecords: 50}` (each save past the 50th removes the oldest record).
// With `--against DIR` (a built pkg/ of another revision, e.g. main's), the same variants of
// that package run in the same rounds, prefixed `against`, so a ratio compares the two builds.
// The variants run round-robin, save by save (the order rotating), each round in fresh folders;
// a figure is the median over rounds of the mean per save ÷ the floor's in that round.
//   node bench/session.mjs [--rounds N] [--against ../main/pkg]     (after `make pkg`)

import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { ContextManager } from "toolctx";
import { nodeStorage } from "toolctx/node";
import { hitsPayload } from "./io.mjs";
import { runtime } from "./runtime.mjs";

const arg = (name, fallback) => {
  const at = process.argv.indexOf(name);
  return at > 0 ? process.argv[at + 1] : fallback;
};
const rounds = Number(arg("--rounds", 7));
const against = arg("--against");
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const SIZES = [
  { label: "1 KB", bytes: 1024, saves: 200 },
  { label: "64 KB", bytes: 64 * 1024, saves: 60 },
];
const OPTIONS = {
  toolctx: {},
  session: { session: true },
  retention: { retention: { maxRecords: 1e6 } },
  evicting: { retention: { maxRecords: 50 } },
};

/** The variants of one package: name → (dir) → save(i). */
function variantsOf(Manager, storage, prefix) {
  const out = {};
  for (const [name, options] of Object.entries(OPTIONS)) {
    out[`${prefix}${name}`] = async (dir, result) => {
      const m = options.session
        ? await Manager.open({ contextDir: dir, fileSystem: storage(), persistThreshold: 0, ...options })
        : new Manager({ contextDir: dir, fileSystem: storage(), persistThreshold: 0, ...options });
      return (i) => m.saveContext("grep", { pattern: "session.verify", path: "src", maxResults: i }, result);
    };
  }
  return out;
}

const variants = {
  async floor(dir, result) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    return (i) => {
      const args = { pattern: "session.verify", path: "src", maxResults: i };
      const record = { v: 1, toolName: "grep", toolDescription: "grep", args, timestamp: new Date().toISOString(), result };
      return runtime.write(`${dir}/r${i}.json`, JSON.stringify(record));
    };
  },
  ...variantsOf(ContextManager, () => nodeStorage(), ""),
};
if (against) {
  const pkg = resolve(against);
  const other = await import(pathToFileURL(`${pkg}/index.node.js`).href);
  Object.assign(variants, variantsOf(other.ContextManager, () => nodeStorage(), "against "));
}

const names = Object.keys(variants);
const top = mkdtempSync(`${tmpdir()}/toolctx-session-`);
let dirs = 0;
const rows = {};
try {
  for (const size of SIZES) {
    const result = hitsPayload(size.bytes);
    const times = Object.fromEntries(names.map((n) => [n, []]));
    for (let r = -1; r < rounds; r++) {
      const saves = [];
      for (const name of names) saves.push(await variants[name](`${top}/d${dirs++}`, result));
      const total = names.map(() => 0);
      for (let i = 0; i < size.saves; i++) {
        for (let k = 0; k < names.length; k++) {
          const v = (k + i + r + 1) % names.length;
          const t0 = performance.now();
          await saves[v](i);
          total[v] += performance.now() - t0;
        }
      }
      if (r >= 0) names.forEach((name, v) => times[name].push(total[v] / size.saves));
      rmSync(top, { recursive: true, force: true });
    }
    const row = { "floor (ms)": +median(times.floor).toFixed(3) };
    for (const name of names.filter((n) => n !== "floor")) {
      row[`${name} ÷ floor`] = +median(times[name].map((t, r) => t / times.floor[r])).toFixed(2);
    }
    rows[`save ${size.label} hits`] = row;
  }
} finally {
  rmSync(top, { recursive: true, force: true });
}
console.log(`Saves with a session and with retention on node ${process.version}: median of ${rounds} rounds, round-robin${against ? `; "against": ${against}` : ""}`);
for (const [name, row] of Object.entries(rows)) {
  console.log(name);
  console.table(row);
}
