// toolctx/redis (npm `redis` under Deno's npm compatibility) and toolctx/s3 under Deno,
// against local redis-server and s3s-fs.
//   deno test -A --no-check tests/servers/deno.suite.mjs

import assert from "node:assert/strict";
import { runServerSuites } from "./suites.mjs";
import { denoTest as test } from "../deno-test.mjs";

await runServerSuites({ runtime: "deno", test, assert });
