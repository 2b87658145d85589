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
import { contextTools } from "toolctx/tools";

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

/** Every pointer of the store (sessions included), as the server sees them. */
async function pointersOf(dir, sessionId) {
  const root = await ContextManager.open({ contextDir: dir, fileSystem: nodeStorage(), readOnly: true });
  const session = await ContextManager.open({ contextDir: dir, fileSystem: nodeStorage(), readOnly: true, session: sessionId });
  const all = [...root.getAllPointers(), ...session.getAllPointers()];
  root.free();
  session.free();
  return all;
}

test("toolctx mcp: its tools are toolctx/tools' own (names, descriptions, JSON Schemas), plus list_sessions", async (t) => {
  const { dir } = await store(t);
  const { client, close } = await connect(dir);
  t.after(close);
  assert.deepEqual(client.getServerVersion().name, "toolctx");
  const { tools } = await client.listTools();
  assert.deepEqual(tools.map((x) => x.name), ["read_context", "search_context", "grep_context", "list_sessions"], "save_context is off by default");
  const manager = new ContextManager({ contextDir: dir, fileSystem: nodeStorage() });
  for (const defined of contextTools(manager)) {
    const served = tools.find((x) => x.name === defined.name);
    const { name, title, description, inputSchema } = defined;
    assert.deepEqual({ name: served.name, title: served.title, description: served.description, inputSchema: served.inputSchema }, { name, title, description, inputSchema });
    assert.equal(served.annotations.readOnlyHint, true);
  }
  for (const served of tools) assert.ok(typeof served.title === "string" && served.title.length > 0, `${served.name} has a title`);
  manager.free();
});

test("toolctx mcp: read_context, search_context, grep_context and list_sessions over a real stdio pipe, sessions included; reading writes nothing", async (t) => {
  const { dir, login, sessionId } = await store(t);
  const pointers = await pointersOf(dir, sessionId);
  const handle = (filepath) => pointers.find((p) => p.filepath === filepath).handle;
  const billing = pointers.find((p) => p.args.url === "https://example.com/billing");
  const before = snapshot(dir);
  const { client, stderr, close } = await connect(dir);
  t.after(close);

  // search_context: the store's ranking, sessions included; each hit's handle and best lines.
  const search = textOf(await client.callTool({ name: "search_context", arguments: { query: "why does login fail with an AuthError?" } }));
  const titles = search.split("\n").filter((line) => /^\d+\. /.test(line));
  assert.equal(titles.length, 2, search);
  assert.ok(titles.some((line) => line.includes(`${handle(login)} read file: path=src/auth/login.ts (`)), search);
  assert.ok(search.includes("   42: line 42: throw new AuthError('token expired')"), search);
  const fromSession = textOf(await client.callTool({ name: "search_context", arguments: { query: "billing invoice" } }));
  assert.match(fromSession, new RegExp(`^1\\. ${billing.handle} fetch: url=https://example\\.com/billing `));
  assert.equal(textOf(await client.callTool({ name: "search_context", arguments: { query: "kubernetes" } })), 'No saved tool output matches "kubernetes".');

  // read_context: by handle, numbered lines paged from `offset` (the first line).
  const first = textOf(await client.callTool({ name: "read_context", arguments: { handle: handle(login) } })).split("\n");
  assert.match(first[0], new RegExp(`^${handle(login)} read file: path=src/auth/login\\.ts \\([\\d,]+ bytes\\): lines 1–200 of 500$`));
  assert.equal(first[1], "  1  line 1: export const x = 1;");
  assert.equal(first.at(-1), `[300 more lines: read_context {"handle": "${handle(login)}", "offset": 201}]`);
  const page = textOf(await client.callTool({ name: "read_context", arguments: { handle: handle(login), offset: 41, limit: 3 } })).split("\n");
  assert.deepEqual(page.slice(1), [
    "41  line 41: export const x = 1;",
    "42  line 42: throw new AuthError('token expired')",
    "43  line 43: export const x = 1;",
    `[457 more lines: read_context {"handle": "${handle(login)}", "offset": 44}]`,
  ]);
  // Its older forms too: a toolctx:// pointer, a filepath, a file name; and a session's record.
  for (const older of [`toolctx://${login}`, login, login.split("/").pop()]) {
    assert.equal(textOf(await client.callTool({ name: "read_context", arguments: { handle: older, offset: 42, limit: 1 } })).split("\n")[1], "42  line 42: throw new AuthError('token expired')", older);
  }
  assert.equal(textOf(await client.callTool({ name: "read_context", arguments: { handle: billing.handle } })).split("\n")[1], "1  invoice totals and billing rules");
  const grepped = textOf(await client.callTool({ name: "read_context", arguments: { handle: handle(pointers.find((p) => p.toolName === "grep").filepath) } }));
  assert.match(grepped, /: lines 1–1 of 1\n1 {2}hits\[0\]: src\/auth\/errors\.ts:3$/, "a structured output reads a field or an element per line");

  // grep_context: every record newest first, sessions included, or one by handle.
  const hits = textOf(await client.callTool({ name: "grep_context", arguments: { pattern: "AuthError|billing" } }));
  assert.ok(hits.indexOf(billing.handle) < hits.indexOf(handle(login)), hits);
  assert.ok(hits.includes("  42: line 42: throw new AuthError('token expired')"), hits);
  assert.equal(textOf(await client.callTool({ name: "grep_context", arguments: { pattern: "token", handle: handle(login) } })).split("\n").length, 4);

  // Refused, with the error the model reads: past the end, unknown, outside the store, bad arguments.
  const past = await client.callTool({ name: "read_context", arguments: { handle: handle(login), offset: 501 } });
  assert.equal(past.isError, true);
  assert.match(textOf(past), /offset 501 is past the end of ctx:\w+ \(500 lines\)/);
  for (const ref of ["ctx:aaaaaaaaaa", "toolctx:///etc/passwd", "/etc/passwd", `${dir}/../../etc/passwd`, "../../etc/passwd", "toolctx://nope.json"]) {
    const r = await client.callTool({ name: "read_context", arguments: { handle: ref } });
    assert.equal(r.isError, true, ref);
    assert.match(textOf(r), /^read_context: handle: no saved tool output has the handle .*; search_context lists the handles that exist$/);
  }
  const bad = await client.callTool({ name: "read_context", arguments: { handle: handle(login), limit: 0 } });
  assert.equal(bad.isError, true);
  assert.match(textOf(bad), /limit must be a positive whole number/);
  const save = await client.callTool({ name: "save_context", arguments: { toolName: "x", result: "y" } });
  assert.equal(save.isError, true);
  assert.match(textOf(save), /--allow-save offers save_context/);

  // list_sessions
  const sessions = await client.callTool({ name: "list_sessions", arguments: {} });
  assert.deepEqual(sessions.structuredContent.sessions.map((s) => [s.id, s.records]), [[sessionId, 1]]);
  assert.match(textOf(sessions), new RegExp(`^1 sessions:\\n${sessionId}: 1 records, \\d+ bytes, last activity `));

  assert.deepEqual(snapshot(dir), before, "the server opened the store read-only: no file written, none touched");
  assert.match(stderr(), /toolctx mcp: serving .* over stdio/);
});

test("toolctx mcp: read_context is capped at 20,000 characters a call, and a line at 2,000", async (t) => {
  const { dir, wide, long, sessionId } = await store(t);
  const pointers = await pointersOf(dir, sessionId);
  const handle = (filepath) => pointers.find((p) => p.filepath === filepath).handle;
  const { client, close } = await connect(dir);
  t.after(close);
  const page = textOf(await client.callTool({ name: "read_context", arguments: { handle: handle(wide), limit: 1000 } })).split("\n");
  assert.match(page[0], /: lines 1–97 of 300$/); // lines of 199 characters, numbered: 97 fit in 20,000
  assert.ok(page.slice(1, -1).join("\n").length <= 20_000);
  assert.equal(page.at(-1), `[203 more lines: read_context {"handle": "${handle(wide)}", "offset": 98}]`);
  const one = textOf(await client.callTool({ name: "read_context", arguments: { handle: handle(long) } })).split("\n");
  assert.match(one[0], /: lines 1–1 of 1$/);
  assert.equal(one[1], `1  ${"z".repeat(2_000)}… [48,000 more characters]`);
});

test("toolctx mcp --allow-save: save_context writes a record that search_context and read_context find by its handle", async (t) => {
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
  const { handle, pointer } = saved.structuredContent;
  assert.match(handle, /^ctx:[a-z2-7]{10,12}$/);
  assert.match(pointer, new RegExp(`^toolctx://${dir}/runTests_[0-9a-f]{12}_\\d{13}_\\d+_[a-z0-9]{4}\\.json$`));
  assert.equal(textOf(saved), `Saved as ${handle} (${pointer.slice("toolctx://".length)})`);
  const onDisk = JSON.parse(readFileSync(pointer.slice("toolctx://".length), "utf8"));
  assert.deepEqual(
    [onDisk.toolName, onDisk.args, onDisk.result, onDisk.taskId, onDisk.toolCallId],
    ["runTests", { suite: "payments" }, { failed: ["refund rounding"], passed: 41 }, 4, "toolu_01Pay"],
  );

  const found = textOf(await client.callTool({ name: "search_context", arguments: { query: "payments tests" } }));
  assert.match(found, new RegExp(`^1\\. ${handle} `));
  const read = textOf(await client.callTool({ name: "read_context", arguments: { handle } }));
  assert.match(read, /\n1 {2}failed\[0\]: refund rounding\n2 {2}passed: 41$/);

  const wrong = await client.callTool({ name: "save_context", arguments: { toolName: "", result: 1 } });
  assert.equal(wrong.isError, true);
  assert.equal(textOf(wrong), "save_context: toolName must not be empty.");
  const typo = await client.callTool({ name: "save_context", arguments: { toolName: "x", result: 1, taskid: 3 } });
  assert.equal(textOf(typo), "save_context: unknown argument taskid.");
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

test("toolctx mcp: a catastrophic pattern from one client holds no other call, and the server lives on", { timeout: 60_000 }, async (t) => {
  const { dir } = await store(t);
  const m = await ContextManager.open({ contextDir: dir, fileSystem: nodeStorage(), persistThreshold: 0 });
  await m.saveContext("cat", {}, Array.from({ length: 200 }, () => `${"a".repeat(5_000)}!`));
  await m.close();
  const { client, close } = await connect(dir);
  t.after(close);
  // A backtracking engine would take years over these lines; the other calls are answered meanwhile.
  const [grep, search, read] = await Promise.all([
    client.callTool({ name: "grep_context", arguments: { pattern: "(a+)+$" } }),
    client.callTool({ name: "search_context", arguments: { query: "token expired" } }),
    client.callTool({ name: "grep_context", arguments: { pattern: "foo(?=bar)" } }),
  ]);
  assert.equal(grep.isError, undefined, textOf(grep));
  assert.match(textOf(search), /login\.ts/);
  assert.equal(read.isError, true);
  assert.match(textOf(read), /^grep_context: pattern: look-around/);
  const last = await client.callTool({ name: "search_context", arguments: { query: "billing" } });
  assert.match(textOf(last), /billing/);
  // Every answer the model read is counted, in the usage shape of every integration.
  const usage = last._meta["toolctx/usage"];
  assert.equal(usage.readsBack, 4);
  assert.equal(usage.tokenizer, "estimate");
  assert.ok(usage.charsReadBack >= textOf(last).length + textOf(read).length, JSON.stringify(usage));
});

test("toolctx mcp --call-timeout: a call that has not answered by then is answered with an error", { timeout: 60_000 }, async (t) => {
  const { dir } = await store(t);
  const { client, close } = await connect(dir, ["--call-timeout", "0.0001"]);
  t.after(close);
  const late = await client.callTool({ name: "search_context", arguments: { query: "token" } });
  assert.equal(late.isError, true);
  assert.match(textOf(late), /^search_context: no answer within 0\.0001 s/);
});
