// toolctx/redis and toolctx/s3 under Bun, against local redis-server and s3s-fs.
//   bun test ./tests/servers/bun.suite.mjs

import { test as bunTest } from "bun:test";
import assert from "node:assert/strict";
import { runServerSuites } from "./suites.mjs";

const test = (name, fn) => bunTest(name, fn, 60_000);
await runServerSuites({ runtime: "bun", test, assert });
