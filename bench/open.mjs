#!/usr/bin/env node
// open() of a store another process wrote → its first ranked query (SPEC §4, issue 24's
// target: ≤ 250 ms for 10,000 records on fs, without reading the records). The records
// are real text files (the .js, .ts and .md files of node_modules, the first N under 64
// KB, as file reads). Three ways to open the same store, in one run:
//   segments   ContextManager.open({contextDir}) from the index segments;
//   rebuild    the segments removed: every record read and indexed (what open cost before);
//   raw read   the floor of a rebuild: readFile + JSON.parse of every record, nothing indexed.
// Also: the segments' bytes on storage per record.
//   node bench/open.mjs [records]
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ContextManager } from "toolctx";

const N = Number(process.argv[2] ?? 10_000);
const files = [];
(function walk(dir) {
  if (files.length >= N) return;
  let names;
  try {
    names = readdirSync(dir, { withFileTypes: true });
  } catch {
    return;
  }
  for (const d of names) {
    if (files.length >= N) return;
    const p = join(dir, d.name);
    if (d.isDirectory()) walk(p);
    else if (/\.(js|ts|md)$/.test(d.name) && statSync(p).size < 64 * 1024) files.push(p);
  }
})("node_modules");

const dir = mkdtempSync(`${tmpdir()}/toolctx-open-`);
const writer = await ContextManager.open({ contextDir: dir });
let bytes = 0;
const batch = [];
for (const path of files) {
  const text = readFileSync(path, "utf8");
  bytes += text.length;
  batch.push(writer.saveContext("readFile", { path }, text));
  if (batch.length === 100) await Promise.all(batch.splice(0));
}
await Promise.all(batch);
await writer.close();
const segmentDir = join(dir, ".index");
const segments = readdirSync(segmentDir).filter((n) => n.endsWith(".seg"));
const segmentBytes = segments.reduce((sum, n) => sum + statSync(join(segmentDir, n)).size, 0);

const QUERY = "parse the configuration file and return the options";
async function time(fn) {
  const t0 = performance.now();
  const v = await fn();
  return [performance.now() - t0, v];
}
const seed = (m) => m.selectRelevantContexts(QUERY, m.getAllPointers()).slice(0, 5);
// The two opens are compared through selectRelevant: over segments read by range the
// synchronous selectRelevantContexts ranks by metadata (docs/api.md), the rebuild by content.
const first = async (m) => (await m.selectRelevant(QUERY, { limit: 5 })).map((r) => r.filepath);

// The parts, from segments: open(); its first selectRelevant (the engine's query); the
// seed's flow after it (getAllPointers copies every pointer to JS, then ranks them).
const [openOnly, opened] = await time(() => ContextManager.open({ contextDir: dir, readOnly: true }));
const [engineQuery] = await time(() => opened.selectRelevant(QUERY, { limit: 5 }));
const [seedFlow] = await time(() => seed(opened));
opened.free();
const [fromSegments, a] = await time(async () => {
  const m = await ContextManager.open({ contextDir: dir, readOnly: true });
  return [m.size, await first(m)];
});
const [rawRead] = await time(async () => {
  const names = readdirSync(dir).filter((n) => n.endsWith(".json"));
  await Promise.all(names.map(async (n) => JSON.parse(await readFile(join(dir, n), "utf8"))));
});
if (!process.env.KEEP) rmSync(segmentDir, { recursive: true });
const [rebuilt, b] = await time(async () => {
  const m = await ContextManager.open({ contextDir: dir, readOnly: true });
  return [m.size, await first(m)];
});
if (!process.env.KEEP) rmSync(dir, { recursive: true, force: true }); else console.log(dir);

if (a[0] !== files.length || b[0] !== files.length) throw new Error(`sizes ${a[0]} / ${b[0]} / ${files.length}`);
if (JSON.stringify(a[1]) !== JSON.stringify(b[1])) throw new Error("the two opens rank apart");
const ms = (x) => `${x.toFixed(0)} ms`;
console.log(`open() → first ranked query, ${files.length} records (${(bytes / 1e6).toFixed(1)} MB of real text files), node fs:`);
console.log(`  from segments (${segments.length})  ${ms(fromSegments)}   (${(fromSegments / rawRead).toFixed(2)}× reading every record raw)`);
console.log(`    of which, another run: open() ${ms(openOnly)}; then selectRelevant ${ms(engineQuery)}; getAllPointers + selectRelevantContexts ${ms(seedFlow)}`);
console.log(`  rebuilt from the records           ${ms(rebuilt)}   (${(rebuilt / rawRead).toFixed(2)}×)`);
console.log(`  raw readFile + JSON.parse of all   ${ms(rawRead)}`);
console.log(`  segments on storage: ${(segmentBytes / files.length / 1024).toFixed(2)} KiB per record (${((100 * segmentBytes) / bytes).toFixed(0)}% of the text)`);
