// The ConversationStore suite (SPEC §7), runtime-agnostic like conformance.mjs: the
// caller passes its runner's `test`, a node:assert/strict-compatible `assert`, a
// storage factory, and the class under test. No `node:` imports here.
//
//   runConversationTests(test, assert, makeStorage, {
//     ConversationStore, name, contextDir: () => freshDir, makeRemote?: () => StorageHost })
//
// makeRemote (default makeStorage) gives the second, "remote" storage for sync; the
// suite wraps it so that it fails on purpose while `down` is set.

const decoder = new TextDecoder();
const text = (data) => (typeof data === "string" ? data : decoder.decode(data));

async function rejectsWith(assert, promise, code, label) {
  let err;
  try {
    await promise;
  } catch (e) {
    err = e;
  }
  assert.ok(err instanceof Error, `${label}: expected a rejection with ${code}`);
  assert.equal(err.code, code, `${label}: ${err?.message}`);
}

/** A storage that throws (like a remote that is down) while `state.down` is set. */
export function flakyStorage(host) {
  const state = { down: false, calls: 0 };
  const check = () => {
    state.calls++;
    if (state.down) throw Object.assign(new Error("remote is down"), { code: "ECONNREFUSED" });
  };
  const out = { state, description: "flaky remote" };
  for (const name of ["read", "write", "remove", "list", "append", "removeDir"]) {
    if (typeof host[name] === "function") {
      out[name] = async (...args) => {
        check();
        return host[name](...args);
      };
    }
  }
  if (typeof host.lock === "function") {
    out.lock = async (lockName, fn) => {
      check();
      return host.lock(lockName, fn);
    };
  }
  return out;
}

/** One macrotask: the host's next I/O event, as a real disk or network gives it. */
const macrotask =
  typeof globalThis.setImmediate === "function"
    ? () => new Promise((resolve) => globalThis.setImmediate(resolve))
    : typeof globalThis.MessageChannel === "function"
      ? () =>
          new Promise((resolve) => {
            const channel = new MessageChannel();
            channel.port1.onmessage = () => {
              channel.port1.close();
              resolve();
            };
            channel.port2.postMessage(0);
          })
      : () => new Promise((resolve) => setTimeout(resolve, 0));

/** A storage whose every method waits a macrotask before and after the call, so that concurrent work interleaves at every step. */
export function yieldingStorage(host) {
  const out = { description: `yielding ${host.description ?? "storage"}` };
  for (const name of ["read", "write", "remove", "list", "append", "removeDir", "lock"]) {
    if (typeof host[name] !== "function") continue;
    out[name] = async (...args) => {
      await macrotask();
      const result = await host[name](...args);
      await macrotask();
      return result;
    };
  }
  return out;
}

/** Every number of host steps the sync race starts after, over an in-process storage. */
const RACE_DELAYS = Array.from({ length: 30 }, (_, i) => i);
/**
 * The same race over a host whose every operation is many event-loop turns (a server: S3,
 * Redis; a browser's OPFS and IndexedDB): these spread over the same first operations as
 * every delay does in process, at a third of the runs (over s3s-fs the 60 runs took 55 s a
 * runtime; over OPFS in a loaded CI's browser worker, past the 30 s a test has).
 */
export const SPREAD_RACE_DELAYS = [0, 1, 2, 3, 5, 8, 13, 21, 29];

export function runConversationTests(test, assert, makeStorage, options) {
  const { ConversationStore, name, contextDir, raceDelays = RACE_DELAYS } = options;
  const makeRemote = options.makeRemote ?? makeStorage;
  const t = (title, fn) => test(`[${name}] conversations: ${title}`, fn);
  const START = Date.UTC(2025, 0, 31, 12, 0, 0);

  function clockAt(ms = START) {
    const clock = () => clock.now;
    clock.now = ms;
    return clock;
  }

  async function open(extra = {}) {
    const storage = extra.storage ?? makeStorage();
    const dir = extra.contextDir ?? contextDir();
    const events = [];
    const store = await ConversationStore.open({
      storage,
      contextDir: dir,
      onDebug: (msg) => events.push(msg),
      ...extra,
    });
    return { store, storage, dir, events };
  }

  t("new ConversationStore() throws INVALID_ARGUMENT that points at ConversationStore.open()", async () => {
    let err;
    try {
      new ConversationStore({ storage: makeStorage(), contextDir: contextDir() });
    } catch (e) {
      err = e;
    }
    assert.ok(err instanceof Error, "the constructor throws");
    assert.equal(err.code, "INVALID_ARGUMENT", err.message);
    assert.match(err.message, /ConversationStore\.open\(/);
    const { store } = await open();
    assert.ok(store instanceof ConversationStore, "open() gives an instance of the class");
    await store.close();
  });

  t("create, list (newest first), get, delete; NOT_FOUND for missing ones", async () => {
    const clock = clockAt();
    const { store } = await open({ clock });
    const a = await store.createConversation({ title: "First" });
    assert.match(a.id, /^conv-[a-z0-9]{16}$/);
    assert.deepEqual(
      { ...a },
      { id: a.id, title: "First", createdAt: "2025-01-31T12:00:00.000Z", updatedAt: "2025-01-31T12:00:00.000Z", messageCount: 0, artifactCount: 0 },
    );
    clock.now += 1000;
    const b = await store.createConversation({ id: "my-conv_2" });
    assert.equal(b.id, "my-conv_2");
    assert.equal(b.title, undefined);
    assert.deepEqual((await store.listConversations()).map((c) => c.id), ["my-conv_2", a.id]);
    clock.now += 1000;
    await store.appendMessage(a.id, { role: "user", content: "hi" });
    assert.deepEqual((await store.listConversations()).map((c) => c.id), [a.id, "my-conv_2"]);
    const got = await store.getConversation(a.id);
    assert.equal(got.messageCount, 1);
    assert.equal(got.updatedAt, "2025-01-31T12:00:02.000Z");
    await store.deleteConversation(a.id);
    await rejectsWith(assert, store.getConversation(a.id), "NOT_FOUND", "deleted");
    await rejectsWith(assert, store.getMessages(a.id), "NOT_FOUND", "messages of a deleted one");
    await rejectsWith(assert, store.appendMessage("conv-nope", { role: "user", content: "x" }), "NOT_FOUND", "append");
    await rejectsWith(assert, store.createConversation({ id: "my-conv_2" }), "INVALID_ARGUMENT", "taken id");
    assert.deepEqual((await store.listConversations()).map((c) => c.id), ["my-conv_2"]);
    await store.close();
  });

  t("listing is a read: with the index missing or corrupt it is rebuilt in memory, and nothing is written", async () => {
    const { store, storage, dir } = await open();
    const a = await store.createConversation({ title: "a" });
    const b = await store.createConversation({ title: "b" });
    await store.close();
    const expected = [a.id, b.id].sort();
    const index = `${dir}/conversations/index.json`;
    for (const damage of [() => storage.remove(index), () => storage.write(index, "{not json")]) {
      await damage();
      const writes = [];
      const counting = { description: "counting" };
      for (const name of ["read", "write", "remove", "list", "append", "removeDir", "lock"]) {
        if (typeof storage[name] !== "function") continue;
        counting[name] = (...args) => {
          if (["write", "remove", "append", "removeDir"].includes(name)) writes.push(`${name} ${args[0]}`);
          return storage[name](...args);
        };
      }
      const reader = await ConversationStore.open({ storage: counting, contextDir: dir, onDebug: () => {} });
      assert.deepEqual((await reader.listConversations()).map((c) => c.id).sort(), expected);
      assert.deepEqual((await reader.listConversations()).map((c) => c.id).sort(), expected);
      await reader.close();
      assert.deepEqual(writes, [], "a listing writes nothing");
    }
  });

  t("ids are validated: path escapes, separators and NUL are INVALID_ARGUMENT and write nothing", async () => {
    const { store, storage, dir } = await open();
    const conv = await store.createConversation();
    for (const bad of ["..", "../escape", "a/b", "/abs", "a\0b", "x.json", "", "a b", "C:\\x"]) {
      await rejectsWith(assert, store.createConversation({ id: bad }), "INVALID_ARGUMENT", `create ${JSON.stringify(bad)}`);
      await rejectsWith(assert, store.getConversation(bad), "INVALID_ARGUMENT", `get ${JSON.stringify(bad)}`);
      await rejectsWith(assert, store.getArtifact(conv.id, bad), "INVALID_ARGUMENT", `artifact ${JSON.stringify(bad)}`);
      await rejectsWith(assert, store.appendMessage(conv.id, { role: "user", content: "x", id: bad }), "INVALID_ARGUMENT", "message id");
    }
    const wrongType = store.getConversation(42);
    assert.ok(wrongType instanceof Promise, "argument errors reject, they never throw");
    await rejectsWith(assert, wrongType, "INVALID_ARGUMENT", "a number as id");
    await rejectsWith(assert, store.appendMessage(conv.id, "text"), "INVALID_ARGUMENT", "a string as message");
    await rejectsWith(assert, ConversationStore.open("dir"), "INVALID_ARGUMENT", "options that are no object");
    await rejectsWith(assert, store.appendMessage(conv.id, { role: "robot", content: "x" }), "INVALID_ARGUMENT", "role");
    await rejectsWith(assert, store.appendMessage(conv.id, { role: "user" }), "INVALID_ARGUMENT", "no content");
    await rejectsWith(assert, store.appendMessage(conv.id, { role: "user", content: "x", timestamp: "yesterday" }), "INVALID_ARGUMENT", "timestamp");
    await rejectsWith(assert, store.appendMessage(conv.id, { role: "user", content: "\ud800" }), "NOT_SERIALIZABLE", "lone surrogate");
    await rejectsWith(assert, store.storeArtifact(conv.id, { type: "../x", name: "n", content: "c" }), "INVALID_ARGUMENT", "type");
    assert.deepEqual(await storage.list(dir), ["conversations/"]);
    const inside = await storage.list(`${dir}/conversations`);
    assert.deepEqual(inside.filter((n) => n.endsWith("/")), [`${conv.id}/`]);
  });

  t("a torn last line is skipped with a report, and the next append starts a new line", async () => {
    const storage = makeStorage();
    const dir = contextDir();
    const first = await open({ storage, contextDir: dir });
    const conv = await first.store.createConversation();
    await first.store.appendMessage(conv.id, { role: "user", content: "one" });
    await first.store.appendMessage(conv.id, { role: "assistant", content: "two" });
    const path = `${dir}/conversations/${conv.id}/messages.jsonl`;
    // A crash in the middle of an append: half a line, no newline.
    const before = text(await storage.read(path));
    await storage.write(path, `${before}{"id":"msg-torn","role":"assis`);
    // A restarted process.
    const { store, events } = await open({ storage, contextDir: dir });
    assert.deepEqual((await store.getMessages(conv.id)).map((m) => m.content), ["one", "two"]);
    assert.ok(events.some((e) => /torn/.test(e)), `reported: ${events}`);
    const { store: again, events: events2 } = await open({ storage, contextDir: dir });
    const three = await again.appendMessage(conv.id, { role: "user", content: "three" });
    assert.ok(events2.some((e) => /torn/.test(e)), "the append reports the torn tail it steps over");
    assert.deepEqual((await again.getMessages(conv.id)).map((m) => m.content), ["one", "two", "three"]);
    const lines = text(await storage.read(path)).split("\n");
    assert.equal(lines.length, 5, "three messages, the torn line on its own, a final newline");
    assert.equal(lines[2], '{"id":"msg-torn","role":"assis');
    assert.equal(JSON.parse(lines[3]).id, three.id);
    assert.equal(lines[4], "");
    assert.deepEqual((await again.getMessages(conv.id, { role: "user" })).map((m) => m.content), ["one", "three"]);
  });

  t("concurrent appends all land, in order, and the counts agree", async () => {
    const { store } = await open();
    const conv = await store.createConversation();
    const sent = await Promise.all(
      Array.from({ length: 20 }, (_, i) => store.appendMessage(conv.id, { role: i % 2 ? "assistant" : "user", content: `m${i}` })),
    );
    const got = await store.getMessages(conv.id);
    assert.deepEqual(got.map((m) => m.id), sent.map((m) => m.id), "call order is conversation order");
    assert.equal((await store.getConversation(conv.id)).messageCount, 20);
    assert.equal((await store.listConversations())[0].messageCount, 20);
    await Promise.all([store.close(), store.appendMessage(conv.id, { role: "user", content: "late" })]);
    assert.equal((await store.getMessages(conv.id)).length, 21);
  });

  t("a sync racing an append never drops the change: it reaches the remote or stays queued", async () => {
    // Two stores on one storage (two processes: the host's lock is all they share) and
    // one store syncing itself; the sync starts after every number of host steps.
    const storage = yieldingStorage(makeStorage());
    const remote = yieldingStorage(makeRemote());
    for (const twoProcesses of [false, true]) {
      for (const delay of raceDelays) {
        const dir = contextDir();
        const remoteDir = contextDir();
        const writer = (await open({ storage, contextDir: dir, remote, remoteDir })).store;
        const syncer = twoProcesses ? (await open({ storage, contextDir: dir, remote, remoteDir })).store : writer;
        const conv = await writer.createConversation();
        await writer.sync();
        const [, report] = await Promise.all([
          writer.appendWithArtifact(conv.id, { role: "tool", content: "the change" }, { type: "file", name: "a.ts", content: "data" }),
          (async () => {
            for (let i = 0; i < delay; i++) await macrotask();
            return syncer.sync();
          })(),
        ]);
        const onRemote = async () =>
          text((await remote.read(`${remoteDir}/conversations/${conv.id}/messages.jsonl`)) ?? "").includes("the change");
        const { pending } = await writer.syncStatus();
        assert.ok(
          (await onRemote()) || pending > 0,
          `two processes: ${twoProcesses}, sync after ${delay} steps: neither on the remote nor queued (${JSON.stringify(report)})`,
        );
        await writer.sync();
        assert.ok(await onRemote());
        assert.deepEqual(await writer.syncStatus(), { pending: 0, failed: 0 });
      }
    }
  });

  t("sync never pushes an artifact whose local content is missing: NOT_FOUND for the item, kept, nothing written", async () => {
    const storage = makeStorage();
    const remote = makeRemote();
    const remoteDir = contextDir();
    const { store, dir } = await open({ storage, remote, remoteDir });
    const conv = await store.createConversation();
    const art = await store.storeArtifact(conv.id, { type: "file", name: "a.ts", content: "data" });
    await storage.remove(`${dir}/conversations/${conv.id}/artifacts/${art.id}`);
    const report = await store.sync();
    assert.equal(report.pushed, 0, JSON.stringify(report));
    const items = report.failed.filter((f) => f.item !== "remote index");
    assert.equal(items.length, 2, JSON.stringify(report));
    assert.ok(items.every((f) => f.code === "NOT_FOUND" && f.error.includes(art.id)), JSON.stringify(report));
    assert.deepEqual(await store.syncStatus(), { pending: 2, failed: 2 });
    assert.deepEqual(await remote.list(`${remoteDir}/conversations`), [], "nothing written to the remote");
  });

  t("a host without append (read + write stand in) keeps every message", async () => {
    const { append, ...withoutAppend } = makeStorage();
    if (typeof append !== "function") return; // a host without append (S3) ran every test above without it
    const storage = Object.fromEntries(
      Object.entries(withoutAppend).map(([k, v]) => [k, typeof v === "function" ? v.bind(withoutAppend) : v]),
    );
    const { store } = await open({ storage });
    const conv = await store.createConversation();
    for (const content of ["one", "two", "three"]) await store.appendMessage(conv.id, { role: "user", content });
    assert.deepEqual((await store.getMessages(conv.id)).map((m) => m.content), ["one", "two", "three"]);
  });

  t("artifacts: stored once, referenced as artifact://id, resolved and listed", async () => {
    const { store, events } = await open();
    const conv = await store.createConversation();
    const big = "export function login() {}\n".repeat(2000);
    const { message, artifact } = await store.appendWithArtifact(
      conv.id,
      { role: "tool", content: "src/auth/login.ts, 2000 lines", toolCalls: [{ name: "readFile", args: { path: "src/auth/login.ts" } }] },
      { type: "file", name: "src/auth/login.ts", content: big, mimeType: "text/typescript" },
    );
    assert.match(artifact.id, /^art-[a-z0-9]{16}$/);
    assert.equal(message.content, `src/auth/login.ts, 2000 lines (artifact://${artifact.id})`);
    assert.deepEqual(message.toolCalls, [{ name: "readFile", args: { path: "src/auth/login.ts" } }]);
    assert.equal(artifact.size, big.length);
    assert.equal(artifact.mimeType, "text/typescript");
    const loaded = await store.getArtifact(conv.id, artifact.id);
    assert.equal(loaded.content, big);
    assert.equal(loaded.type, "file");
    const plain = await store.storeArtifact(conv.id, { type: "search_result", name: "auth", content: '["a.ts"]' });
    assert.equal(plain.mimeType, "text/plain");
    assert.deepEqual((await store.listArtifacts(conv.id)).map((a) => a.id).sort(), [artifact.id, plain.id].sort());
    const resolved = await store.resolveArtifacts(conv.id, `${message.content}; also artifact://${plain.id}, artifact://art-missing`);
    assert.deepEqual(resolved.map((a) => a.content), [big, '["a.ts"]']);
    assert.ok(events.some((e) => e.includes("art-missing")));
    await rejectsWith(assert, store.getArtifact(conv.id, "art-missing"), "NOT_FOUND", "missing artifact");
    const meta = await store.getConversation(conv.id);
    assert.equal(meta.artifactCount, 2);
    assert.equal(meta.messageCount, 1);
  });

  t("stats: messages by role, artifacts by type, bytes, tokens and cost", async () => {
    const { store } = await open();
    const conv = await store.createConversation();
    await store.appendMessage(conv.id, { role: "user", content: "abcd".repeat(10) });
    await store.appendMessage(conv.id, { role: "assistant", content: "é" });
    await store.appendMessage(conv.id, { role: "user", content: "x" });
    await store.storeArtifact(conv.id, { type: "file", name: "a", content: "12345" });
    await store.storeArtifact(conv.id, { type: "command_output", name: "npm test", content: "ok" });
    await store.storeArtifact(conv.id, { type: "file", name: "b", content: "1" });
    const stats = await store.stats(conv.id, { costPerToken: 0.25 });
    assert.deepEqual(stats, {
      conversationId: conv.id,
      messages: 3,
      messagesByRole: { assistant: 1, system: 0, tool: 0, user: 2 },
      artifacts: 3,
      artifactsByType: { command_output: 1, file: 2 },
      messageBytes: 40 + 2 + 1,
      artifactBytes: 8,
      bytes: 51,
      estimatedTokens: 10 + 1 + 1,
      estimatedCost: 3,
    });
    assert.equal((await store.stats(conv.id)).estimatedCost, undefined);
  });

  t("prune keeps the last N, stays within the budget, reports what it dropped; apply rewrites", async () => {
    const clock = clockAt();
    const { store } = await open({ clock });
    const conv = await store.createConversation();
    for (let i = 0; i < 30; i++) {
      clock.now += 60_000;
      const role = ["user", "assistant", "tool"][i % 3];
      const content = role === "user" ? `question ${i} about the login page` : `${role} output ${i} ${"noise ".repeat(8)}`;
      await store.appendMessage(conv.id, { role, content, success: role === "tool" ? i % 2 === 0 : undefined });
    }
    const all = await store.getMessages(conv.id);
    const tokens = (m) => Math.ceil(new TextEncoder().encode(m.content).length / 4);
    const recent = all.slice(-10).reduce((n, m) => n + tokens(m), 0);
    const maxTokens = recent + 40;
    const report = await store.prune(conv.id, { task: "fix the login page", maxTokens, keepRecent: 10 });
    assert.equal(report.kept.length + report.dropped.length, 30);
    assert.ok(report.dropped.length > 0);
    assert.equal(report.tokensBefore, all.reduce((n, m) => n + tokens(m), 0));
    assert.ok(report.tokensAfter <= maxTokens && report.tokensAfter >= recent, JSON.stringify(report.tokensAfter));
    assert.equal(report.tokensAfter, report.kept.reduce((n, m) => n + tokens(m), 0));
    const keptIds = new Set(report.kept.map((m) => m.id));
    for (const m of all.slice(-10)) assert.ok(keptIds.has(m.id), "the last 10 always stay");
    const older = report.kept.slice(0, -10);
    assert.ok(older.length > 0 && older.every((m) => m.content.includes("login")), "the relevant older ones stay");
    // kept and dropped are in conversation order and partition the messages
    const order = new Map(all.map((m, i) => [m.id, i]));
    for (const list of [report.kept, report.dropped]) {
      assert.ok(list.every((m, i) => i === 0 || order.get(list[i - 1].id) < order.get(m.id)));
    }
    assert.equal((await store.getMessages(conv.id)).length, 30, "without apply nothing changes");
    const applied = await store.prune(conv.id, { task: "fix the login page", maxTokens, keepRecent: 10, apply: true });
    assert.deepEqual(applied, report);
    assert.deepEqual(await store.getMessages(conv.id), report.kept);
    assert.equal((await store.getConversation(conv.id)).messageCount, report.kept.length);
    const tight = await store.prune(conv.id, { maxTokens: 1, keepRecent: 10 });
    assert.equal(tight.kept.length, 10, "the recent ones stay even beyond the budget");
    await rejectsWith(assert, store.prune(conv.id, {}), "INVALID_ARGUMENT", "maxTokens is required");
  });

  t("export to JSON and JSONL imports back byte-identical; Markdown holds the content", async () => {
    const clock = clockAt();
    const { store } = await open({ clock });
    const conv = await store.createConversation({ title: 'Auth \u{1F512} "login"' });
    await store.appendMessage(conv.id, { role: "system", content: "Be brief." });
    await store.appendMessage(conv.id, { role: "user", content: "Add login\nwith ``` fences" });
    clock.now += 5;
    await store.appendMessage(conv.id, {
      role: "assistant",
      content: "Reading é 認証",
      toolCalls: [{ name: "grep", args: { q: "login", n: 1.5, deep: { list: [1, null, "x"] } } }, { name: "ls" }],
      success: true,
    });
    await store.appendWithArtifact(conv.id, { role: "tool", content: "npm test output", success: false }, {
      type: "command_output",
      name: "npm test",
      content: "FAIL ```` x\n\ttab",
    });
    for (const format of ["json", "jsonl"]) {
      const exported = await store.export(conv.id, format);
      const other = await open({ clock });
      const meta = await other.store.import(exported);
      assert.deepEqual(meta, await store.getConversation(conv.id));
      assert.equal(await other.store.export(conv.id, format), exported, `${format} round trip`);
      const explicit = await open({ clock });
      await explicit.store.import(exported, { format });
      assert.equal(await explicit.store.export(conv.id, format), exported, `${format} with the format given`);
      assert.deepEqual(await other.store.getMessages(conv.id), await store.getMessages(conv.id));
    }
    const json = JSON.parse(await store.export(conv.id, "json"));
    assert.equal(json.format, "toolctx.conversation");
    assert.equal(json.messages.length, 4);
    assert.equal(json.artifacts[0].content, "FAIL ```` x\n\ttab");
    const lines = (await store.export(conv.id, "jsonl")).trimEnd().split("\n").map((l) => JSON.parse(l));
    assert.deepEqual(lines.map((l) => Object.keys(l)[0]), ["conversation", "artifact", "message", "message", "message", "message"]);
    const md = await store.export(conv.id, "markdown");
    assert.ok(md.startsWith('# Auth \u{1F512} "login"\n'), md.slice(0, 40));
    for (const needle of ["Be brief.", "Add login\nwith ``` fences", "Reading é 認証", "`grep`", "Success: no", "`````\nFAIL ```` x\n\ttab\n`````"]) {
      assert.ok(md.includes(needle), `markdown holds ${JSON.stringify(needle)}`);
    }
    await rejectsWith(assert, store.import(md), "INVALID_ARGUMENT", "markdown is not importable");
    await rejectsWith(assert, store.export(conv.id, "xml"), "INVALID_ARGUMENT", "unknown format");
    const hostile = (await store.export(conv.id, "jsonl")).replaceAll(conv.id, "../../escape");
    await rejectsWith(assert, store.import(hostile), "INVALID_ARGUMENT", "an export cannot name a path");
  });

  t("sync with a remote that fails for a while: nothing lost, failures reported, then merged both ways", async () => {
    const clock = clockAt();
    const remoteHost = makeRemote();
    const remote = flakyStorage(remoteHost);
    const remoteDir = contextDir();
    const storageA = makeStorage();
    const dirA = contextDir();
    const openA = () => open({ storage: storageA, contextDir: dirA, remote, remoteDir, clock, syncRetry: { baseMs: 1000, maxMs: 4000 } });
    let { store: a } = await openA();
    await rejectsWith(assert, (await open()).store.sync(), "INVALID_ARGUMENT", "no remote");
    const conv = await a.createConversation({ title: "shared" });
    await a.appendMessage(conv.id, { role: "user", content: "a1" });
    remote.state.down = true;
    await a.appendWithArtifact(conv.id, { role: "tool", content: "a2" }, { type: "file", name: "f", content: "data" });
    const first = await a.sync();
    const items = first.failed.filter((f) => f.item !== "remote index");
    assert.equal(first.pushed, 0);
    assert.equal(items.length, 3, JSON.stringify(first));
    assert.ok(items.every((f) => f.attempts === 1 && /remote is down/.test(f.error) && f.conversationId === conv.id));
    assert.equal(first.pending, 3);
    // Within the backoff the remote is not tried for those items.
    const calls = remote.state.calls;
    const early = await a.sync();
    assert.ok(early.failed.every((f) => f.item === "remote index"), JSON.stringify(early));
    assert.equal(early.pending, 3);
    assert.ok(remote.state.calls - calls <= 1, "only the pull tried the remote");
    // The queue is persisted: a restarted store still has every item.
    ({ store: a } = await openA());
    assert.deepEqual(await a.syncStatus(), { pending: 3, failed: 3 });
    clock.now += 1000;
    const second = await a.sync();
    assert.ok(second.failed.filter((f) => f.item !== "remote index").every((f) => f.attempts === 2));
    remote.state.down = false;
    clock.now += 2000;
    const ok = await a.sync();
    assert.deepEqual({ pushed: ok.pushed, failed: ok.failed, pending: ok.pending }, { pushed: 3, failed: [], pending: 0 });
    assert.deepEqual(await a.syncStatus(), { pending: 0, failed: 0 });
    // The remote holds the conversation in the same layout.
    const remoteMessages = text(await remoteHost.read(`${remoteDir}/conversations/${conv.id}/messages.jsonl`));
    assert.equal(remoteMessages.trimEnd().split("\n").length, 2);
    // A second device on the same remote; both sides append before syncing.
    const b = (await open({ remote, remoteDir, clock })).store;
    const pulled = await b.sync();
    assert.equal(pulled.pulled, 1);
    assert.deepEqual(await b.getMessages(conv.id), await a.getMessages(conv.id));
    const art = (await a.listArtifacts(conv.id))[0];
    assert.equal((await b.getArtifact(conv.id, art.id)).content, "data");
    clock.now += 10;
    await b.appendMessage(conv.id, { role: "user", content: "b1" });
    await a.appendMessage(conv.id, { role: "assistant", content: "a3" });
    await b.sync();
    await a.sync();
    await b.sync();
    const ma = await a.getMessages(conv.id);
    assert.deepEqual(await b.getMessages(conv.id), ma);
    assert.deepEqual(ma.map((m) => m.content).sort(), ["a1", "a2 (artifact://" + art.id + ")", "a3", "b1"].sort());
    assert.ok(ma.every((m, i) => i === 0 || [ma[i - 1].timestamp, ma[i - 1].id] <= [m.timestamp, m.id]));
    assert.equal((await a.getConversation(conv.id)).messageCount, 4);
    assert.equal((await b.getConversation(conv.id)).messageCount, 4);
    // A delete reaches the remote at the next sync.
    await a.deleteConversation(conv.id);
    await a.sync();
    assert.equal(await remoteHost.read(`${remoteDir}/conversations/${conv.id}/metadata.json`), undefined);
  });
}
