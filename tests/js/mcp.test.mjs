// `toolctx mcp`: the real bin (pkg/bin/toolctx.js, as `make pkg` builds it) started as
// an MCP server and driven by the SDK's own Client over a real stdio pipe.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

import { ContextManager } from "toolctx";
import { nodeStorage } from "toolctx/node";

const bin = fileURLToPath(new URL("../../pkg/bin/toolctx.js", import.meta.url));

/** A client connected to `toolctx mcp --dir dir ...flags`; its stderr is collected. */
async function connect(dir, flags = []) {
  const transport = new StdioClientTransport({ command: process.execPath, args: [bin, "mcp", "--dir", dir, ...flags], stderr: "pipe", env: { ...process.env, NO_COLOR: "1" } });
  let stderr = "";
  transport.stderr.on("data", (chunk) => (stderr += chunk));
  const client = new Client({ name: "toolctx-test", version: "1.0.0" });
  await client.connect(transport);
  return { client, stderr: () => stderr, close: () => client.close() };
}

const textOf = (result) => result.content.map((c) => c.text).join("\n");

/** Every file of a folder with its bytes and mtime: what "reading never writes" compares. */
function snapshot(dir) {
  const out = {};
  const walk = (d) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else out[relative(dir, p)] = `${statSync(p).mtimeMs} ${readFileSync(p, "base64")}`;
    }
  };
  walk(dir);
  return out;
}

const LOGIN = Array.from({ length: 500 }, (_, i) => `line ${i + 1}: ${i === 41 ? "throw new AuthError('token expired')" : "export const x = 1;"}`).join("\n");

async function store(t) {
  const dir = mkdtempSync(join(tmpdir(), "toolctx-mcp-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const m = await ContextManager.open({ contextDir: dir, fileSystem: nodeStorage(), persistThreshold: 0 });
  const login = await m.saveContext("readFile", { path: "src/auth/login.ts" }, LOGIN, 1);
  await m.saveContext("grep", { pattern: "AuthError", dir: "src" }, { hits: ["src/auth/errors.ts:3"] }, 1);
  await m.saveContext("listDirectory", { path: "docs" }, ["intro.md"], 2);
  const wide = await m.saveContext("readFile", { path: "dist/bundle.min.js" }, Array.from({ length: 300 }, (_, i) => `${i}:`.padEnd(199, "w")).join("\n"));
  const long = await m.saveContext("fetch", { url: "https://example.com/one-line" }, "z".repeat(50_000));
  await m.close();
  const s = await ContextManager.open({ contextDir: dir, fileSystem: nodeStorage(), persistThreshold: 0, session: true });
  await s.saveContext("fetch", { url: "https://example.com/billing" }, "invoice totals and billing rules", 3);
  const sessionId = s.sessionId;
  await s.close();
  return { dir, login, wide, long, sessionId };
}

test("toolctx mcp: search_context, read_context and list_sessions over a real stdio pipe; reading writes nothing", async (t) => {
  const { dir, login, sessionId } = await store(t);
  const before = snapshot(dir);
  const { client, stderr, close } = await connect(dir);
  t.after(close);

  assert.deepEqual(client.getServerVersion().name, "toolctx");
  const { tools } = await client.listTools();
  assert.deepEqual(tools.map((x) => x.name).sort(), ["list_sessions", "read_context", "search_context"], "save_context is off by default");
  assert.deepEqual(Object.keys(tools.find((x) => x.name === "read_context").inputSchema.properties).sort(), ["limit", "offset", "pointer"]);

  // search_context: the store's ranking, sessions included.
  const search = await client.callTool({ name: "search_context", arguments: { query: "why does login fail with an AuthError?" } });
  assert.ok(!search.isError, textOf(search));
  const results = search.structuredContent.results;
  assert.deepEqual(results.map((r) => r.toolName).sort(), ["grep", "readFile"]);
  assert.ok(results.every((r) => r.pointer.startsWith(`toolctx://${dir}/`)));
  assert.match(textOf(search), /2 of 6 records match/);
  assert.match(textOf(search), new RegExp(`toolctx://${login}`));
  const billing = await client.callTool({ name: "search_context", arguments: { query: "billing invoice", session: sessionId } });
  assert.deepEqual(billing.structuredContent.results.map((r) => r.toolName), ["fetch"]);
  const none = await client.callTool({ name: "search_context", arguments: { query: "kubernetes" } });
  assert.match(textOf(none), /No saved tool output matches "kubernetes" \(6 records searched\)/);

  // read_context: by pointer, paged by lines, capped.
  const first = await client.callTool({ name: "read_context", arguments: { pointer: `toolctx://${login}` } });
  const firstText = textOf(first);
  assert.match(firstText, /readFile: read file: path=src\/auth\/login\.ts\nlines 1-200 of 500\nline 1: /);
  assert.match(firstText, /\[300 more lines: read_context with offset=200\]$/);
  const page = await client.callTool({ name: "read_context", arguments: { pointer: login, offset: 40, limit: 3 } });
  assert.deepEqual(textOf(page).split("\n").slice(1), [
    "lines 41-43 of 500",
    "line 41: export const x = 1;",
    "line 42: throw new AuthError('token expired')",
    "line 43: export const x = 1;",
    "[457 more lines: read_context with offset=43]",
  ]);
  const byName = await client.callTool({ name: "read_context", arguments: { pointer: login.split("/").pop(), offset: 499 } });
  assert.match(textOf(byName), /lines 500-500 of 500\nline 500: export const x = 1;$/);
  const json = await client.callTool({ name: "read_context", arguments: { pointer: results.find((r) => r.toolName === "grep").pointer } });
  assert.match(textOf(json), /"hits": \[\n {4}"src\/auth\/errors\.ts:3"\n {2}\]/);

  // Refused: past the end, unknown, outside the store; bad arguments.
  const past = await client.callTool({ name: "read_context", arguments: { pointer: login, offset: 500 } });
  assert.equal(past.isError, true);
  assert.match(textOf(past), /offset 500 is past the end: the result has 500 lines/);
  for (const pointer of ["toolctx:///etc/passwd", "/etc/passwd", `${dir}/../../etc/passwd`, "../../etc/passwd", "toolctx://nope.json"]) {
    const r = await client.callTool({ name: "read_context", arguments: { pointer } });
    assert.equal(r.isError, true, pointer);
    assert.match(textOf(r), /^No record .* in the store; search_context gives the pointers\.$/);
  }
  const bad = await client.callTool({ name: "read_context", arguments: { pointer: login, limit: 0 } });
  assert.equal(bad.isError, true);
  const save = await client.callTool({ name: "save_context", arguments: { toolName: "x", result: "y" } });
  assert.equal(save.isError, true);
  assert.match(textOf(save), /save_context/);

  // list_sessions
  const sessions = await client.callTool({ name: "list_sessions", arguments: {} });
  assert.deepEqual(sessions.structuredContent.sessions.map((s) => [s.id, s.records]), [[sessionId, 1]]);
  assert.match(textOf(sessions), new RegExp(`^1 sessions:\\n${sessionId}: 1 records, \\d+ bytes, last activity `));

  assert.deepEqual(snapshot(dir), before, "the server opened the store read-only: no file written, none touched");
  assert.match(stderr(), /toolctx mcp: serving .* over stdio/);
});

test("toolctx mcp: read_context is capped at 20,000 characters a call, also for one long line", async (t) => {
  const { dir, wide, long } = await store(t);
  const { client, close } = await connect(dir);
  t.after(close);
  const page = textOf(await client.callTool({ name: "read_context", arguments: { pointer: wide, limit: 2000 } }));
  const lines = page.split("\n");
  assert.equal(lines[1], "lines 1-100 of 300"); // 100 lines of 199 characters and their newlines: 20,000
  assert.equal(lines.slice(2, -1).join("\n").length + 1, 20_000);
  assert.equal(lines.at(-1), "[200 more lines: read_context with offset=100]");
  const next = textOf(await client.callTool({ name: "read_context", arguments: { pointer: wide, offset: 100, limit: 2000 } }));
  assert.match(next, /\nlines 101-200 of 300\n100:w/);
  const one = textOf(await client.callTool({ name: "read_context", arguments: { pointer: `toolctx://${long}` } }));
  assert.deepEqual(one.split("\n").slice(1), ["lines 1-1 of 1", "z".repeat(20_000), "[line 1 cut at 20000 of its 50000 characters]"]);
});

test("toolctx mcp --allow-save: save_context writes a record that search_context and read_context find", async (t) => {
  const { dir } = await store(t);
  const { client, close } = await connect(dir, ["--allow-save"]);
  t.after(close);
  const { tools } = await client.listTools();
  assert.ok(tools.some((x) => x.name === "save_context"));

  const saved = await client.callTool({
    name: "save_context",
    arguments: { toolName: "runTests", args: { suite: "payments" }, result: { failed: ["refund rounding"], passed: 41 }, taskId: 4, toolCallId: "toolu_01Pay" },
  });
  assert.ok(!saved.isError, textOf(saved));
  const pointer = saved.structuredContent.pointer;
  assert.match(pointer, new RegExp(`^toolctx://${dir}/runTests_[0-9a-f]{12}_\\d{13}_\\d+_[a-z0-9]{4}\\.json$`));
  const onDisk = JSON.parse(readFileSync(pointer.slice("toolctx://".length), "utf8"));
  assert.deepEqual(
    [onDisk.toolName, onDisk.args, onDisk.result, onDisk.taskId, onDisk.toolCallId],
    ["runTests", { suite: "payments" }, { failed: ["refund rounding"], passed: 41 }, 4, "toolu_01Pay"],
  );

  const found = await client.callTool({ name: "search_context", arguments: { query: "payments tests" } });
  assert.equal(found.structuredContent.results[0].pointer, pointer);
  const read = await client.callTool({ name: "read_context", arguments: { pointer } });
  assert.match(textOf(read), /"refund rounding"/);
});

test("toolctx mcp --allow-save: concurrent first save_context calls share one writer (its counter numbers them 0, 1, 2, ...)", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "toolctx-mcp-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  // Raw JSON-RPC over the pipe, so that the 8 calls arrive in one chunk: all are first calls.
  const child = spawn(process.execPath, [bin, "mcp", "--dir", dir, "--allow-save"], { stdio: ["pipe", "pipe", "ignore"] });
  t.after(() => child.kill());
  const answers = new Map();
  let waiting;
  let buffered = "";
  child.stdout.on("data", (chunk) => {
    const lines = (buffered + chunk).split("\n");
    buffered = lines.pop();
    for (const line of lines.filter(Boolean)) answers.set(JSON.parse(line).id, JSON.parse(line));
    waiting?.();
  });
  const answered = async (ids) => {
    while (!ids.every((id) => answers.has(id))) await new Promise((resolve) => (waiting = resolve));
    return ids.map((id) => answers.get(id));
  };
  const line = (message) => `${JSON.stringify({ jsonrpc: "2.0", ...message })}\n`;
  child.stdin.write(line({ id: 0, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } } }));
  await answered([0]);
  const ids = [1, 2, 3, 4, 5, 6, 7, 8];
  const calls = ids.map((id) => line({ id, method: "tools/call", params: { name: "save_context", arguments: { toolName: "probe", args: { id }, result: `output ${id}` } } }));
  child.stdin.write(line({ method: "notifications/initialized" }) + calls.join(""));
  const pointers = (await answered(ids)).map((a) => {
    assert.ok(a.result && !a.result.isError, JSON.stringify(a));
    return a.result.structuredContent.pointer;
  });
  // The filename's counter is per manager (SPEC §3): one writer gives every save its own.
  const counters = pointers.map((p) => Number(/_\d{13}_(\d+)_[a-z0-9]{4}\.json$/.exec(p)[1])).sort();
  assert.deepEqual(counters, [0, 1, 2, 3, 4, 5, 6, 7], pointers.join("\n"));
});
