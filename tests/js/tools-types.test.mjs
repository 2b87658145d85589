// The model-facing tools are typed once, in tools.d.ts (`ContextToolInputs`, `ContextToolNames`),
// and every integration's types are derived from them: tests/js/types/tools.mts checks each
// integration's retrieval tools against those two types, under tsc --strict, first against
// the package, then against a copy whose tools.d.ts alone gained a tool (what a newcomer
// adding a tool to tools.js edits), where an integration that typed the tools by hand fails.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { TOOL_NAMES } from "toolctx/tools";

const root = fileURLToPath(new URL("../../", import.meta.url));
const pkg = join(root, "pkg");
const consumer = join(root, "tests/js/types/tools.mts");

/**
 * tsc --strict over `files`, as a Node consumer with the DOM and Node types (the
 * integrations' SDKs use both). The declarations themselves are checked by the pack tests
 * (tests/pack/run.mjs): here only the consumer's checks, which is several times faster.
 */
function tsc(files, cwd) {
  const r = spawnSync(join(root, "node_modules/.bin/tsc"), [
    "--ignoreConfig", "--strict", "--noEmit", "--skipLibCheck", "--module", "nodenext", "--target", "es2022", "--lib", "es2022,dom",
    "--types", "node", "--typeRoots", join(root, "node_modules/@types"), ...files,
  ], { cwd, encoding: "utf8" });
  return { code: r.status, out: `${r.stdout}${r.stderr}` };
}

/** A text edit that must apply: `from` is in `text` exactly once. */
function edit(text, from, to) {
  assert.equal(text.split(from).length, 2, `expected one ${JSON.stringify(from)}`);
  return text.replace(from, to);
}

/**
 * A project under tests/js/.tmp (its SDKs found in the repository's node_modules) holding
 * the package's declarations as node_modules/toolctx, with a fourth tool added to
 * tools.d.ts only; `change(files)` may edit the copy's other declarations.
 */
function withAddedTool(name, change = () => {}) {
  const dir = join(root, "tests/js/.tmp/tools-types", name);
  rmSync(dir, { recursive: true, force: true });
  const copy = join(dir, "node_modules/toolctx");
  mkdirSync(copy, { recursive: true });
  cpSync(pkg, copy, { recursive: true, filter: (src) => !/\.(js|wasm)$/.test(src) || src === pkg });
  const toolsDts = join(copy, "tools.d.ts");
  let tools = readFileSync(toolsDts, "utf8");
  tools = edit(tools, "export interface ContextToolInputs {\n", "export interface ContextToolInputs {\n  list_context: ListInput;\n");
  tools = edit(tools, 'ContextToolNames = readonly ["read_context", "search_context", "grep_context"]', 'ContextToolNames = readonly ["read_context", "search_context", "grep_context", "list_context"]');
  writeFileSync(toolsDts, `${tools}\nexport interface ListInput { prefix?: string }\n`);
  change(copy);
  cpSync(consumer, join(dir, "tools.mts"));
  // The copy is the one checked: four tools, the fourth's input its own.
  writeFileSync(join(dir, "added.mts"), `import type { ContextToolInputs, ContextToolNames, ListInput } from "toolctx/tools";
import type { contextTools } from "toolctx/anthropic";
export const four: ContextToolNames["length"] = 4;
export const input: ContextToolInputs["list_context"] = {} satisfies ListInput;
export const runs = (tools: ReturnType<typeof contextTools>) => tools[3].run({ prefix: "src" });
`);
  return dir;
}

test("types: every integration's retrieval tools are tools.d.ts' tools, in order, each with its input", () => {
  const { code, out } = tsc([consumer], root);
  assert.equal(code, 0, out);
});

test("types: a tool added to tools.d.ts alone reaches toolctx/tools and every integration's types", () => {
  const dir = withAddedTool("added");
  const { code, out } = tsc([join(dir, "tools.mts"), join(dir, "added.mts")], dir);
  assert.equal(code, 0, out);
});

test("types: the check fails for an integration that lists the tools by hand", () => {
  const dir = withAddedTool("by-hand", (copy) => {
    const file = join(copy, "integrations/anthropic.d.ts");
    const text = readFileSync(file, "utf8");
    writeFileSync(file, edit(text, "): EachContextTool<{ [N in ContextToolName]: AnthropicContextTool<N, ContextToolInputs[N]> }>;",
      '): [AnthropicContextTool<"read_context", ReadInput>, AnthropicContextTool<"search_context", SearchInput>, AnthropicContextTool<"grep_context", GrepInput>];\nimport type { GrepInput, ReadInput, SearchInput } from "../tools.js";'));
  });
  const { code, out } = tsc([join(dir, "tools.mts")], dir);
  assert.notEqual(code, 0, "the hand-written tuple type-checked");
  assert.match(out, /^tools\.mts\(\d+,\d+\): error/m, out);
  assert.doesNotMatch(out, /node_modules/, `only the consumer's checks fail:\n${out}`);
});

test("types: tools.d.ts names the tools tools.js defines, in its order", () => {
  const dts = readFileSync(join(pkg, "tools.d.ts"), "utf8");
  const order = dts.match(/ContextToolNames = readonly \[([^\]]*)\]/)?.[1];
  assert.ok(order, "tools.d.ts declares ContextToolNames");
  assert.deepEqual(JSON.parse(`[${order}]`), [...TOOL_NAMES]);
  const inputs = dts.match(/export interface ContextToolInputs \{([\s\S]*?)\n\}/)?.[1];
  assert.ok(inputs, "tools.d.ts declares ContextToolInputs");
  assert.deepEqual([...inputs.matchAll(/^ {2}(\w+):/gm)].map((m) => m[1]).sort(), [...TOOL_NAMES].sort());
});
