// toolctx with LangChain.js, offline: a chat model built on @langchain/core's
// BaseChatModel answers each turn from a script (FakeListChatModel answers fixed texts;
// this model must read the handle it was given). A tool returns 600 JSON rows; the model
// gets its handle, hands the stored output to a second tool whose parameter is z.string(),
// reads lines back by offset, greps and searches; usageOf reports the tokens saved,
// counted by a real tokenizer (o200k).
// Run: node examples/langchain.mjs
import assert from "node:assert/strict";
import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { getEncoding } from "js-tiktoken";
import { z } from "zod";
import { ContextManager, memoryStorage } from "toolctx";
import { usageOf, withToolContext } from "toolctx/langchain";

const o200k = getEncoding("o200k_base");
const tokenizer = (text) => o200k.encode(text, "all").length;
const rows = Array.from({ length: 600 }, (_, i) => ({ id: i, user: `user${i}@example.com`, status: i === 417 ? "failed" : "ok" }));

/** A chat model whose turns are functions of the messages it is sent. */
class ScriptedChatModel extends BaseChatModel {
  constructor(script) {
    super({});
    this.script = script;
  }
  _llmType() {
    return "scripted";
  }
  bindTools() {
    return this;
  }
  async _generate(messages) {
    const message = this.script.shift()(messages);
    return { generations: [{ text: typeof message.content === "string" ? message.content : "", message }] };
  }
}

const manager = await ContextManager.open({ storage: memoryStorage(), contextDir: "/ctx" });
let summarized;
const queryOrders = tool(async () => ({ rows }), { name: "queryOrders", description: "All orders.", schema: z.object({}) });
const summarize = tool(async ({ text }) => ((summarized = text), `${text.length} characters summarised`), {
  name: "summarize",
  description: "Summarise a text.",
  schema: z.object({ text: z.string() }),
});
const tools = withToolContext([queryOrders, summarize], manager, { resolveHandles: ["summarize"], tokenizer });

const results = (messages) => messages.filter((m) => ToolMessage.isInstance(m)).map((m) => m.content);
const calls = (list) => new AIMessage({ content: "", tool_calls: list.map(([name, args], i) => ({ type: "tool_call", id: `${name}-${i}`, name, args })) });
let handle;
const model = new ScriptedChatModel([
  () => calls([["queryOrders", {}]]),
  (messages) => {
    handle = /ctx:\w+/.exec(results(messages)[0])[0];
    return calls([["summarize", { text: handle }], ["read_context", { handle, offset: 417, limit: 3 }], ["grep_context", { pattern: "failed", handle }], ["search_context", { query: "failed order" }]]);
  },
  () => new AIMessage("Order 417 failed."),
]);

// The agent loop: the model, then its tool calls, until it answers without one.
const byName = new Map(tools.map((t) => [t.name, t]));
const bound = model.bindTools(tools);
const messages = [new HumanMessage("Which order failed?")];
let modelCalls = 0;
for (;;) {
  const reply = await bound.invoke(messages);
  modelCalls++;
  messages.push(reply);
  if (!reply.tool_calls?.length) break;
  for (const toolCall of reply.tool_calls) messages.push(await byName.get(toolCall.name).invoke(toolCall));
}

const [compact, , page, grep, search] = results(messages);
assert.equal(messages.at(-1).content, "Order 417 failed.");
assert.deepEqual(JSON.parse(summarized), { rows }, "summarize received the stored output as its JSON text");
assert.match(page, /^418 {2}.*"failed"/m);
assert.match(grep, /418: .*"failed"/);
assert.ok(search.includes(handle));

const usage = usageOf(tools, { modelCalls });
const full = JSON.stringify({ rows }); // what the ToolMessage would have held without toolctx
const readBack = [page, grep, search].reduce((n, t) => n + tokenizer(t), 0);
const measured = tokenizer(full) - tokenizer(compact) - readBack - usage.definitionTokens * modelCalls;
assert.ok(Math.abs(usage.tokensSaved - measured) <= 0.02 * measured, `${usage.tokensSaved} vs ${measured}`);
console.log(compact.split("\n")[0].replace(/ctx:\w+/, "ctx:…"));
console.log(`tokens saved: ${usage.tokensSaved} (o200k, measured: ${measured}); kept out ${usage.tokensKeptOut}, read back ${usage.tokensReadBack}, definitions ${usage.definitionTokens} × ${usage.modelCalls} calls`);
await manager.close();
