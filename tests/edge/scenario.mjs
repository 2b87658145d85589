// What an edge worker does with toolctx, run inside workerd and edge-runtime by the tests
// (bundled with the package resolved by name): the defaults (memory storage, the browser's
// "agent/context"), save / select / load through memory storage from both entry points,
// a second manager rebuilding the index from the stored bytes, a conversation with an
// artifact, the window optimiser, and the trap guard. Returns plain JSON to assert on.

import { ContextManager, ConversationStore, memoryStorage, optimizeWindow } from "toolctx";
import { memoryStorage as memoryFromSubpath } from "toolctx/memory";

const read = (id, content) => [
  { role: "assistant", content: [{ type: "tool_use", id, name: "read_file", input: { path: "src/app.ts" } }] },
  { role: "user", content: [{ type: "tool_result", tool_use_id: id, content }] },
];

export default async function scenario() {
  const debug = [];
  const byDefault = new ContextManager({ persistThreshold: 0, onDebug: (msg) => debug.push(msg) });
  const fp = await byDefault.saveContext("readFile", { path: "src/auth/login.ts" }, "export function login() {}", 1, "login");
  await byDefault.saveContext("listDirectory", { path: "docs" }, ["a.md", "b.md"], 2, "docs");
  const picked = byDefault.selectRelevantContexts("login", byDefault.getAllPointers());
  const [record] = await byDefault.loadContexts(picked);
  const contextDir = byDefault.getContextDir();

  const storage = memoryFromSubpath();
  const writer = new ContextManager({ contextDir: "/edge", fileSystem: storage, persistThreshold: 0 });
  for (let i = 0; i < 5; i++) await writer.saveContext("grep", { pattern: `p${i}`, dir: "src" }, { hits: [i, "é🙂"] }, i);
  const reader = new ContextManager({ contextDir: "/edge", fileSystem: storage });
  const rebuilt = await reader.rebuildIndex();
  const loaded = await reader.loadContexts(reader.getAllPointers().map((p) => p.filepath));

  const store = await ConversationStore.open({ storage: memoryStorage(), contextDir: "/ctx" });
  const conv = await store.createConversation({ title: "Add login" });
  await store.appendMessage(conv.id, { role: "user", content: "Add a login page" });
  const { message } = await store.appendWithArtifact(
    conv.id,
    { role: "tool", content: "src/auth/login.ts, 250 lines", toolCalls: [{ name: "readFile" }] },
    { type: "file", name: "src/auth/login.ts", content: "export function login() {}\n".repeat(250) },
  );
  const [artifact] = await store.resolveArtifacts(conv.id, message.content);
  const stats = await store.stats(conv.id);

  const messages = [
    { role: "user", content: "Fix the bug in src/app.ts" },
    { role: "assistant", content: "Let me look at it." },
    { role: "user", content: "Go ahead." },
    ...read("t1", "export const app = 1;\n".repeat(200)),
    ...read("t2", "export const app = 2;\n".repeat(200)),
  ];
  const window = optimizeWindow(messages);

  let trap;
  try {
    ContextManager.__panicForTests("deliberate, from an edge worker");
  } catch (err) {
    trap = { code: err.code, cause: err.cause instanceof WebAssembly.RuntimeError };
  }
  const oldManager = await byDefault.saveContext("t", {}, 1).then(() => "resolved", (err) => err.code);
  const afterTrap = new ContextManager({ fileSystem: memoryStorage(), persistThreshold: 0 });
  await afterTrap.saveContext("grep", { q: "x" }, [1]);

  return {
    contextDir,
    storage: debug.find((d) => d.includes("memory")) ?? debug,
    picked: picked.length,
    fp: fp.startsWith("agent/context/readFile_") && picked[0] === fp,
    record: { tool: record.toolName, result: record.result },
    rebuilt,
    grep: loaded.map((r) => r.result),
    storedPaths: storage.paths().filter((p) => !p.includes("/.index/")).length, // records (beside them, index segments)
    artifact: { size: artifact.size, users: stats.messagesByRole.user, tools: stats.messagesByRole.tool },
    window: { edits: window.edits.length, notice: window.messages[4].content[0].content.slice(0, 40), before: window.metrics.tokensBefore > window.metrics.tokensAfter },
    trap: { ...trap, oldManager, afterTrap: afterTrap.size, hash: ContextManager.hashQuery("x") },
  };
}
