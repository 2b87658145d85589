#!/usr/bin/env node
// Adapter throughput in every runtime, one table (make bench).
//   node bench/run-adapters.mjs          (after `make pkg`)
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { tmpdir } from "node:os";
import { chromium } from "playwright-core";
import { nodeStorage } from "toolctx/node";
import { memoryStorage } from "toolctx/memory";
import { benchAdapters } from "./adapters.mjs";
import { launchChromium, repoRoot, serve } from "../tests/js/browser/serve.mjs";

const top = mkdtempSync(`${tmpdir()}/toolctx-bench-`);
// The floor: the same bytes through fs.promises.writeFile (flag wx) and readFile.
const raw = {
  write: async (p, d) => {
    await mkdir(dirname(p), { recursive: true });
    await writeFile(p, d, { flag: "wx", mode: 0o600 });
  },
  read: (p) => readFile(p),
};
const rows = await benchAdapters(
  {
    "node: raw fs.promises (floor)": () => raw,
    "node: node": () => nodeStorage(),
    "node: memory": () => memoryStorage(),
  },
  (t) => `${top}/${t}`,
);
rmSync(top, { recursive: true, force: true });

const bin = (name) => `${repoRoot}node_modules/.bin/${name}`;
const opts = { cwd: repoRoot, encoding: "utf8" };
Object.assign(rows, JSON.parse(execFileSync(bin("deno"), ["run", "-A", "--no-check", "bench/adapters-deno.mjs"], opts)));
Object.assign(rows, JSON.parse(execFileSync(bin("bun"), ["bench/adapters-bun.mjs"], opts)));

const server = await serve();
const browser = await launchChromium(chromium);
try {
  const page = await browser.newPage();
  await page.goto(`${server.url}/bench/adapters.html`);
  await page.waitForFunction(() => window.__rows !== undefined, null, { timeout: 300_000 });
  Object.assign(rows, await page.evaluate(() => window.__rows));
} finally {
  await browser.close();
  server.close();
}

// Each runtime's adapters as a ratio of its raw floor (1.00 = as fast as raw I/O).
for (const runtime of ["node", "deno", "bun"]) {
  const floor = Object.entries(rows).find(([k]) => k.startsWith(`${runtime}: raw`))?.[1];
  for (const [name, row] of Object.entries(rows)) {
    if (!name.startsWith(`${runtime}: `) || name.includes("raw") || !floor) continue;
    row["write 64KB ÷ floor"] = +(row["write 64KB"] / floor["write 64KB"]).toFixed(2);
  }
}
console.log("Storage adapters: operations per second (exclusive create / whole-file read), median of 5 rounds after a warm-up, round-robin");
console.table(rows);
