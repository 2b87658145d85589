// toolctx/tools under Node (the same suite runs under Deno and Bun: deno.suite.mjs, bun.suite.mjs).
import { test } from "node:test";
import assert from "node:assert/strict";
import { ContextManager } from "toolctx";
import { memoryStorage } from "toolctx/memory";
import * as tools from "toolctx/tools";
import { runToolTests } from "./tools.mjs";

runToolTests({ test, assert, ContextManager, memoryStorage, tools });
