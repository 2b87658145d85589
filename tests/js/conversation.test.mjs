// ConversationStore under Node: the shared suite over the Node fs adapter (local and
// remote in separate real folders) and over memory storage.

import { test, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

import { ConversationStore, memoryStorage } from "toolctx";
import { nodeStorage } from "toolctx/node";
import { runConversationTests } from "./conversation.mjs";
import { parsedInsideWasm } from "./parse-spy.mjs";

const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "toolctx-conv-")));
after(() => fs.rmSync(root, { recursive: true, force: true }));

let n = 0;
const fresh = () => path.join(root, `c-${++n}`).split(path.sep).join("/");

runConversationTests(test, assert, () => nodeStorage(), { ConversationStore, name: "node", contextDir: fresh });

let m = 0;
runConversationTests(test, assert, () => memoryStorage(), {
  ConversationStore,
  name: "memory",
  contextDir: () => `/mem/c-${++m}`,
});

test("[node] conversations: the default context dir is ~/.agent/context, files are 0600", async () => {
  const dir = fresh();
  const store = await ConversationStore.open({ contextDir: dir });
  const conv = await store.createConversation();
  await store.appendMessage(conv.id, { role: "user", content: "secret" });
  const file = `${dir}/conversations/${conv.id}/messages.jsonl`;
  assert.equal(fs.statSync(file).mode & 0o777, 0o600);
  assert.equal(fs.statSync(path.dirname(file)).mode & 0o777, 0o700);
});

// Docs that run: the README's conversation example prints what it says it prints.
test("[node] conversations: the README example runs and prints what it says", () => {
  const readme = fs.readFileSync(new URL("../../docs/guides/conversations.md", import.meta.url), "utf8");
  const section = readme.slice(readme.indexOf("# Conversations and artifacts"));
  const code = section.match(/```js\n([\s\S]*?)```/)[1];
  const promised = code.split("\n").find((line) => line.startsWith("// [")).slice(4, -1);
  const dir = new URL("./.tmp/", import.meta.url);
  fs.mkdirSync(dir, { recursive: true });
  const file = new URL("readme-conversation.mjs", dir);
  fs.writeFileSync(file, code);
  const out = execFileSync(process.execPath, [file.pathname], { encoding: "utf8" });
  const squash = (s) => s.replace(/\s+/g, "");
  assert.equal(squash(out), squash(promised));
});

// No results are parsed inside a wasm call (tests/js/parse-spy.mjs says why).
test("[node] conversations: no result is parsed inside a wasm call", async () => {
  const inWasm = await parsedInsideWasm(async () => {
    const store = await ConversationStore.open({ storage: memoryStorage(), contextDir: "/mem/parse" });
    const conv = await store.createConversation({ title: "parse" });
    await store.appendMessage(conv.id, { role: "user", content: "hello" });
    const { artifact } = await store.appendWithArtifact(conv.id, { role: "tool", content: "read" },
      { type: "file", name: "a.ts", content: "export {}" });
    assert.equal((await store.getMessages(conv.id)).length, 2);
    assert.equal((await store.resolveArtifacts(conv.id, `artifact://${artifact.id}`))[0].content, "export {}");
    assert.equal((await store.stats(conv.id)).messages, 2);
    assert.equal((await store.listConversations())[0].id, conv.id);
  });
  assert.deepEqual(inWasm, []);
});

// The conversation module computes and runs no tasks (conversation.js does the store's
// I/O between its synchronous steps), so it carries no executor: no __poll, no __complete;
// its operations are plans (`__planStep`), with no step machine of their own.
test("[node] conversations: the conversation module has no task driver", () => {
  const wasm = new URL("toolctx_conversation_bg.wasm", import.meta.resolve("toolctx"));
  const exports = WebAssembly.Module.exports(new WebAssembly.Module(fs.readFileSync(wasm))).map((e) => e.name);
  assert.ok(exports.some((n) => n.startsWith("conversationstore_")), "the conversation module");
  assert.deepEqual(exports.filter((n) => n === "__poll" || n === "__complete"), []);
  assert.ok(exports.includes("__planStep"), "its operations are plans");
  assert.deepEqual(exports.filter((n) => n.startsWith("conversationop_")), [], "no step machine of an operation's own");
});

// Each operation is a plan of the module (crates/core/src/conversation/ops.rs) run by the module's
// driver: the writers' lock around a write, its changes one after the other (a `run` of
// one op a step), in the order the store depends on (the queue item first, metadata.json
// before index.json); an operation that only reads takes no lock.
test("[node] conversations: a write's changes run one at a time, in order, under the writers' lock; a read takes none", async () => {
  const host = memoryStorage();
  const log = [];
  let held = false;
  let changing = 0;
  const storage = {
    read: (...args) => host.read(...args),
    list: (...args) => host.list(...args),
    remove: (...args) => host.remove(...args),
    removeDir: (...args) => host.removeDir(...args),
    async lock(name, fn) {
      log.push(`lock ${name}`);
      return host.lock(name, async () => {
        held = true;
        try {
          return await fn();
        } finally {
          held = false;
          log.push("unlock");
        }
      });
    },
  };
  for (const name of ["write", "append"]) {
    storage[name] = async (path, ...rest) => {
      changing++;
      assert.equal(changing, 1, `${name} ${path}: one change at a time`);
      assert.ok(held, `${name} ${path}: under the writers' lock`);
      log.push(`${name} ${path.slice("/mem/plan/conversations/".length)}`);
      await new Promise((resolve) => setImmediate(resolve));
      changing--;
      return host[name](path, ...rest);
    };
  }
  const store = await ConversationStore.open({ storage, contextDir: "/mem/plan", remote: memoryStorage() });
  const conv = await store.createConversation({ id: "c" });
  log.length = 0;
  const message = await store.appendMessage(conv.id, { role: "user", content: "hello" });
  assert.equal(message.content, "hello");
  assert.equal(log[0], "lock /mem/plan/conversations/.lock");
  assert.equal(log.at(-1), "unlock");
  const changes = log.slice(1, -1);
  assert.equal(changes.length, 4, changes.join("; "));
  assert.match(changes[0], /^write sync-queue\/\d{13}-[a-z0-9]{12}\.json$/);
  assert.deepEqual(changes.slice(1), ["append c/messages.jsonl", "write c/metadata.json", "write index.json"]);
  log.length = 0;
  assert.deepEqual((await store.getMessages(conv.id)).map((m) => m.content), ["hello"]);
  assert.deepEqual(log, [], "a read takes no lock and changes nothing");
  await store.close();
});
