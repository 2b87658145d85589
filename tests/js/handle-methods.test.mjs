// The package's classes (context-manager.js, conversation.js, window.js) hold a handle of
// a class wasm-bindgen generates from the Rust exports and call it by name. A Rust export
// that disappears (renamed, or fallen out of its #[wasm_bindgen] block) breaks only the
// call that names it, at run time; this test finds every name the sources call on a
// handle, or statically on the generated class, and checks the class of the built package
// (`make pkg`) has it.

import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";

const source = (file) =>
  readFileSync(new URL(`../../pkg-template/${file}`, import.meta.url), "utf8")
    .replace(/\/\*[\s\S]*?\*\//g, "") // comments name methods too
    .replace(/^\s*\/\/.*$/gm, "");

/** The names captured by `pattern` (its first group) over the `files`. */
function names(files, pattern) {
  const found = new Set();
  for (const file of files) for (const m of source(file).matchAll(pattern)) found.add(m[1]);
  return [...found].sort();
}

/** Whether `name` is a method or getter of `cls`'s instances (its prototype chain). */
function onInstances(cls, name) {
  for (let proto = cls.prototype; proto && proto !== Object.prototype; proto = Object.getPrototypeOf(proto)) {
    const d = Object.getOwnPropertyDescriptor(proto, name);
    if (d) return typeof d.value === "function" || typeof d.get === "function";
  }
  return false;
}

// Per module: the files that call its handle, the generated glue, the class, how the
// sources reach a handle (`this.#live()`, the `#handle` / `#core` field, a local `handle`,
// `(h) => h.` in window.js's `#call`), and the local name of the class for static calls.
const HANDLE = /(?:this\.#live\(\)|#handle|#core|\bhandle|\(h\) => h)\.(\w+)/g;
const modules = [
  { files: ["context-manager.js"], glue: "toolctx_core.js", cls: "ContextManager", local: "Core", min: [3, 2] },
  { files: ["conversation.js"], glue: "toolctx_conversation.js", cls: "ConversationStore", local: "Core", min: [2, 2] },
  { files: ["window.js"], glue: "toolctx_window.js", cls: "ContextHistory", local: "HistoryCore", min: [10, 2] },
];

for (const { files, glue, cls, local, min } of modules) {
  test(`${files.join(", ")}: every method called on a ${cls} handle, and statically on the class, is in ${glue}`, async () => {
    const generated = (await import(new URL(`../../pkg/${glue}`, import.meta.url)))[cls];
    assert.equal(typeof generated, "function", `${glue} exports ${cls}`);

    const instance = names(files, HANDLE);
    const statics = names(files, new RegExp(`\\b${local}\\.(\\w+)`, "g"));
    assert.ok(instance.length >= min[0], `found ${instance.length} instance names in ${files}: ${instance}`);
    assert.ok(statics.length >= min[1], `found ${statics.length} static names in ${files}: ${statics}`);

    const missing = [
      ...instance.filter((name) => !onInstances(generated, name)).map((name) => `${cls}.prototype.${name}`),
      ...statics.filter((name) => typeof generated[name] !== "function").map((name) => `${cls}.${name}`),
    ];
    assert.deepEqual(missing, [], `called in ${files.join(", ")} but not exported by ${glue}`);
  });
}

test("window.js: the functions it takes from toolctx_window.js are exported", async () => {
  const glue = await import(new URL("../../pkg/toolctx_window.js", import.meta.url));
  const block = /const \{([^}]*)\} = glue;/.exec(source("window.js"));
  assert.ok(block, "window.js destructures the glue");
  const taken = [...block[1].matchAll(/(\w+)\s*:/g)].map((m) => m[1]);
  assert.ok(taken.length >= 5, `${taken}`);
  assert.deepEqual(taken.filter((name) => typeof glue[name] !== "function"), []);
});
