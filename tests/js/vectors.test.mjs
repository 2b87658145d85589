// Cross-implementation vectors (tests/vectors/*.json, computed outside this code base)
// through the built package, under Node. Deno, Bun and Chromium run the same suite.

import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";

import { ContextManager, memoryStorage } from "toolctx";
import { loadVectors, runBudgetAndRerankTests, runRankingTests, runPointerArrayTests, runVectorTests } from "./conformance.mjs";

const vectors = await loadVectors((file) => readFileSync(new URL(`../vectors/${file}`, import.meta.url), "utf8"));
runVectorTests({ name: "node", test, assert, ContextManager, memoryStorage, vectors });
runRankingTests({ name: "node", ContextManager, memoryStorage, test, assert });
runPointerArrayTests({ name: "node", ContextManager, memoryStorage, test, assert });
runBudgetAndRerankTests({ name: "node", ContextManager, memoryStorage, test, assert });

// RFC 8785 writes numbers as ECMAScript does, so for args `{"x": n}` the canonical text is
// `{"x":` + JSON.stringify(n) + `}`: V8 is the oracle for the core's number formatter
// (ryu-js, built with its "small" tables) over doubles drawn from random bits, every
// exponent alike, and the edges.
test("node: the args hash of any double is SHA-256 of the number as JavaScript writes it", async () => {
  const { createHash } = await import("node:crypto");
  const bits = new DataView(new ArrayBuffer(8));
  const doubles = [0, -0, 1, -1, 5e-324, -5e-324, 2.2250738585072014e-308, 1.7976931348623157e308, 0.1, 1e21, 1e-7, 123456789012345680000];
  let seed = 0x9e3779b9;
  const next = () => {
    seed ^= seed << 13;
    seed ^= seed >>> 17;
    seed ^= seed << 5;
    return seed >>> 0;
  };
  while (doubles.length < 2000) {
    bits.setUint32(0, next());
    bits.setUint32(4, next());
    const n = bits.getFloat64(0);
    if (Number.isFinite(n)) doubles.push(n);
  }
  const manager = new ContextManager({ fileSystem: memoryStorage(), contextDir: "/ctx" });
  for (const n of doubles) {
    await manager.saveContext("num", { x: n }, "r");
  }
  const hashes = manager.getAllPointers().map((p) => p.argsHash);
  const expected = doubles.map((n) => createHash("sha256").update(`{"x":${JSON.stringify(n)}}`).digest("hex"));
  assert.deepEqual(hashes, expected);
  await manager.close();
});
