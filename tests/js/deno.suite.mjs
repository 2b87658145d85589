// The conformance suites under Deno (the real `deno` binary from npm): the deno, memory and
// unstorage (memory driver) adapters, over the built package resolved by name ("deno" export condition).
//   deno test -A --no-check tests/js/deno.suite.mjs

import { runTrapTests } from "./trap.mjs";
import assert from "node:assert/strict";
import { ContextManager, ConversationStore } from "toolctx";
import { denoStorage } from "toolctx/deno";
import { memoryStorage } from "toolctx/memory";
import { unstorageStorage } from "toolctx/unstorage";
import { createStorage } from "unstorage";
import unstorageMemoryDriver from "unstorage/drivers/memory";
import { runConversationTests } from "./conversation.mjs";
import * as toolctx from "toolctx";
import { runWindowTests } from "./window.mjs";
import { runAiSdkTests } from "./ai-sdk.mjs";
import { runToolTests } from "./tools.mjs";
import * as contextToolsModule from "toolctx/tools";
import { runAnthropicTests } from "./anthropic.mjs";
import { memoryToolHandlers } from "toolctx/anthropic";
import { runOpenAfterExitTests } from "./exit.mjs";
import {
  expectRejection,
  loadVectors,
  runFileRangeTests,
  runLockTests,
  runSeedApiTests,
  runSessionTests,
  runStorageHostTests,
  runPointerArrayTests,
  runVectorTests,
} from "./conformance.mjs";
import { denoTest as test } from "../deno-test.mjs";

const top = await Deno.makeTempDir({ prefix: "toolctx-deno-" });
let n = 0;
const fresh = (tag) => `${top}/${tag}-${n++}`;
globalThis.addEventListener("unload", () => Deno.removeSync(top, { recursive: true }));

// Lock contenders are separate Deno processes (tests/js/lock-contender.mjs).
const contender = {
  adapter: "deno",
  spawn(args) {
    const script = new URL("./lock-contender.mjs", import.meta.url).pathname;
    const child = new Deno.Command(Deno.execPath(), { args: ["run", "-A", script, ...args], stdin: "null" }).spawn();
    return { exited: child.status.then((s) => s.code), kill: () => child.kill("SIGKILL") };
  },
};

for (const [name, makeStorage, dir, lockContender] of [
  ["deno", (o) => denoStorage(o), (tag) => fresh(tag), contender],
  ["memory", () => memoryStorage(), (tag) => `/ctx/${tag}-${n++}`],
]) {
  runStorageHostTests({ name, makeStorage, test, assert, tmpDir: () => dir(name) });
  runSeedApiTests({ name, makeStorage, ContextManager, test, assert, contextDir: () => dir(name) });
  runSessionTests({ name, makeStorage, ContextManager, test, assert, contextDir: () => dir(name) });
  runLockTests({ name, makeStorage, test, assert, tmpDir: () => dir(name), contender: lockContender });
  runConversationTests(test, assert, makeStorage, { ConversationStore, name, contextDir: () => dir(name) });
}

runFileRangeTests({
  name: "deno",
  makeStorage: () => denoStorage(),
  test,
  assert,
  tmpDir: () => fresh("range"),
  sparse(path, size, at, bytes) {
    Deno.mkdirSync(path.slice(0, path.lastIndexOf("/")), { recursive: true });
    const file = Deno.openSync(path, { write: true, create: true, truncate: true });
    try {
      file.truncateSync(size);
      file.seekSync(at, Deno.SeekMode.Start);
      for (let done = 0; done < bytes.length; ) done += file.writeSync(bytes.subarray(done));
    } finally {
      file.close();
    }
  },
});

// Locks die with their holder: open() after a Deno process ended holding one (exit.mjs).
runOpenAfterExitTests({
  name: "deno",
  adapter: "deno",
  test,
  assert,
  ContextManager,
  makeStorage: (o) => denoStorage(o),
  tmpDir: () => fresh("exit"),
  spawn(args) {
    const script = new URL("./exit-child.mjs", import.meta.url).pathname;
    const child = new Deno.Command(Deno.execPath(), { args: ["run", "-A", script, ...args], stdin: "null", stdout: "piped", stderr: "null" }).spawn();
    return { stdout: child.stdout, exited: child.status.then((s) => s.code), kill: () => child.kill("SIGKILL") };
  },
});

// toolctx/unstorage over unstorage's memory driver (no locks: sessions are refused, see unstorage.test.mjs)
{
  const shared = createStorage({ driver: unstorageMemoryDriver() });
  const makeStorage = () => unstorageStorage({ storage: shared });
  runStorageHostTests({ name: "unstorage memory", makeStorage, test, assert, tmpDir: () => `/ctx/host-${n++}` });
  runSeedApiTests({ name: "unstorage memory", makeStorage, ContextManager, test, assert, contextDir: () => `/ctx/seed-${n++}` });
  test("[unstorage memory] a session is refused: STORAGE caused by UNSUPPORTED", async () => {
    const err = await expectRejection(assert, () => ContextManager.open({ contextDir: "/ctx/s", fileSystem: makeStorage(), session: true }), "STORAGE");
    assert.equal(err.cause?.code, "UNSUPPORTED");
  });
}

runWindowTests(test, assert, () => denoStorage(), { api: toolctx, name: "deno", contextDir: () => fresh("window") });
const anthropicApi = { memoryToolHandlers, clearToolUses: toolctx.clearToolUses, ContextManager };
runAnthropicTests(test, assert, () => denoStorage(), { api: anthropicApi, name: "deno", dir: () => fresh("anthropic") });
runAnthropicTests(test, assert, () => memoryStorage(), { api: anthropicApi, name: "deno/memory", dir: () => `/ctx/anthropic-${n++}` });

const vectors = await loadVectors((file) => Deno.readTextFile(new URL(`../vectors/${file}`, import.meta.url)));
runVectorTests({ name: "deno vectors", test, assert, ContextManager, memoryStorage, vectors });
runPointerArrayTests({ name: "deno", ContextManager, memoryStorage, test, assert });

test("[deno] the default storage is the file system under ~/.agent/context", () => {
  const m = new ContextManager({ fileSystem: memoryStorage() });
  assert.equal(m.getContextDir(), `${Deno.env.get("HOME")}/.agent/context`);
  const rel = new ContextManager({ contextDir: "rel/ctx", fileSystem: memoryStorage() });
  assert.equal(rel.getContextDir(), `${Deno.cwd()}/rel/ctx`);
});

test("[deno] the default store: $TOOLCTX_DIR, else ~/.agent/context; without --allow-env ./.agent/context, and onDebug says why, once", async () => {
  const script = new URL("./default-dir-child.mjs", import.meta.url).pathname;
  const run = async (args, env) => {
    const out = await new Deno.Command(Deno.execPath(), { args: ["run", ...args, script], env, stdin: "null" }).output();
    assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
    return JSON.parse(new TextDecoder().decode(out.stdout));
  };
  const chosen = fresh("chosen");
  const withEnv = await run(["-A"], { TOOLCTX_DIR: chosen });
  assert.deepEqual(withEnv.dirs, [chosen, chosen]);
  assert.ok(!withEnv.heard.some((m) => m.includes("--allow-env")), JSON.stringify(withEnv.heard));
  const home = await run(["--allow-read", "--allow-env=HOME"], { TOOLCTX_DIR: chosen });
  assert.deepEqual(home.dirs, [`${Deno.env.get("HOME")}/.agent/context`, `${Deno.env.get("HOME")}/.agent/context`], "HOME alone still finds ~/.agent/context");
  assert.ok(!home.heard.some((m) => m.includes("--allow-env")), JSON.stringify(home.heard));
  const noEnv = await run(["--allow-read"], { TOOLCTX_DIR: chosen });
  assert.deepEqual(noEnv.dirs, [`${Deno.cwd()}/.agent/context`, `${Deno.cwd()}/.agent/context`]);
  assert.equal(noEnv.heard.filter((m) => m.includes("--allow-env")).length, 1, JSON.stringify(noEnv.heard));
});

test("[deno] files are created 0600 in folders 0700", async () => {
  const dir = fresh("modes");
  const m = new ContextManager({ contextDir: dir, fileSystem: denoStorage(), persistThreshold: 0 });
  const fp = await m.saveContext("t", {}, "secret");
  assert.equal((await Deno.stat(fp)).mode & 0o777, 0o600);
  assert.equal((await Deno.stat(dir)).mode & 0o777, 0o700);
});

test("[deno] denoStorage creates and reads small files with blocking calls and larger ones asynchronously, with the same checks", async () => {
  const dir = fresh("syncio");
  const outside = fresh("outside");
  Deno.mkdirSync(dir, { recursive: true });
  Deno.mkdirSync(outside);
  Deno.symlinkSync(outside, `${dir}/linked`);
  for (const [label, bytes] of [["small", 50], ["large", 5000]]) {
    const data = new TextEncoder().encode("x".repeat(bytes));
    Deno.writeFileSync(`${outside}/${label}.json`, data);
    Deno.symlinkSync(`${outside}/${label}.json`, `${dir}/${label}-link.json`);
    for (const max of [0, 100, 1 << 20]) {
      const s = denoStorage({ syncCreateMaxBytes: max, syncReadMaxBytes: max });
      const at = `${label} with sync max ${max}`;
      const path = `${dir}/${label}-${max}.json`;
      await s.write(path, data, { exclusive: true });
      assert.equal(Deno.statSync(path).mode & 0o777, 0o600, at);
      await expectRejection(assert, () => s.write(path, new TextEncoder().encode("other"), { exclusive: true }), "EEXIST", at);
      assert.deepEqual(new Uint8Array(await s.read(path, { root: dir })), data, `${at}: the first write stands`);
      assert.equal(await s.read(`${dir}/missing.json`, { root: dir }), undefined, at);
      for (const outsider of [`${dir}/linked/${label}.json`, `${dir}/${label}-link.json`]) {
        await expectRejection(assert, () => s.read(outsider, { root: dir }), "OUTSIDE_STORE", `${at}: ${outsider}`);
      }
      // readRange: blocking up to syncReadMaxBytes of range, the same checks as read.
      assert.deepEqual(new Uint8Array(await s.readRange(path, 5, bytes, { root: dir })), data.subarray(5), `${at}: range`);
      assert.equal(await s.readRange(`${dir}/missing.json`, 0, bytes, { root: dir }), undefined, `${at}: range`);
      for (const outsider of [`${dir}/linked/${label}.json`, `${dir}/${label}-link.json`]) {
        await expectRejection(assert, () => s.readRange(outsider, 0, bytes, { root: dir }), "OUTSIDE_STORE", `${at}: range of ${outsider}`);
      }
    }
  }
});

runAiSdkTests(test, assert); // toolctx/ai-sdk with the real `ai` (ai-sdk.mjs)
runToolTests({ test, assert, ContextManager, memoryStorage, tools: contextToolsModule }); // toolctx/tools (tools.mjs)
runTrapTests({ name: "deno", test, assert, toolctx }); // last: a trap costs earlier managers their state
