// Durability under SIGKILL (SPEC §4, §5): a child process saves 1,000 records into a
// session on the real file system and prints each filepath once its save resolved; the
// parent kills it at a random moment, resumes the session, and checks that every
// acknowledged save is restored and loadable and that no torn record is visible.
// Repeated CRASH_RUNS times (default 12) with different kill times.

import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

import { ContextManager } from "toolctx";

const RUNS = Number(process.env.CRASH_RUNS ?? 12);
const here = fileURLToPath(new URL(".", import.meta.url));

const CHILD = `
import { ContextManager } from "toolctx";
const m = await ContextManager.open({ contextDir: process.argv[2], session: process.argv[3] === "new" ? true : process.argv[3], persistThreshold: 0 });
process.stdout.write("session " + m.sessionId + "\\n");
for (let i = 0; i < 1000; i++) {
  const fp = await m.saveContext("grep", { pattern: "p" + i, dir: "src" }, { hits: Array.from({ length: 1 + (i % 50) }, (_, k) => "line " + k) }, { taskId: i });
  process.stdout.write("ack " + fp + "\\n");
}
process.stdout.write("done\\n");
`;

function runUntilKilled(script, dir, session, killAfterAcks) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, dir, session], { stdio: ["ignore", "pipe", "inherit"] });
    let buffered = "";
    const acked = [];
    let id;
    child.stdout.on("data", (chunk) => {
      buffered += chunk;
      let nl;
      while ((nl = buffered.indexOf("\n")) !== -1) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        if (line.startsWith("session ")) id = line.slice(8);
        if (line.startsWith("ack ")) acked.push(line.slice(4));
        if (acked.length >= killAfterAcks && !child.killed) child.kill("SIGKILL");
      }
    });
    child.on("error", reject);
    child.on("exit", (code, signal) => resolve({ id, acked, signal }));
  });
}

test(`SIGKILL during 1,000 saves, ${RUNS} times: every acknowledged save survives, no torn record is visible`, async () => {
  const top = mkdtempSync(join(tmpdir(), "toolctx-crash-"));
  mkdirSync(join(here, ".tmp"), { recursive: true });
  const script = join(here, ".tmp", "crash-child.mjs");
  writeFileSync(script, CHILD);
  let lost = 0;
  let acknowledged = 0;
  try {
    for (let run = 0; run < RUNS; run++) {
      const dir = join(top, `run-${run}`);
      const killAt = 1 + Math.floor(Math.random() * 900);
      const { id, acked, signal } = await runUntilKilled(script, dir, "new", killAt);
      assert.equal(signal, "SIGKILL", "the child was killed mid-run");
      acknowledged += acked.length;
      const resumed = await ContextManager.open({ contextDir: dir, session: id });
      const pointers = resumed.getAllPointers();
      const have = new Set(pointers.map((p) => p.filepath));
      const missing = acked.filter((fp) => !have.has(fp));
      lost += missing.length;
      assert.deepEqual(missing, [], `run ${run}: acknowledged saves missing after resume`);
      const records = await resumed.loadContexts(pointers.map((p) => p.filepath));
      assert.equal(records.length, pointers.length, `run ${run}: a restored pointer does not load (torn record visible)`);
      assert.ok(pointers.length <= acked.length + 1, `run ${run}: at most the one in-flight save beyond the acknowledged`);
      // The session goes on after the crash.
      const { acked: more } = await runUntilKilled(script, dir, id, 3);
      const after = await ContextManager.open({ contextDir: dir, session: id });
      assert.ok(after.size >= pointers.length + more.length, `run ${run}: the resumed session keeps growing`);
    }
  } finally {
    rmSync(top, { recursive: true, force: true });
  }
  console.log(`crash: ${RUNS} runs, ${acknowledged} acknowledged saves, ${lost} lost`);
});

const WRITER = `
import { ContextManager } from "toolctx";
const [dir, id, tag] = process.argv.slice(2);
const m = await ContextManager.open({ contextDir: dir, session: id, persistThreshold: 0 });
await Promise.all(Array.from({ length: 300 }, (_, i) => m.saveContext("fetch", { tag, i }, { i })));
await m.close();
`;

test("two processes writing one session at once lose no record and no index entry", async () => {
  const top = mkdtempSync(join(tmpdir(), "toolctx-procs-"));
  mkdirSync(join(here, ".tmp"), { recursive: true });
  const script = join(here, ".tmp", "writer-child.mjs");
  writeFileSync(script, WRITER);
  try {
    const first = await ContextManager.open({ contextDir: top, session: true });
    const run = (tag) =>
      new Promise((resolve, reject) => {
        const child = spawn(process.execPath, [script, top, first.sessionId, tag], { stdio: ["ignore", "inherit", "inherit"] });
        child.on("error", reject);
        child.on("exit", (code) => (code === 0 ? resolve() : reject(new Error(`writer ${tag} exited ${code}`))));
      });
    await Promise.all([run("a"), run("b")]);
    const resumed = await ContextManager.open({ contextDir: top, session: first.sessionId });
    assert.equal(resumed.size, 600);
    const sessions = await ContextManager.listSessions({ contextDir: top });
    assert.equal(sessions.find((s) => s.id === first.sessionId).records, 600, "the manifest lists every record");
  } finally {
    rmSync(top, { recursive: true, force: true });
  }
});

// The persisted index under SIGKILL (SPEC §4): a child process opens the store, saves 12
// records, closes (which writes an index segment; every tenth close merges ten segments
// into one: a write, then ten removals), forty times over; the parent kills it a few
// milliseconds after the start of a merging close, then opens the store as another
// process would. Every record on disk is restored exactly once, ranked as a rebuild from
// the records ranks it.
const ROUNDS = `
import { ContextManager } from "toolctx";
const dir = process.argv[2];
for (let round = 0; round < 40; round++) {
  const m = await ContextManager.open({ contextDir: dir });
  for (let i = 0; i < 12; i++) {
    await m.saveContext("grep", { pattern: "p" + i, round }, { hits: ["retry the upload " + round, "parse header " + i] });
  }
  process.stdout.write("closing " + round + "\\n");
  await m.close();
}
process.stdout.write("done\\n");
`;

test(`SIGKILL in the middle of index merges, ${RUNS} times: every record once, ranked as the records say`, async () => {
  const top = mkdtempSync(join(tmpdir(), "toolctx-merge-"));
  mkdirSync(join(here, ".tmp"), { recursive: true });
  const script = join(here, ".tmp", "merge-child.mjs");
  writeFileSync(script, ROUNDS);
  let killed = 0;
  try {
    for (let run = 0; run < RUNS; run++) {
      const dir = join(top, `run-${run}`);
      // Rounds 0-9 make ten segments of a level: the tenth close merges them; the merged one
      // (120 records) stays at that level, so each ninth close after merges again.
      const merging = String(9 + 9 * (run % 3)); // the closes of rounds 9, 18, 27
      const delay = run % 4; // ms after the close began
      const signal = await new Promise((resolve, reject) => {
        const child = spawn(process.execPath, [script, dir], { stdio: ["ignore", "pipe", "inherit"] });
        let buffered = "";
        child.stdout.on("data", (chunk) => {
          buffered += chunk;
          if (buffered.includes(`closing ${merging}\n`) && !child.killed) {
            setTimeout(() => child.kill("SIGKILL"), delay);
            buffered = "";
          }
        });
        child.on("error", reject);
        child.on("exit", (code, sig) => resolve(sig));
      });
      if (signal === "SIGKILL") killed++;
      const opened = await ContextManager.open({ contextDir: dir, readOnly: true });
      const rebuilt = new ContextManager({ contextDir: dir, readOnly: true });
      await rebuilt.rebuildIndex();
      const paths = opened.getAllPointers().map((p) => p.filepath);
      assert.equal(new Set(paths).size, paths.length, `run ${run}: a record restored twice`);
      assert.deepEqual([...paths].sort(), rebuilt.getAllPointers().map((p) => p.filepath).sort(), `run ${run}: every record on disk`);
      for (const q of ["retry upload 9", "parse header 3", "p11"]) {
        // selectRelevant: it reads the query's lists of the segments read by range (the
        // synchronous selectRelevantContexts ranks those records by their metadata).
        const rank = async (m) => (await m.selectRelevant(q, { fallback: "none" })).map((h) => [h.filepath, h.score]);
        assert.deepEqual(await rank(opened), await rank(rebuilt), `run ${run}: ${q}`);
      }
    }
  } finally {
    rmSync(top, { recursive: true, force: true });
  }
  assert.ok(killed > 0, "at least one child was killed mid-merge");
  console.log(`merge crash: ${RUNS} runs, ${killed} killed in a merging close`);
});
