// toolctx with the Anthropic SDK's tool runner, offline: a fake fetch plays the Messages
// API. A tool returns 600 JSON rows (as JSON text); the model gets its handle, hands the
// stored output to a second tool whose parameter is a string, reads lines back by offset,
// greps and searches; usageOf reports the tokens saved, counted by a real tokenizer (o200k).
// The loop runs with `thread: false` (the whole history is sent each turn), so
// clearToolUses can clear old results between turns: a thread would hold them on the server.
// Run: node examples/anthropic.mjs
import assert from "node:assert/strict";
import Anthropic from "@anthropic-ai/sdk";
import { betaTool } from "@anthropic-ai/sdk/helpers/beta/json-schema";
import { getEncoding } from "js-tiktoken";
import { ContextManager, clearToolUses, memoryStorage } from "toolctx";
import { usageOf, withToolContext } from "toolctx/anthropic";

const o200k = getEncoding("o200k_base");
const tokenizer = (text) => o200k.encode(text, "all").length;
const rows = Array.from({ length: 600 }, (_, i) => ({ id: i, user: `user${i}@example.com`, status: i === 417 ? "failed" : "ok" }));

const manager = await ContextManager.open({ storage: memoryStorage(), contextDir: "/ctx" });
let summarized;
const queryOrders = betaTool({ name: "queryOrders", description: "All orders.", inputSchema: { type: "object", properties: {} }, run: async () => JSON.stringify({ rows }) });
const summarize = betaTool({
  name: "summarize",
  description: "Summarise a text.",
  inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
  run: async ({ text }) => ((summarized = text), `${text.length} characters summarised`),
});
const tools = withToolContext([queryOrders, summarize], manager, { resolveHandles: ["summarize"], tokenizer });

// The Messages API, faked: each turn a function of the request's messages.
const results = (messages) => messages.flatMap((m) => (Array.isArray(m.content) ? m.content : [])).filter((b) => b.type === "tool_result").map((b) => (typeof b.content === "string" ? b.content : b.content.map((c) => c.text).join("")));
const use = (id, name, input) => ({ type: "tool_use", id, name, input });
let handle;
const turns = [
  () => [use("c1", "queryOrders", {})],
  (messages) => {
    handle = /ctx:\w+/.exec(results(messages)[0])[0];
    return [use("c2", "summarize", { text: handle }), use("c3", "read_context", { handle, offset: 417, limit: 3 }), use("c4", "grep_context", { pattern: "failed", handle }), use("c5", "search_context", { query: "failed order" })];
  },
  () => [{ type: "text", text: "Order 417 failed." }],
];
const requests = [];
const fetch = async (_url, init) => {
  const body = JSON.parse(init.body);
  requests.push(body);
  const content = turns.shift()(body.messages);
  const stop_reason = content.some((b) => b.type === "tool_use") ? "tool_use" : "end_turn";
  const message = { id: `msg_${requests.length}`, type: "message", role: "assistant", model: body.model, content, stop_reason, stop_sequence: null, usage: { input_tokens: 0, output_tokens: 0 } };
  return new Response(JSON.stringify(message), { headers: { "content-type": "application/json" } });
};
const client = new Anthropic({ apiKey: "offline", fetch, maxRetries: 0 });

// The loop: run the tools of each reply, clear old results, send the next turn.
const runner = client.beta.messages.toolRunner({ model: "claude-opus-4-6", max_tokens: 1024, messages: [{ role: "user", content: "Which order failed?" }], tools, thread: false });
let final;
for await (const message of runner) {
  final = message;
  const toolResponse = await runner.generateToolResponse();
  if (!toolResponse) break;
  const history = [...runner.params.messages, { role: message.role, content: message.content }, toolResponse];
  const { messages } = await clearToolUses(history, { trigger: 100_000, keep: 3, manager });
  runner.setMessagesParams({ ...runner.params, messages });
}

const [compact, , page, grep, search] = results(requests.at(-1).messages);
assert.equal(final.content[0].text, "Order 417 failed.");
assert.deepEqual(JSON.parse(summarized), { rows }, "summarize received the stored output as its JSON text");
assert.match(page, /^418 {2}.*"failed"/m);
assert.match(grep, /418: .*"failed"/);
assert.ok(search.includes(handle));

const usage = usageOf(tools, { modelCalls: requests.length });
const full = JSON.stringify({ rows }); // what the tool_result would have held without toolctx
const readBack = [page, grep, search].reduce((n, t) => n + tokenizer(t), 0);
const measured = tokenizer(full) - tokenizer(compact) - readBack - usage.definitionTokens * requests.length;
assert.ok(Math.abs(usage.tokensSaved - measured) <= 0.02 * measured, `${usage.tokensSaved} vs ${measured}`);
console.log(compact.split("\n")[0].replace(/ctx:\w+/, "ctx:…"));
console.log(`tokens saved: ${usage.tokensSaved} (o200k, measured: ${measured}); kept out ${usage.tokensKeptOut}, read back ${usage.tokensReadBack}, definitions ${usage.definitionTokens} × ${usage.modelCalls} calls`);
await manager.close();
