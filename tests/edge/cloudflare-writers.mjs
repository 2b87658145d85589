// Many writers on one Cloudflare store (issue 14, item 7), the part that runs inside workerd:
// each writer opens its own session on the shared store and saves `perWriter` records,
// running a stale-session cleanup halfway; a ninth request resumes every session and
// compares each record with what its writer saved. The Node side (cloudflare.test.mjs)
// starts the writers at once and asserts on the summaries. The shape follows
// runManyWriterTests of tests/js/many-writers.mjs (writers, perWriter, one shared store),
// split in two because the writers are requests into workerd, not processes.

import { ContextManager } from "toolctx";

/** What writer `writer` saves as its record `i`: distinct, with multi-byte text, of varied length. */
export function payload(writer, i) {
  return { writer, i, text: `record ${writer}/${i} é🙂 ${"x".repeat((writer * 37 + i) % 300)}` };
}

const DAY = 86_400_000;

/** A session last active two days ago, which any writer's cleanup may remove. */
export async function plantStaleSession({ storage, contextDir }) {
  const clock = () => Date.now() - 2 * DAY;
  const stale = await ContextManager.open({ contextDir, fileSystem: storage, session: true, persistThreshold: 0, clock });
  await stale.saveContext("grep", { pattern: "old" }, "stale", 0, "old");
  await stale.flush();
  return stale.sessionId;
}

/** One writer: a session of its own, `perWriter` records, a cleanup halfway. → a summary. */
export async function writeShare({ storage, contextDir, writer, perWriter }) {
  const manager = await ContextManager.open({ contextDir, fileSystem: storage, session: true, persistThreshold: 0 });
  const filepaths = [];
  let removed = [];
  for (let i = 0; i < perWriter; i++) {
    filepaths.push(await manager.saveContext("readFile", { path: `w${writer}/f${i}.ts` }, payload(writer, i), i, `query ${i}`));
    if (i === perWriter >> 1) removed = await ContextManager.cleanupStaleSessions({ contextDir, fileSystem: storage });
  }
  await manager.flush();
  return { writer, sessionId: manager.sessionId, filepaths, removed };
}

/** The ninth: resumes every session and checks every record against its writer's payload. */
export async function readAll({ storage, contextDir, sessions }) {
  const names = new Set();
  let records = 0;
  const mismatched = [];
  for (const { writer, sessionId } of sessions) {
    const manager = await ContextManager.open({ contextDir, fileSystem: storage, session: sessionId });
    const pointers = manager.getAllPointers();
    const loaded = await manager.loadContexts(pointers.map((p) => p.filepath));
    for (const [k, record] of loaded.entries()) {
      names.add(pointers[k].filepath);
      const i = Number(/f(\d+)\.ts$/.exec(record.args.path)?.[1]);
      const expected = JSON.stringify(payload(writer, i));
      const stored = JSON.parse(new TextDecoder().decode(await storage.read(pointers[k].filepath)));
      if (JSON.stringify(record.result) !== expected || JSON.stringify(stored.result) !== expected) mismatched.push(pointers[k].filepath);
      records++;
    }
  }
  const listed = (await storage.list(`${contextDir}/sessions`)).map((name) => name.replace(/\/$/, ""));
  return { records, unique: names.size, mismatched, sessionsListed: listed };
}
