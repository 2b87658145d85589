// toolctx/langchain against the real @langchain/core: LangChain tools (`tool()` from
// @langchain/core/tools), driven by a tool loop (invoke the model, run its tool calls,
// send back the ToolMessages, invoke it again) over a scripted chat model, offline.
// @langchain/core's own fakes (FakeListChatModel, FakeStreamingChatModel) answer with
// fixed texts or fixed tool calls, and this scenario needs the model to read the handle it
// was given; so the model is a BaseChatModel subclass whose turns are functions of the
// messages it receives. bindTools records the tools as an OpenAI-style model sees them
// (convertToOpenAITool).
import { test } from "node:test";
import assert from "node:assert/strict";
import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { convertToOpenAITool } from "@langchain/core/utils/function_calling";
import { z } from "zod";
import { ContextManager } from "toolctx";
import { memoryStorage } from "toolctx/memory";
import { contextTools as toolDefinitions, BYTES_PER_TOKEN } from "toolctx/tools";
import { contextTools, usageOf, withToolContext } from "toolctx/langchain";

const open = () => ContextManager.open({ storage: memoryStorage(), contextDir: "/ctx" });

/** A source file of 1,000 numbered lines, 60,999 characters. */
const FILE = Array.from({ length: 1_000 }, (_, i) => `${String(i + 1).padStart(4, "0")} ${"const value = compute(input);".padEnd(55, " ")}`).join("\n");
const HANDLE = /ctx:[a-z2-7]{10,12}/;
/** More model turns than any script here has: a loop that does not end is a failure. */
const MAX_TURNS = 10;

/** A chat model that answers each call with the next turn of a script: a function of the messages. */
class ScriptedChatModel extends BaseChatModel {
  constructor(script) {
    super({});
    this.script = script;
    this.calls = []; // the messages of each call
    this.boundTools = []; // the tools as bindTools converted them
  }

  _llmType() {
    return "scripted";
  }

  bindTools(tools) {
    this.boundTools = tools.map((t) => convertToOpenAITool(t));
    return this;
  }

  async _generate(messages) {
    const turn = this.script[this.calls.length];
    this.calls.push(messages);
    const message = turn ? turn(messages) : new AIMessage("(end of script)");
    return { generations: [{ text: typeof message.content === "string" ? message.content : "", message }] };
  }
}

let ids = 0;
/** A model turn that calls tools: `[[name, args, id?], ...]`. */
const callTools = (calls) =>
  new AIMessage({ content: "", tool_calls: calls.map(([name, args, id]) => ({ type: "tool_call", id: id ?? `call-${++ids}`, name, args })) });
const say = (text) => new AIMessage(text);

/** The agent loop: the model, then its tool calls, until it answers without one. */
async function runLoop(model, tools, question) {
  const byName = new Map(tools.map((t) => [t.name, t]));
  const bound = model.bindTools(tools);
  const messages = [new HumanMessage(question)];
  for (let turn = 0; turn < MAX_TURNS; turn++) {
    const reply = await bound.invoke(messages);
    messages.push(reply);
    if (!reply.tool_calls?.length) return messages;
    for (const call of reply.tool_calls) messages.push(await byName.get(call.name).invoke(call));
  }
  throw new Error("the model did not stop");
}

/** The content of the last ToolMessage of `messages`. */
const lastResult = (messages) => messages.filter((m) => ToolMessage.isInstance(m)).at(-1).content;

const readFile = (content = FILE) =>
  tool(async () => content, { name: "readFile", description: "Read a file of the project.", schema: z.object({ path: z.string() }) });

function summarizer(received) {
  return tool(
    async ({ text }) => {
      received.push(text);
      return `${text.split("\n").length} lines summarised`;
    },
    {
      name: "summarize",
      description: "Summarise a text.",
      schema: { type: "object", properties: { text: { type: "string" } }, required: ["text"], additionalProperties: false },
    },
  );
}

test("langchain: the retrieval tools are toolctx/tools' definitions, as the model sees them", async () => {
  const manager = await open();
  const definitions = toolDefinitions(manager);
  const tools = contextTools(manager);
  assert.deepEqual(tools.map((t) => t.name), ["read_context", "search_context", "grep_context"]);
  for (const [i, t] of tools.entries()) {
    assert.equal(t.name, definitions[i].name);
    assert.equal(t.description, definitions[i].description);
    assert.deepEqual(t.schema, definitions[i].inputSchema);
  }
  const model = new ScriptedChatModel([() => say("ok")]);
  await runLoop(model, withToolContext([], manager), "hi");
  assert.deepEqual(
    model.boundTools.map((t) => t.function),
    definitions.map(({ name, description, inputSchema }) => ({ name, description, parameters: inputSchema })),
  );
});

test("langchain: a 60 KB output goes to storage, the model reads it back and hands it on by handle", async () => {
  const manager = await open();
  const received = [];
  let compact;
  let page;
  const model = new ScriptedChatModel([
    () => callTools([["readFile", { path: "src/app.ts" }, "call-read"]]),
    (messages) => {
      compact = lastResult(messages);
      return callTools([["read_context", { handle: HANDLE.exec(compact)[0], offset: 10, limit: 3 }, "call-page"]]);
    },
    (messages) => {
      page = lastResult(messages);
      return callTools([["summarize", { text: HANDLE.exec(compact)[0] }, "call-sum"]]);
    },
    () => say("done"),
  ]);
  const tools = withToolContext([readFile(), summarizer(received)], manager, { resolveHandles: ["summarize"] });
  const messages = await runLoop(model, tools, "Summarise src/app.ts");
  assert.equal(messages.at(-1).content, "done");

  // The model got a compact text naming the record, not 60 KB.
  const [pointer] = manager.getAllPointers();
  assert.ok(FILE.length > 60_000);
  assert.ok(compact.length < 2_000, `compact text of ${compact.length} characters`);
  assert.match(compact, /^\[toolctx\] The output of readFile \(60,999 characters in 1,000 lines\) was saved as ctx:/);
  assert.equal(HANDLE.exec(compact)[0], pointer.handle);
  assert.match(compact, /^1000 {2}1000 const value/m);

  // read_context answered with the lines asked for.
  assert.match(page, /lines 10–12 of 1,000/);
  assert.match(page, /^10 {2}0010 const value/m);

  // summarize received the whole stored value, though the model only wrote the handle.
  assert.deepEqual(received, [FILE]);
  const emitted = messages.filter((m) => AIMessage.isInstance(m)).flatMap((m) => m.tool_calls ?? []);
  assert.equal(emitted.length, 3);
  for (const c of emitted) assert.ok(JSON.stringify(c.args).length < 100, `${c.name} ${JSON.stringify(c.args)}`);

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

test("langchain: a small output reaches the model as LangChain sends it, and is saved too", async () => {
  const manager = await open();
  const status = tool(async () => ({ ok: true, files: ["a.ts", "b.ts"] }), { name: "status", description: "Project status.", schema: z.object({}) });
  const model = new ScriptedChatModel([() => callTools([["status", {}], ["readFile", { path: "x" }]]), () => say("ok")]);
  const tools = withToolContext([status, readFile("tiny")], manager);
  const messages = await runLoop(model, tools, "status?");
  const results = messages.filter((m) => ToolMessage.isInstance(m));
  assert.deepEqual(results.map((m) => [m.name, m.status, m.content]), [
    ["status", "success", '{"ok":true,"files":["a.ts","b.ts"]}'],
    ["readFile", "success", "tiny"],
  ]);
  const records = await manager.loadContexts(manager.getAllPointers().map((p) => p.filepath));
  assert.deepEqual(records.map((r) => r.result), [{ ok: true, files: ["a.ts", "b.ts"] }, "tiny"]);
  // Called by code, without a tool call, a wrapped tool returns its output as the original does.
  assert.equal(await tools[1].invoke({ path: "y" }), "tiny");
});

test("langchain: with onSaveError a BigInt result does not end the run; the model gets it as text", async () => {
  const manager = await open();
  const counter = tool(async () => ({ total: 12345678901234567890n, unit: "rows" }), { name: "count", description: "Counts.", schema: z.object({}) });
  const failures = [];
  const model = new ScriptedChatModel([() => callTools([["count", {}, "call-count"]]), () => say("ok")]);
  const tools = withToolContext([counter], manager, { onSaveError: (error, call) => failures.push({ error, call }) });
  const messages = await runLoop(model, tools, "count");
  assert.equal(messages.at(-1).content, "ok");
  assert.equal(lastResult(messages), '{"total":"12345678901234567890","unit":"rows"}');
  assert.equal(failures.length, 1);
  assert.equal(failures[0].error.code, "NOT_SERIALIZABLE");
  assert.equal(failures[0].call.toolName, "count");
  assert.equal(failures[0].call.toolCallId, "call-count");
  assert.equal(manager.size, 0);
});

test("langchain: without onSaveError a failed save rejects the tool call with a typed error", async () => {
  const manager = await open();
  const counter = tool(async () => 7n, { name: "count", description: "Counts.", schema: z.object({}) });
  const [wrapped] = withToolContext([counter], manager);
  await assert.rejects(wrapped.invoke({ type: "tool_call", id: "call-count", name: "count", args: {} }), {
    name: "ToolctxError",
    code: "NOT_SERIALIZABLE",
    message: /the output of count could not be saved/,
  });
});

test("langchain: an argument of the wrong type or a missing one is refused naming the field", async () => {
  const manager = new ContextManager({ contextDir: "/lc-fields", fileSystem: memoryStorage() });
  const [read] = contextTools(manager);
  for (const [args, field] of [[{ handle: 5 }, /handle\/type: .*Expected "string"/], [{}, /required property "handle"/], [{ handle: "ctx:aaaaaaaaaa", offset: "x" }, /offset\/type: .*Expected "integer"/]]) {
    await assert.rejects(read.invoke({ type: "tool_call", id: "c1", name: "read_context", args }), (error) => {
      assert.match(error.message, field);
      return true;
    });
  }
});

test("langchain: a handle no record has reaches the model as an error ToolMessage; the tool does not run", async () => {
  const manager = await open();
  const received = [];
  const model = new ScriptedChatModel([
    () => callTools([["summarize", { text: "ctx:aaaaaaaaaa" }], ["read_context", { handle: "ctx:aaaaaaaaaa" }], ["grep_context", { pattern: "(" }]]),
    () => say("ok"),
  ]);
  const tools = withToolContext([summarizer(received)], manager, { resolveHandles: true });
  const messages = await runLoop(model, tools, "go");
  assert.deepEqual(received, []);
  const results = messages.filter((m) => ToolMessage.isInstance(m));
  assert.deepEqual(results.map((m) => [m.name, m.status]), [["summarize", "error"], ["read_context", "error"], ["grep_context", "error"]]);
  assert.match(results[0].content, /^summarize: .*no saved tool output has the handle ctx:aaaaaaaaaa/);
  assert.match(results[1].content, /^read_context: .*no saved tool output has the handle ctx:aaaaaaaaaa/);
  assert.match(results[2].content, /^grep_context: pattern: /);
  // Called by code, without a tool call, the error is thrown.
  await assert.rejects(tools[1].invoke({ handle: "ctx:aaaaaaaaaa" }), { name: "ToolctxError", code: "NOT_FOUND" });
});

test("langchain: the schema validates the model's input first; a string parameter then receives the stored text (a JSON record, a #$ slice)", async () => {
  const manager = await open();
  const rows = Array.from({ length: 50 }, (_, i) => ({ id: i, name: `row ${i}` }));
  const counted = [];
  const echoed = [];
  const countRows = tool(
    async ({ rows: given }) => {
      counted.push(given);
      return `${given.length} rows`;
    },
    { name: "countRows", description: "Count rows.", schema: z.object({ rows: z.array(z.object({ id: z.number(), name: z.string() })) }) },
  );
  const echo = tool(
    async ({ text }) => {
      echoed.push(text);
      return "ok";
    },
    { name: "echo", description: "Echo.", schema: z.object({ text: z.string() }) },
  );
  const query = tool(async () => ({ rows }), { name: "query", description: "Query.", schema: z.object({}) });
  let handle;
  let results;
  const model = new ScriptedChatModel([
    () => callTools([["query", {}]]),
    () => {
      handle = manager.getAllPointers()[0].handle;
      return callTools([["echo", { text: handle }], ["echo", { text: `${handle}#$.rows[0:2]` }], ["echo", { text: `${handle}#L2-3` }]]);
    },
    (messages) => {
      results = messages.filter((m) => ToolMessage.isInstance(m)).slice(-3);
      return say("ok");
    },
  ]);
  const tools = withToolContext([query, countRows, echo], manager, { resolveHandles: true });
  await runLoop(model, tools, "go");
  assert.deepEqual(echoed.slice(0, 2).map((t) => JSON.parse(t)), [{ rows }, rows.slice(0, 2)], "a JSON record and a #$ slice, as their JSON text");
  assert.equal(typeof echoed[2], "string", "#L2-3: two lines of the record's line view");
  assert.deepEqual(results.map((m) => m.content), ["ok", "ok", "ok"]);
  // A handle where the schema wants an array is refused by the schema, as any string would be: the tool does not run.
  const countTool = tools.find((t) => t.name === "countRows");
  await assert.rejects(countTool.invoke({ type: "tool_call", id: "c", name: "countRows", args: { rows: `${handle}#$.rows[0:5]` } }), /expected array, received string/);
  assert.deepEqual(counted, []);
});

test("langchain: a content_and_artifact tool keeps its artifact; the content is what is saved and replaced", async () => {
  const manager = await open();
  const fetchPage = tool(async () => [FILE, { bytes: FILE.length }], {
    name: "fetchPage",
    description: "Fetch a page.",
    schema: z.object({ url: z.string() }),
    responseFormat: "content_and_artifact",
  });
  const [wrapped] = withToolContext([fetchPage], manager);
  const message = await wrapped.invoke({ type: "tool_call", id: "call-page", name: "fetchPage", args: { url: "https://example.com" } });
  assert.match(message.content, /^\[toolctx\] The output of fetchPage/);
  assert.deepEqual(message.artifact, { bytes: FILE.length });
  const [record] = await manager.loadContexts(manager.getAllPointers().map((p) => p.filepath));
  assert.equal(record.result, FILE);
});

test("langchain: a tool that streams events passes them on; its result is what is saved", async () => {
  const manager = await open();
  const build = tool(
    async function* () {
      yield "compiling";
      yield "linking";
      return FILE;
    },
    { name: "build", description: "Build.", schema: z.object({}) },
  );
  const [wrapped] = withToolContext([build], manager);
  const events = [];
  const message = await wrapped.invoke(
    { type: "tool_call", id: "call-build", name: "build", args: {} },
    { callbacks: [{ handleToolEvent: (chunk) => events.push(chunk) }] },
  );
  assert.deepEqual(events, ["compiling", "linking"]);
  assert.match(message.content, /^\[toolctx\] The output of build \(60,999 characters/);
  const [record] = await manager.loadContexts(manager.getAllPointers().map((p) => p.filepath));
  assert.equal(record.result, FILE);
});

test("langchain: options are checked, retrieval tools are optional, the caller's tools are left as they were", async () => {
  const manager = await open();
  assert.throws(() => withToolContext([readFile()], manager, { resolveHandles: ["sumarize"] }), { code: "INVALID_ARGUMENT" });
  assert.throws(() => withToolContext([...contextTools(manager)], manager), { code: "INVALID_ARGUMENT", message: /read_context/ });
  assert.throws(() => withToolContext([readFile()], manager, { previewLines: 1.5 }), { code: "INVALID_ARGUMENT" });
  assert.throws(() => withToolContext([readFile()], null), { code: "INVALID_ARGUMENT" });
  assert.throws(() => usageOf([readFile()]), { code: "INVALID_ARGUMENT" });
  const original = readFile();
  const only = withToolContext([original], manager, { retrievalTools: false });
  assert.deepEqual(only.map((t) => t.name), ["readFile"]);
  assert.notEqual(only[0], original);
  assert.equal(only[0].schema, original.schema);
  assert.equal(await original.invoke({ path: "a" }), FILE);
  assert.equal(manager.size, 0); // the original is not wrapped
});
