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
