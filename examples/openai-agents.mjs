// toolctx with the OpenAI Agents SDK, offline: the SDK's own ScriptedModel
// (@openai/agents/testing) plays the model. A tool returns 600 JSON rows; the model gets
// its handle, hands the stored output to a second tool whose parameter is z.string(),
// reads lines back by offset, greps and searches; usageOf reports the tokens saved,
// counted by a real tokenizer (o200k).
// Run: node examples/openai-agents.mjs
import assert from "node:assert/strict";
import { Agent, run, setTracingDisabled, tool } from "@openai/agents";
import { assistantMessage, functionCall, modelResponder, ScriptedModel } from "@openai/agents/testing";
import { getEncoding } from "js-tiktoken";
import { z } from "zod";
import { ContextManager, memoryStorage } from "toolctx";
import { usageOf, withToolContext } from "toolctx/openai-agents";

setTracingDisabled(true); // nothing leaves the process
const o200k = getEncoding("o200k_base");
const tokenizer = (text) => o200k.encode(text, "all").length;
const rows = Array.from({ length: 600 }, (_, i) => ({ id: i, user: `user${i}@example.com`, status: i === 417 ? "failed" : "ok" }));

const manager = await ContextManager.open({ storage: memoryStorage(), contextDir: "/ctx" });
let summarized;
const queryOrders = tool({ name: "queryOrders", description: "All orders.", parameters: z.object({}), execute: async () => ({ rows }) });
const summarize = tool({
  name: "summarize",
  description: "Summarise a text.",
  parameters: z.object({ text: z.string() }),
  execute: async ({ text }) => ((summarized = text), `${text.length} characters summarised`),
});
const tools = withToolContext([queryOrders, summarize], manager, { resolveHandles: ["summarize"], tokenizer });

const results = (request) => request.input.filter((i) => i.type === "function_call_result").map((i) => (typeof i.output === "string" ? i.output : i.output.text));
let handle;
const model = new ScriptedModel([
  [functionCall("queryOrders", {}, { callId: "c1" })],
  modelResponder(({ request }) => {
    handle = /ctx:\w+/.exec(results(request)[0])[0];
    return [
      functionCall("summarize", { text: handle }, { callId: "c2" }),
      functionCall("read_context", { handle, offset: 417, limit: 3 }, { callId: "c3" }),
      functionCall("grep_context", { pattern: "failed", handle }, { callId: "c4" }),
      functionCall("search_context", { query: "failed order" }, { callId: "c5" }),
    ];
  }),
  [assistantMessage("Order 417 failed.")],
]);
const result = await run(new Agent({ name: "orders", model, tools }), "Which order failed?");

const [compact, , page, grep, search] = results(model.lastCall.request);
assert.equal(result.finalOutput, "Order 417 failed.");
assert.deepEqual(JSON.parse(summarized), { rows }, "summarize received the stored output as its JSON text");
assert.match(page, /^418 {2}.*"failed"/m);
assert.match(grep, /418: .*"failed"/);
assert.ok(search.includes(handle));

const usage = usageOf(tools, { modelCalls: result.rawResponses.length });
const full = JSON.stringify({ rows }); // what the SDK would have sent without toolctx
const readBack = [page, grep, search].reduce((n, t) => n + tokenizer(t), 0);
const measured = tokenizer(full) - tokenizer(compact) - readBack - usage.definitionTokens * result.rawResponses.length;
assert.ok(Math.abs(usage.tokensSaved - measured) <= 0.02 * measured, `${usage.tokensSaved} vs ${measured}`);
console.log(compact.split("\n")[0].replace(/ctx:\w+/, "ctx:…"));
console.log(`tokens saved: ${usage.tokensSaved} (o200k, measured: ${measured}); kept out ${usage.tokensKeptOut}, read back ${usage.tokensReadBack}, definitions ${usage.definitionTokens} × ${usage.modelCalls} calls`);
await manager.close();
