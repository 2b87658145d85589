// toolctx/openai-agents: toolctx for the OpenAI Agents SDK (npm `@openai/agents`, an
// optional peer dependency), built on the framework-free tools of toolctx/tools.
//
// - contextTools(manager, options): read_context, search_context and grep_context as the
//   SDK's function tools (`tool({parameters: <JSON Schema>, strict: false})`), with the
//   names, descriptions, schemas and texts of toolctx/tools. Their errors (a handle no
//   record has, a bad pattern) reach the model as their message, through errorFunction.
// - withToolContext(tools, manager, options): an agent's tools, each function tool wrapped
//   so that its output is saved (manager.saveContext: the tool's name, the arguments the
//   model sent, the call id); an output the model would read in more than maxInlineChars
//   characters reaches it as a compact text naming its handle (ctx:…), with a preview of
//   its first and last lines. The retrieval tools are added. Tools that opt in
//   (resolveHandles) receive the stored value wherever the model passed a handle.
// - usageOf(tools): what those tools kept out of the prompt, and what the model read back.
//
// Hosted tools (web search, code interpreter…), computer, shell and apply-patch tools are
// passed through unchanged: the SDK does not run them through `invoke`.

import { tool } from "@openai/agents";
import { checkManager, countedDefinitions, errorText, isForTheModel, modelError, resolveAsText, usageOfTools, wrapTools } from "./offload.js";

const MODULE = "toolctx/openai-agents";

/** What the SDK's own errorFunction tells the model: used for an error not written for the model. */
const GENERIC_TOOL_ERROR = "An error occurred while running the tool. Please try again.";

// ---- the retrieval tools ------------------------------------------------------------------------

/**
 * read_context, search_context and grep_context over `manager`, as the SDK's function
 * tools. `options`: toolctx/tools' limits, and `usage` to count what they read back.
 */
export function contextTools(manager, options = {}) {
  checkManager(manager, MODULE);
  return countedDefinitions(manager, options).map((definition) =>
    tool({
      name: definition.name,
      description: definition.description,
      // A copy: the SDK (or a model adapter) may annotate the schema it is given.
      parameters: structuredClone(definition.inputSchema),
      // Optional fields: strict mode would require every property.
      strict: false,
      execute: async (input) => {
        const { text, error } = await definition.run(input);
        if (error) throw modelError(text, error);
        return text;
      },
      errorFunction: (_runContext, error) => (isForTheModel(error) ? error.message : GENERIC_TOOL_ERROR),
    }),
  );
}

// ---- wrapping the SDK's function tools ------------------------------------------------------------

/** Items the SDK sends as structured content (input_text / input_image / input_file). */
const CONTENT_TYPES = ["text", "image", "file"];
const isContentItem = (v) => v !== null && typeof v === "object" && !Array.isArray(v) && CONTENT_TYPES.includes(v.type);

/**
 * The text the model reads for `output`, as the SDK converts it (its toSmartString, or
 * structured content); undefined for what is not text (images, files, bytes), which is
 * saved but never replaced.
 */
function modelText(output) {
  if (typeof output === "string") return output;
  if (output === null || output === undefined) return String(output);
  if (output instanceof ArrayBuffer || ArrayBuffer.isView(output)) return undefined;
  const items = Array.isArray(output) ? output : [output];
  if (items.length > 0 && items.every(isContentItem)) {
    if (!items.every((item) => item.type === "text" && typeof item.text === "string")) return undefined;
    return items.map((item) => item.text).join("");
  }
  if (typeof output !== "object") return String(output);
  try {
    return JSON.stringify(output) ?? "";
  } catch {
    return undefined;
  }
}

const isFunctionTool = (t) => t?.type === "function" && typeof t.invoke === "function";

function parseInput(input) {
  try {
    return JSON.parse(input);
  } catch {
    return input; // not JSON: the tool itself reports it
  }
}

/**
 * A copy of `original` whose `invoke` resolves handles (when the tool opted in), runs the
 * tool, saves its output and hands the model the compact text when the output is large.
 * A handle becomes the stored output's text (resolveAsText), so wherever the tool's
 * schema takes a string it takes what the handle stands for; the SDK's own invoke then
 * validates the input against the tool's schema before the tool runs, as for any call.
 * A tool with an outputSchema keeps its structured output: it is saved, never replaced.
 */
function wrapFunctionTool(original, manager, offloader) {
  const invoke = async (runContext, input, details) => {
    const args = parseInput(input);
    const call = { toolName: original.name, input: args, toolCallId: details?.toolCall?.callId, runContext };
    let forwarded = input;
    if (offloader.resolves(original.name) && typeof args === "object" && args !== null) {
      try {
        forwarded = JSON.stringify(await resolveAsText(args, manager));
      } catch (error) {
        if (!isForTheModel(error)) throw error;
        return errorText(original.name, error); // the model named a handle no record has: it reads why (worded as the retrieval tools' errors), the run goes on
      }
    }
    const output = await original.invoke(runContext, forwarded, details);
    return offloader.offload(call, output, original.outputSchema === undefined ? modelText(output) : undefined);
  };
  return { ...original, invoke };
}

/**
 * `tools` (an Agent's `tools`) with every function tool's output saved in `manager` and
 * the retrieval tools added (unless `retrievalTools: false`). Other tools pass unchanged.
 */
export function withToolContext(tools, manager, options = {}) {
  const wrap = (t, offloader) => wrapFunctionTool(t, manager, offloader);
  return wrapTools(tools, manager, options, { module: MODULE, canWrap: isFunctionTool, wrap, contextTools });
}

/**
 * What the tools of `tools` (withToolContext's result, or any array holding its tools)
 * kept out of the prompt, read back and added: the sum over the withToolContext calls they
 * came from. `options.modelCalls`: how many model calls went out (`result.rawResponses.length`).
 */
export function usageOf(tools, options) {
  return usageOfTools(tools, MODULE, options);
}
