// toolctx on the edge, loaded by name through the package's export conditions as each
// platform's build resolves them: real workerd (npm miniflare, on 127.0.0.1) for the
// `workerd` condition, Vercel's edge-runtime emulator for `edge-light`. In both, the
// scenario (tests/edge/scenario.mjs) runs inside a fetch handler and answers JSON.
//
//   node --test tests/edge/        (after `make pkg`)

import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { bundleForEdgeLight, bundleForWorkerd } from "./bundle.mjs";
import { checkScenario, edgeLightHandler, workerdHandler } from "./check.mjs";
import { fetchFromEdgeLight, fetchFromWorkerd } from "./runtimes.mjs";

const here = fileURLToPath(new URL(".", import.meta.url));

const entry = (contents) => ({ stdin: { contents, resolveDir: here, sourcefile: "handler.mjs" } });

test("workerd: the worker imports toolctx by name and saves, selects, loads, converses, optimises, survives a trap", async () => {
  const bundle = await bundleForWorkerd(entry(workerdHandler));
  assert.deepEqual(bundle.modules.map((m) => m.name.replace(/^[0-9a-f]{40}-/, "")), 
    ["toolctx_core_bg.wasm", "toolctx_conversation_bg.wasm", "toolctx_window_bg.wasm"], "each wasm is a module of its own");
  checkScenario((await fetchFromWorkerd(bundle)).body);
});

test("edge-light: edge-runtime runs the same scenario with the wasm as a binding, no eval", async () => {
  const bundle = await bundleForEdgeLight(entry(edgeLightHandler));
  assert.equal(bundle.wasm.length, 3, "the three wasm modules are imported as modules (?module)");
  const { body } = await fetchFromEdgeLight(bundle);
  checkScenario(body);
});

function report(results) {
  const failed = results.filter((r) => !r.ok);
  for (const r of failed) console.log(`# not ok - ${r.name}\n#   ${r.error.replaceAll("\n", "\n#   ")}`);
  assert.ok(results.length > 100, `only ${results.length} conformance tests ran`);
  assert.deepEqual(failed.map((r) => r.name), [], "every conformance test passes");
  return `${results.length} conformance tests passed`;
}

test("workerd: the conformance suites pass over memory storage", async (t) => {
  const bundle = await bundleForWorkerd(entry(`import suites from "./suites.mjs";
export default { fetch: async () => Response.json(await suites("workerd")) };`));
  t.diagnostic(report((await fetchFromWorkerd(bundle)).body));
});

test("edge-light: the conformance suites pass over memory storage", async (t) => {
  const bundle = await bundleForEdgeLight(entry(`import suites from "./suites.mjs";
addEventListener("fetch", (event) => event.respondWith(suites("edge-light").then((body) => Response.json(body))));`));
  t.diagnostic(report((await fetchFromEdgeLight(bundle)).body));
});

test("README: the Edge runtimes worker runs in workerd and answers what the README says", async () => {
  const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8");
  const [code] = readme.slice(readme.indexOf("## Usage in Cloudflare Workers")).match(/```js\n([\s\S]*?)```/).slice(1);
  const [, path, promised] = code.match(/^\/\/ GET (\S+) → (.*)$/m);
  const { body } = await fetchFromWorkerd(await bundleForWorkerd(entry(code)), path);
  assert.deepEqual(body, JSON.parse(promised));
});
