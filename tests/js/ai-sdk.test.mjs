// toolctx/ai-sdk against the real AI SDK (npm `ai`): generateText runs with the SDK's
// own mock language model (ai/test), no network. What the model "sees" is what the
// mock recorded in doGenerateCalls.
import { test } from "node:test";
import assert from "node:assert/strict";
import { tool } from "ai";
import { ContextManager, memoryStorage, optimizeWindow } from "toolctx";
import { withToolContext, contextTools, usageOf, windowPrepareStep, toWindowMessages, applyWindowResult, POINTER_SCHEME } from "toolctx/ai-sdk";
import * as shared from "toolctx/tools";
import { callTools, say, scriptedModel, toolResults, lastResultText, handleIn, lines, objectSchema, fileTool, run, runAiSdkTests } from "./ai-sdk.mjs";

const open = (options = {}) => ContextManager.open({ storage: memoryStorage(), contextDir: "/ctx", ...options });

runAiSdkTests(test, assert); // the end-to-end run and its errors, shared with Deno and Bun

test("ai-sdk: a small output goes to the model in full, and is saved too", async () => {
  const manager = await open();
  const model = scriptedModel([callTools([["status", {}], ["greet", { name: "ada" }]]), say("ok")]);
  const tools = withToolContext(
    {
      status: tool({ inputSchema: objectSchema(), execute: async () => ({ ok: true, files: ["a", "b"] }) }),
      greet: tool({ inputSchema: objectSchema({ name: { type: "string" } }), execute: async ({ name }) => `hello ${name}` }),
    },
    manager,
  );
  await run(model, tools);
  const [status, greet] = toolResults(model.doGenerateCalls[1].prompt);
  assert.deepEqual(status.output, { type: "json", value: { ok: true, files: ["a", "b"] } });
  assert.deepEqual(greet.output, { type: "text", value: "hello ada" });
  assert.equal(manager.size, 2);
  const records = await manager.loadContexts(manager.getAllPointers().map((p) => p.filepath));
  assert.deepEqual(records.map((r) => r.result), [{ ok: true, files: ["a", "b"] }, "hello ada"]);
});

test("ai-sdk: the tool's own toModelOutput decides what is small; the threshold is an option", async () => {
  const manager = await open();
  const model = scriptedModel([callTools([["list", {}], ["dump", {}]]), say("ok")]);
  const tools = withToolContext(
    {
      // A big output the tool itself summarises for the model: it stays inline.
      list: tool({
        inputSchema: objectSchema(),
        execute: async () => Array.from({ length: 5_000 }, (_, i) => `file${i}`),
        toModelOutput: ({ output }) => ({ type: "text", value: `${output.length} files` }),
      }),
      dump: tool({ inputSchema: objectSchema(), execute: async () => "y".repeat(600) }),
    },
    manager,
    { maxInlineChars: 500 },
  );
  await run(model, tools);
  const [list, dump] = toolResults(model.doGenerateCalls[1].prompt);
  assert.deepEqual(list.output, { type: "text", value: "5000 files" });
  assert.match(dump.output.value, /^\[toolctx\] The output of dump \(600 characters in 1 line\) was saved as ctx:/);
  assert.equal(manager.size, 2);
});

test("ai-sdk: the preview is capped in lines and in characters, whatever the output's shape", async () => {
  const manager = await open();
  const model = scriptedModel([callTools([["oneLine", {}], ["json", {}]]), say("ok")]);
  const tools = withToolContext(
    {
      oneLine: tool({ inputSchema: objectSchema(), execute: async () => "z".repeat(2_000_000) }),
      json: tool({ inputSchema: objectSchema(), execute: async () => ({ rows: Array.from({ length: 3_000 }, (_, i) => ({ i, name: `row ${i}` })) }) }),
    },
    manager,
    { previewLines: 3, previewChars: 600 },
  );
  await run(model, tools);
  for (const { output } of toolResults(model.doGenerateCalls[1].prompt)) {
    const preview = output.value.split("Preview (first and last lines, numbered):\n")[1].split("\nRead it with")[0];
    assert.ok(preview.split("\n").length <= 3 + 1 + 3, preview);
    assert.ok(preview.length <= 600 + 60, `preview of ${preview.length} characters`);
    assert.ok(output.value.length < 1_500);
  }
});

test("ai-sdk: the tools are toolctx/tools' own: same names, descriptions and JSON Schemas, the same limits", async () => {
  const manager = await open();
  const defined = shared.contextTools(manager, { maxReadLines: 150 });
  const sdk = contextTools(manager, { maxReadLines: 150 });
  assert.deepEqual(Object.keys(sdk), [...shared.TOOL_NAMES]);
  for (const d of defined) {
    assert.equal(sdk[d.name].description, d.description);
    assert.deepEqual(sdk[d.name].inputSchema.jsonSchema, d.inputSchema);
  }
  const wrapped = withToolContext({}, manager, { maxReadLines: 150 });
  assert.deepEqual(Object.keys(wrapped), [...shared.TOOL_NAMES]);
  assert.equal(wrapped.read_context.description, defined[0].description);
  assert.throws(() => contextTools(manager, { readLines: 0 }), { code: "INVALID_ARGUMENT" });
  assert.equal(POINTER_SCHEME, shared.POINTER_SCHEME);
});

test("ai-sdk: read_context is capped by lines and characters, and a huge read is returned capped, never saved", async () => {
  const manager = await open();
  const huge = Array.from({ length: 50 }, (_, i) => `${i}:${"w".repeat(900)}`).join("\n") + "\n" + lines(5_000);
  const model = scriptedModel([
    callTools([["readFile", { path: "big.txt" }]]),
    (prompt) => callTools([["read_context", { handle: handleIn(lastResultText(prompt)), limit: 100_000 }]]),
    (prompt) => callTools([["read_context", { handle: handleIn(lastResultText(prompt)), offset: 101, limit: 100_000 }]]),
    say("done"),
  ]);
  await run(model, withToolContext({ readFile: fileTool(huge) }, manager, { maxReadChars: 10_000, maxReadLines: 150 }));
  const first = lastResultText(model.doGenerateCalls[2].prompt);
  const second = lastResultText(model.doGenerateCalls[3].prompt);
  // 50 numbered lines of 908 characters: the character cap stops the first page after 11 of them.
  assert.match(first, /: lines 1–11 of 5,050\n/);
  assert.ok(first.length < 10_000 + 200, `${first.length}`);
  assert.match(first, /\[5,039 more lines: read_context \{"handle": "ctx:\w+", "offset": 12\}\]$/);
  // Short lines: the line cap.
  assert.match(second, /: lines 101–250 of 5,050\n/);
  assert.match(second, /\[4,800 more lines: read_context \{"handle": "ctx:\w+", "offset": 251\}\]$/);
  assert.equal(toolResults(model.doGenerateCalls[3].prompt).at(-1).output.type, "text", "read_context's output is never replaced by a handle");
  assert.equal(manager.size, 1, "only the tool's output is saved");
});

test("ai-sdk: search_context ranks the saved outputs with the store's ranking: handles, descriptions, best lines", async () => {
  const manager = await open();
  await manager.saveContext("readFile", { path: "src/naming.rs" }, "fn args_hash() {}", { description: "read file: path=src/naming.rs" });
  await manager.saveContext("readFile", { path: "README.md" }, "# toolctx", { description: "read file: path=README.md" });
  await manager.saveContext("grep", { pattern: "args_hash", path: "src" }, ["src/naming.rs:10"], { description: "grep: pattern=args_hash" });
  const { search_context } = contextTools(manager);
  const best = await search_context.execute({ query: "naming args hash", limit: 2 }, { toolCallId: "s", messages: [] });
  const expected = (await manager.selectRelevant("naming args hash", { limit: 2, fallback: "none" })).map((s) => s.pointer.handle);
  const titles = best.split("\n").filter((row) => /^\d+\. /.test(row));
  assert.deepEqual(titles.map(handleIn), expected);
  assert.match(titles[0], /^1\. ctx:\w+ (read file|grep): \S.* \(\d+ bytes\)$/);
  assert.equal(await search_context.execute({ query: "naming args hash", k: 1 }, { toolCallId: "s", messages: [] }), best.split("\n2. ")[0], "an older input: k for limit");
  assert.equal(await search_context.execute({ query: "kubernetes" }, { toolCallId: "s", messages: [] }), 'No saved tool output matches "kubernetes".');
});

test("ai-sdk: grep_context finds lines across records, bounded in matches and in bytes read; older pointer inputs still work", async () => {
  const manager = await open();
  const a = await manager.saveContext("readFile", { path: "a.rs" }, "fn one() {}\nlet x = 1;\nfn two() {}");
  await manager.saveContext("readFile", { path: "b.rs" }, { code: "fn three() {}" });
  const [pa, pb] = manager.getAllPointers();
  const { grep_context, read_context } = contextTools(manager);
  const exec = (tool, input) => tool.execute(input, { toolCallId: "g", messages: [] });

  const all = (await exec(grep_context, { pattern: "fn \\w+" })).split("\n");
  assert.equal(all[0], `${pb.handle} read file: path=b.rs (${pb.size} bytes)`, "newest record first");
  assert.equal(all[1], "  1: code: fn three() {}");
  assert.equal(all[2], `${pa.handle} read file: path=a.rs (${pa.size} bytes)`);
  assert.deepEqual(all.slice(3), ["  1: fn one() {}", "  2- let x = 1;", "  3: fn two() {}"]);
  // grep's line N is read_context's offset N.
  assert.equal((await exec(read_context, { handle: pa.handle, offset: 3, limit: 1 })).split("\n")[1], "3  fn two() {}");
  // Older inputs: a toolctx:// pointer for the handle; read_context's offset then counted the lines to skip.
  assert.equal((await exec(read_context, { pointer: `toolctx://${pa.filename}`, offset: 2, limit: 1 })).split("\n")[1], "3  fn two() {}");
  assert.equal((await exec(read_context, { handle: a, offset: 3, limit: 1 })).split("\n")[1], "3  fn two() {}", "a filepath for the handle");
  assert.equal(await exec(grep_context, { pattern: "one", pointer: `toolctx://${pa.filename}` }), `${pa.handle} read file: path=a.rs (${pa.size} bytes)\n  1: fn one() {}\n  2- let x = 1;`);
  assert.equal(await exec(grep_context, { pattern: "nothing-like-this" }), "No line matches /nothing-like-this/.");

  const bounded = contextTools(manager, { maxGrepBytes: 10 }).grep_context;
  assert.match(await exec(bounded, { pattern: "zzz" }), /\[stopped after \d+ characters \(1 of 2 saved outputs searched\); pass a handle\]$/);

  await assert.rejects(exec(grep_context, { pattern: "(" }), { code: "INVALID_ARGUMENT", message: /^grep_context: pattern: / });
  await assert.rejects(exec(grep_context, { pattern: "a".repeat(501) }), { code: "INVALID_ARGUMENT" });
});

test("ai-sdk: usageOf counts each offloaded output once, however often toModelOutput runs; options.usage tallies across tool sets", async () => {
  const manager = await open();
  const usage = shared.createUsage();
  const tools = withToolContext({ readFile: fileTool("unused") }, manager, { maxInlineChars: 100, usage });
  const output = lines(50);
  const first = await tools.readFile.toModelOutput({ toolCallId: "c1", input: { path: "x" }, output });
  await tools.readFile.toModelOutput({ toolCallId: "c1", input: { path: "x" }, output });
  await tools.readFile.toModelOutput({ toolCallId: "c2", input: { path: "y" }, output: "short" });
  const definitionTokens = shared.contextTools(manager).reduce((n, d) => n + Math.ceil(JSON.stringify({ name: d.name, description: d.description, input_schema: d.inputSchema }).length / 4), 0);
  const tokensKeptOut = Math.ceil(output.length / 4) - Math.ceil(first.value.length / 4);
  assert.deepEqual(usageOf(tools), {
    outputsOffloaded: 1, charsKeptOut: output.length - first.value.length, tokensKeptOut, readsBack: 0, charsReadBack: 0, tokensReadBack: 0,
    definitionTokens, modelCalls: 0, tokensSaved: tokensKeptOut, tokenizer: "estimate",
  });
  assert.equal(usageOf(tools, { modelCalls: 3 }).tokensSaved, tokensKeptOut - 3 * definitionTokens, "net of the definitions each model call carried");
  assert.deepEqual(usage.snapshot(), usageOf(tools));
  assert.throws(() => usageOf({ ...tools }), { code: "INVALID_ARGUMENT" });
});

test("ai-sdk: a failed save fails the tool call with the toolctx error, unless onSaveError takes it", async () => {
  const cyclic = () => {
    const o = { a: 1 };
    o.self = o;
    return o;
  };
  const tools = { cyc: tool({ inputSchema: objectSchema(), execute: async () => cyclic() }) };
  const manager = await open();
  const model = scriptedModel([callTools([["cyc", {}]]), say("ok")]);
  await run(model, withToolContext(tools, manager));
  const failed = toolResults(model.doGenerateCalls[1].prompt)[0].output;
  assert.equal(failed.type, "error-text");
  assert.match(failed.value, /toolctx could not save the output of cyc/);

  const seen = [];
  const small = { ok: tool({ inputSchema: objectSchema(), execute: async () => ({ big: "q".repeat(100) }) }) };
  const broken = await open({ maxRecordBytes: 50 });
  const model2 = scriptedModel([callTools([["ok", {}]]), say("ok")]);
  await run(model2, withToolContext(small, broken, { maxInlineChars: 20, onSaveError: (e, call) => seen.push([e.code, call.toolName]) }));
  assert.deepEqual(seen, [["TOO_LARGE", "ok"]]);
  assert.deepEqual(toolResults(model2.doGenerateCalls[1].prompt)[0].output, { type: "json", value: { big: "q".repeat(100) } });
});

test("ai-sdk: options set the query, the task and the description; a streaming tool saves its last value", async () => {
  const manager = await open();
  const model = scriptedModel([callTools([["progress", { n: 3 }, "c-stream"]]), say("ok")]);
  const tools = withToolContext(
    {
      progress: tool({
        inputSchema: objectSchema({ n: { type: "number" } }),
        async *execute({ n }) {
          for (let i = 1; i <= n; i++) yield { done: i, of: n };
        },
      }),
    },
    manager,
    { query: "progress report", taskId: () => 42, describe: ({ toolName, toolCallId }) => `${toolName} for ${toolCallId}` },
  );
  await run(model, tools);
  const [p] = manager.getAllPointers();
  assert.equal(manager.size, 1);
  assert.equal(p.queryId, ContextManager.hashQuery("progress report"));
  assert.equal(p.taskId, 42);
  assert.equal(p.toolDescription, "progress for c-stream");
  assert.deepEqual((await manager.loadContexts([p.filepath]))[0].result, { done: 3, of: 3 });
});

test("ai-sdk: resolveHandles with a streaming tool: it streams as before, over the resolved value", async () => {
  const manager = await open();
  await manager.saveContext("listFiles", {}, ["a.ts", "b.ts", "c.ts"]);
  const [p] = manager.getAllPointers();
  const tools = withToolContext(
    {
      lint: tool({
        inputSchema: objectSchema({ files: {} }),
        async *execute({ files }) {
          const list = JSON.parse(files); // a handle is the stored output's text: a JSON value as its JSON text
          for (let i = 1; i <= list.length; i++) yield { linted: list.slice(0, i) };
        },
      }),
    },
    manager,
    { resolveHandles: true },
  );
  const model = scriptedModel([callTools([["lint", { files: p.handle }, "c-lint"]]), say("ok")]);
  const result = await run(model, tools);
  assert.deepEqual(result.steps[0].toolResults[0].output, { linted: ["a.ts", "b.ts", "c.ts"] });
  const saved = manager.getAllPointers().find((x) => x.toolCallId === "c-lint");
  assert.deepEqual(saved.args, { files: p.handle }, "saved with the input the model gave");
});

test("ai-sdk: the step number is the taskId; a resumed session finds a call's record by its tool-call id", async () => {
  const storage = memoryStorage();
  const first = await ContextManager.open({ storage, contextDir: "/ctx", session: true, persistThreshold: 0 });
  const model = scriptedModel([callTools([["readFile", { path: "a" }]]), callTools([["readFile", { path: "b" }, "call-two"]]), say("ok")]);
  const result = await run(model, withToolContext({ readFile: fileTool((input) => lines(800, input.path)) }, first));
  assert.deepEqual(first.getAllPointers().map((p) => p.taskId), [1, 2]);
  await first.close();

  // Another process rebuilds the model messages (convertToModelMessages calls toModelOutput).
  const resumed = await ContextManager.open({ storage, contextDir: "/ctx", session: first.sessionId });
  const tools = withToolContext({ readFile: fileTool("unused") }, resumed);
  const output = await tools.readFile.toModelOutput({ toolCallId: "call-two", input: { path: "b" }, output: result.steps[1].toolResults[0].output });
  const expected = resumed.getAllPointers().find((p) => p.args.path === "b");
  assert.equal(handleIn(output.value), expected.handle);
  assert.equal(resumed.size, 2, "nothing saved twice");
});

test("ai-sdk: the tool-call id is stored as the record's toolCallId; a resumed session finds the record by it, whatever the description", async () => {
  const storage = memoryStorage();
  const describe = ({ input }) => `the file ${input.path}`; // no tool-call id in it
  const first = await ContextManager.open({ storage, contextDir: "/ctx", session: true, persistThreshold: 0 });
  const model = scriptedModel([callTools([["readFile", { path: "a" }, "call-one"]]), say("ok")]);
  const result = await run(model, withToolContext({ readFile: fileTool((input) => lines(800, input.path)) }, first, { describe }));
  assert.deepEqual(first.getAllPointers().map((p) => p.toolCallId), ["call-one"]);
  await first.close();

  const resumed = await ContextManager.open({ storage, contextDir: "/ctx", session: first.sessionId });
  const tools = withToolContext({ readFile: fileTool("unused") }, resumed, { describe });
  const output = await tools.readFile.toModelOutput({ toolCallId: "call-one", input: { path: "a" }, output: result.steps[0].toolResults[0].output });
  assert.equal(resumed.size, 1, "found by its toolCallId, not saved twice");
  assert.equal(handleIn(output.value), resumed.getAllPointers()[0].handle);
});

test("ai-sdk: toModelOutput of an output the manager never saw saves it once, then points at it", async () => {
  const manager = await open();
  const tools = withToolContext({ readFile: fileTool("unused") }, manager, { maxInlineChars: 100 });
  const output = lines(50);
  const first = await tools.readFile.toModelOutput({ toolCallId: "elsewhere", input: { path: "x" }, output });
  const again = await tools.readFile.toModelOutput({ toolCallId: "elsewhere", input: { path: "x" }, output });
  assert.equal(manager.size, 1);
  const [p] = manager.getAllPointers();
  assert.equal(handleIn(first.value), p.handle);
  assert.equal(again.value, first.value);
  assert.deepEqual((await manager.loadContexts([p.filepath]))[0].result, output);
});

test("ai-sdk: a record evicted (retention) before toModelOutput runs: the model gets the output in full, never a dead pointer", async () => {
  const manager = await open({ retention: { maxRecords: 1 } });
  const tools = withToolContext({ readFile: fileTool((input) => lines(50, input.path)) }, manager, { maxInlineChars: 100 });
  // Two calls of one step run before the SDK builds the next prompt: the second save evicts the first record.
  const a = await tools.readFile.execute({ path: "a" }, { toolCallId: "call-a", messages: [] });
  const b = await tools.readFile.execute({ path: "b" }, { toolCallId: "call-b", messages: [] });
  assert.equal(manager.size, 1);
  const outA = await tools.readFile.toModelOutput({ toolCallId: "call-a", input: { path: "a" }, output: a });
  assert.deepEqual(outA, { type: "text", value: a }, "no handle of a record that is gone");
  const outB = await tools.readFile.toModelOutput({ toolCallId: "call-b", input: { path: "b" }, output: b });
  const [p] = manager.getAllPointers();
  assert.equal(handleIn(outB.value), p.handle, "a record still there is pointed at");
});

test("ai-sdk: bad arguments are typed errors", async () => {
  const manager = await open();
  assert.throws(() => withToolContext({ read_context: fileTool("x") }, manager), { code: "INVALID_ARGUMENT", message: /already have one named read_context/ });
  assert.throws(() => withToolContext({}, {}), { code: "INVALID_ARGUMENT" });
  assert.throws(() => withToolContext({}, manager, { maxInlineChars: 0 }), { code: "INVALID_ARGUMENT", message: /maxInlineChars/ });
  assert.throws(() => windowPrepareStep({}), { code: "INVALID_ARGUMENT", message: /contextWindow/ });
  // retrievalTools: false leaves the names free.
  assert.deepEqual(Object.keys(withToolContext({ read_context: fileTool("x") }, manager, { retrievalTools: false })), ["read_context"]);
});

// ---- the window optimiser before each step ---------------------------------------------------

test("ai-sdk: windowPrepareStep replaces all but the latest read of a file before the model sees it", async () => {
  const manager = await open();
  const versions = ["export const app = 1;\n".repeat(200), "export const app = 2;\n".repeat(200)];
  let reads = 0;
  const readFile = fileTool(() => versions[reads++]);
  const model = scriptedModel([
    callTools([["read_file", { path: "src/app.ts" }]]),
    callTools([["read_file", { path: "src/app.ts" }]]),
    say("done"),
  ]);
  const seen = [];
  await run(model, withToolContext({ read_file: readFile }, manager), {
    prepareStep: windowPrepareStep({ always: true, onOptimize: (r) => seen.push(r.metrics) }),
  });
  const last = toolResults(model.doGenerateCalls[2].prompt);
  assert.match(last[0].output.value, /^\[\[NOTE\] This file read has been removed/);
  assert.equal(last[1].output.value, versions[1]);
  assert.equal(seen.length, 3);
  assert.ok(seen[2].tokensAfter < seen[2].tokensBefore / 1.5, JSON.stringify(seen[2]));
  assert.equal(manager.size, 2, "both reads are still saved: the optimiser edits the window, not the store");
});

test("ai-sdk: windowPrepareStep waits for the window to fill up (shouldCompact on the last step's usage)", async () => {
  const mk = (tokens) => scriptedModel([
    callTools([["read_file", { path: "a.ts" }]], tokens),
    callTools([["read_file", { path: "a.ts" }]], tokens),
    say("done"),
  ]);
  const readFile = () => fileTool("const a = 1;\n".repeat(100));
  const quiet = mk(1_000);
  await run(quiet, { read_file: readFile() }, { prepareStep: windowPrepareStep({ contextWindow: 200_000 }) });
  assert.equal(toolResults(quiet.doGenerateCalls[2].prompt)[0].output.value, "const a = 1;\n".repeat(100));
  const full = mk(190_000);
  await run(full, { read_file: readFile() }, { prepareStep: windowPrepareStep({ contextWindow: 200_000 }) });
  assert.match(toolResults(full.doGenerateCalls[2].prompt)[0].output.value, /^\[\[NOTE\] This file read has been removed/);
});

test("ai-sdk: toWindowMessages / applyWindowResult map the SDK's messages both ways and truncate cleanly", async () => {
  const call = (id) => ({ role: "assistant", content: [{ type: "text", text: `step ${id}` }, { type: "tool-call", toolCallId: id, toolName: "grep", input: { pattern: id } }] });
  const result = (id) => ({ role: "tool", content: [{ type: "tool-result", toolCallId: id, toolName: "grep", output: { type: "json", value: { hits: [id] } } }] });
  const image = { type: "image", image: "data:," };
  const messages = [
    { role: "system", content: "be brief" },
    { role: "user", content: "find things" },
    { role: "assistant", content: "ok" },
    { role: "user", content: [{ type: "text", text: "go" }, image] },
    ...["a", "b", "c", "d"].flatMap((id) => [call(id), result(id)]),
  ];
  const before = JSON.stringify(messages);
  const converted = toWindowMessages(messages);
  assert.deepEqual(converted.index, messages.slice(1).map((_, i) => i + 1), "the system message is left out");
  assert.deepEqual(converted.window[2].content, [{ type: "text", text: "go" }, { type: "ai-sdk:image" }]);
  assert.deepEqual(converted.window[3].content[1], { type: "tool_use", id: "a", name: "grep", input: { pattern: "a" } });
  assert.deepEqual(converted.window[4], { role: "user", content: [{ type: "tool_result", tool_use_id: "a", content: '{"hits":["a"]}', is_error: false }] });

  const optimised = optimizeWindow(converted.window, { strategy: "half" });
  assert.deepEqual(optimised.truncated, [3, 6]);
  const out = applyWindowResult(messages, converted, optimised);
  const notice = optimised.edits[0].content;
  assert.match(notice, /conversation history with the user has been removed/);
  assert.deepEqual(out, [
    messages[0], messages[1], messages[2],
    { role: "user", content: [{ type: "text", text: "go" }, image, { type: "text", text: notice }] },
    call("c"), result("c"), call("d"), result("d"),
  ]);
  assert.equal(JSON.stringify(messages), before, "the input is never modified");

  // A notice that belongs on a tool message goes in a user message after it.
  const bare = (id) => [{ role: "assistant", content: [call(id).content[1]] }, result(id)];
  const loop = [{ role: "user", content: "find things" }, ...["a", "b", "c", "d", "e"].flatMap(bare)];
  const loopWindow = toWindowMessages(loop);
  const cut = optimizeWindow(loopWindow.window, { strategy: "half" });
  assert.deepEqual(cut.truncated, [3, 6]);
  assert.deepEqual(applyWindowResult(loop, loopWindow, cut), [
    ...loop.slice(0, 3), { role: "user", content: [{ type: "text", text: notice }] }, ...loop.slice(7),
  ]);
});

test("ai-sdk: a truncated window is accepted by the SDK and carried to later steps", async () => {
  const steps = ["a", "b", "c", "d", "e", "f"];
  const model = scriptedModel([...steps.map((id) => callTools([["grep", { pattern: id }]], 190_000)), say("done")]);
  const grep = tool({ inputSchema: objectSchema({ pattern: { type: "string" } }), execute: async ({ pattern }) => `${pattern}\n`.repeat(50) });
  const cuts = [];
  const result = await run(model, { grep }, { prepareStep: windowPrepareStep({ contextWindow: 200_000, onOptimize: (r) => cuts.push(r.truncated) }) });
  assert.equal(result.text, "done");
  assert.ok(cuts.some(Boolean), "the optimiser truncated");
  const last = model.doGenerateCalls.at(-1).prompt;
  assert.ok(last.length < 1 + 2 * steps.length, `${last.length} messages`);
  assert.match(JSON.stringify(last), /conversation history with the user has been removed/);
  assert.deepEqual(toolResults(last).at(-1).output, { type: "text", value: "f\n".repeat(50) });
});

test("a clearToolUses placeholder names the handle that read_context reads; an older toolctx://{filepath} pointer reads too", async () => {
  const { clearToolUses } = await import("toolctx/anthropic");
  const manager = await ContextManager.open({ storage: memoryStorage(), contextDir: "/ctx", persistThreshold: 0 });
  const big = Array.from({ length: 400 }, (_, i) => `line ${i + 1}`).join("\n");
  const messages = [
    { role: "user", content: "read it" },
    { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "read_file", input: { path: "a.txt" } }] },
    { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: big }] },
    { role: "assistant", content: [{ type: "tool_use", id: "t2", name: "read_file", input: { path: "b.txt" } }] },
    { role: "user", content: [{ type: "tool_result", tool_use_id: "t2", content: "short" }] },
  ];
  const edited = await clearToolUses(messages, { trigger: 1, keep: 1, manager });
  assert.equal(edited.clearedToolUses, 1);
  const [p] = manager.getAllPointers();
  assert.equal(handleIn(edited.messages[2].content[0].content), p.handle);
  const { read_context } = contextTools(manager);
  for (const handle of [p.handle, `toolctx://${p.filepath}`]) {
    const page = await read_context.execute({ handle, offset: 400, limit: 1 }, { toolCallId: "r", messages: [] });
    assert.equal(page.split("\n")[1], "400  line 400");
  }
});
