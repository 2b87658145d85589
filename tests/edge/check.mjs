// The scenario (scenario.mjs) behind each platform's fetch handler, and what it must
// answer in every edge runtime (used by tests/edge/ and by the packed-tarball test).

import assert from "node:assert/strict";

export const workerdHandler = `import scenario from "./scenario.mjs";
export default { fetch: async () => Response.json(await scenario()) };`;
export const edgeLightHandler = `import scenario from "./scenario.mjs";
addEventListener("fetch", (event) => event.respondWith(scenario().then((body) => Response.json(body))));`;

export function checkScenario(body) {
  assert.equal(body.contextDir, "agent/context", "the browser's default folder");
  assert.match(String(body.storage), /memory/, "memory storage by default, and onDebug says so");
  assert.equal(body.picked, 1);
  assert.ok(body.fp, "the record is under agent/context and selected by its query");
  assert.deepEqual(body.record, { tool: "readFile", result: "export function login() {}" });
  assert.equal(body.rebuilt, 5, "a second manager rebuilds the index from the stored records");
  assert.deepEqual(body.grep, [0, 1, 2, 3, 4].map((i) => ({ hits: [i, "é🙂"] })), "the records, byte for byte, in save order");
  assert.equal(body.storedPaths, 5);
  assert.deepEqual(body.artifact, { size: 6750, users: 1, tools: 1 });
  assert.equal(body.window.edits, 1);
  assert.equal(body.window.notice, "[[NOTE] This file read has been removed ");
  assert.ok(body.window.before);
  assert.deepEqual(body.trap, { code: "INTERNAL", cause: true, oldManager: "INTERNAL", afterTrap: 1, hash: "q_2d711642b726b044" });
}
