// The shared conformance suites (tests/js/), run inside an edge runtime over memory
// storage, the one adapter there: bundled with the package resolved by name, like the
// scenario. Resolves to the browser harness's results: [{name, ok, ms, error?}].

import * as toolctx from "toolctx";
import { ContextManager, ConversationStore } from "toolctx";
import { memoryStorage } from "toolctx/memory";
import { loadVectors, runLockTests, runPointerArrayTests, runSeedApiTests, runSessionTests, runStorageHostTests, runVectorTests } from "../js/conformance.mjs";
import { runConversationTests } from "../js/conversation.mjs";
import { runWindowTests } from "../js/window.mjs";
import assert from "../js/browser/assert.mjs";
import { run, test } from "../js/browser/harness.mjs";
import canonical from "../vectors/canonical.json";
import hashQuery from "../vectors/hash_query.json";
import record from "../vectors/record.json";
import sanitize from "../vectors/sanitize.json";

const files = { "canonical.json": canonical, "hash_query.json": hashQuery, "record.json": record, "sanitize.json": sanitize };

export default async function suites(name) {
  let n = 0;
  const fresh = (tag) => `ctx/${tag}-${n++}`; // no leading "/": the browser convention, as on the edge
  const makeStorage = () => memoryStorage();
  runStorageHostTests({ name, makeStorage, test, assert, tmpDir: () => fresh("host") });
  runSeedApiTests({ name, makeStorage, ContextManager, test, assert, contextDir: () => fresh("seed") });
  runSessionTests({ name, makeStorage, ContextManager, test, assert, contextDir: () => fresh("session") });
  runLockTests({ name, makeStorage, test, assert, tmpDir: () => fresh("lock") });
  runConversationTests(test, assert, makeStorage, { ConversationStore, name, contextDir: () => fresh("conv"), makeRemote: makeStorage });
  runWindowTests(test, assert, makeStorage, { api: toolctx, name, contextDir: () => fresh("window") });
  const vectors = await loadVectors(async (file) => files[file]);
  runVectorTests({ name: `${name} vectors`, test, assert, ContextManager, memoryStorage, vectors });
  runPointerArrayTests({ name, ContextManager, memoryStorage, test, assert });
  return run();
}
