// One export list (pkg-template/api.js): each runtime's entry point chooses how the wasm is
// loaded and states its defaults, then re-exports api.js whole, so no entry has a list of
// its own to fall behind. The runtimes' own suites (deno, bun, edge, browser, pack) import
// their entries; here, the entries' text, and Node's bundled entry against api.js.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const template = new URL("../../pkg-template/", import.meta.url);
const ENTRIES = ["index.js", "index.node.js", "index.deno.js", "index.workerd.js", "index.edge-light.js"];

/** The export statements of a module's text (comments removed). */
function exportsOf(file) {
  const code = readFileSync(new URL(file, template), "utf8").replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, "");
  return code.match(/^export\b[^;]*;/gm) ?? [];
}

test("every entry point re-exports api.js and exports nothing of its own", () => {
  for (const entry of ENTRIES) {
    assert.deepEqual(exportsOf(entry), ['export * from "./api.js";'], entry);
  }
  // What the edge entries share exports only its set-up.
  assert.deepEqual(exportsOf("edge.js").map((e) => e.match(/^export function (\w+)\(/)?.[1]), ["start"]);
});

test("every entry point is in package.json: an export condition of toolctx, and a file with side effects", () => {
  const manifest = JSON.parse(readFileSync(new URL("package.json", template), "utf8"));
  const conditions = Object.values(manifest.exports["."]).filter((f) => !f.endsWith(".d.ts"));
  assert.deepEqual([...new Set(conditions)].sort(), ENTRIES.map((e) => `./${e}`).sort());
  assert.deepEqual([...manifest.sideEffects].sort(), ENTRIES.map((e) => `./${e}`).sort());
  // api.js and the files that tie a wasm module's load to its exports must stay droppable.
  for (const file of ["api.js", "api-core.js", "api-window.js"]) {
    assert.ok(manifest.files.includes(file), `${file} is published`);
    assert.ok(!manifest.sideEffects.includes(`./${file}`), `${file} is not a side effect`);
  }
});

test("Node's entry, bundled into one file, exports exactly api.js's names, the same objects as toolctx/conversation and toolctx/window", async () => {
  const main = await import("toolctx");
  const pkg = fileURLToPath(new URL(".", import.meta.resolve("toolctx")));
  // api.js as a module of its own (a second copy of the package's modules): only its names are compared.
  const api = await import(`${pkg}api.js`);
  assert.deepEqual(Object.keys(main).sort(), Object.keys(api).sort());
  for (const subpath of ["toolctx/conversation", "toolctx/window"]) {
    const other = await import(subpath);
    for (const name of Object.keys(api)) assert.equal(other[name], main[name], `${subpath}: ${name}`);
  }
});
