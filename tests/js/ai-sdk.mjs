// toolctx/ai-sdk with the real AI SDK, in every runtime (ai-sdk.test.mjs in Node,
// deno.suite.mjs, bun.suite.mjs): the end-to-end run and its errors. Also the scripted
// model the tests and demo/ai-sdk.mjs use: the SDK's own MockLanguageModelV4 (from
// `ai/test`), answering each call with the next turn of a script. A turn is a reply, or a
// function of the prompt the model received (to call read_context with the pointer it
// was just given). The mock records every call (`doGenerateCalls`).
import { generateText, jsonSchema, stepCountIs, tool } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { ContextManager, memoryStorage } from "toolctx";
import { withToolContext } from "toolctx/ai-sdk";

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

/** The first toolctx:// pointer in a text. */
export function pointerIn(text) {
  return text.match(/toolctx:\/\/[A-Za-z0-9_.-]+/)?.[0];
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

  test("ai-sdk: a large output reaches the model as a pointer and a preview, and read_context brings it back", async () => {
    const manager = await open();
    const big = lines(2_000);
    const model = scriptedModel([
      callTools([["readFile", { path: "src/naming.rs" }, "call-big"]]),
      (prompt) => callTools([["read_context", { pointer: pointerIn(lastResultText(prompt)), offset: 10, limit: 5 }]]),
      say("found it"),
    ]);
    const result = await run(model, withToolContext({ readFile: fileTool(big) }, manager));

    assert.equal(result.text, "found it");
    assert.equal(model.doGenerateCalls.length, 3);
    // The application still gets the whole output.
    assert.equal(result.steps[0].toolResults[0].output, big);

    // The model got the compact text, not the output.
    const compact = lastResultText(model.doGenerateCalls[1].prompt);
    const pointer = pointerIn(compact);
    assert.ok(pointer, compact);
    assert.ok(compact.length < 2_500, `compact text is ${compact.length} characters`);
    assert.ok(compact.includes(`readFile (tool call call-big) is ${big.length.toLocaleString("en-US")} characters in 2,000 lines`), compact);
    assert.match(compact, /Description: readFile: path=src\/naming\.rs \[tool call call-big\]/);
    assert.match(compact, /^line 1: x+$/m);
    assert.match(compact, /^line 2000: x+$/m);
    assert.match(compact, /1,990 lines not shown/);
    assert.doesNotMatch(compact, /^line 6:/m);

    // The record: the output, the tool-call id, the step's query and task.
    const [p] = manager.getAllPointers();
    assert.equal(manager.size, 1, "read_context's own output is never saved");
    assert.equal(pointer, `toolctx://${p.filename}`);
    assert.equal(p.queryId, ContextManager.hashQuery("Where is the args hash computed?"));
    assert.equal(p.taskId, 1);
    assert.match(p.toolDescription, /\[tool call call-big\]$/);
    assert.doesNotMatch(p.filename, /call-big/, "no filename is made from the tool-call id");
    const [record] = await manager.loadContexts([p.filepath]);
    assert.equal(record.result, big);
    assert.deepEqual(record.args, { path: "src/naming.rs" });

    // read_context gave lines 11-15 back, with a continuation hint.
    const page = lastResultText(model.doGenerateCalls[2].prompt);
    assert.equal(page.split("\n")[0], `${pointer}: lines 11–15 of 2,000`);
    assert.deepEqual(page.split("\n").slice(1, 6), big.split("\n").slice(10, 15));
    assert.match(page, /\[1,985 more lines: read_context with offset=15\]$/);
  });


  test("ai-sdk: an unknown pointer or a bad pattern is a tool error the model reads; the run goes on", async () => {
    const manager = await open();
    const model = scriptedModel([
      callTools([["read_context", { pointer: "toolctx://readFile_000000000000_1_0_abcd.json" }]]),
      callTools([["read_context", { pointer: "../../etc/passwd" }]]),
      callTools([["grep_context", { pattern: "[" }]]),
      callTools([["read_context", { pointer: "toolctx://x.json", offset: -3 }]]),
      say("gave up"),
    ]);
    const result = await run(model, withToolContext({}, manager));
    assert.equal(result.text, "gave up");
    const errors = [1, 2, 3].map((i) => toolResults(model.doGenerateCalls[i].prompt).at(-1).output);
    assert.deepEqual(errors.map((o) => o.type), ["error-text", "error-text", "error-text"]);
    assert.match(errors[0].value, /no saved tool output at toolctx:\/\/readFile_000000000000_1_0_abcd\.json; search_context lists/);
    assert.match(errors[1].value, /not a toolctx pointer: \.\.\/\.\.\/etc\/passwd/);
    assert.match(errors[2].value, /invalid pattern/);
    // A negative offset is refused by the input schema before read_context runs.
    assert.equal(toolResults(model.doGenerateCalls[4].prompt).at(-1).output.type, "error-text");
    assert.equal(manager.size, 0);
  });
}
