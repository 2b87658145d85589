// Docs that run: the README's examples for the integrations (the Anthropic memory tool and
// context editing; the MCP server, reached with `npx toolctx mcp` as a user would) are
// executed against the built package, and what they print must be what their `// → `
// lines say.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../../", import.meta.url));

/** The first js example under `heading`, and the lines it promises to print. */
function example(heading) {
  const readme = ["docs/guides/integrations.md", "docs/guides/mcp.md"].map((f) => readFileSync(`${root}${f}`, "utf8")).join("\n");
  const at = readme.indexOf(`\n${heading}\n`);
  assert.ok(at >= 0, `the README has a section '${heading}'`);
  const match = readme.slice(at).match(/```js\n([\s\S]*?)```/);
  assert.ok(match, `the README has a js example under '${heading}'`);
  const code = match[1];
  return { code, promised: code.split("\n").filter((line) => line.startsWith("// → ")).map((line) => line.slice(5)) };
}

/** Runs the example from `dir` (created fresh) and compares its output, line by line, with the promise. */
function check(heading, dir, prepare = () => {}) {
  const { code, promised } = example(heading);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  prepare(dir);
  writeFileSync(`${dir}/example.mjs`, code);
  const out = execFileSync(process.execPath, [`${dir}/example.mjs`], { cwd: dir, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  const squash = (s) => s.replace(/\s+/g, " ").trim();
  assert.deepEqual(out.trim().split("\n").map(squash), promised.map(squash));
}

test("the README's Anthropic example runs and prints what it says", () => {
  const { promised } = example("## Anthropic memory tool and context editing");
  assert.equal(promised.length, 5);
  check("## Anthropic memory tool and context editing", `${root}tests/js/.tmp/readme-anthropic`);
});

test("the README's MCP example runs `npx toolctx mcp` and prints what it says", () => {
  const { promised } = example("## From code");
  assert.equal(promised.length, 2);
  // A project with toolctx installed: npx finds its bin, as after `npm install toolctx`.
  check("## From code", `${root}tests/js/.tmp/readme-mcp`, (dir) => {
    mkdirSync(`${dir}/node_modules/.bin`, { recursive: true });
    writeFileSync(`${dir}/package.json`, JSON.stringify({ name: "readme-mcp", private: true, type: "module" }));
    symlinkSync(`${root}pkg`, `${dir}/node_modules/toolctx`);
    symlinkSync("../toolctx/bin/toolctx.js", `${dir}/node_modules/.bin/toolctx`);
  });
});
