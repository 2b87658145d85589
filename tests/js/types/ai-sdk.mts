// A strict TypeScript consumer of toolctx/ai-sdk against the real `ai` types
// (tests/js/ai-sdk-types.test.mjs runs tsc over it; it is never executed).
import { generateText, stepCountIs, tool, jsonSchema, type ModelMessage } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { ContextManager } from "toolctx";
import { withToolContext, contextTools, usageOf, windowPrepareStep, toWindowMessages, applyWindowResult, recordText, POINTER_SCHEME } from "toolctx/ai-sdk";
import { createUsage } from "toolctx/tools";

export async function consumer(model: MockLanguageModelV4): Promise<string> {
  const manager = await ContextManager.open({ contextDir: "/tmp/toolctx-types" });
  const readFile = tool({
    description: "Read a file",
    inputSchema: jsonSchema<{ path: string }>({ type: "object", properties: { path: { type: "string" } }, required: ["path"] }),
    execute: async ({ path }) => ({ path, text: "…" }),
  });
  const tools = withToolContext({ readFile }, manager, {
    maxInlineChars: 8_000,
    taskId: (call) => call.messages.length,
    onSaveError: (error, call) => console.warn(call.toolName, call.toolCallId, error),
    resolveHandles: ["readFile"],
    maxReadLines: 500,
    usage: createUsage(),
  });
  const page = (await tools.read_context.execute!({ handle: `${POINTER_SCHEME}x.json`, offset: 1, limit: 10 }, { toolCallId: "t", messages: [], context: {} })) as string;
  const found = await contextTools(manager, { searchResults: 3 }).search_context.execute!({ query: "file", limit: 3 }, { toolCallId: "t", messages: [], context: {} });
  const { tokensKeptOut, readsBack }: { tokensKeptOut: number; readsBack: number } = usageOf(tools);
  const result = await generateText({
    model,
    tools,
    prompt: "Where is the args hash computed?",
    stopWhen: stepCountIs(5),
    prepareStep: windowPrepareStep({ contextWindow: 200_000, strategy: "half", onOptimize: (r) => console.log(r.metrics.tokensSaved) }),
  });
  const messages: ModelMessage[] = [{ role: "user", content: "hi" }];
  const converted = toWindowMessages(messages);
  const back: ModelMessage[] = applyWindowResult(messages, converted, { edits: [], truncated: null });
  return result.text + page + found + recordText({ a: 1 }) + back.length + tokensKeptOut + readsBack;
}
