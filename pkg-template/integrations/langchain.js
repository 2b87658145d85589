// toolctx/langchain: toolctx for LangChain.js and LangGraph.js (npm `@langchain/core`, an
// optional peer dependency), built on the framework-free tools of toolctx/tools.
//
// - contextTools(manager, options): read_context, search_context and grep_context as
//   LangChain tools (`tool(fn, {name, description, schema: <JSON Schema>})`, validated by
//   @langchain/core itself), with the names, descriptions, schemas and texts of
//   toolctx/tools. A mistake of the model (a handle no record has, a bad pattern) comes
//   back to it as a ToolMessage with status "error" and the reason; called without a tool
//   call, the tool throws the error instead.
// - withToolContext(tools, manager, options): the tools, each structured tool wrapped so
//   that its output is saved (manager.saveContext: the tool's name, the arguments the
//   model sent, the tool-call id); an output the model would read in more than
//   maxInlineChars characters reaches it as a compact text naming its handle (ctx:…), with
//   a preview of its first and last lines. The retrieval tools are added. Tools that opt in
//   (resolveHandles) receive the stored output wherever the model passed a handle: the
//   tool's schema validates the model's input first, then each handle becomes the stored
//   text (a JSON value, or a `#$` slice of one, as its JSON text), so a string parameter
//   takes it.
// - usageOf(tools): what those tools kept out of the prompt, and what the model read back.
//
// The wrapped tools are DynamicStructuredTools with the original's name, description,
// schema, responseFormat and returnDirect; they run the original's `_call`. Tool
// definitions that are not structured tools (plain objects given to bindTools, runnables
// turned into tools) pass unchanged, as do outputs a tool returns as a ToolMessage or a
// Command.

import { parseCallbackConfigArg } from "@langchain/core/callbacks/manager";
import { isDirectToolOutput, ToolMessage } from "@langchain/core/messages";
import { DynamicStructuredTool, isStructuredTool, tool } from "@langchain/core/tools";
import { checkManager, countedDefinitions, errorText, isForTheModel, modelError, resolveAsText, usageOfTools, wrapTools } from "./offload.js";

const MODULE = "toolctx/langchain";

/** LangChain's ToolCall: `{type: "tool_call", id, name, args}`. */
const isToolCall = (value) => value !== null && typeof value === "object" && value.type === "tool_call";

/**
 * The model's mistake as the ToolMessage it reads (status "error"), when the call came
 * from a model (a tool-call id); otherwise, the error is thrown to the code that called.
 */
function errorForTheModel(error, toolCall, name) {
  if (!isForTheModel(error) || typeof toolCall?.id !== "string") throw error;
  return new ToolMessage({ content: error.message, status: "error", tool_call_id: toolCall.id, name });
}

// ---- the retrieval tools ------------------------------------------------------------------------

/**
 * read_context, search_context and grep_context over `manager`, as LangChain tools.
 * `options`: toolctx/tools' limits, and `usage` to count what they read back.
 */
export function contextTools(manager, options = {}) {
  checkManager(manager, MODULE);
  return countedDefinitions(manager, options).map((definition) =>
    tool(
      async (input, config) => {
        const { text, error } = await definition.run(input);
        return error ? errorForTheModel(modelError(text, error), config?.toolCall, definition.name) : text;
      },
      {
        name: definition.name,
        description: definition.description,
        // A copy: a model adapter may annotate the schema it is given.
        schema: structuredClone(definition.inputSchema),
        // LangChain validates the input first; its error then names the field that is wrong.
        verboseParsingErrors: true,
      },
    ),
  );
}

// ---- wrapping LangChain tools -------------------------------------------------------------------

/**
 * The text the model reads for a tool's content, as a ToolMessage carries it: a string as
 * is, content blocks as their texts, anything else as JSON (String() when JSON fails);
 * undefined when blocks other than text (images, files) are in it, which are saved but
 * never replaced.
 */
function modelText(content) {
  if (typeof content === "string") return content;
  const isBlock = (v) => v !== null && typeof v === "object" && "type" in v;
  if (Array.isArray(content) && content.length > 0 && content.every(isBlock)) {
    if (!content.every((block) => block.type === "text" && typeof block.text === "string")) return undefined;
    return content.map((block) => block.text).join("");
  }
  try {
    return JSON.stringify(content) ?? "";
  } catch {
    return `${content}`;
  }
}

const isWrappable = (t) => isStructuredTool(t) && typeof t._call === "function" && typeof t.name === "string";

/**
 * A wrapped tool: a DynamicStructuredTool whose schema (the original's) validates the
 * model's input; `func` then resolves handles (when the tool opted in) and runs the
 * original tool.
 */
class ContextSavingTool extends DynamicStructuredTool {
  static lc_name() {
    return "ContextSavingTool";
  }

  async call(arg, configArg, tags) {
    if (!isToolCall(arg)) return super.call(arg, configArg, tags);
    // Called with a tool call, as invoke passes one: the arguments, and the call in the config.
    return super.call(arg.args, { ...parseCallbackConfigArg(configArg), toolCall: arg }, tags);
  }
}

/** Yields what `generator` yields; returns its result through `finish`. */
async function* relay(generator, finish) {
  const result = yield* generator;
  return finish(result);
}

function wrapTool(original, manager, offloader) {
  const toolName = original.name;
  /** The content (or [content, artifact]) as the model gets it, after its save. */
  const finish = async (result, input, config) => {
    if (isDirectToolOutput(result)) return result; // a ToolMessage or a Command the tool made itself
    const call = { toolName, input: config?.toolCall?.args ?? input, toolCallId: config?.toolCall?.id, config };
    if (original.responseFormat === "content_and_artifact") {
      if (!Array.isArray(result) || result.length !== 2) return result; // LangChain reports the shape
      const [content, artifact] = result;
      return [await offloader.offload(call, content, modelText(content)), artifact];
    }
    return offloader.offload(call, result, modelText(result));
  };
  const resolveInput = offloader.resolves(toolName)
    ? (input) => resolveAsText(input, manager) // after the schema: a handle is the stored output's text
    : undefined;
  const func = async (validated, runManager, config) => {
    let input = validated;
    if (resolveInput) {
      try {
        input = await resolveInput(validated);
      } catch (error) {
        return errorForTheModel(isForTheModel(error) ? modelError(errorText(toolName, error), error) : error, config?.toolCall, toolName);
      }
    }
    const result = await original._call(input, runManager, config);
    if (result !== null && typeof result === "object" && typeof result[Symbol.asyncIterator] === "function" && typeof result.next === "function") {
      return relay(result, (last) => finish(last, input, config)); // a tool that streams events: its result is saved
    }
    return finish(result, input, config);
  };
  return new ContextSavingTool(
    {
      name: toolName,
      description: original.description,
      schema: original.schema,
      func,
      responseFormat: original.responseFormat,
      returnDirect: original.returnDirect,
      verboseParsingErrors: original.verboseParsingErrors,
      defaultConfig: original.defaultConfig,
      metadata: original.metadata,
      tags: original.tags,
      extras: original.extras,
      callbacks: original.callbacks,
      verbose: original.verbose,
    },
  );
}

/**
 * `tools` with every structured tool's output saved in `manager` and the retrieval tools
 * added (unless `retrievalTools: false`). Other tool definitions pass unchanged.
 */
export function withToolContext(tools, manager, options = {}) {
  const wrap = (t, offloader) => wrapTool(t, manager, offloader);
  return wrapTools(tools, manager, options, { module: MODULE, canWrap: isWrappable, wrap, contextTools, nameOf: (t) => t?.name ?? t?.function?.name });
}

/**
 * What the tools of `tools` (withToolContext's result, or any array holding its tools)
 * kept out of the prompt, read back and added: the sum over the withToolContext calls they
 * came from. `options.modelCalls`: how many model calls went out.
 */
export function usageOf(tools, options) {
  return usageOfTools(tools, MODULE, options);
}
