// A scripted model for the AI SDK tests and the demo: the SDK's own MockLanguageModelV4
// (from `ai/test`), answering each call with the next turn of a script. A turn is a
// reply, or a function of the prompt the model received (to call read_context with the
// pointer it was just given). The mock records every call (`doGenerateCalls`).
import { MockLanguageModelV4 } from "ai/test";

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
