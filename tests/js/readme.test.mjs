// Docs that run: the README's Node usage example is executed against the built
// package, and what it prints must be what the README says it prints.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../../", import.meta.url));

function usageExample() {
  const readme = readFileSync(`${root}README.md`, "utf8");
  const section = readme.slice(readme.indexOf("## Usage (Node)"));
  const match = section.match(/```js\n([\s\S]*?)```/);
  assert.ok(match, "the README has a js example under 'Usage (Node)'");
  return match[1];
}

test("the README usage example runs and prints what it says", () => {
  const code = usageExample();
  const promised = code
    .split("\n")
    .filter((line) => line.startsWith("// ["))
    .map((line) => line.slice(3));
  assert.equal(promised.length, 1, "one documented output line");
  const dir = `${root}tests/js/.tmp`;
  mkdirSync(dir, { recursive: true });
  // The example's store, made fresh: what an earlier run left there would be opened too.
  const store = mkdtempSync(join(tmpdir(), "toolctx-readme-"));
  assert.ok(code.includes('"/tmp/toolctx-readme"'), "the example's contextDir");
  writeFileSync(`${dir}/readme-example.mjs`, code.replace('"/tmp/toolctx-readme"', JSON.stringify(store)));
  const out = execFileSync(process.execPath, [`${dir}/readme-example.mjs`], { encoding: "utf8" });
  const squash = (s) => s.replace(/\s+/g, "");
  assert.equal(squash(out), squash(promised[0]));
});

test("the README retention example runs and prints what it says", () => {
  const readme = readFileSync(`${root}docs/api.md`, "utf8");
  const section = readme.slice(readme.indexOf("## Retention and repair"));
  const code = section.match(/```js\n([\s\S]*?)```/)?.[1];
  assert.ok(code, "the README has a js example under 'Retention and repair'");
  const promised = code.split("\n").filter((line) => line.startsWith("// → ")).map((line) => line.slice(5));
  assert.equal(promised.length, 2, "two documented output lines");
  const dir = `${root}tests/js/.tmp`;
  mkdirSync(dir, { recursive: true });
  writeFileSync(`${dir}/readme-retention.mjs`, code);
  const out = execFileSync(process.execPath, [`${dir}/readme-retention.mjs`], { encoding: "utf8" });
  const squash = (s) => s.replace(/\s+/g, "");
  assert.equal(squash(out), squash(promised.join("")));
});
