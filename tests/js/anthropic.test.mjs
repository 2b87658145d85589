// toolctx/anthropic against the real @anthropic-ai/sdk: the memory-tool handlers run
// inside the SDK's own tool runner (betaMemoryTool + client.beta.messages.toolRunner)
// over a mocked fetch that plays the Messages API, with no network; the same commands
// give the same texts as the SDK's BetaLocalFilesystemMemoryTool; no path leaves
// /memories; and clearToolUses follows clear_tool_uses_20250919.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

import Anthropic from "@anthropic-ai/sdk";
import { betaMemoryTool } from "@anthropic-ai/sdk/helpers/beta/memory";
import { BetaLocalFilesystemMemoryTool } from "@anthropic-ai/sdk/tools/memory/node";

import { ContextManager, estimateTokens, memoryStorage } from "toolctx";
import { nodeStorage } from "toolctx/node";
import * as toolctx from "toolctx";
import { clearToolUses, contextTools, memoryToolHandlers, messageTokens } from "toolctx/anthropic";
import * as shared from "toolctx/tools";
import { SCRIPT as SHARED_SCRIPT, outcome, runAnthropicTests } from "./anthropic.mjs";

// The shared suite (also run by Deno, Bun and Chromium over their adapters).
const made = [];
after(() => made.forEach((d) => rmSync(d, { recursive: true, force: true })));
for (const [name, makeStorage, dir] of [
  ["memory", () => memoryStorage(), () => `/ctx/${Math.random().toString(36).slice(2)}`],
  ["node", () => nodeStorage(), () => made[made.push(mkdtempSync(join(tmpdir(), "toolctx-anthropic-"))) - 1]],
]) {
  runAnthropicTests(test, assert, makeStorage, { api: { memoryToolHandlers, clearToolUses, ContextManager }, name, dir });
}

test("clearToolUses is the same function from toolctx and toolctx/anthropic", () => {
  assert.equal(toolctx.clearToolUses, clearToolUses);
});

const root = fileURLToPath(new URL("../../", import.meta.url));
const scratch = () => mkdtempSync(join(tmpdir(), "toolctx-anthropic-"));


/**
 * A folder's size in a listing: the SDK prints what stat() says of the folder (4K on
 * most Linux file systems), toolctx the bytes of the files below it (a StorageHost has
 * no folder entries to stat). Folder lines compare with the size left out.
 */
function foldersUnsized(text) {
  if (!text.startsWith("Here're the files")) return text;
  const unsized = (line) => line.replace(/^[0-9.]+[BKMG]\t/, "<dir>\t");
  return text.split("\n").map((line, i) => (i === 1 || (i > 1 && line.endsWith("/")) ? unsized(line) : line)).join("\n");
}

// -- the SDK's tool runner, with a mocked Messages API ---------------------------------

/** A fetch that answers each POST /v1/messages with the next canned assistant turn, and records the requests. */
function mockApi(turns) {
  const requests = [];
  const fetch = async (url, init) => {
    assert.match(String(url), /\/v1\/messages/);
    const body = JSON.parse(init.body);
    requests.push(body);
    const content = turns[requests.length - 1];
    assert.ok(content, `no canned turn for request ${requests.length}`);
    const message = {
      id: `msg_${requests.length}`,
      type: "message",
      role: "assistant",
      model: body.model,
      content,
      stop_reason: content.some((b) => b.type === "tool_use") ? "tool_use" : "end_turn",
      stop_sequence: null,
      usage: { input_tokens: 100, output_tokens: 20 },
      container: null,
      context_management: null,
    };
    return new Response(JSON.stringify(message), { status: 200, headers: { "content-type": "application/json", "request-id": `req_${requests.length}` } });
  };
  return { fetch, requests };
}

const memoryCall = (id, input) => ({ type: "tool_use", id, name: "memory", input });

/** The tool_result blocks the runner sent in a request, by tool_use_id. */
function toolResults(request) {
  const last = request.messages.at(-1);
  assert.equal(last.role, "user");
  return Object.fromEntries(
    last.content.filter((b) => b.type === "tool_result").map((b) => [b.tool_use_id, { content: typeof b.content === "string" ? b.content : b.content.map((c) => c.text).join(""), isError: b.is_error === true }]),
  );
}

test("the SDK's tool runner drives the memory handlers over toolctx storage (mocked API, no network)", async () => {
  const storage = memoryStorage();
  const turns = [
    [memoryCall("t1", { command: "view", path: "/memories" })],
    [
      memoryCall("t2", { command: "create", path: "/memories/notes/login.md", file_text: "# Login\nAuthError when the token expired\n" }),
      memoryCall("t3", { command: "create", path: "/etc/passwd", file_text: "x" }),
    ],
    [memoryCall("t4", { command: "str_replace", path: "/memories/notes/login.md", old_str: "expired", new_str: "expired (fixed in #12)" })],
    [memoryCall("t5", { command: "insert", path: "/memories/notes/login.md", insert_line: 1, insert_text: "status: done\n" })],
    [memoryCall("t6", { command: "rename", old_path: "/memories/notes", new_path: "/memories/done" })],
    [memoryCall("t7", { command: "view", path: "/memories/done/login.md" }), memoryCall("t8", { command: "delete", path: "/memories/../x" })],
    [memoryCall("t9", { command: "delete", path: "/memories/done" })],
    [{ type: "text", text: "Noted." }],
  ];
  const api = mockApi(turns);
  const client = new Anthropic({ apiKey: "test-key", fetch: api.fetch, maxRetries: 0 });
  const memory = betaMemoryTool(memoryToolHandlers({ storage, dir: "agent" }));
  assert.equal(memory.type, "memory_20250818");

  const final = await client.beta.messages.toolRunner({
    model: "claude-opus-4-6",
    max_tokens: 1024,
    messages: [{ role: "user", content: "Remember what we found about login." }],
    tools: [memory],
  });
  assert.equal(final.content[0].text, "Noted.");
  assert.equal(api.requests.length, turns.length);
  assert.deepEqual(api.requests[0].tools.map((t) => [t.type, t.name]), [["memory_20250818", "memory"]]);

  const results = Object.assign({}, ...api.requests.slice(1).map(toolResults));
  assert.deepEqual(results.t1, {
    content: "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n0B\t/memories",
    isError: false,
  });
  assert.deepEqual(results.t2, { content: "File created successfully at: /memories/notes/login.md", isError: false });
  assert.deepEqual(results.t3, { content: "Error: Path must start with /memories, got: /etc/passwd", isError: true });
  assert.deepEqual(results.t4, {
    content: "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n     1\t# Login\n     2\tAuthError when the token expired (fixed in #12)\n     3\t",
    isError: false,
  });
  assert.deepEqual(results.t5, { content: "The file /memories/notes/login.md has been edited.", isError: false });
  assert.deepEqual(results.t6, { content: "Successfully renamed /memories/notes to /memories/done", isError: false });
  assert.deepEqual(results.t7, {
    content: "Here's the content of /memories/done/login.md with line numbers:\n     1\t# Login\n     2\tstatus: done\n     3\tAuthError when the token expired (fixed in #12)\n     4\t",
    isError: false,
  });
  assert.deepEqual(results.t8, { content: "Error: Path /memories/../x would escape /memories directory", isError: true });
  assert.deepEqual(results.t9, { content: "Successfully deleted /memories/done", isError: false });
  assert.deepEqual(storage.paths(), []);
});

test("the SDK's tool runner: clearToolUses clears a result, and the model reads it back by its handle with contextTools' read_context (mocked API)", async () => {
  const manager = await ContextManager.open({ storage: memoryStorage(), contextDir: "/ctx", persistThreshold: 0 });
  const login = Array.from({ length: 300 }, (_, i) => (i === 41 ? "throw new AuthError('token expired')" : `export const x${i} = 1;`)).join("\n");
  const history = [
    { role: "user", content: "Why does login fail?" },
    { role: "assistant", content: [{ type: "tool_use", id: "t0", name: "read_file", input: { path: "src/auth/login.ts" } }] },
    { role: "user", content: [{ type: "tool_result", tool_use_id: "t0", content: login }] },
    { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "read_file", input: { path: "README.md" } }] },
    { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: "# app" }] },
  ];
  const { messages } = await clearToolUses(history, { trigger: 0, keep: 1, manager });
  const placeholder = messages[2].content[0].content;
  const [p] = manager.getAllPointers();
  assert.equal(handleOf(placeholder), p.handle);

  const usage = shared.createUsage();
  const tools = contextTools(manager, { usage });
  const defined = shared.contextTools(manager);
  assert.deepEqual(tools.map((t) => [t.type, t.name, t.description, t.input_schema]), defined.map((d) => ["custom", d.name, d.description, d.inputSchema]));

  const call = (id, name, input) => [{ type: "tool_use", id, name, input }];
  const api = mockApi([
    call("r1", "grep_context", { pattern: "AuthError", handle: p.handle }),
    call("r2", "read_context", { handle: p.handle, offset: 41, limit: 3 }),
    call("r3", "read_context", { handle: "ctx:aaaaaaaaaa" }),
    [{ type: "text", text: "The token expired." }],
  ]);
  const client = new Anthropic({ apiKey: "test-key", fetch: api.fetch, maxRetries: 0 });
  const final = await client.beta.messages.toolRunner({ model: "claude-opus-4-6", max_tokens: 1024, messages, tools });
  assert.equal(final.content[0].text, "The token expired.");
  // The API was sent the definitions alone, as toolctx/tools writes them.
  assert.deepEqual(api.requests[0].tools, defined.map((d) => ({ type: "custom", name: d.name, description: d.description, input_schema: d.inputSchema })));
  assert.equal(api.requests[0].messages[2].content[0].content, placeholder);
  const results = Object.assign({}, ...api.requests.slice(1).map(toolResults));
  assert.equal(results.r1.isError, false);
  assert.match(results.r1.content, /^ {2}42: throw new AuthError\('token expired'\)$/m);
  assert.equal(results.r2.isError, false);
  assert.deepEqual(results.r2.content.split("\n").slice(1, 4), ["41  export const x40 = 1;", "42  throw new AuthError('token expired')", "43  export const x42 = 1;"]);
  assert.deepEqual(results.r3, { content: "Error: read_context: handle: no saved tool output has the handle ctx:aaaaaaaaaa; search_context lists the handles that exist", isError: true });
  assert.equal(usage.snapshot().readsBack, 3, "the failed read's text reaches the model too");
});

// -- the same texts as the SDK's own filesystem tool ---------------------------------------

const SCRIPT = [
  { command: "view", path: "/memories" },
  { command: "create", path: "/memories/a.md", file_text: "alpha\nbeta\ngamma\nbeta\n" },
  { command: "create", path: "/memories/a.md", file_text: "again" },
  { command: "create", path: "/memories/deep/er/b.txt", file_text: "one line" },
  { command: "create", path: "/memories/.hidden.md", file_text: "h" },
  { command: "view", path: "/memories" },
  { command: "view", path: "/memories/deep" },
  { command: "view", path: "/memories/a.md" },
  { command: "view", path: "/memories/a.md", view_range: [2, 3] },
  { command: "view", path: "/memories/a.md", view_range: [3, -1] },
  { command: "view", path: "/memories/missing.md" },
  { command: "str_replace", path: "/memories/a.md", old_str: "beta", new_str: "BETA" },
  { command: "str_replace", path: "/memories/a.md", old_str: "delta", new_str: "x" },
  { command: "str_replace", path: "/memories/a.md", old_str: "alpha", new_str: "$& $1 ALPHA" },
  { command: "str_replace", path: "/memories/missing.md", old_str: "a", new_str: "b" },
  { command: "str_replace", path: "/memories/deep", old_str: "a", new_str: "b" },
  { command: "view", path: "/memories/a.md" },
  { command: "insert", path: "/memories/a.md", insert_line: 0, insert_text: "top\n" },
  { command: "insert", path: "/memories/a.md", insert_line: 99, insert_text: "x" },
  { command: "insert", path: "/memories/a.md", insert_line: -1, insert_text: "x" },
  { command: "insert", path: "/memories/gone.md", insert_line: 0, insert_text: "x" },
  { command: "view", path: "/memories/a.md" },
  { command: "rename", old_path: "/memories/a.md", new_path: "/memories/deep/b.txt" },
  { command: "rename", old_path: "/memories/a.md", new_path: "/memories/deep/er/b.txt" },
  { command: "rename", old_path: "/memories/nope.md", new_path: "/memories/c.md" },
  { command: "rename", old_path: "/memories", new_path: "/memories/x" },
  { command: "view", path: "/memories/deep/b.txt" },
  { command: "delete", path: "/memories" },
  { command: "delete", path: "/memories/nope.md" },
  { command: "delete", path: "/memories/deep/er/b.txt" },
  { command: "view", path: "/memories/deep/er/b.txt" },
  { command: "delete", path: "/memories/deep" },
  { command: "view", path: "/memories/deep/b.txt" },
  { command: "create", path: "/memories/../../escape.txt", file_text: "x" },
  { command: "view", path: "/var/log" },
];

test("every command gives the texts of the SDK's BetaLocalFilesystemMemoryTool (node and memory storage)", async () => {
  const base = scratch();
  const sdk = await BetaLocalFilesystemMemoryTool.init(join(base, "sdk"));
  const ours = memoryToolHandlers({ storage: nodeStorage(), dir: join(base, "ours") });
  const inMemory = memoryToolHandlers({ storage: memoryStorage(), dir: "m" });
  for (const command of SCRIPT) {
    const expected = foldersUnsized(await outcome(sdk, command));
    assert.equal(foldersUnsized(await outcome(ours, command)), expected, JSON.stringify(command));
    assert.equal(foldersUnsized(await outcome(inMemory, command)), expected, `memory storage: ${JSON.stringify(command)}`);
  }
  assert.deepEqual(readdirSync(join(base, "ours", "memories")), readdirSync(join(base, "sdk", "memories")));
  // The texts the shared suite expects in every runtime are the SDK's.
  const sdk2 = await BetaLocalFilesystemMemoryTool.init(join(base, "sdk2"));
  for (const [command, expected] of SHARED_SCRIPT) assert.equal(foldersUnsized(expected), foldersUnsized(await outcome(sdk2, command)), JSON.stringify(command));
  rmSync(base, { recursive: true, force: true });
});

test("view of a folder: files and folders two levels deep, hidden items and node_modules left out", async () => {
  const storage = memoryStorage();
  const h = memoryToolHandlers({ storage, dir: "" });
  await h.create({ command: "create", path: "/memories/a.md", file_text: "12345" });
  await h.create({ command: "create", path: "/memories/p/q/r/deep.md", file_text: "x".repeat(2048) });
  await h.create({ command: "create", path: "/memories/.hidden", file_text: "secret" });
  await h.create({ command: "create", path: "/memories/node_modules/x.js", file_text: "x" });
  assert.equal(
    await h.view({ command: "view", path: "/memories" }),
    [
      "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:",
      "2.0K\t/memories", // folders: the bytes of the files below them
      "5B\t/memories/a.md",
      "2K\t/memories/p/",
      "2K\t/memories/p/q/",
    ].join("\n"),
  );
  // A multi-line old_str is found (the SDK's line-by-line search never finds one).
  await h.create({ command: "create", path: "/memories/m.md", file_text: "a\nb\nc\nd\ne\nf" });
  assert.match(await h.str_replace({ command: "str_replace", path: "/memories/m.md", old_str: "b\nc", new_str: "B\nC\nC2" }), /edited/);
  assert.equal(new TextDecoder().decode(storage.read("memories/m.md")), "a\nB\nC\nC2\nd\ne\nf");
  // Two occurrences on one line are two occurrences.
  await h.create({ command: "create", path: "/memories/twice.md", file_text: "ab ab" });
  await assert.rejects(h.str_replace({ command: "str_replace", path: "/memories/twice.md", old_str: "ab", new_str: "x" }), {
    message: "No replacement was performed. Multiple occurrences of old_str `ab` in lines: 1. Please ensure it is unique",
  });
});

// -- confinement (the traversal table is in ./anthropic.mjs) ------------------------------

test("node: a symbolic link inside /memories is never followed, in either direction", async (t) => {
  const base = scratch();
  t.after(() => rmSync(base, { recursive: true, force: true }));
  const outside = join(base, "outside");
  mkdirSync(outside);
  writeFileSync(join(outside, "secret.txt"), "secret");
  const h = memoryToolHandlers({ storage: nodeStorage(), dir: join(base, "store") });
  await h.create({ command: "create", path: "/memories/ok.md", file_text: "ok" });
  symlinkSync(outside, join(base, "store", "memories", "link"));
  symlinkSync(join(outside, "secret.txt"), join(base, "store", "memories", "secret.md"));
  const refused = "Path would escape /memories directory via symlink";
  for (const command of [
    { command: "view", path: "/memories/link/secret.txt" },
    { command: "view", path: "/memories/secret.md" },
    { command: "create", path: "/memories/link/new.txt", file_text: "x" },
    { command: "str_replace", path: "/memories/link/secret.txt", old_str: "secret", new_str: "gone" },
    { command: "str_replace", path: "/memories/secret.md", old_str: "secret", new_str: "gone" },
    { command: "insert", path: "/memories/secret.md", insert_line: 0, insert_text: "x" },
    { command: "delete", path: "/memories/link/secret.txt" },
    { command: "delete", path: "/memories/secret.md" },
    { command: "rename", old_path: "/memories/secret.md", new_path: "/memories/moved.md" },
  ]) {
    await assert.rejects(h[command.command](command), { message: refused }, JSON.stringify(command));
  }
  assert.deepEqual(readdirSync(outside), ["secret.txt"]);
  assert.equal(readFileSync(join(outside, "secret.txt"), "utf8"), "secret");
  assert.ok(lstatSync(join(base, "store", "memories", "secret.md")).isSymbolicLink());
  // The listing leaves links out.
  assert.equal((await h.view({ command: "view", path: "/memories" })).split("\n").slice(1).join("|"), "2B\t/memories|2B\t/memories/ok.md");
});

test("edits are whole-file writes through the host (atomic where it is), one at a time", async () => {
  const writes = [];
  const inner = memoryStorage();
  const storage = { ...inner, write: (path, data, options) => (writes.push({ path, options }), inner.write(path, data, options)), append: undefined };
  const h = memoryToolHandlers({ storage, dir: "d" });
  await h.create({ command: "create", path: "/memories/n.md", file_text: "0" });
  // Concurrent edits of one file: none is lost.
  await Promise.all(Array.from({ length: 20 }, (_, i) => h.insert({ command: "insert", path: "/memories/n.md", insert_line: 1, insert_text: String(i + 1) })));
  const lines = new TextDecoder().decode(inner.read("d/memories/n.md")).split("\n");
  assert.equal(lines.length, 21);
  assert.deepEqual(lines.map(Number).sort((a, b) => a - b), Array.from({ length: 21 }, (_, i) => i));
  assert.deepEqual(writes[0], { path: "d/memories/n.md", options: { exclusive: true } });
  assert.ok(writes.slice(1).every((w) => w.path === "d/memories/n.md" && w.options === undefined));
  assert.throws(() => memoryToolHandlers({ storage: {} }), { code: "INVALID_ARGUMENT" });
});

test("rename of a folder: a file that fails to read (a timeout) fails the rename and nothing is removed", async () => {
  const inner = memoryStorage();
  const flaky = new Set();
  const storage = {
    ...inner,
    read: (path, options) => (flaky.has(path) ? Promise.reject(Object.assign(new Error("timed out"), { code: "TIMEOUT" })) : inner.read(path, options)),
  };
  const h = memoryToolHandlers({ storage, dir: "d" });
  await h.create({ command: "create", path: "/memories/notes/a.md", file_text: "alpha" });
  await h.create({ command: "create", path: "/memories/notes/b.md", file_text: "beta" });
  flaky.add("d/memories/notes/b.md");
  await assert.rejects(h.rename({ command: "rename", old_path: "/memories/notes", new_path: "/memories/moved" }), { code: "TIMEOUT" });
  flaky.clear();
  assert.equal(new TextDecoder().decode(await inner.read("d/memories/notes/b.md")), "beta", "the unread file is still where it was");
  assert.equal(new TextDecoder().decode(await inner.read("d/memories/notes/a.md")), "alpha");
});

test("memory tool over a host whose lock is unsupported (toolctx/unstorage): edits run, one at a time in-process", async () => {
  const inner = memoryStorage();
  const unsupported = () => Promise.reject(Object.assign(new Error("no locks"), { code: "UNSUPPORTED" }));
  for (const storage of [
    { ...inner, lock: unsupported },
    { ...inner, lock: unsupported, guarantees: { ...(inner.guarantees ?? {}), locks: false } },
  ]) {
    const h = memoryToolHandlers({ storage, dir: `u${Math.random().toString(36).slice(2)}` });
    assert.match(await h.create({ command: "create", path: "/memories/n.md", file_text: "0" }), /created successfully/);
    await Promise.all(Array.from({ length: 5 }, (_, i) => h.insert({ command: "insert", path: "/memories/n.md", insert_line: 1, insert_text: String(i + 1) })));
    const text = await h.view({ command: "view", path: "/memories/n.md" });
    assert.equal(text.trim().split("\n").length, 7, text); // the header line and six lines
  }
});

test("types: the handlers fit the SDK's betaMemoryTool under tsc --strict", () => {
  const dir = join(root, "tests/js/.tmp/anthropic-types");
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, "check.mts"),
    `import { betaMemoryTool } from "@anthropic-ai/sdk/helpers/beta/memory";
import type { BetaMessageParam } from "@anthropic-ai/sdk/resources/beta";
import { memoryStorage } from "toolctx";
import Anthropic from "@anthropic-ai/sdk";
import { ContextManager } from "toolctx";
import { clearToolUses, contextTools, memoryToolHandlers } from "toolctx/anthropic";
const tool = betaMemoryTool(memoryToolHandlers({ storage: memoryStorage(), dir: "m" }));
const messages: BetaMessageParam[] = [{ role: "user", content: "hi" }];
const cleared: BetaMessageParam[] = (await clearToolUses(messages, { trigger: { type: "input_tokens", value: 10 }, keep: 1 })).messages;
const manager = new ContextManager({ storage: memoryStorage(), contextDir: "/ctx" });
const reply = await new Anthropic().beta.messages.toolRunner({ model: "m", max_tokens: 1, messages: cleared, tools: [tool, ...contextTools(manager, { readLines: 50 })] });
export { tool, cleared, reply };
`,
  );
  writeFileSync(
    join(dir, "tsconfig.json"),
    JSON.stringify({ compilerOptions: { strict: true, module: "nodenext", target: "es2022", noEmit: true, skipLibCheck: true, types: [] }, files: ["check.mts"] }),
  );
  const r = spawnSync(join(root, "node_modules/.bin/tsc"), ["-p", dir], { encoding: "utf8" });
  assert.equal(r.status, 0, r.stdout + r.stderr);
});

// -- clearToolUses ----------------------------------------------------------------------------

/** A conversation of `n` tool calls, each result `size` bytes. */
function conversation(n, { size = 4000, name = (i) => (i % 2 ? "grep" : "read_file") } = {}) {
  const messages = [{ role: "user", content: "Find the login bug" }];
  for (let i = 0; i < n; i++) {
    messages.push({ role: "assistant", content: [{ type: "text", text: `call ${i}` }, { type: "tool_use", id: `tu_${i}`, name: name(i), input: { path: `src/f${i}.ts` } }] });
    messages.push({ role: "user", content: [{ type: "tool_result", tool_use_id: `tu_${i}`, content: `result ${i} `.padEnd(size, "x") }] });
  }
  return messages;
}
const deepFreeze = (v) => {
  if (v && typeof v === "object") {
    Object.freeze(v);
    for (const x of Object.values(v)) deepFreeze(x);
  }
  return v;
};
const resultOf = (messages, i) => messages[2 + 2 * i].content[0].content;
const inputOf = (messages, i) => messages[1 + 2 * i].content[1].input;

test("clearToolUses: below the trigger nothing changes; above it all but the `keep` latest results are cleared", async () => {
  const messages = deepFreeze(conversation(6)); // ~6,000 tokens
  assert.equal(messageTokens(messages), estimateTokens(messages));
  const quiet = await clearToolUses(messages, { trigger: 10_000 });
  assert.equal(quiet.messages, messages);
  assert.deepEqual([quiet.clearedInputTokens, quiet.clearedToolUses], [0, 0]);
  assert.equal((await clearToolUses(messages)).clearedToolUses, 0, "default trigger: 100,000 input tokens");

  const { messages: next, clearedInputTokens, clearedToolUses } = await clearToolUses(messages, { trigger: { type: "input_tokens", value: 5000 } });
  assert.equal(clearedToolUses, 3); // keep defaults to 3
  for (const i of [0, 1, 2]) assert.match(resultOf(next, i), /^\[toolctx: tool result cleared to save context \((read_file|grep), ~1000 tokens\)\]$/);
  for (const i of [3, 4, 5]) assert.equal(resultOf(next, i), resultOf(messages, i));
  assert.equal(clearedInputTokens, estimateTokens(messages) - estimateTokens(next));
  assert.ok(clearedInputTokens > 2900);
  assert.deepEqual(inputOf(next, 0), { path: "src/f0.ts" }, "inputs stay unless clearToolInputs");
  assert.equal(next[0], messages[0], "untouched messages are shared, not copied");
  // Run again on the edited list: nothing more to clear.
  assert.equal((await clearToolUses(next, { trigger: 10, keep: 3 })).clearedToolUses, 0);
});

test("clearToolUses: keep, excludeTools, clearToolInputs, clearAtLeast, a tool_uses trigger and the reported input tokens", async () => {
  const messages = deepFreeze(conversation(6));
  const kept = await clearToolUses(messages, { trigger: 0, keep: { type: "tool_uses", value: 1 }, excludeTools: ["grep"] });
  assert.equal(kept.clearedToolUses, 3); // 0, 2, 4 are read_file; 5 is kept; grep never cleared
  assert.deepEqual([0, 1, 2, 3, 4, 5].map((i) => resultOf(kept.messages, i).startsWith("[toolctx")), [true, false, true, false, true, false]);

  const inputs = await clearToolUses(messages, { trigger: 0, keep: 4, clearToolInputs: true });
  assert.deepEqual([inputOf(inputs.messages, 0), inputOf(inputs.messages, 1), inputOf(inputs.messages, 2)], [{}, {}, { path: "src/f2.ts" }]);
  const some = await clearToolUses(messages, { trigger: 0, keep: 3, clearToolInputs: ["grep"] });
  assert.deepEqual([0, 1, 2].map((i) => inputOf(some.messages, i)), [{ path: "src/f0.ts" }, {}, { path: "src/f2.ts" }]);

  const tooLittle = await clearToolUses(messages, { trigger: 0, keep: 5, clearAtLeast: { type: "input_tokens", value: 2000 } });
  assert.equal(tooLittle.messages, messages, "one result (~1,000 tokens) is less than clearAtLeast: nothing is cleared");
  assert.equal((await clearToolUses(messages, { trigger: 0, keep: 4, clearAtLeast: 1500 })).clearedToolUses, 2);

  assert.equal((await clearToolUses(messages, { trigger: { type: "tool_uses", value: 6 } })).clearedToolUses, 0);
  assert.equal((await clearToolUses(messages, { trigger: { type: "tool_uses", value: 5 } })).clearedToolUses, 3);
  assert.equal((await clearToolUses(messages, { trigger: 150_000, inputTokens: 160_000 })).clearedToolUses, 3, "the API's count, when given, decides the trigger");

  await assert.rejects(clearToolUses(messages, { trigger: { type: "messages", value: 3 } }), { code: "INVALID_ARGUMENT" });
  await assert.rejects(clearToolUses("nope"), { code: "INVALID_ARGUMENT" });
});

/** The handle a placeholder names. */
const handleOf = (placeholder) => /read_context \{"handle": "([^"]+)"\} reads it back\]$/.exec(placeholder)?.[1];

test("clearToolUses with a manager: cleared results are saved once and stay readable through the handle in the placeholder", async () => {
  const manager = new ContextManager({ storage: memoryStorage(), contextDir: "/ctx", persistThreshold: 0 });
  const messages = deepFreeze(conversation(6));
  // Results that already name their record (toolctx/ai-sdk's compact text, by handle or, older, by pointer) are not saved again.
  const presaved = structuredClone(messages);
  presaved[2].content[0].content = "[toolctx] The output of read_file (tool call tu_0) is 4,000 characters in 1 lines; it was saved as toolctx:///ctx/read_file_0123456789ab_1_0_abcd.json instead of being shown in full.";
  presaved[4].content[0].content = "[toolctx] The output of grep (tool call tu_1) is 4,000 characters in 1 lines; it was saved as ctx:abcdefghij instead of being shown in full.";
  deepFreeze(presaved);

  const first = await clearToolUses(presaved, { trigger: 0, keep: 2, manager, taskId: 7 });
  assert.equal(first.clearedToolUses, 4);
  assert.equal(manager.size, 2);
  assert.equal(handleOf(resultOf(first.messages, 0)), "toolctx:///ctx/read_file_0123456789ab_1_0_abcd.json", "an older pointer this manager does not have is named as it is");
  assert.equal(handleOf(resultOf(first.messages, 1)), "ctx:abcdefghij");
  for (const i of [2, 3]) {
    const handle = handleOf(resultOf(first.messages, i));
    assert.match(handle, /^ctx:[a-z2-7]{10,12}$/);
    const [record] = await manager.loadContexts([manager.resolveHandle(handle)]);
    assert.equal(record.result, resultOf(messages, i));
    assert.deepEqual(record.args, { path: `src/f${i}.ts` });
    assert.equal(record.taskId, 7);
    assert.equal(record.toolCallId, `tu_${i}`, "the tool_use id is the record's toolCallId");
  }
  // The client keeps its full history and clears before every request: saved once.
  const again = await clearToolUses(presaved, { trigger: 0, keep: 2, manager });
  assert.deepEqual(again.messages, first.messages);
  assert.equal(manager.size, 2);

  // An older pointer to a record the manager has is named by that record's handle.
  const [p] = manager.getAllPointers();
  const older = structuredClone(messages);
  older[2].content[0].content = `[toolctx] The output of read_file (tool call tu_0) is 4,000 characters in 1 lines; it was saved as toolctx://${p.filename} instead of being shown in full.`;
  const named = await clearToolUses(deepFreeze(older), { trigger: 0, keep: 5, manager });
  assert.equal(handleOf(resultOf(named.messages, 0)), p.handle);

  // A failed save clears nothing.
  const failing = new ContextManager({ storage: { ...memoryStorage(), write: () => Promise.reject(Object.assign(new Error("disk"), { code: "EIO" })) }, contextDir: "/x", persistThreshold: 0 });
  await assert.rejects(clearToolUses(messages, { trigger: 0, keep: 2, manager: failing }), { code: "STORAGE" });
});

test("clearToolUses with a manager: a result saved before but evicted since (retention, clear()) is saved again, never named while gone", async () => {
  const manager = new ContextManager({ storage: memoryStorage(), contextDir: "/ctx", persistThreshold: 0 });
  const messages = deepFreeze(conversation(3));
  await clearToolUses(messages, { trigger: 0, keep: 1, manager });
  assert.equal(manager.size, 2);
  await manager.clear(); // the records are gone
  const { messages: next } = await clearToolUses(messages, { trigger: 0, keep: 1, manager });
  assert.equal(manager.size, 2, "saved again");
  for (const i of [0, 1]) {
    const [record] = await manager.loadContexts([manager.resolveHandle(handleOf(resultOf(next, i)))]);
    assert.equal(record.result, resultOf(messages, i));
  }
});

test("clearToolUses with a manager: a result that merely mentions a handle or a toolctx:// pointer (a README, code) is saved, not taken as saved", async () => {
  const manager = new ContextManager({ storage: memoryStorage(), contextDir: "/ctx", persistThreshold: 0 });
  const messages = structuredClone(conversation(3));
  const readme = "# toolctx\nRecords are named like ctx:abcdefghij (toolctx:///ctx/read_file_x.json before); read them with read_context.\n".padEnd(4000, "x");
  messages[2].content[0].content = readme;
  const { messages: next, clearedToolUses } = await clearToolUses(deepFreeze(messages), { trigger: 0, keep: 1, manager });
  assert.equal(clearedToolUses, 2);
  assert.equal(manager.size, 2, "both cleared results are saved, the README too");
  const [record] = await manager.loadContexts([manager.resolveHandle(handleOf(resultOf(next, 0)))]);
  assert.equal(record.result, readme, "the README's content is retrievable through its placeholder");
});

test("clearToolUses with a manager: over a long run its memory of saved results never outgrows the manager's live records", async () => {
  const { savedCountForTests } = await import("../../pkg/clear-tool-uses.js");
  const manager = new ContextManager({ storage: memoryStorage(), contextDir: "/ctx", persistThreshold: 0, retention: { maxRecords: 6 } });
  for (let round = 0; round < 20; round++) {
    // A new conversation every round (its tool-use ids are new): 3 results cleared and saved.
    const messages = conversation(4).map((m) => ({
      ...m,
      content: Array.isArray(m.content) ? m.content.map((b) => ({ ...b, ...(b.id && { id: `r${round}_${b.id}` }), ...(b.tool_use_id && { tool_use_id: `r${round}_${b.tool_use_id}` }) })) : m.content,
    }));
    assert.equal((await clearToolUses(messages, { trigger: 0, keep: 1, manager })).clearedToolUses, 3);
  }
  assert.equal(manager.size, 6);
  // At most the records alive when the last call started, plus that call's 3 saves.
  assert.ok(savedCountForTests(manager) <= manager.size + 3, `remembers ${savedCountForTests(manager)} saves for ${manager.size} records`);
});

test("withToolContext (tool runner): a JSON result is saved as JSON, a large one reaches the model as its handle; #$ and #L reach a string parameter as text; clearToolUses reuses the record", async () => {
  const { withToolContext, usageOf } = await import("toolctx/anthropic");
  const manager = await ContextManager.open({ storage: memoryStorage(), contextDir: "/ctx" });
  const rows = Array.from({ length: 400 }, (_, i) => ({ id: i, name: `row ${i}`, status: i === 217 ? "failed" : "ok" }));
  const echoed = [];
  const query = { type: "custom", name: "query", description: "Query.", input_schema: { type: "object", properties: {} }, run: async () => JSON.stringify({ rows }), parse: (x) => x };
  const echo = {
    type: "custom", name: "echo", description: "Echo.", input_schema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
    parse: (x) => {
      if (typeof x?.text !== "string") throw new Error("text must be a string");
      return x;
    },
    run: async ({ text }) => (echoed.push(text), "ok"),
  };
  const tools = withToolContext([query, echo], manager, { resolveHandles: ["echo"] });
  assert.deepEqual(tools.map((t) => t.name), ["query", "echo", "read_context", "search_context", "grep_context"]);
  let handle;
  const call = (id, name, input) => ({ type: "tool_use", id, name, input });
  const api = mockApi([
    [call("q1", "query", {})],
    [call("g1", "grep_context", { pattern: "failed", handle: "HANDLE" })],
    [call("e1", "echo", { text: "HANDLE#$.rows[217]" }), call("e2", "echo", { text: "HANDLE#L218" })],
    [{ type: "text", text: "row 217 failed" }],
  ]);
  // The canned turns name the handle once the model has seen it.
  const turns = api;
  const client = new Anthropic({ apiKey: "test-key", fetch: async (url, init) => {
    handle ??= /ctx:[a-z2-7]{10,12}/.exec(JSON.stringify(JSON.parse(init.body).messages))?.[0];
    const r = await api.fetch(url, init);
    const json = await r.json();
    const text = JSON.stringify(json).replaceAll("HANDLE", handle ?? "HANDLE");
    return new Response(text, { status: 200, headers: { "content-type": "application/json" } });
  }, maxRetries: 0 });
  const final = await client.beta.messages.toolRunner({ model: "claude-opus-4-6", max_tokens: 1024, messages: [{ role: "user", content: "Which row failed?" }], tools, thread: false });
  assert.equal(final.content[0].text, "row 217 failed");
  const [p] = manager.getAllPointers();
  const [record] = await manager.loadContexts([p.filepath]);
  assert.deepEqual(record.result, { rows }, "saved as the JSON value, not one long line");
  const results = Object.assign({}, ...turns.requests.slice(1).map(toolResults));
  assert.match(results.q1.content, /^\[toolctx\] The output of query \(/);
  assert.match(results.g1.content, /^ {2}218: .*"failed"/m, "grep_context sees one element a line");
  assert.deepEqual(JSON.parse(echoed[0]), rows[217]);
  assert.match(echoed[1], /"failed"/);
  const usage = usageOf(tools, { modelCalls: turns.requests.length });
  assert.equal(usage.outputsOffloaded, 1);
  assert.equal(usage.readsBack, 1);
  assert.equal(usage.modelCalls, 4);
  // clearToolUses finds the wrapper's record by the call's id: nothing is saved twice.
  const history = [...turns.requests.at(-1).messages];
  const before = manager.size;
  await clearToolUses(history, { trigger: 0, keep: 0, manager });
  assert.equal(before, 3, "query, and the two echo calls");
  assert.equal(manager.size, before + 1, "only grep_context's result is saved now: the wrapper's records are found by the call's id");
});
