// toolctx/tools' usage tally (re-exported there): what a framework wrapper kept out of
// the prompt, what the model read back, and what the tools the wrapper added cost, in
// one shape for every integration (AI SDK, OpenAI Agents, LangChain, Anthropic, MCP).
//
// Tokens are counted by `tokenizer` (text → token count) when one is given, else
// estimated as the core estimates them for `maxTokens` budgets: BYTES_PER_TOKEN (4)
// characters a token. That estimate is close on prose and code (about 5% under an o200k
// count) and low on JSON, numbers and short repeated lines (30 to 50% under): give a
// tokenizer where the figure matters.
//
// It imports nothing but errors.js, as toolctx/tools does, so it loads wherever that does.

import { toolctxError } from "./errors.js";

/** The estimate `maxTokens` budgets use too (the core's `estimated_tokens`): 4 characters a token. */
export const BYTES_PER_TOKEN = 4;

/** The keys of a usage snapshot, in order; each is a count (summed across tallies). */
export const USAGE_KEYS = Object.freeze([
  "outputsOffloaded",
  "charsKeptOut",
  "tokensKeptOut",
  "readsBack",
  "charsReadBack",
  "tokensReadBack",
  "definitionTokens",
  "modelCalls",
  "tokensSaved",
]);

const estimate = (text) => Math.ceil(text.length / BYTES_PER_TOKEN);

function checkTokenizer(tokenizer) {
  if (tokenizer !== undefined && typeof tokenizer !== "function") {
    throw toolctxError("INVALID_ARGUMENT", "createUsage: tokenizer must be a function (text) => number of tokens");
  }
}

/**
 * A tally of what a wrapper kept out of the prompt and what it added.
 *
 * - `offloaded(full, shown)`: an output the model would have read as `full` went to
 *   storage, and it read `shown` instead (texts; numbers of characters are taken too,
 *   and then estimated).
 * - `readBack(text)`: a retrieval tool answered with `text` (or a number of characters).
 * - `definitions(texts)`: the definitions of the tools the wrapper added (as the model
 *   is sent them), and text it added to other tools' descriptions; they ride along on
 *   every model call.
 * - `modelCalls(n = 1)`: that many model calls went out with those definitions.
 * - `snapshot()` → `{outputsOffloaded, charsKeptOut, tokensKeptOut, readsBack,
 *   charsReadBack, tokensReadBack, definitionTokens, modelCalls, tokensSaved,
 *   tokenizer}`: `tokensSaved` is `tokensKeptOut − tokensReadBack − definitionTokens ×
 *   modelCalls`; `tokenizer` is `"given"` or `"estimate"`.
 *
 * `options.tokenizer`: `(text) => number`, a real tokenizer's count (js-tiktoken's
 * `enc.encode(text, "all").length`, say: "all" counts special tokens such as
 * `<|endoftext|>` as text, where the default throws). A text it throws on, or gives no
 * count for, is estimated.
 */
export function createUsage(options = {}) {
  const tokenizer = options?.tokenizer;
  checkTokenizer(tokenizer);
  // Counting never fails what it counts: a tokenizer that throws on a text (js-tiktoken's
  // encode(text) on "<|endoftext|>" in a fetched page, without "all") or gives no count
  // has that text estimated instead.
  const tokensOf = (text) => {
    if (typeof text === "number") return estimate({ length: text });
    if (!tokenizer) return estimate(text);
    let n;
    try {
      n = tokenizer(text);
    } catch {
      return estimate(text);
    }
    return Number.isFinite(n) && n >= 0 ? n : estimate(text);
  };
  const charsOf = (text) => (typeof text === "number" ? text : text.length);
  const tally = Object.fromEntries(USAGE_KEYS.map((key) => [key, 0]));
  return {
    tokenizer,
    offloaded(full, shown = 0) {
      tally.outputsOffloaded++;
      tally.charsKeptOut += Math.max(0, charsOf(full) - charsOf(shown));
      tally.tokensKeptOut += Math.max(0, tokensOf(full) - (shown === 0 ? 0 : tokensOf(shown)));
    },
    readBack(text) {
      tally.readsBack++;
      tally.charsReadBack += charsOf(text);
      tally.tokensReadBack += tokensOf(text);
    },
    definitions(texts) {
      for (const text of texts) tally.definitionTokens += tokensOf(text);
    },
    modelCalls(n = 1) {
      if (!Number.isInteger(n) || n < 0) {
        throw toolctxError("INVALID_ARGUMENT", `usage: modelCalls must be a whole number, got ${String(n)}`);
      }
      tally.modelCalls += n;
    },
    snapshot() {
      return finish({ ...tally }, tokenizer ? "given" : "estimate");
    },
  };
}

function finish(totals, tokenizer) {
  totals.tokensSaved = totals.tokensKeptOut - totals.tokensReadBack - totals.definitionTokens * totals.modelCalls;
  return { ...totals, tokenizer };
}

/**
 * The sum of several tallies' snapshots (the tools of several wrapper calls). `modelCalls`,
 * when given, is how many model calls went out (`result.steps.length` in the AI SDK, say):
 * it replaces the counts the tallies hold, since every call carried every definition.
 */
export function sumUsage(snapshots, modelCalls) {
  const total = Object.fromEntries(USAGE_KEYS.map((key) => [key, 0]));
  let calls = 0;
  for (const s of snapshots) {
    for (const key of USAGE_KEYS) total[key] += s[key] ?? 0;
    calls = Math.max(calls, s.modelCalls ?? 0);
  }
  if (modelCalls !== undefined) {
    if (!Number.isInteger(modelCalls) || modelCalls < 0) {
      throw toolctxError("INVALID_ARGUMENT", `usage: modelCalls must be a whole number, got ${String(modelCalls)}`);
    }
    calls = modelCalls;
  }
  total.modelCalls = calls;
  const given = snapshots.length > 0 && snapshots.every((s) => s.tokenizer === "given");
  return finish(total, given ? "given" : "estimate");
}
