// The model-facing tools' types, derived: every integration's retrieval tools are exactly
// the tools toolctx/tools' `ContextToolInputs` and `ContextToolNames` list, in that order,
// each with its input. Written over those two types, never over the tools' own names, so
// tests/js/tools-types.test.mjs type-checks it against the package as published and again
// against a copy whose tools.d.ts alone gained a tool: an integration that typed the tools
// by hand fails the second check. Never executed.
import type { Tool } from "ai";
import type { ContextToolInputs, ContextToolName, ContextToolNames, contextTools as coreTools } from "toolctx/tools";
import type { contextTools as anthropicTools } from "toolctx/anthropic";
import type { ContextTools as AiSdkTools, contextTools as aiSdkTools } from "toolctx/ai-sdk";
import type { ContextTool as LangChainTool, contextTools as langchainTools, withToolContext as langchainWrap } from "toolctx/langchain";
import type { contextTools as openaiTools } from "toolctx/openai-agents";

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
/** Compiles only when each check is `true`. */
type Assert<Checks extends true[]> = Checks;

// Generic over the tuple they map (their default), so that each maps a tuple to a tuple.
type Names<T extends readonly { name: unknown }[]> = { -readonly [I in keyof T]: T[I]["name"] };
type ExecuteInputs<T extends readonly { execute(input: never): unknown }[]> = { -readonly [I in keyof T]: Parameters<T[I]["execute"]>[0] };
type RunInputs<T extends readonly { run(input: never): unknown }[]> = { -readonly [I in keyof T]: Parameters<T[I]["run"]>[0] };
type Inputs<N extends readonly ContextToolName[] = ContextToolNames> = { -readonly [I in keyof N]: ContextToolInputs[N[I]] };
type LangChainTools<N extends readonly ContextToolName[] = ContextToolNames> = { -readonly [I in keyof N]: LangChainTool<ContextToolInputs[N[I]]> };
type Order = [...ContextToolNames];

// The order names exactly the tools that have an input.
export type Listed = Assert<[Equal<ContextToolNames[number], ContextToolName>]>;

// toolctx/tools: [{name, execute(input)}] in order.
type Core = ReturnType<typeof coreTools>;
export type CoreChecks = Assert<[Equal<Names<Core>, Order>, Equal<ExecuteInputs<Core>, Inputs>]>;

// toolctx/anthropic: the SDK's tool shape, with its name and input.
type Anthropic = ReturnType<typeof anthropicTools>;
export type AnthropicChecks = Assert<[Equal<Names<Anthropic>, Order>, Equal<RunInputs<Anthropic>, Inputs>]>;

// toolctx/ai-sdk: a tool set keyed by name, each an AI SDK Tool of its input.
export type AiSdkChecks = Assert<[
  Equal<keyof AiSdkTools, ContextToolName>,
  Equal<ReturnType<typeof aiSdkTools>, AiSdkTools>,
  Equal<AiSdkTools, { [N in ContextToolName]: Tool<ContextToolInputs[N], string> }>,
]>;

// toolctx/langchain: DynamicStructuredTools of each input, and withToolContext's union of them.
type LangChain = ReturnType<typeof langchainTools>;
export type LangChainChecks = Assert<[
  Equal<LangChain, LangChainTools>,
  Equal<ReturnType<typeof langchainWrap<never>>[number], LangChain[number]>,
]>;

// toolctx/openai-agents: one function tool per tool.
export type OpenAiChecks = Assert<[Equal<ReturnType<typeof openaiTools>["length"], ContextToolNames["length"]>]>;
