// ConversationStore under Node: the shared suite over the Node fs adapter (local and
// remote in separate real folders) and over memory storage.

import { test, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

import { ConversationStore, memoryStorage } from "toolctx";
import { nodeStorage } from "toolctx/node";
import { runConversationTests } from "./conversation.mjs";

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
