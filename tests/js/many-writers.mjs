// Many writers on one shared store (issue 14, item 7), for any adapter and any way of
// running the writers (Node processes, workers in workerd, ...):
//
//   runManyWriterTests({ name, spawnWriters, makeStorage, ContextManager, test, assert,
//                        writers: 8, perWriter: 500, contextDir })
//
// - `spawnWriters({ writers, perWriter, contextDir })` starts `writers` independent writers at
//   once, each running `writerTask` below on its own storage over the shared store, and
//   resolves to their results (an array of what `writerTask` returned), in any order.
// - `makeStorage()` gives this (the checking, "ninth") process a storage over the same store.
//
// What is checked: every writer saved `perWriter` records and no name repeats; the ninth
// process resumes each writer's session and reads every record back byte for byte (the
// SHA-256 the writer took of its record right after saving it); and the cleanup each writer
// ran halfway (`cleanupStaleSessions`) removed the one stale session planted beforehand
// and never an active session of another writer.
//
// Runtime-neutral (Web Crypto only): importable in Node, Deno, Bun and workerd.

const STALE_AGE_MS = 60_000;

/** The deterministic payload of record `i` of writer `writer` (mixed scripts, so bytes matter). */
export function payload(writer, i) {
  return { writer, i, text: `writer ${writer} record ${i} \u00e9\u20ac\u8a8d\u{1F642} `.repeat(1 + (i % 7)) };
}

async function sha256(bytes) {
  const data = typeof bytes === "string" ? new TextEncoder().encode(bytes) : bytes;
  const digest = await crypto.subtle.digest("SHA-256", data);
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

/** `fn` over `items`, `size` at a time (a network store answers many reads at once). */
async function inBatches(items, size, fn) {
  const out = [];
  for (let at = 0; at < items.length; at += size) out.push(...(await Promise.all(items.slice(at, at + size).map(fn))));
  return out;
}

/**
 * One writer: opens a fresh session on `storage`, saves `perWriter` records, and halfway runs
 * `cleanupStaleSessions` (sessions idle for a minute). Resolves to
 * `{ writer, sessionId, records: [{ filepath, sha256 }], removed }` (JSON-serialisable).
 */
export async function writerTask({ ContextManager, storage, contextDir, writer, perWriter }) {
  const m = await ContextManager.open({ contextDir, fileSystem: storage, session: true, persistThreshold: 0 });
  const records = [];
  let removed = [];
  for (let i = 0; i < perWriter; i++) {
    const filepath = await m.saveContext("grep", { writer, i }, payload(writer, i), { taskId: writer });
    records.push({ filepath, sha256: await sha256(await storage.read(filepath)) });
    if (i === Math.floor(perWriter / 2)) {
      removed = await ContextManager.cleanupStaleSessions({ contextDir, fileSystem: storage, olderThanMs: STALE_AGE_MS });
    }
  }
  await m.close();
  return { writer, sessionId: m.sessionId, records, removed };
}

/** Plants a session whose last activity is an hour old, so a cleanup has something to remove. */
async function plantStaleSession(ContextManager, storage, contextDir) {
  const clock = () => Date.now() - 3_600_000;
  const m = await ContextManager.open({ contextDir, fileSystem: storage, session: true, persistThreshold: 0, clock });
  await m.saveContext("stale", { old: true }, "an idle session");
  await m.close();
  return m.sessionId;
}

export function runManyWriterTests({
  name,
  spawnWriters,
  makeStorage,
  ContextManager,
  test,
  assert,
  contextDir,
  writers = 8,
  perWriter = 500,
}) {
  const title = `[${name}] many writers: ${writers} × ${perWriter} records on one store: none lost, names unique, a ninth resumes all byte for byte, cleanup spares active sessions`;
  test(title, async () => {
    const dir = contextDir();
    const storage = makeStorage();
    const stale = await plantStaleSession(ContextManager, storage, dir);

    const results = await spawnWriters({ writers, perWriter, contextDir: dir });
    assert.equal(results.length, writers, "every writer reported");
    assert.deepEqual(results.map((r) => r.writer).sort((a, b) => a - b), Array.from({ length: writers }, (_, i) => i));

    // no record lost, every name unique
    const all = results.flatMap((r) => r.records);
    assert.equal(all.length, writers * perWriter, "every save resolved to a filepath");
    assert.equal(new Set(all.map((r) => r.filepath)).size, all.length, "every filepath is unique");
    assert.equal(new Set(results.map((r) => r.sessionId)).size, writers, "one session per writer");

    // cleanup removed the planted stale session, never an active one
    const removed = new Set(results.flatMap((r) => r.removed));
    assert.deepEqual([...removed], [stale], "cleanups removed exactly the stale session");
    const sessions = (await ContextManager.listSessions({ contextDir: dir, fileSystem: storage })).map((s) => s.id);
    assert.deepEqual(sessions.sort(), results.map((r) => r.sessionId).sort(), "every writer's session is there, the stale one is gone");

    // a ninth process resumes every session and reads every record byte for byte
    let seen = 0;
    for (const result of results) {
      const resumed = await ContextManager.open({ contextDir: dir, fileSystem: storage, session: result.sessionId });
      const pointers = resumed.getAllPointers();
      assert.equal(pointers.length, perWriter, `session of writer ${result.writer}: all records resumed`);
      assert.deepEqual(new Set(pointers.map((p) => p.filepath)), new Set(result.records.map((r) => r.filepath)));
      const loaded = await resumed.loadContexts(result.records.map((r) => r.filepath));
      assert.equal(loaded.length, perWriter, "every record loads");
      const digests = await inBatches(result.records, 32, async (r) => sha256(await storage.read(r.filepath)));
      for (const [i, record] of loaded.entries()) {
        assert.deepEqual(record.result, payload(result.writer, i), `writer ${result.writer} record ${i}: payload`);
        assert.equal(digests[i], result.records[i].sha256, `writer ${result.writer} record ${i}: bytes`);
        seen++;
      }
    }
    assert.equal(seen, writers * perWriter);
    await storage.close?.();
  });
}

/**
 * `spawnWriters` for Node: one `node` process per writer running many-writers-child.mjs, which
 * builds its storage by calling `storageExport` of `storageModule` (a package name, path or
 * file URL) with `storageOptions`, runs `writerTask`, and prints its result as JSON.
 */
export function nodeWriters({ storageModule, storageExport, storageOptions = {} }) {
  return async ({ writers, perWriter, contextDir }) => {
    const { spawn } = await import("node:child_process");
    const child = new URL("./many-writers-child.mjs", import.meta.url).pathname;
    const run = (writer) =>
      new Promise((resolve, reject) => {
        const job = JSON.stringify({ storageModule: String(storageModule), storageExport, storageOptions, contextDir, writer, perWriter });
        const proc = spawn(process.execPath, [child, job], { stdio: ["ignore", "pipe", "pipe"] });
        let out = "";
        let err = "";
        proc.stdout.on("data", (c) => (out += c));
        proc.stderr.on("data", (c) => (err += c));
        proc.on("error", reject);
        proc.on("exit", (code) => {
          if (code === 0) resolve(JSON.parse(out));
          else reject(new Error(`writer ${writer} exited with ${code}: ${err.slice(-2000)}`));
        });
      });
    return Promise.all(Array.from({ length: writers }, (_, w) => run(w)));
  };
}
