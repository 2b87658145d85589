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
  assert.throws(() => createUsage({ tokenizer: () => NaN }).readBack("x"), { code: "INVALID_ARGUMENT" });
  assert.throws(() => sumUsage([], -1), { code: "INVALID_ARGUMENT" });
});
