// Many writers on one shared store (issue 14, item 7), runtime-agnostic like conformance.mjs
// (no `node:` imports): N writer processes (or workers) each open a session and save M
// records into one store; then
//   - no record is lost and every name is unique;
//   - a reader that resumes each session sees every record, byte for byte;
//   - a cleanup run by every writer while the others write removes only the one stale
//     session planted before they started, never another writer's active session.
//
//   runManyWriterTests({ name, spawnWriters, makeStorage, ContextManager, contextDir,
//                        test, assert, writers = 8, perWriter = 500 })
//
// spawnWriters({ count, perWriter, contextDir }) starts `count` writers at once, each
// running `runWriter` below in its own process or worker against the same store, and
// resolves to their results (the objects runWriter resolves to), in any order.

/** The deterministic result writer `w` saves as its record `i` (unicode, nesting, numbers). */
export function writerPayload(w, i) {
  return { writer: w, i, text: `writer ${w} record ${i}: é€🙂 ${"x".repeat((w * 37 + i * 11) % 300)}`, list: [w, i, w * i] };
}

async function sha256Hex(bytes) {
  const view = typeof bytes === "string" ? new TextEncoder().encode(bytes) : new Uint8Array(bytes);
  const digest = await crypto.subtle.digest("SHA-256", view);
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * One writer: a session with `perWriter` records, saved 8 at a time, each read back once
 * acknowledged (its digest is what the reader must find); then a stale-session cleanup
 * while the other writers are still at work. Resolves to a plain object for the parent.
 */
export async function runWriter({ ContextManager, storage, contextDir, writer, perWriter }) {
  const m = await ContextManager.open({ contextDir, fileSystem: storage, session: true, persistThreshold: 0 });
  const records = [];
  for (let i = 0; i < perWriter; i += 8) {
    const batch = [];
    for (let j = i; j < Math.min(i + 8, perWriter); j++) {
      batch.push(m.saveContext("fleet", { writer, j }, writerPayload(writer, j), { taskId: writer }));
    }
    for (const [k, filepath] of (await Promise.all(batch)).entries()) records.push({ i: i + k, filepath });
  }
  for (const r of records) r.sha256 = await sha256Hex(await storage.read(r.filepath));
  await m.flush();
  const removed = await ContextManager.cleanupStaleSessions({ contextDir, fileSystem: storage, olderThanMs: 3_600_000 });
  return { writer, sessionId: m.sessionId, records, removed };
}

export function runManyWriterTests({ name, spawnWriters, makeStorage, ContextManager, contextDir, test, assert, writers = 8, perWriter = 500 }) {
  test(`[${name}] many writers: ${writers} writers × ${perWriter} records, one store, none lost, all unique, resumed byte for byte, cleanup spares active sessions`, async () => {
    const dir = contextDir();
    const storage = makeStorage();
    // a session idle for two days, planted before the writers start: the only one a cleanup may remove
    const twoDaysAgo = Date.now() - 2 * 86_400_000;
    const stale = await ContextManager.open({ contextDir: dir, fileSystem: storage, session: true, persistThreshold: 0, clock: () => twoDaysAgo });
    await stale.saveContext("old", {}, "stale record");
    await stale.close();

    const results = await spawnWriters({ count: writers, perWriter, contextDir: dir });
    assert.equal(results.length, writers);
    assert.deepEqual(results.map((r) => r.writer).sort((a, b) => a - b), Array.from({ length: writers }, (_, i) => i));

    const paths = results.flatMap((r) => r.records.map((x) => x.filepath));
    assert.equal(paths.length, writers * perWriter, "every save acknowledged");
    assert.equal(new Set(paths).size, paths.length, "every name unique");
    assert.equal(new Set(results.map((r) => r.sessionId)).size, writers, "one session per writer");

    const removed = results.flatMap((r) => r.removed);
    assert.deepEqual(removed, [stale.sessionId], "the stale session removed once, and nothing else");

    const sessions = await ContextManager.listSessions({ contextDir: dir, fileSystem: storage });
    assert.deepEqual(sessions.map((s) => s.id).sort(), results.map((r) => r.sessionId).sort(), "every active session kept");

    let seen = 0;
    for (const r of results) {
      const resumed = await ContextManager.open({ contextDir: dir, fileSystem: makeStorage(), session: r.sessionId });
      assert.equal(resumed.size, perWriter, `writer ${r.writer}: every record resumed`);
      assert.deepEqual(resumed.getAllPointers().map((p) => p.filepath).sort(), r.records.map((x) => x.filepath).sort());
      const loaded = await resumed.loadContexts(r.records.map((x) => x.filepath));
      assert.equal(loaded.length, perWriter);
      for (const [k, rec] of loaded.entries()) assert.deepEqual(rec.result, writerPayload(r.writer, r.records[k].i));
      for (const x of r.records) {
        assert.equal(await sha256Hex(await storage.read(x.filepath)), x.sha256, `${x.filepath}: byte for byte`);
        seen++;
      }
    }
    assert.equal(seen, writers * perWriter);
  });
}
