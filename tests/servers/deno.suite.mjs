// toolctx/redis (npm `redis` under Deno's npm compatibility) and toolctx/s3 under Deno,
// against local redis-server and s3s-fs.
//   deno test -A --no-check tests/servers/deno.suite.mjs

import assert from "node:assert/strict";
import { runServerSuites } from "./suites.mjs";

const test = (name, fn) => Deno.test({ name, fn, sanitizeOps: false, sanitizeResources: false });
await runServerSuites({ runtime: "deno", test, assert });
