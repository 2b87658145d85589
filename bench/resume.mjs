#!/usr/bin/env node
// Resume time for a session of 10,000 records (node fs): open({session}) with the
// manifest up to date (no record is read), and with the manifest lost (every record is
// read and the manifest rebuilt). The floor: reading and JSON.parse of the manifest.
//   node bench/resume.mjs [records]
import { mkdtempSync, readFileSync, rmSync, unlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { ContextManager } from "toolctx";

const N = Number(process.argv[2] ?? 10_000);
const dir = mkdtempSync(`${tmpdir()}/toolctx-resume-`);
const m = await ContextManager.open({ contextDir: dir, session: true, persistThreshold: 0 });
const batch = [];
for (let i = 0; i < N; i++) {
  batch.push(m.saveContext("readFile", { path: `src/module${i}/file${i % 97}.ts`, limit: i }, { text: `export const x${i} = ${i};`, lines: 1 }, { taskId: i % 10 }));
  if (batch.length === 200) await Promise.all(batch.splice(0));
}
await Promise.all(batch);
await m.close();
const manifestPath = `${dir}/sessions/${m.sessionId}/.manifest.json`;

function time(fn) {
  const t0 = performance.now();
  return Promise.resolve(fn()).then((v) => [performance.now() - t0, v]);
}

const [floor] = await time(() => JSON.parse(readFileSync(manifestPath, "utf8")));
const [fromManifest, r1] = await time(() => ContextManager.open({ contextDir: dir, session: m.sessionId }));
unlinkSync(manifestPath);
const [rebuilt, r2] = await time(() => ContextManager.open({ contextDir: dir, session: m.sessionId }));
rmSync(dir, { recursive: true, force: true });

console.log(`Resume of a ${N.toLocaleString()}-record session (node fs)`);
console.table({
  "read + JSON.parse of the manifest (floor)": { ms: +floor.toFixed(1), pointers: N },
  "open({session}), manifest up to date": { ms: +fromManifest.toFixed(1), pointers: r1.size, "÷ floor": +(fromManifest / floor).toFixed(2) },
  "open({session}), manifest lost": { ms: +rebuilt.toFixed(1), pointers: r2.size, "÷ floor": +(rebuilt / floor).toFixed(2) },
});
