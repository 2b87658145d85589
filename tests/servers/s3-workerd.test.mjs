// toolctx/s3 inside real workerd (npm miniflare, on 127.0.0.1), bundled the way wrangler
// does (tests/edge/bundle.mjs): the shared conformance suites against a local s3s-fs, over
// workerd's own fetch. Proves the adapter needs nothing but Web APIs.
//   node --test tests/servers/s3-workerd.test.mjs        (after `make pkg`)

import { test, after } from "node:test";
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { bundleForWorkerd } from "../edge/bundle.mjs";
import { fetchFromWorkerd } from "../edge/runtimes.mjs";
import { startS3 } from "./local.mjs";

const server = await startS3();
after(() => server.stop());

test("workerd: the conformance suites pass over toolctx/s3 against s3s-fs", async (t) => {
  const options = { endpoint: server.endpoint, bucket: server.bucket, accessKeyId: server.accessKeyId, secretAccessKey: server.secretAccessKey };
  const contents = `
import { ContextManager, ConversationStore } from "toolctx";
import { s3Storage } from "toolctx/s3";
import { runLockTests, runSeedApiTests, runSessionTests, runStorageHostTests } from "../js/conformance.mjs";
import { SPREAD_RACE_DELAYS, runConversationTests } from "../js/conversation.mjs";
import assert from "../js/browser/assert.mjs";
import { run, test } from "../js/browser/harness.mjs";

export default {
  async fetch() {
    let n = 0;
    const fresh = (tag) => "workerd/" + tag + "-" + n++;
    const makeStorage = () => s3Storage(${JSON.stringify(options)});
    const name = "workerd s3";
    runStorageHostTests({ name, makeStorage, test, assert, tmpDir: () => fresh("host") });
    runSeedApiTests({ name, makeStorage, ContextManager, test, assert, contextDir: () => fresh("seed") });
    runSessionTests({ name, makeStorage, ContextManager, test, assert, contextDir: () => fresh("ses") });
    runLockTests({ name, makeStorage, test, assert, tmpDir: () => fresh("lock") });
    runConversationTests(test, assert, makeStorage, { ConversationStore, name, contextDir: () => fresh("conv"), raceDelays: SPREAD_RACE_DELAYS });
    // S3 round trips to a local s3s-fs are slow: the sync race alone makes hundreds (about 20 s).
    return Response.json(await run({ timeoutMs: 240_000 }));
  },
};`;
  const here = fileURLToPath(new URL(".", import.meta.url));
  const bundle = await bundleForWorkerd({ stdin: { contents, resolveDir: here, sourcefile: "worker.mjs" } });
  assert.ok(!/from\s*"node:/.test(bundle.code), "the bundle imports no node: module");
  const results = (await fetchFromWorkerd(bundle)).body;
  const failed = results.filter((r) => !r.ok);
  for (const r of failed) console.log(`# not ok - ${r.name}\n#   ${r.error.replaceAll("\n", "\n#   ")}`);
  assert.ok(results.length > 80, `only ${results.length} conformance tests ran`);
  assert.deepEqual(failed.map((r) => r.name), [], "every conformance test passes");
  t.diagnostic(`${results.length} conformance tests passed in workerd over s3s-fs`);
});
