// toolctx/tools' usage tally (pkg-template/usage.js): one shape for every integration,
// tokens from a real tokenizer when one is given (js-tiktoken's o200k here), net of the
// definitions the wrapper adds to every model call.
import { test } from "node:test";
import assert from "node:assert/strict";
import { getEncoding } from "js-tiktoken";
import { createUsage, sumUsage, USAGE_KEYS } from "toolctx/tools";

const o200k = getEncoding("o200k_base");
const tokenizer = (text) => o200k.encode(text).length;
const rows = JSON.stringify(Array.from({ length: 300 }, (_, i) => ({ id: i, name: `row ${i}`, ok: i % 2 === 0 })));

test("usage: with a tokenizer, tokens are the tokenizer's count of the texts", () => {
  const usage = createUsage({ tokenizer });
  usage.offloaded(rows, "[toolctx] saved as ctx:aaaaaaaaaa");
  usage.readBack("1  {\"id\":0}");
  usage.definitions(["a definition"]);
  usage.modelCalls(2);
  const s = usage.snapshot();
  assert.equal(s.tokensKeptOut, tokenizer(rows) - tokenizer("[toolctx] saved as ctx:aaaaaaaaaa"));
  assert.equal(s.tokensReadBack, tokenizer("1  {\"id\":0}"));
  assert.equal(s.definitionTokens, tokenizer("a definition"));
  assert.equal(s.tokensSaved, s.tokensKeptOut - s.tokensReadBack - 2 * s.definitionTokens);
  assert.equal(s.tokenizer, "given");
  assert.deepEqual(Object.keys(s), [...USAGE_KEYS, "tokenizer"]);
});

test("usage: without one, 4 characters a token (documented: low on JSON)", () => {
  const usage = createUsage();
  usage.offloaded(rows, "");
  const s = usage.snapshot();
  assert.equal(s.tokensKeptOut, Math.ceil(rows.length / 4));
  assert.equal(s.tokenizer, "estimate");
  assert.ok(s.tokensKeptOut < tokenizer(rows), "the estimate undercounts JSON");
});

test("usage: sumUsage adds tallies; modelCalls given replaces their counts; bad options are typed errors", () => {
  const a = createUsage({ tokenizer });
  const b = createUsage({ tokenizer });
  a.offloaded(rows, "x");
  b.definitions(["def"]);
  const total = sumUsage([a.snapshot(), b.snapshot()], 3);
  assert.equal(total.modelCalls, 3);
  assert.equal(total.tokensSaved, total.tokensKeptOut - 3 * total.definitionTokens);
  assert.throws(() => createUsage({ tokenizer: 5 }), { code: "INVALID_ARGUMENT" });
  assert.throws(() => sumUsage([], -1), { code: "INVALID_ARGUMENT" });
});

test("usage: a tokenizer that throws on a text, or gives no count, has that text estimated; the tools still answer", async () => {
  const { ContextManager } = await import("toolctx");
  const { memoryStorage } = await import("toolctx/memory");
  const { contextTools } = await import("toolctx/tools");
  // js-tiktoken's encode(text) without "all" throws on a special token, which a fetched page may hold.
  const strict = (text) => o200k.encode(text).length;
  assert.throws(() => strict("x <|endoftext|> y"));
  const usage = createUsage({ tokenizer: strict });
  const manager = new ContextManager({ contextDir: "/usage-strict", fileSystem: memoryStorage() });
  const path = await manager.saveContext("fetch", { url: "https://example.com" }, "a page\nx <|endoftext|> y");
  const [read] = contextTools(manager, { usage });
  const text = await read.execute({ handle: manager.handleOf(path) });
  assert.match(text, /<\|endoftext\|>/);
  assert.equal(usage.snapshot().tokensReadBack, Math.ceil(text.length / 4));
  const odd = createUsage({ tokenizer: () => NaN });
  odd.readBack("abcdefgh");
  assert.equal(odd.snapshot().tokensReadBack, 2);
});
