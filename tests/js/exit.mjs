// Locks die with their holder (SPEC §4 "Locks are never waited out", STYLE 23), over the
// file-system adapters of one runtime (Node, Deno or Bun: the suites give `spawn`):
// - a process ends while its background index work holds a lock (tests/js/exit-child.mjs:
//   SIGKILL, process.exit(0) once every save resolved, an uncaught exception; outside a
//   session .index/merge.lock, in a session sessions/<id>.lock) and the next open() of the
//   store does not wait out the lock's 30 s lease;
// - a path the store expects as a folder that is a plain file (.index, sessions) is a
//   STORAGE error within the call, never a loop.
// The guards are generous (10 s, a third of the lease): a stall is told from a slow machine.

import { expectRejection, joinPath } from "./conformance.mjs";

const GUARD_MS = 10_000;

/** `promise`, or a rejection once `ms` passed: `what` did not settle (a lock waited out, a loop). */
export function settlesWithin(promise, what, ms = GUARD_MS) {
  let timer;
  const late = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not settle within ${ms} ms`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/** The first line of `stdout` (chunks of bytes) that starts with `prefix`. */
export async function lineOf(stdout, prefix) {
  const decoder = new TextDecoder();
  let text = "";
  for await (const chunk of stdout) {
    text += decoder.decode(chunk, { stream: true });
    const line = text.split("\n").slice(0, -1).find((l) => l.startsWith(prefix));
    if (line !== undefined) return line;
  }
  throw new Error(`the child ended without printing "${prefix}": ${text}`);
}

/**
 * @param {{ name: string, adapter: string, test: Function, assert: object, ContextManager: object,
 *   makeStorage: (options?: object) => object, tmpDir: () => string,
 *   spawn: (args: string[]) => { stdout: AsyncIterable<Uint8Array>, exited: Promise<unknown>, kill(): void } }} suite
 *   `spawn` runs tests/js/exit-child.mjs with `args` in this runtime (kill: SIGKILL).
 */
export function runOpenAfterExitTests({ name, adapter, test: t0, assert, ContextManager, makeStorage, tmpDir, spawn }) {
  const test = (title, fn) => t0(`[${name}] locks die with their holder: ${title}`, fn);

  /** The child run in `mode` until it holds its lock (or closed, for "close"), then ended: the session id, if any. */
  async function runChild(mode, dir, session) {
    const child = spawn([mode, adapter, dir, session]);
    const line = await settlesWithin(lineOf(child.stdout, "held"), `the ${mode} child`, 60_000);
    if (mode === "kill") child.kill();
    await child.exited;
    return line.slice("held ".length).trim() || undefined;
  }

  for (const session of ["none", "new"]) {
    for (const mode of ["kill", "exit", "throw"]) {
      const where = session === "none" ? ".index/merge.lock" : "sessions/<id>.lock";
      test(`open() after the previous process ended (${mode}) holding ${where} does not wait out the lease`, async () => {
        const dir = tmpDir();
        const id = await runChild(mode, dir, session);
        if (session === "new") assert.ok(id, "the child named its session");
        const options = { contextDir: dir, fileSystem: makeStorage(), session: id };
        const m = await settlesWithin(ContextManager.open(options), `open() after ${mode}`);
        assert.equal(m.size, 300, "every acknowledged save is there");
        await settlesWithin(m.close(), `close() after ${mode}`);
        assert.equal(await settlesWithin(ContextManager.open(options).then((again) => again.size), "a second open()"), 300);
      });
    }
  }

  test("a lock under a plain file, or at a folder, is a STORAGE error at once", async () => {
    const storage = makeStorage();
    if (typeof storage.lock !== "function") return;
    const dir = tmpDir();
    await storage.write(joinPath(dir, "file"), "a plain file");
    await storage.write(joinPath(dir, "folder/inside"), "x");
    for (const lock of [joinPath(dir, "file/merge.lock"), joinPath(dir, "file/deeper/x.lock"), joinPath(dir, "folder")]) {
      await settlesWithin(expectRejection(assert, () => storage.lock(lock, async () => "entered"), "STORAGE", lock), `lock(${lock})`);
    }
  });

  test("open() with <dir>/.index a plain file: a STORAGE error within the call", async () => {
    const storage = makeStorage();
    const dir = tmpDir();
    const before = new ContextManager({ contextDir: dir, fileSystem: storage, persistThreshold: 0 });
    await before.saveContext("t", {}, "a record");
    await storage.write(joinPath(dir, ".index"), "not a folder");
    await settlesWithin(expectRejection(assert, () => ContextManager.open({ contextDir: dir, fileSystem: storage }), "STORAGE", "open()"), "open()");
  });

  test("close() with <dir>/.index turned into a plain file settles within the call (the segment is skipped, onDebug says why)", async () => {
    const storage = makeStorage();
    const dir = tmpDir();
    const heard = [];
    const m = await ContextManager.open({ contextDir: dir, fileSystem: storage, persistThreshold: 0, onDebug: (msg) => heard.push(String(msg)) });
    const fp = await m.saveContext("t", {}, "a record");
    await storage.write(joinPath(dir, ".index"), "not a folder");
    const closed = await settlesWithin(m.close().then(() => undefined, (err) => err), "close()");
    if (closed !== undefined) assert.equal(closed.code, "STORAGE", String(closed));
    else assert.ok(heard.some((msg) => msg.includes(".index")), `onDebug names .index: ${JSON.stringify(heard)}`);
    assert.ok((await storage.read(fp)) !== undefined, "the record is kept");
  });

  test("open({session}) with <dir>/sessions a plain file: a STORAGE error within the call", async () => {
    const storage = makeStorage();
    const dir = tmpDir();
    await storage.write(joinPath(dir, "sessions"), "not a folder");
    await settlesWithin(expectRejection(assert, () => ContextManager.open({ contextDir: dir, fileSystem: storage, session: true }), "STORAGE", "open({session: true})"), "open({session: true})");
  });
}
