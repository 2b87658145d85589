// A strict TypeScript consumer of the installed package: every entry point and the
// documented API, type-checked by `tsc --strict` (tests/pack/run.mjs), then compiled and
// run under Node, so the declarations and the runtime agree. `expectType`/`notAny` make
// a return type that drifts (or turns into `any`) a compile error.

import {
  ContextHistory, ContextManager, ConversationStore, estimateTokens, findDuplicateFileReads, memoryStorage,
  optimizeWindow, shouldCompact, truncationRange,
} from "toolctx";
import type {
  ArtifactMeta, ContentBlock, ContextManagerOptions, ContextPointer, ConversationMetadata, ConversationStats,
  DuplicateFileRead, IFileSystem, Message, RecordExport, RetentionOptions, ScoredContext, SelectOptions, SessionInfo, StorageData, StorageHost,
  StoredContext, SyncResult, ToolctxError, ToolctxErrorCode, WindowEdit, WindowResult,
} from "toolctx";
import { nodeStorage, type NodeStorageOptions } from "toolctx/node";
import { denoStorage, type DenoStorageOptions } from "toolctx/deno";
import { bunStorage } from "toolctx/bun";
import { opfsStorage, type OpfsStorageOptions } from "toolctx/opfs";
import { indexedDbStorage, type IndexedDbStorageOptions } from "toolctx/indexeddb";
import { memoryStorage as memoryFromSubpath, type MemoryStorage } from "toolctx/memory";
import { clearToolUses, type ClearToolUsesResult } from "toolctx";
import { memoryToolHandlers, type MemoryToolHandlers } from "toolctx/anthropic";
import { ConversationStore as ConversationsFromSubpath, type ConversationMessage } from "toolctx/conversation";
import {
  ContextHistory as HistoryFromSubpath, estimateTokens as estimateFromSubpath, optimizeWindow as optimizeFromSubpath,
  type WindowResult as SubpathWindowResult,
} from "toolctx/window";

type IsAny<T> = 0 extends 1 & T ? true : false;
/** Compiles only when `value`'s type is not `any`. */
function notAny<T>(value: T, ..._: IsAny<T> extends true ? [never] : []): T {
  return value;
}
/** Compiles only when `value`'s type is exactly `Expected` (and not `any`). */
function expectType<Expected>() {
  return <Actual,>(value: Actual, ..._: [Expected] extends [Actual] ? ([Actual] extends [Expected] ? (IsAny<Actual> extends true ? [never] : []) : [never]) : [never]) => value;
}

/** A StorageHost written by a user: the interface is implementable as documented. */
function userStorage(): StorageHost {
  const files = new Map<string, StorageData>();
  return {
    read: (path) => files.get(path),
    write: async (path, data, options) => {
      if (options?.exclusive && files.has(path)) throw Object.assign(new Error("exists"), { code: "EEXIST" });
      files.set(path, data);
    },
    remove: (path) => void files.delete(path),
    list: (dir) => [...files.keys()].filter((p) => p.startsWith(`${dir}/`)).map((p) => p.slice(dir.length + 1).split("/")[0]!),
  };
}

/** Types only: the adapters of other runtimes (never called under Node). */
export function adaptersTypeCheck(): StorageHost[] {
  const deno: DenoStorageOptions = { durability: "strict" };
  const opfs: OpfsStorageOptions = { syncAccessHandles: true };
  const idb: IndexedDbStorageOptions = { database: "toolctx", durability: "default" };
  const node: NodeStorageOptions = { maxOpenFiles: 8, syncCreateMaxBytes: 0 };
  const indexed = indexedDbStorage(idb);
  expectType<Promise<void>>()(indexed.close());
  const seedFs: IFileSystem = {
    readFile: async () => "", writeFile: async () => {}, readdir: async () => [], unlink: async () => {},
    mkdir: async () => undefined, exists: async () => false,
  };
  new ContextManager({ fileSystem: seedFs });
  return [denoStorage(deno), bunStorage(node), opfsStorage(opfs), indexed, nodeStorage(node)];
}

// `process` without @types/node: the same file type-checks for a browser project.
const dir = (globalThis as { process?: { argv: string[] } }).process?.argv[2];
if (!dir) throw new Error("usage: node consumer.mjs <scratch dir>");

// ContextManager: the seed API and what lies beyond it.
const options: ContextManagerOptions = { contextDir: dir, fileSystem: nodeStorage({ durability: "default" }), persistThreshold: 0 };
const m = await ContextManager.open(options);
const fp = expectType<string>()(await m.saveContext("readFile", { path: "src/auth/login.ts" }, "export function login() {}", 1, "q"));
await m.saveContext("grep", { pattern: "login" }, ["src/auth/login.ts"], { taskId: 2, description: "grep login" });
const pointers = expectType<ContextPointer[]>()(m.getAllPointers());
const handle = expectType<string | undefined>()(m.handleOf(fp));
expectType<string | undefined>()(m.resolveHandle(handle ?? "ctx:aaaaaaaaaa"));
expectType<ContextPointer[]>()(m.getPointersForQuery("q"));
expectType<ContextPointer[]>()(m.getPointersForTask(1));
const select: SelectOptions = { strategy: "bm25", limit: 5, fallback: "none", maxTokens: 10_000 };
const paths = expectType<string[]>()(m.selectRelevantContexts("login", pointers, select));
const records = expectType<StoredContext[]>()(await m.loadContexts(paths));
const result = notAny(records[0]?.result);
const scored = expectType<ScoredContext[]>()(await m.selectRelevant("login", {
  rerank: async (query, candidates, signal) => (signal.aborted ? [] : candidates.map((c) => c.filepath).filter(() => query !== "")),
  rerankTimeoutMs: 1000,
}));
const hash = expectType<string>()(ContextManager.hashQuery("login"));
const size = expectType<number>()(m.size);
expectType<string>()(m.getContextDir());
expectType<string | undefined>()(m.sessionId);
expectType<number>()(await m.rebuildIndex());
const exported = expectType<RecordExport>()(await ContextManager.exportRecords({ contextDir: dir, fileSystem: nodeStorage() }));
expectType<{ filename: string; reason: string }[]>()(exported.skipped);
const jsonl = expectType<string>()(exported.jsonl);
expectType<{ imported: number; unchanged: number }>()(await ContextManager.importRecords({ contextDir: `${dir}-copy`, storage: memoryStorage() }, jsonl));
expectType<{ imported: number; unchanged: number }>()(await ContextManager.importRecords({ contextDir: `${dir}-copy`, storage: memoryStorage() }, exported));
const sessions = expectType<SessionInfo[]>()(await ContextManager.listSessions({ contextDir: dir, fileSystem: nodeStorage() }));
expectType<string[]>()(await ContextManager.cleanupStaleSessions({ contextDir: dir, fileSystem: nodeStorage(), olderThanMs: 86_400_000 }));
await m.flush();
m.clearPointers();
await m.clearContextDir();
await m.clear();
await m.close();
const disposable: () => Promise<void> = m[Symbol.asyncDispose];
const fromSession = await ContextManager.open({ contextDir: dir, storage: userStorage(), session: true });
await fromSession.saveContext("listDirectory", { path: "docs" }, ["a.md"], 1);
const retention: RetentionOptions = { maxBytes: 1 << 20, maxRecords: 100, maxAgeMs: 3_600_000 };
const capped = await ContextManager.open({
  contextDir: dir, storage: userStorage(), session: true, retention,
  onEvict: (pointers) => expectType<ContextPointer[]>()(pointers).forEach((p) => notAny(p.toolCallId)),
});
await capped.saveContext("read_file", { path: "a.ts" }, "body", { toolCallId: "call_1", category: "code" });
expectType<string[]>()(await capped.reconcile());
expectType<string | undefined>()(capped.getAllPointers()[0]?.toolCallId);
await capped.endSession();
expectType<number>()(await ContextManager.purge({ contextDir: dir, storage: userStorage() }));

// Errors carry a typed code.
let code: ToolctxErrorCode | undefined;
try {
  await fromSession.saveContext("t", {}, 1n); // m is closed: it would reject CLOSED
} catch (err) {
  code = (err as ToolctxError).code;
}

// ConversationStore.
const store = await ConversationStore.open({ storage: memoryFromSubpath(), remote: memoryStorage(), contextDir: "/ctx" });
const conv = expectType<ConversationMetadata>()(await store.createConversation({ title: "Add login" }));
await store.appendMessage(conv.id, { role: "user", content: "Add a login page" });
const { message, artifact } = await store.appendWithArtifact(
  conv.id,
  { role: "tool", content: "src/auth/login.ts, 2 lines", toolCalls: [{ name: "readFile" }] },
  { type: "file", name: "src/auth/login.ts", content: "export function login() {}\n".repeat(2) },
);
expectType<ArtifactMeta>()(artifact);
const role: "user" | "assistant" | "tool" | "system" = message.role;
const resolved = await store.resolveArtifacts(conv.id, message.content);
expectType<string>()(resolved[0]!.content);
const stats = expectType<ConversationStats>()(await store.stats(conv.id, { costPerToken: 0.000003 }));
const pruned = await store.prune(conv.id, { task: "login", maxTokens: 50_000 });
expectType<string>()(await store.export(conv.id, "jsonl"));
expectType<SyncResult>()(await store.sync());
expectType<{ pending: number; failed: number }>()(await store.syncStatus());
await store.close();

// The window optimiser and its history.
const read = (id: string, content: string): Message[] => [
  { role: "assistant", content: [{ type: "tool_use", id, name: "read_file", input: { path: "src/app.ts" } }] },
  { role: "user", content: [{ type: "tool_result", tool_use_id: id, content }] },
];
const messages: Message[] = [
  { role: "user", content: "Fix the bug in src/app.ts" },
  { role: "assistant", content: "Let me look at it." },
  { role: "user", content: "Go ahead." },
  ...read("t1", "export const app = 1;\n".repeat(50)),
  ...read("t2", "export const app = 2;\n".repeat(50)),
];
const block: ContentBlock | string = messages[3]!.content[0]!;
const history = await ContextHistory.open({ id: "conversation-1", contextDir: dir, storage: nodeStorage() });
const optimised = expectType<WindowResult>()(optimizeWindow(messages, { history, minSavings: 0.3, strategy: "half" }));
await history.save();
expectType<WindowEdit[]>()(history.edits());
expectType<Message[]>()(history.apply(messages));
expectType<[number, number] | null>()(history.deletedRange);
expectType<number>()(await history.restoreCheckpoint(0));
expectType<DuplicateFileRead[]>()(findDuplicateFileReads(messages));
expectType<[number, number] | null>()(truncationRange(messages, "lastTwo"));
expectType<boolean>()(shouldCompact({ inputTokens: 170_000, outputTokens: 2_000 }, 200_000));
expectType<number>()(estimateTokens("some text"));
const memory = expectType<MemoryStorage>()(memoryStorage());

// toolctx/conversation and toolctx/window: the same classes and functions, typed alike.
const subpathStore = await ConversationsFromSubpath.open({ storage: memoryStorage(), contextDir: "/sub" });
const subpathConv = await subpathStore.createConversation();
expectType<ConversationMessage>()(await subpathStore.appendMessage(subpathConv.id, { role: "user", content: "hi" }));
const subpaths = {
  same: ConversationsFromSubpath === ConversationStore && HistoryFromSubpath === ContextHistory,
  window: expectType<SubpathWindowResult>()(optimizeFromSubpath(messages)).messages.length,
  tokens: expectType<number>()(estimateFromSubpath("abcdefgh")),
};

// toolctx/anthropic (no @anthropic-ai/sdk installed: its types are not needed).
const handlers = expectType<MemoryToolHandlers>()(memoryToolHandlers({ storage: memoryStorage(), dir: "m" }));
const created = expectType<string>()(await handlers.create({ command: "create", path: "/memories/a.md", file_text: "a" }));
const cleared = expectType<ClearToolUsesResult<Message>>()(
  await clearToolUses(messages, { trigger: 0, keep: 1, manager: new ContextManager({ storage: memoryStorage(), contextDir: "/c" }) }),
);

console.log(JSON.stringify({
  fp: fp.startsWith(dir), records: records.length, result, scored: scored.length, hash, size, sessions: sessions.length,
  code, disposable: typeof disposable, role, resolved: resolved.length, messages: stats.messages, kept: pruned.kept.length,
  duplicatesReplaced: optimised.metrics.duplicatesReplaced, block: typeof block, memory: memory.paths().length,
  created, clearedToolUses: cleared.clearedToolUses, subpaths,
}));
