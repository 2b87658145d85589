// toolctx/ai-sdk with the real AI SDK, in every runtime (ai-sdk.test.mjs in Node,
// deno.suite.mjs, bun.suite.mjs): the end-to-end run and its errors. Also the scripted
// model the tests and demo/ai-sdk.mjs use: the SDK's own MockLanguageModelV4 (from
// `ai/test`), answering each call with the next turn of a script. A turn is a reply, or a
// function of the prompt the model received (to call read_context with the handle it
// was just given). The mock records every call (`doGenerateCalls`).
import { generateText, jsonSchema, stepCountIs, tool } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { ContextManager, memoryStorage } from "toolctx";
import { usageOf, withToolContext } from "toolctx/ai-sdk";

export const usage = (inputTokens = 10) => ({
  inputTokens: { total: inputTokens, noCache: inputTokens, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined },
});

let ids = 0;
/** A reply that calls tools: `[[toolName, input, toolCallId?], ...]`. */
export function callTools(calls, inputTokens) {
  return {
    content: calls.map(([toolName, input, toolCallId]) => ({
      type: "tool-call",
      toolCallId: toolCallId ?? `call-${++ids}`,
      toolName,
      input: JSON.stringify(input),
    })),
    finishReason: { unified: "tool-calls", raw: undefined },
    usage: usage(inputTokens),
    warnings: [],
  };
}

/** A reply that ends the run. */
export function say(text, inputTokens) {
  return { content: [{ type: "text", text }], finishReason: { unified: "stop", raw: undefined }, usage: usage(inputTokens), warnings: [] };
}

export function scriptedModel(script) {
  let turn = 0;
  return new MockLanguageModelV4({
    doGenerate: async ({ prompt }) => {
      const next = script[turn++] ?? say("(end of script)");
      return typeof next === "function" ? next(prompt) : next;
    },
  });
}

/** The tool results of a prompt, in order: `{toolName, toolCallId, output}`. */
export function toolResults(prompt) {
  return prompt.filter((m) => m.role === "tool").flatMap((m) => m.content.filter((p) => p.type === "tool-result"));
}

/** The last tool result's text (text or error-text output). */
export function lastResultText(prompt) {
  const output = toolResults(prompt).at(-1).output;
  return output.type === "json" ? JSON.stringify(output.value) : output.value;
}

/** The first handle (ctx:…) in a text. */
export function handleIn(text) {
  return text.match(/ctx:[a-z2-7]{10,12}/)?.[0];
}

/** Lines `{word} {n}: xxx…`, joined. */
export const lines = (n, word = "line") => Array.from({ length: n }, (_, i) => `${word} ${i + 1}: ${"x".repeat(40)}`).join("\n");

export const objectSchema = (properties = {}) => jsonSchema({ type: "object", properties });

/** A readFile tool that returns `text` (or `text(input)`). */
export function fileTool(text, calls = []) {
  return tool({
    description: "Read a file",
    inputSchema: objectSchema({ path: { type: "string" } }),
    execute: async (input) => {
      calls.push(input);
      return typeof text === "function" ? text(input) : text;
    },
  });
}

export async function run(model, tools, extra = {}) {
  return generateText({ model, tools, prompt: "Where is the args hash computed?", stopWhen: stepCountIs(8), ...extra });
}

export function runAiSdkTests(test, assert) {
  const open = (options = {}) => ContextManager.open({ storage: memoryStorage(), contextDir: "/ctx", ...options });

  test("ai-sdk: a large output reaches the model as its handle and a preview, and read_context brings it back", async () => {
    const manager = await open();
    const big = lines(2_000);
    const model = scriptedModel([
      callTools([["readFile", { path: "src/naming.rs" }, "call-big"]]),
      (prompt) => callTools([["read_context", { handle: handleIn(lastResultText(prompt)), offset: 11, limit: 5 }]]),
      say("found it"),
    ]);
    const tools = withToolContext({ readFile: fileTool(big) }, manager);
    const result = await run(model, tools);

    assert.equal(result.text, "found it");
    assert.equal(model.doGenerateCalls.length, 3);
    // The application still gets the whole output.
    assert.equal(result.steps[0].toolResults[0].output, big);

    // The model got the compact text, not the output.
    const compact = lastResultText(model.doGenerateCalls[1].prompt);
    const [p] = manager.getAllPointers();
    assert.equal(handleIn(compact), p.handle);
    assert.ok(compact.length < 2_500, `compact text is ${compact.length} characters`);
    assert.ok(compact.includes(`The output of readFile (${big.length.toLocaleString("en-US")} characters in 2,000 lines) was saved as ${p.handle} instead`), compact);
    assert.match(compact, /Description: read file: path=src\/naming\.rs\n/, "the description saveContext writes, as in every integration");
    assert.match(compact, /^ {3}1 {2}line 1: x+$/m);
    assert.match(compact, /^2000 {2}line 2000: x+$/m);
    assert.match(compact, /1,990 lines not shown/);
    assert.doesNotMatch(compact, /line 6:/);
    assert.ok(compact.includes(`Read it with read_context {"handle": "${p.handle}"}`), compact);

    // The record: the output, the tool-call id, the step's query and task.
    assert.equal(manager.size, 1, "read_context's own output is never saved");
    assert.equal(p.queryId, ContextManager.hashQuery("Where is the args hash computed?"));
    assert.equal(p.taskId, 1);
    assert.equal(p.toolCallId, "call-big");
    assert.doesNotMatch(p.filename, /call-big/, "no filename is made from the tool-call id");
    const [record] = await manager.loadContexts([p.filepath]);
    assert.equal(record.result, big);
    assert.deepEqual(record.args, { path: "src/naming.rs" });

    // read_context (toolctx/tools) gave lines 11-15 back, numbered, with a continuation hint.
    const page = lastResultText(model.doGenerateCalls[2].prompt).split("\n");
    assert.match(page[0], new RegExp(`^${p.handle} .*: lines 11–15 of 2,000$`));
    assert.deepEqual(page.slice(1, 6), big.split("\n").slice(10, 15).map((line, i) => `${11 + i}  ${line}`));
    assert.equal(page[6], `[1,985 more lines: read_context {"handle": "${p.handle}", "offset": 16}]`);

    // What was kept out of the prompt, and read back.
    const usage = usageOf(tools);
    assert.equal(usage.outputsOffloaded, 1);
    assert.equal(usage.charsKeptOut, big.length - compact.length);
    assert.equal(usage.tokensKeptOut, Math.ceil(big.length / 4) - Math.ceil(compact.length / 4));
    assert.equal(usage.tokenizer, "estimate");
    assert.equal(usage.readsBack, 1);
    assert.equal(usage.charsReadBack, page.join("\n").length);
  });

  test("ai-sdk: an unknown handle or a bad pattern is a tool error the model reads; the run goes on", async () => {
    const manager = await open();
    const model = scriptedModel([
      callTools([["read_context", { handle: "ctx:aaaaaaaaaa" }]]),
      callTools([["read_context", { handle: "../../etc/passwd" }]]),
      callTools([["grep_context", { pattern: "[" }]]),
      callTools([["read_context", { pointer: "toolctx://x.json", offset: -3 }]]),
      say("gave up"),
    ]);
    const result = await run(model, withToolContext({}, manager));
    assert.equal(result.text, "gave up");
    const errors = [1, 2, 3, 4].map((i) => toolResults(model.doGenerateCalls[i].prompt).at(-1).output);
    assert.deepEqual(errors.map((o) => o.type), ["error-text", "error-text", "error-text", "error-text"]);
    assert.match(errors[0].value, /no saved tool output has the handle ctx:aaaaaaaaaa; search_context lists the handles/);
    assert.match(errors[1].value, /no saved tool output has the handle \.\.\/\.\.\/etc\/passwd/);
    assert.match(errors[2].value, /^grep_context: pattern: /);
    assert.match(errors[3].value, /no saved tool output has the handle toolctx:\/\/x\.json/, "an older input: pointer for handle");
    assert.equal(manager.size, 0);
  });

  test("ai-sdk: resolveHandles: the model passes a saved output to another tool by its handle", async () => {
    const manager = await open();
    const log = lines(3_000, "step");
    const counted = [];
    const tools = withToolContext(
      {
        buildLog: fileTool(log),
        countLines: tool({
          description: "Count the lines of a text that contain a word.",
          inputSchema: objectSchema({ text: { type: "string" }, word: { type: "string" } }),
          execute: async ({ text, word }) => {
            counted.push(text);
            return text.split("\n").filter((line) => line.includes(word)).length;
          },
        }),
      },
      manager,
      { resolveHandles: ["countLines"] },
    );
    assert.match(tools.countLines.description, /^Count the lines of a text that contain a word\. Any string argument may be the handle/);
    const model = scriptedModel([
      callTools([["buildLog", {}]]),
      (prompt) => callTools([["countLines", { text: handleIn(lastResultText(prompt)), word: "step 2" }]]),
      () => callTools([["countLines", { text: `${handleIn(lastResultText(model.doGenerateCalls[1].prompt))}#L10-12`, word: "step" }]]),
      callTools([["countLines", { text: "ctx:bbbbbbbbbb", word: "x" }]]),
      say("done"),
    ]);
    await run(model, tools);
    const compact = lastResultText(model.doGenerateCalls[1].prompt);
    const [p] = manager.getAllPointers();
    assert.ok(compact.endsWith(`To hand the whole output to countLines, pass "${p.handle}" as an argument's value (or "${p.handle}#L10-40" for lines 10 to 40).`), compact);
    assert.deepEqual(counted, [log, log.split("\n").slice(9, 12).join("\n")]);
    assert.deepEqual([2, 3].map((i) => toolResults(model.doGenerateCalls[i].prompt).at(-1).output), [{ type: "json", value: 1_111 }, { type: "json", value: 3 }]);
    const missing = toolResults(model.doGenerateCalls[4].prompt).at(-1).output;
    assert.equal(missing.type, "error-text");
    assert.match(missing.value, /no saved tool output has the handle ctx:bbbbbbbbbb/);
    // The record keeps the input as the model gave it: the handle, not the output.
    const records = await manager.loadContexts(manager.getAllPointers().map((x) => x.filepath));
    assert.deepEqual(records.filter((r) => r.toolName === "countLines").map((r) => r.args.text), [p.handle, `${p.handle}#L10-12`]);
    assert.throws(() => withToolContext({ buildLog: fileTool(log) }, manager, { resolveHandles: ["nope"] }), { code: "INVALID_ARGUMENT", message: /resolveHandles names "nope"/ });
  });

  test("ai-sdk: with onSaveError, an output that cannot be saved never ends the run: BigInts and cycles reach the model as text", async () => {
    const manager = await open();
    const cyclic = { name: "loop", n: 3n };
    cyclic.self = cyclic;
    const seen = [];
    const count = () => tool({ inputSchema: objectSchema(), execute: async () => ({ rows: 12n, big: 2n ** 70n }) });
    const tools = withToolContext(
      { count: count(), loop: tool({ inputSchema: objectSchema(), execute: async () => cyclic }) },
      manager,
      { onSaveError: (error, call) => seen.push([error.code, call.toolName]) },
    );
    const model = scriptedModel([callTools([["count", {}], ["loop", {}]]), say("ok")]);
    const result = await run(model, tools);
    assert.equal(result.text, "ok");
    assert.deepEqual(seen, [["NOT_SERIALIZABLE", "count"], ["NOT_SERIALIZABLE", "loop"]]);
    const [rows, loop] = toolResults(model.doGenerateCalls[1].prompt).map((r) => r.output);
    assert.equal(rows.type, "text");
    assert.deepEqual(JSON.parse(rows.value), { rows: "12", big: String(2n ** 70n) });
    assert.deepEqual(JSON.parse(loop.value), { name: "loop", n: "3", self: "[Circular]" });
    assert.equal(manager.size, 0);

    // Without onSaveError the call fails with the toolctx error, and the run goes on too.
    const strict = scriptedModel([callTools([["count", {}]]), say("ok")]);
    await run(strict, withToolContext({ count: count() }, manager));
    const failed = toolResults(strict.doGenerateCalls[1].prompt)[0].output;
    assert.equal(failed.type, "error-text");
    assert.match(failed.value, /toolctx could not save the output of count/);
  });
}
