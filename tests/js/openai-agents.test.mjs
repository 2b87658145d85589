// toolctx/openai-agents against the real OpenAI Agents SDK (@openai/agents): a real Agent
// and run(), offline, with the SDK's own test double (ScriptedModel from
// @openai/agents/testing) as the model. Each model turn is a function of the request the
// SDK built, so the model "reads" the compact text and calls read_context with the handle
// it was given; what the model saw is in `model.calls`.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Agent, run, setTracingDisabled, tool, webSearchTool } from "@openai/agents";
import { assistantMessage, functionCall, modelResponder, ScriptedModel } from "@openai/agents/testing";
import { z } from "zod";
import { ContextManager } from "toolctx";
import { memoryStorage } from "toolctx/memory";
import { contextTools as toolDefinitions, BYTES_PER_TOKEN } from "toolctx/tools";
import { contextTools, usageOf, withToolContext } from "toolctx/openai-agents";

setTracingDisabled(true); // no trace exporter: nothing leaves the process

const open = () => ContextManager.open({ storage: memoryStorage(), contextDir: "/ctx" });

/** A source file of 1,000 numbered lines, 60,999 characters. */
const FILE = Array.from({ length: 1_000 }, (_, i) => `${String(i + 1).padStart(4, "0")} ${"const value = compute(input);".padEnd(55, " ")}`).join("\n");
const HANDLE = /ctx:[a-z2-7]{10,12}/;

/** The text of the last tool result the model was sent. */
function lastResult(call) {
  const item = call.request.input.filter((i) => i.type === "function_call_result").at(-1);
  return typeof item.output === "string" ? item.output : item.output.text;
}

/** Every function call the model emitted during the run, as the SDK recorded them. */
const emittedCalls = (model) => model.lastCall.request.input.filter((i) => i.type === "function_call");

const readFile = (content = FILE) =>
  tool({
    name: "readFile",
    description: "Read a file of the project.",
    parameters: z.object({ path: z.string() }),
    execute: async () => content,
  });

function summarizer(received) {
  return tool({
    name: "summarize",
    description: "Summarise a text.",
    parameters: { type: "object", properties: { text: { type: "string" } }, required: ["text"], additionalProperties: false },
    strict: false,
    execute: async ({ text }) => {
      received.push(text);
      return `${text.split("\n").length} lines summarised`;
    },
  });
}

test("openai-agents: the retrieval tools are toolctx/tools' definitions, as the model sees them", async () => {
  const manager = await open();
  const definitions = toolDefinitions(manager);
  const tools = contextTools(manager);
  assert.deepEqual(tools.map((t) => t.name), ["read_context", "search_context", "grep_context"]);
  for (const [i, t] of tools.entries()) {
    assert.equal(t.type, "function");
    assert.equal(t.name, definitions[i].name);
    assert.equal(t.description, definitions[i].description);
    assert.deepEqual(t.parameters, definitions[i].inputSchema);
    assert.equal(t.strict, false);
  }
  // What reaches the model: the SDK's serialised tools of the request.
  const model = new ScriptedModel([[assistantMessage("ok")]]);
  await run(new Agent({ name: "a", model, tools: withToolContext([], manager) }), "hi");
  assert.deepEqual(
    model.firstCall.request.tools.map(({ name, description, parameters, strict }) => ({ name, description, parameters, strict })),
    definitions.map(({ name, description, inputSchema }) => ({ name, description, parameters: inputSchema, strict: false })),
  );
});

test("openai-agents: a 60 KB output goes to storage, the model reads it back and hands it on by handle", async () => {
  const manager = await open();
  const received = [];
  let compact;
  let page;
  const model = new ScriptedModel([
    [functionCall("readFile", { path: "src/app.ts" }, { callId: "call-read" })],
    modelResponder((call) => {
      compact = lastResult(call);
      return [functionCall("read_context", { handle: HANDLE.exec(compact)[0], offset: 10, limit: 3 }, { callId: "call-page" })];
    }),
    modelResponder((call) => {
      page = lastResult(call);
      return [functionCall("summarize", { text: HANDLE.exec(compact)[0] }, { callId: "call-sum" })];
    }),
    [assistantMessage("done")],
  ]);
  const tools = withToolContext([readFile(), summarizer(received)], manager, { resolveHandles: ["summarize"] });
  const result = await run(new Agent({ name: "coder", model, tools }), "Summarise src/app.ts");
  assert.equal(result.finalOutput, "done");
  model.assertComplete();

  // The model got a compact text naming the record, not 60 KB.
  const [pointer] = manager.getAllPointers();
  assert.ok(FILE.length > 60_000);
  assert.ok(compact.length < 2_000, `compact text of ${compact.length} characters`);
  assert.match(compact, /^\[toolctx\] The output of readFile \(60,999 characters in 1,000 lines\) was saved as ctx:/);
  assert.equal(HANDLE.exec(compact)[0], pointer.handle);
  assert.match(compact, /^ {3}1 {2}0001 const value/m);
  assert.match(compact, /^1000 {2}1000 const value/m);
  assert.match(compact, /summarize/);

  // read_context answered with the lines asked for.
  assert.match(page, /lines 10–12 of 1,000/);
  assert.match(page, /^10 {2}0010 const value/m);

  // summarize received the whole stored value, though the model only wrote the handle.
  assert.deepEqual(received, [FILE]);
  for (const c of emittedCalls(model)) assert.ok(c.arguments.length < 100, `${c.name} ${c.arguments}`);

  // Both wrapped calls are stored, with the arguments the model sent and the call ids.
  assert.deepEqual(
    manager.getAllPointers().map((p) => [p.toolName, p.toolCallId, p.args]),
    [
      ["readFile", "call-read", { path: "src/app.ts" }],
      ["summarize", "call-sum", { text: pointer.handle }],
    ],
  );
  const [record] = await manager.loadContexts([pointer.filepath]);
  assert.equal(record.result, FILE);

  // What was kept out, and what came back.
  const kept = FILE.length - compact.length;
  const tokensKeptOut = Math.ceil(FILE.length / BYTES_PER_TOKEN) - Math.ceil(compact.length / BYTES_PER_TOKEN);
  const tokensReadBack = Math.ceil(page.length / BYTES_PER_TOKEN);
  const definitionTokens = usageOf(tools).definitionTokens;
  assert.deepEqual(usageOf(tools), {
    outputsOffloaded: 1,
    charsKeptOut: kept,
    tokensKeptOut,
    readsBack: 1,
    charsReadBack: page.length,
    tokensReadBack,
    definitionTokens,
    modelCalls: 0,
    tokensSaved: tokensKeptOut - tokensReadBack,
    tokenizer: "estimate",
  });
  assert.ok(definitionTokens > 400 && definitionTokens < 700, `the three definitions and one added sentence: ${definitionTokens} tokens`);
});

test("openai-agents: a small output reaches the model as the SDK sends it, and is saved too", async () => {
  const manager = await open();
  const status = tool({
    name: "status",
    description: "Project status.",
    parameters: z.object({}),
    execute: async () => ({ ok: true, files: ["a.ts", "b.ts"] }),
  });
  let seen;
  const model = new ScriptedModel([
    [functionCall("status", {}, { callId: "call-status" }), functionCall("readFile", { path: "x" }, { callId: "call-x" })],
    modelResponder((call) => {
      seen = call.request.input.filter((i) => i.type === "function_call_result").map((i) => i.output.text);
      return [assistantMessage("ok")];
    }),
  ]);
  const tools = withToolContext([status, readFile("tiny")], manager);
  await run(new Agent({ name: "a", model, tools }), "status?");
  assert.deepEqual(seen, ['{"ok":true,"files":["a.ts","b.ts"]}', "tiny"]);
  const records = await manager.loadContexts(manager.getAllPointers().map((p) => p.filepath));
  assert.deepEqual(records.map((r) => r.result), [{ ok: true, files: ["a.ts", "b.ts"] }, "tiny"]);
  assert.equal(usageOf(tools).outputsOffloaded, 0);
});

test("openai-agents: with onSaveError a BigInt result does not end the run; the model gets it as text", async () => {
  const manager = await open();
  const counter = tool({
    name: "count",
    description: "Counts.",
    parameters: z.object({}),
    execute: async () => ({ total: 12345678901234567890n, unit: "rows" }),
  });
  const failures = [];
  let seen;
  const model = new ScriptedModel([
    [functionCall("count", {}, { callId: "call-count" })],
    modelResponder((call) => {
      seen = lastResult(call);
      return [assistantMessage("ok")];
    }),
  ]);
  const tools = withToolContext([counter], manager, { onSaveError: (error, call) => failures.push({ error, call }) });
  const result = await run(new Agent({ name: "a", model, tools }), "count");
  assert.equal(result.finalOutput, "ok");
  assert.equal(seen, '{"total":"12345678901234567890","unit":"rows"}');
  assert.equal(failures.length, 1);
  assert.equal(failures[0].error.code, "NOT_SERIALIZABLE");
  assert.equal(failures[0].call.toolName, "count");
  assert.equal(failures[0].call.toolCallId, "call-count");
  assert.equal(manager.size, 0);
});

test("openai-agents: without onSaveError a failed save ends the run with a typed error", async () => {
  const manager = await open();
  const counter = tool({ name: "count", description: "Counts.", parameters: z.object({}), execute: async () => 7n });
  const model = new ScriptedModel([[functionCall("count", {}, { callId: "call-count" })], [assistantMessage("unreached")]]);
  const tools = withToolContext([counter], manager);
  await assert.rejects(run(new Agent({ name: "a", model, tools }), "count"), (error) => {
    const cause = error.error ?? error; // the SDK's ToolCallError carries the tool's error
    assert.equal(cause.name, "ToolctxError");
    assert.equal(cause.code, "NOT_SERIALIZABLE");
    assert.match(cause.message, /the output of count could not be saved/);
    return true;
  });
});

test("openai-agents: a handle no record has reaches the model as an error it can act on; the tool does not run", async () => {
  const manager = await open();
  const received = [];
  const seen = [];
  const model = new ScriptedModel([
    [functionCall("summarize", { text: "ctx:aaaaaaaaaa" }, { callId: "call-1" })],
    modelResponder((call) => {
      seen.push(lastResult(call));
      return [functionCall("read_context", { handle: "ctx:aaaaaaaaaa" }, { callId: "call-2" })];
    }),
    modelResponder((call) => {
      seen.push(lastResult(call));
      return [functionCall("grep_context", { pattern: "(" }, { callId: "call-3" })];
    }),
    modelResponder((call) => {
      seen.push(lastResult(call));
      return [assistantMessage("ok")];
    }),
  ]);
  const tools = withToolContext([summarizer(received)], manager, { resolveHandles: true });
  await run(new Agent({ name: "a", model, tools }), "go");
  assert.deepEqual(received, []);
  // The same texts as every integration's: the tool's name, then what went wrong.
  assert.match(seen[0], /^summarize: .*no saved tool output has the handle ctx:aaaaaaaaaa/);
  assert.match(seen[1], /^read_context: .*no saved tool output has the handle ctx:aaaaaaaaaa/);
  assert.match(seen[2], /^grep_context: pattern: /);
});

test("openai-agents: a z.string() parameter receives the stored text of a JSON record and of a #$ slice; a handle where the schema wants an array is refused by the schema", async () => {
  const manager = await open();
  const rows = Array.from({ length: 50 }, (_, i) => ({ id: i, name: `row ${i}` }));
  const echoed = [];
  const counted = [];
  const echo = tool({ name: "echo", description: "Echo.", parameters: z.object({ text: z.string() }), execute: async ({ text }) => (echoed.push(text), "ok") });
  const countRows = tool({
    name: "countRows",
    description: "Count rows.",
    parameters: z.object({ rows: z.array(z.object({ id: z.number(), name: z.string() })) }),
    execute: async ({ rows: given }) => (counted.push(given), `${given.length} rows`),
  });
  const query = tool({ name: "query", description: "Query.", parameters: z.object({}), execute: async () => ({ rows }) });
  let handle;
  const seen = [];
  const model = new ScriptedModel([
    [functionCall("query", {}, { callId: "call-q" })],
    modelResponder(() => {
      handle = manager.getAllPointers()[0].handle;
      return [
        functionCall("echo", { text: handle }, { callId: "call-e1" }),
        functionCall("echo", { text: `${handle}#$.rows[0:2]` }, { callId: "call-e2" }),
        functionCall("countRows", { rows: `${handle}#$.rows[0:5]` }, { callId: "call-c" }),
      ];
    }),
    modelResponder((call) => {
      seen.push(...call.request.input.filter((i) => i.type === "function_call_result").slice(-3).map((i) => (typeof i.output === "string" ? i.output : i.output.text)));
      return [assistantMessage("ok")];
    }),
  ]);
  const tools = withToolContext([query, echo, countRows], manager, { resolveHandles: true });
  await run(new Agent({ name: "a", model, tools }), "go");
  assert.deepEqual(echoed.map((t) => JSON.parse(t)), [{ rows }, rows.slice(0, 2)]);
  assert.deepEqual(counted, []);
  assert.equal(seen[0], "ok");
  assert.doesNotMatch(seen[2], /rows$/, "countRows did not run");
});

test("openai-agents: handles resolve only for the tools that opt in, slices included", async () => {
  const manager = await open();
  const received = [];
  const echoed = [];
  const echo = tool({
    name: "echo",
    description: "Echo.",
    parameters: z.object({ text: z.string() }),
    execute: async ({ text }) => {
      echoed.push(text);
      return "ok";
    },
  });
  let handle;
  const model = new ScriptedModel([
    [functionCall("readFile", { path: "a" }, { callId: "call-read" })],
    modelResponder((call) => {
      handle = HANDLE.exec(lastResult(call))[0];
      return [
        functionCall("summarize", { text: `${handle}#L2-3` }, { callId: "call-sum" }),
        functionCall("echo", { text: handle }, { callId: "call-echo" }),
      ];
    }),
    [assistantMessage("ok")],
  ]);
  const tools = withToolContext([readFile(), summarizer(received), echo], manager, { resolveHandles: ["summarize"] });
  await run(new Agent({ name: "a", model, tools }), "go");
  assert.deepEqual(received, [FILE.split("\n").slice(1, 3).join("\n")]);
  assert.deepEqual(echoed, [handle]);
});

test("openai-agents: options are checked, retrieval tools are optional, usage is per wrapper", async () => {
  const manager = await open();
  assert.throws(() => withToolContext([readFile()], manager, { resolveHandles: ["sumarize"] }), { code: "INVALID_ARGUMENT" });
  assert.throws(() => withToolContext([...contextTools(manager)], manager), { code: "INVALID_ARGUMENT", message: /read_context/ });
  assert.throws(() => withToolContext([readFile()], manager, { maxInlineChars: 0 }), { code: "INVALID_ARGUMENT" });
  assert.throws(() => withToolContext([readFile()], {}), { code: "INVALID_ARGUMENT" });
  assert.throws(() => usageOf([readFile()]), { code: "INVALID_ARGUMENT" });
  const only = withToolContext([readFile()], manager, { retrievalTools: false });
  assert.deepEqual(only.map((t) => t.name), ["readFile"]);
  assert.equal(usageOf(only).outputsOffloaded, 0);
  // A copy: the caller's tool is left as it was; a hosted tool passes unchanged.
  const original = readFile();
  const search = webSearchTool();
  const [wrapped, hosted] = withToolContext([original, search], manager);
  assert.notEqual(wrapped, original);
  assert.notEqual(wrapped.invoke, original.invoke);
  assert.equal(wrapped.parameters, original.parameters);
  assert.equal(hosted, search);
});

test("openai-agents: a tool with an outputSchema keeps its structured output: saved, never replaced", async () => {
  const manager = await open();
  const rows = Array.from({ length: 2_000 }, (_, i) => `row ${i}`);
  const query = tool({
    name: "query",
    description: "Query.",
    parameters: z.object({}),
    outputSchema: z.object({ rows: z.array(z.string()) }),
    execute: async () => ({ rows }),
  });
  let seen;
  const model = new ScriptedModel([
    [functionCall("query", {}, { callId: "call-q" })],
    modelResponder((call) => {
      seen = lastResult(call);
      return [assistantMessage("ok")];
    }),
  ]);
  const tools = withToolContext([query], manager, { maxInlineChars: 1_000 });
  await run(new Agent({ name: "a", model, tools }), "go");
  assert.deepEqual(JSON.parse(seen), { rows });
  assert.equal(manager.size, 1);
  assert.equal(usageOf(tools).outputsOffloaded, 0);
});
