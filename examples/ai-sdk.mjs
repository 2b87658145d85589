// toolctx with the Vercel AI SDK, offline: the SDK's own MockLanguageModelV4 plays the model.
// A tool returns 600 JSON rows; the model gets its handle, hands the stored output to a
// second tool whose parameter is a string, reads lines back by offset, greps and searches;
// usageOf reports the tokens saved, counted by a real tokenizer (o200k).
// Run: node examples/ai-sdk.mjs
import assert from "node:assert/strict";
import { generateText, jsonSchema, stepCountIs, tool } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { getEncoding } from "js-tiktoken";
import { ContextManager, memoryStorage } from "toolctx";
import { usageOf, withToolContext } from "toolctx/ai-sdk";

const o200k = getEncoding("o200k_base");
const tokenizer = (text) => o200k.encode(text, "all").length;
const rows = Array.from({ length: 600 }, (_, i) => ({ id: i, user: `user${i}@example.com`, status: i === 417 ? "failed" : "ok" }));

const manager = await ContextManager.open({ storage: memoryStorage(), contextDir: "/ctx" });
let summarized;
const tools = withToolContext(
  {
    queryOrders: tool({ description: "All orders.", inputSchema: jsonSchema({ type: "object", properties: {} }), execute: async () => ({ rows }) }),
    summarize: tool({
      description: "Summarise a text.",
      inputSchema: jsonSchema({ type: "object", properties: { text: { type: "string" } }, required: ["text"] }),
      execute: async ({ text }) => ((summarized = text), `${text.length} characters summarised`),
    }),
  },
  manager,
  { resolveHandles: ["summarize"], tokenizer },
);

// The model: each turn a function of the prompt it is sent.
const reply = (content, unified = "tool-calls") => ({ content, finishReason: { unified }, usage: { inputTokens: {}, outputTokens: {} }, warnings: [] });
const call = (id, toolName, input) => ({ type: "tool-call", toolCallId: id, toolName, input: JSON.stringify(input) });
const results = (prompt) => prompt.filter((m) => m.role === "tool").flatMap((m) => m.content).map((p) => p.output.value);
let handle;
const script = [
  () => reply([call("c1", "queryOrders", {})]),
  ({ prompt }) => {
    handle = /ctx:\w+/.exec(results(prompt)[0])[0];
    return reply([
      call("c2", "summarize", { text: handle }),
      call("c3", "read_context", { handle, offset: 417, limit: 3 }),
      call("c4", "grep_context", { pattern: "failed", handle }),
      call("c5", "search_context", { query: "failed order" }),
    ]);
  },
  () => reply([{ type: "text", text: "Order 417 failed." }], "stop"),
];
const model = new MockLanguageModelV4({ doGenerate: async (options) => script.shift()(options) });
const result = await generateText({ model, tools, prompt: "Which order failed?", stopWhen: stepCountIs(5) });

const [compact, , page, grep, search] = results(model.doGenerateCalls[2].prompt);
assert.deepEqual(JSON.parse(summarized), { rows }, "summarize received the stored output as its JSON text");
assert.match(page, /^418 {2}.*"failed"/m);
assert.match(grep, /418: .*"failed"/);
assert.ok(search.includes(handle));

// The usage, and the same figures measured independently with the tokenizer.
const usage = usageOf(tools, { modelCalls: result.steps.length });
const full = JSON.stringify({ rows }); // what the model would have read without toolctx
const readBack = [page, grep, search].reduce((n, t) => n + tokenizer(t), 0);
const measured = tokenizer(full) - tokenizer(compact) - readBack - usage.definitionTokens * result.steps.length;
assert.ok(Math.abs(usage.tokensSaved - measured) <= 0.02 * measured, `${usage.tokensSaved} vs ${measured}`);
console.log(compact.split("\n")[0].replace(/ctx:\w+/, "ctx:…"));
console.log(`tokens saved: ${usage.tokensSaved} (o200k, measured: ${measured}); kept out ${usage.tokensKeptOut}, read back ${usage.tokensReadBack}, definitions ${usage.definitionTokens} × ${usage.modelCalls} calls`);
await manager.close();
