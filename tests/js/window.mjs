// Runtime-agnostic tests of the context-window optimiser (SPEC §7). Like
// conformance.mjs, no `node:` imports: the caller passes the test runner, a
// node:assert/strict-compatible `assert`, a storage factory and the toolctx module.
//
//   runWindowTests(test, assert, makeStorage, { api, name, contextDir })
//
// api: the toolctx module (optimizeWindow, ContextHistory...); contextDir(): a fresh
// folder per call (default "/window/<n>").

const NOTICE =
  "[[NOTE] This file read has been removed to save space in the context window. " +
  "Refer to the latest file read for the most up to date version of this file.]";
const TRUNCATION_NOTICE_START = "[NOTE] Some previous conversation history with the user has been removed";

let dirs = 0;

function fileBody(path, version, lines = 60) {
  let out = "";
  for (let i = 0; i < lines; i++) out += `// ${path} v${version} line ${i}: export const x${i} = "${path}";\n`;
  return out;
}

const user = (content) => ({ role: "user", content });
const assistant = (text) => ({ role: "assistant", content: [{ type: "text", text }] });
const call = (id, name, input) => ({
  role: "assistant",
  content: [{ type: "text", text: "Checking." }, { type: "tool_use", id, name, input }],
});
const result = (id, content, extra = {}) => ({ role: "user", content: [{ type: "tool_result", tool_use_id: id, content, ...extra }] });

/** Task, answer, "go", then `reads` read calls cycling over `paths`, then a closing pair. */
function agentLoop(paths, reads, tool = "read_file") {
  const m = [user("Refactor the auth module"), assistant("I will read the files."), user("Go ahead.")];
  for (let i = 0; i < reads; i++) {
    const path = paths[i % paths.length];
    m.push(call(`toolu_${i}`, tool, { path }));
    m.push(result(`toolu_${i}`, fileBody(path, i)));
  }
  m.push(assistant("Done."), user("Summarise."));
  return m;
}

function deepFreeze(value) {
  if (value && typeof value === "object") {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

/** The API's rules: roles alternate, tool results answer the message before, calls are answered. */
function checkWellFormed(assert, messages) {
  const blocks = (m) => (Array.isArray(m.content) ? m.content : []);
  const uses = (m) => blocks(m).filter((b) => b.type === "tool_use").map((b) => b.id);
  const results = (m) => blocks(m).filter((b) => b.type === "tool_result").map((b) => b.tool_use_id);
  for (let i = 0; i < messages.length; i++) {
    if (i > 0) assert.notEqual(messages[i].role, messages[i - 1].role, `roles alternate at ${i}`);
    for (const id of results(messages[i])) assert.ok(i > 0 && uses(messages[i - 1]).includes(id), `orphan tool_result ${id} at ${i}`);
    if (i + 1 < messages.length) {
      for (const id of uses(messages[i])) assert.ok(results(messages[i + 1]).includes(id), `unanswered tool_use ${id} at ${i}`);
    }
  }
}

/** Characters as the optimiser counts them: text, tool inputs as JSON, tool results. */
function chars(messages) {
  let n = 0;
  for (const m of messages) {
    if (typeof m.content === "string") {
      n += m.content.length;
      continue;
    }
    for (const b of m.content) {
      if (b.type === "text") n += b.text.length;
      else if (b.type === "tool_use") n += JSON.stringify(b.input).length;
      else if (b.type === "tool_result") n += typeof b.content === "string" ? b.content.length : 0;
      else n += JSON.stringify(b).length;
    }
  }
  return n;
}

export function runWindowTests(test, assert, makeStorage, { api, name = "window", contextDir } = {}) {
  const { optimizeWindow, findDuplicateFileReads, truncationRange, shouldCompact, estimateTokens, ContextHistory } = api;
  const fresh = contextDir ?? (() => `/window/${dirs++}`);
  const t = (title, fn) => test(`[${name}] window: ${title}`, fn);

  function throwsCode(fn, code) {
    try {
      fn();
    } catch (err) {
      assert.ok(err instanceof Error, "an Error");
      assert.equal(err.code, code, `${err.message}`);
      return;
    }
    assert.fail(`expected a ${code} error`);
  }

  async function rejectsCode(promise, code) {
    try {
      await promise;
    } catch (err) {
      assert.ok(err instanceof Error, "an Error");
      assert.equal(err.code, code, `${err.message}`);
      return;
    }
    assert.fail(`expected a ${code} rejection`);
  }

  t("structured read results: all but the latest copy of each file become the notice", () => {
    const messages = agentLoop(["src/auth.ts", "src/auth.ts", "src/db.ts"], 6);
    messages[4].meta = { id: "m4", at: new Date(0) }; // fields beside role and content stay as they are
    const snapshot = JSON.stringify(messages);
    const out = optimizeWindow(deepFreeze(messages), { now: 1000 });
    assert.equal(JSON.stringify(messages), snapshot, "the input is untouched");
    // auth.ts results at 4, 6, 10, 12; db.ts at 8, 14
    for (const i of [4, 6, 10, 8]) assert.equal(out.messages[i].content[0].content, NOTICE, `message ${i}`);
    assert.equal(out.messages[12].content[0].content, fileBody("src/auth.ts", 4));
    assert.equal(out.messages[14].content[0].content, fileBody("src/db.ts", 5));
    assert.equal(out.messages[4].content[0].tool_use_id, "toolu_0");
    assert.equal(out.messages[4].meta.id, "m4");
    assert.ok(out.messages[4].meta.at instanceof Date && out.messages[4].meta.at.getTime() === 0);
    assert.notEqual(out.messages[4].meta, messages[4].meta, "plain objects are copied");
    assert.equal(out.truncated, null);
    assert.deepEqual(
      out.edits.map((e) => [e.message, e.block, e.kind, e.ts]),
      [[4, 0, "readFile", 1000], [6, 0, "readFile", 1000], [8, 0, "readFile", 1000], [10, 0, "readFile", 1000]],
    );
    assert.ok(out.edits.every((e) => e.content === NOTICE));
    out.messages[12].content[0].content = "changed";
    assert.equal(messages[12].content[0].content, fileBody("src/auth.ts", 4), "the result shares nothing with the input");
  });

  t("every kind of copy is found, and all but the latest replaced", () => {
    const a1 = fileBody("src/a.ts", 1);
    const a2 = fileBody("src/a.ts", 2);
    const b1 = fileBody("src/b.ts", 1);
    const messages = [
      user("<task>Fix a.ts</task>"),
      assistant("<read_file><path>src/a.ts</path></read_file>"),
      user([{ type: "text", text: "[read_file for 'src/a.ts'] Result:" }, { type: "text", text: a1 }]),
      assistant("<replace_in_file>...</replace_in_file>"),
      user([
        { type: "text", text: "[replace_in_file for 'src/a.ts'] Result:" },
        { type: "text", text: `Saved.\n<final_file_content path="src/a.ts">\n${a2}</final_file_content>\nIMPORTANT` },
      ]),
      assistant("Let me check."),
      user(`See <file_content path="src/a.ts">\n${a2}</file_content> and <file_content path="src/b.ts">\n${b1}</file_content>`),
      call("w1", "Write", { file_path: "src/a.ts", content: a2 }),
      result("w1", "File written"),
      call("r1", "Read", { file_path: "src/a.ts" }),
      result("r1", a2),
    ];
    const dups = findDuplicateFileReads(messages);
    assert.deepEqual(dups, [{
      path: "src/a.ts",
      occurrences: [
        { message: 2, block: 1, kind: "readFileText" },
        { message: 4, block: 1, kind: "finalFileContent" },
        { message: 6, block: 0, kind: "fileMention" },
        { message: 7, block: 1, kind: "toolInput" },
        { message: 10, block: 0, kind: "toolResult" },
      ],
    }]);
    const out = optimizeWindow(messages, { now: 5 });
    assert.equal(out.messages[2].content[1].text, NOTICE);
    assert.equal(out.messages[4].content[1].text, `Saved.\n<final_file_content path="src/a.ts">${NOTICE}</final_file_content>\nIMPORTANT`);
    assert.equal(
      out.messages[6].content,
      `See <file_content path="src/a.ts">${NOTICE}</file_content> and <file_content path="src/b.ts">\n${b1}</file_content>`,
    );
    assert.equal(out.messages[7].content[1].input.content, NOTICE);
    assert.equal(out.messages[7].content[1].input.file_path, "src/a.ts");
    assert.equal(out.messages[10].content[0].content, a2, "the latest copy stays");
    assert.deepEqual(out.edits.map((e) => e.kind), ["readFile", "writeFile", "fileMention", "writeFile"]);
  });

  t("tool names are configurable; partial and failed reads are not copies", () => {
    const messages = [
      user("task"), assistant("ok"), user("go"),
      call("1", "fs.cat", { path: "x" }), result("1", fileBody("x", 1)),
      call("2", "fs.cat", { path: "x" }), result("2", fileBody("x", 2)),
      call("3", "Read", { file_path: "x", offset: 5, limit: 10 }), result("3", "partial"),
      call("4", "Read", { file_path: "x" }), result("4", "ENOENT", { is_error: true }),
    ];
    assert.deepEqual(findDuplicateFileReads(messages), []);
    const dups = findDuplicateFileReads(messages, { readFileTools: ["fs.cat", "Read"] });
    assert.deepEqual(dups.map((d) => d.occurrences.map((o) => o.message)), [[4, 6]]);
    const out = optimizeWindow(messages, { readFileTools: ["fs.cat"], minSavings: 0 });
    assert.equal(out.messages[4].content[0].content, NOTICE);
    assert.equal(out.messages[10].content[0].is_error, true);
  });

  t("minSavings: enough saved stops, too little truncates with a notice", () => {
    const messages = agentLoop(["a.ts"], 10);
    const enough = optimizeWindow(messages, { now: 1 });
    assert.equal(enough.truncated, null);
    assert.ok(enough.metrics.duplicateSavings >= 0.3);
    const strict = optimizeWindow(messages, { now: 1, minSavings: 0.99 });
    assert.notEqual(strict.truncated, null);
    const [start, end] = strict.truncated;
    assert.equal(strict.messages.length, messages.length - (end - start + 1));
    const notice = strict.edits.at(-1);
    assert.equal(notice.kind, "truncationNotice");
    assert.equal(notice.message, start - 1);
    assert.ok(notice.content.startsWith(TRUNCATION_NOTICE_START));
    const before = strict.messages[start - 1].content;
    assert.equal(before.at(-1).text, notice.content, "the notice is appended to the message before the range");
    checkWellFormed(assert, strict.messages);
    const never = optimizeWindow([user("a"), assistant("b"), user("c"), assistant("d"), user("e"), assistant("f")], { minSavings: 0 });
    assert.equal(never.truncated, null);
  });

  t("every strategy's range, as the seed sizes it", () => {
    const chat = Array.from({ length: 42 }, (_, i) => (i % 2 === 0 ? user(`q${i}`) : assistant(`a${i}`)));
    assert.deepEqual(truncationRange(chat, "none"), [2, 41]);
    assert.deepEqual(truncationRange(chat, "lastTwo"), [2, 39]);
    assert.deepEqual(truncationRange(chat, "half"), [2, 21]);
    assert.deepEqual(truncationRange(chat, "quarter"), [2, 31]);
    assert.deepEqual(truncationRange(chat), [2, 21], "half by default");
    assert.deepEqual(truncationRange(chat, "half", { deletedRange: [2, 21] }), [2, 31], "an earlier range is extended");
    assert.equal(truncationRange(chat.slice(0, 3), "none"), null);
    const ending = chat.slice(0, 41); // ends with the user's question: it stays
    assert.deepEqual(truncationRange(ending, "none"), [2, 39]);
    throwsCode(() => truncationRange(chat, "most"), "INVALID_ARGUMENT");
  });

  t("a truncation never separates a tool call from its result", () => {
    for (let reads = 1; reads < 25; reads++) {
      const messages = [user("task"), call("first", "grep", { q: "x" }), result("first", "hits")];
      for (let i = 0; i < reads; i++) {
        messages.push(call(`t${i}`, "read_file", { path: `f${i % 4}` }), result(`t${i}`, fileBody(`f${i % 4}`, i, 5)));
      }
      messages.push(assistant("summary"), user("next"));
      for (const strategy of ["none", "lastTwo", "half", "quarter"]) {
        const range = truncationRange(messages, strategy);
        const out = optimizeWindow(messages, { strategy, minSavings: 2 });
        assert.deepEqual(out.truncated, range, `${strategy} with ${reads} reads`);
        if (range) assert.equal(range[0], 3, "the first call's result stays with the first pair");
        checkWellFormed(assert, out.messages);
        assert.deepEqual(out.messages.at(-1), user("next"));
      }
    }
  });

  t("metrics are consistent with the messages", () => {
    const messages = agentLoop(["a.ts", "b.ts", "c.ts"], 9);
    const out = optimizeWindow(messages, { minSavings: 0.9, strategy: "quarter" });
    const m = out.metrics;
    assert.equal(m.charsBefore, chars(messages));
    assert.equal(m.charsAfter, chars(out.messages));
    assert.equal(m.tokensBefore, estimateTokens(messages));
    assert.equal(m.tokensAfter, estimateTokens(out.messages));
    assert.equal(m.tokensSaved, m.tokensBefore - m.tokensAfter);
    assert.equal(m.savedRatio, (m.charsBefore - m.charsAfter) / m.charsBefore);
    assert.equal(m.duplicatesReplaced, 6);
    assert.equal(m.messagesRemoved, messages.length - out.messages.length);
    assert.ok(m.messagesRemoved > 0 && m.tokensAfter < m.tokensBefore);
    assert.equal(estimateTokens("abcdefgh"), 2);
    assert.equal(estimateTokens("é"), 1);
  });

  t("shouldCompact keeps the usual reserve for the answer", () => {
    assert.equal(shouldCompact({ inputTokens: 159_999 }, 200_000), false);
    assert.equal(shouldCompact({ inputTokens: 160_000 }, 200_000), true);
    assert.equal(shouldCompact({ inputTokens: 90_000, outputTokens: 4_000, cacheReadTokens: 4_000 }, 128_000), true);
    assert.equal(shouldCompact({ inputTokens: 90_000 }, 128_000, { reserve: 10_000 }), false);
    assert.equal(shouldCompact({ inputTokens: 25_000 }, 32_000), false);
    assert.equal(shouldCompact({ inputTokens: 25_600 }, 32_000), true);
    throwsCode(() => shouldCompact({}, 200_000), "INVALID_ARGUMENT");
    throwsCode(() => shouldCompact({ inputTokens: 1 }, 0), "INVALID_ARGUMENT");
  });

  t("bad arguments are INVALID_ARGUMENT errors", () => {
    throwsCode(() => optimizeWindow("hello"), "INVALID_ARGUMENT");
    throwsCode(() => optimizeWindow([{ role: "user" }]), "INVALID_ARGUMENT");
    throwsCode(() => optimizeWindow([], { strategy: "all" }), "INVALID_ARGUMENT");
    throwsCode(() => optimizeWindow([], { minSavings: -1 }), "INVALID_ARGUMENT");
    throwsCode(() => optimizeWindow([], { history: {} }), "INVALID_ARGUMENT");
    throwsCode(() => findDuplicateFileReads([], { readFileTools: "read_file" }), "INVALID_ARGUMENT");
    throwsCode(() => optimizeWindow([user("a"), { role: "assistant", content: [{ type: "text", text: "b", n: 1n }] }]), "NOT_SERIALIZABLE");
    const cyclic = user("a");
    cyclic.self = cyclic;
    throwsCode(() => estimateTokens([cyclic]), "NOT_SERIALIZABLE");
    assert.deepEqual(optimizeWindow([]).messages, []);
  });

  t("the history is persisted, reopened, and rolled back to a checkpoint", async () => {
    const storage = makeStorage();
    const dir = fresh();
    const history = await ContextHistory.open({ id: "conv-1", contextDir: dir, storage });
    assert.equal(history.id, "conv-1");
    assert.ok(history.path.endsWith("/window/conv-1.json"), history.path);
    assert.deepEqual(history.edits(), []);
    const messages = agentLoop(["a.ts", "b.ts"], 4);
    const first = optimizeWindow(messages, { history, now: 100 });
    assert.equal(first.edits.length, 2);
    await history.save();

    messages.push(call("late0", "read_file", { path: "b.ts" }), result("late0", fileBody("b.ts", 10)));
    messages.push(call("late1", "read_file", { path: "a.ts" }), result("late1", fileBody("a.ts", 11)));
    const reopened = await ContextHistory.open({ id: "conv-1", contextDir: dir, storage });
    assert.deepEqual(reopened.edits(), history.edits());
    const second = reopened.optimize(messages, { now: 200 });
    assert.deepEqual(second.edits.map((e) => e.message), [8, 10], "only the new duplicates");
    assert.equal(reopened.edits().length, 4);
    assert.deepEqual(reopened.apply(messages), second.messages);
    await reopened.save();

    const third = await ContextHistory.open({ id: "conv-1", contextDir: dir, storage });
    assert.equal(third.edits().length, 4);
    assert.equal(await third.restoreCheckpoint(150), 2);
    assert.ok(third.edits().every((e) => e.ts <= 150));
    const rolled = third.apply(messages);
    assert.equal(rolled[4].content[0].content, NOTICE);
    assert.equal(rolled[10].content[0].content, fileBody("b.ts", 3), "the edit made at 200 is gone");
    const fourth = await ContextHistory.open({ id: "conv-1", contextDir: dir, storage });
    assert.deepEqual(fourth.edits(), third.edits(), "restoreCheckpoint saved");
    assert.equal(JSON.parse(JSON.stringify(fourth)).edits.length, 2);
  });

  t("truncations are recorded in the history and rolled back too", async () => {
    const storage = makeStorage();
    const dir = fresh();
    const chat = Array.from({ length: 42 }, (_, i) => (i % 2 === 0 ? user(`q${i}`) : assistant(`a${i}`)));
    const history = await ContextHistory.open({ id: "chat", contextDir: dir, storage });
    const first = optimizeWindow(chat, { history, now: 10 });
    assert.deepEqual(first.truncated, [2, 21]);
    const second = optimizeWindow(chat, { history, now: 20 });
    assert.deepEqual(second.truncated, [2, 31]);
    assert.deepEqual(history.deletedRange, [2, 31]);
    await history.save();
    const reopened = await ContextHistory.open({ id: "chat", contextDir: dir, storage });
    assert.deepEqual(reopened.apply(chat), second.messages);
    assert.equal(await reopened.restoreCheckpoint(15), 1 + 1, "the second truncation and its notice");
    assert.deepEqual(reopened.deletedRange, [2, 21]);
    assert.deepEqual(reopened.apply(chat), first.messages);
  });

  t("a corrupt history is a CORRUPT_RECORD error unless discarded", async () => {
    const storage = makeStorage();
    const dir = fresh();
    const history = await ContextHistory.open({ id: "bad", contextDir: dir, storage });
    await storage.write(history.path, "{not json", {});
    await rejectsCode(ContextHistory.open({ id: "bad", contextDir: dir, storage }), "CORRUPT_RECORD");
    const notes = [];
    const fresh2 = await ContextHistory.open({ id: "bad", contextDir: dir, storage, discardCorrupt: true, onDebug: (m) => notes.push(m) });
    assert.deepEqual(fresh2.edits(), []);
    assert.ok(notes.some((m) => m.includes("corrupt")), JSON.stringify(notes));
  });

  t("history ids never form a path", async () => {
    const storage = makeStorage();
    for (const id of ["", "../x", "a/b", "x.json", "."]) {
      await rejectsCode(ContextHistory.open({ id, contextDir: fresh(), storage }), "INVALID_ARGUMENT");
    }
    await rejectsCode(ContextHistory.open(), "INVALID_ARGUMENT");
  });

  // The history's file I/O: a host failure, thrown or rejected, is typed as every storage
  // failure is (its path, the host's error as cause), and loses nothing.
  t("a host failure to read or write the history is a typed error with its path and cause", async () => {
    const storage = makeStorage();
    const dir = fresh();
    const saved = await ContextHistory.open({ id: "io", contextDir: dir, storage });
    saved.optimize(agentLoop(["a.ts"], 3), { now: 1 });
    assert.ok(saved.edits().length > 0);
    await saved.save();
    const fail = { read: null, write: null };
    const flaky = {
      read: (...a) => (fail.read ? Promise.reject(fail.read) : storage.read(...a)),
      write: (...a) => {
        if (fail.write) throw fail.write; // a synchronous throw, not a rejection
        return storage.write(...a);
      },
      remove: (...a) => storage.remove(...a),
      list: (...a) => storage.list(...a),
    };
    fail.read = Object.assign(new Error("disk gone"), { code: "EIO" });
    const readErr = await ContextHistory.open({ id: "io", contextDir: dir, storage: flaky }).then(() => null, (e) => e);
    assert.equal(readErr?.code, "STORAGE");
    assert.equal(readErr.path, saved.path);
    assert.equal(readErr.cause, fail.read);
    assert.match(readErr.message, /storage read failed: disk gone/);
    fail.read = null;

    const history = await ContextHistory.open({ id: "io", contextDir: dir, storage: flaky });
    assert.deepEqual(history.edits(), saved.edits());
    fail.write = Object.assign(new Error("no space"), { code: "ENOSPC" });
    const writeErr = await history.save().then(() => null, (e) => e);
    assert.equal(writeErr?.code, "QUOTA_EXCEEDED");
    assert.equal(writeErr.path, saved.path);
    assert.equal(writeErr.cause, fail.write);
    fail.write = { name: "EEXIST" };
    const restoreErr = await history.restoreCheckpoint(0).then(() => null, (e) => e);
    assert.equal(restoreErr?.code, "EEXIST");
    assert.deepEqual(history.edits(), [], "the checkpoint is restored in memory");
    fail.write = null;
    const reopened = await ContextHistory.open({ id: "io", contextDir: dir, storage });
    assert.deepEqual(reopened.edits(), saved.edits(), "the file is as the last save left it");
    assert.equal(await history.restoreCheckpoint(0), 0);
    assert.deepEqual((await ContextHistory.open({ id: "io", contextDir: dir, storage })).edits(), []);
    await rejectsCode(history.restoreCheckpoint("soon"), "INVALID_ARGUMENT");
  });

  t("a history read that gives neither bytes nor a string is a STORAGE error", async () => {
    const storage = makeStorage();
    const odd = { ...Object.fromEntries(["write", "remove", "list"].map((m) => [m, (...a) => storage[m](...a)])), read: async () => 42 };
    await rejectsCode(ContextHistory.open({ id: "odd", contextDir: fresh(), storage: odd }), "STORAGE");
    const absent = { ...odd, read: () => null }; // a synchronous answer: no such file
    assert.deepEqual((await ContextHistory.open({ id: "odd", contextDir: fresh(), storage: absent })).edits(), []);
  });
}
