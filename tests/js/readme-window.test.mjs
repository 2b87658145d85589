// Docs that run: the README's context-window example is executed against the built
// package, and what it prints must be what its `// → ` lines say.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../../", import.meta.url));

test("the README's context-window example runs and prints what it says", () => {
  const readme = readFileSync(`${root}docs/guides/window.md`, "utf8");
  const match = readme.slice(readme.indexOf("# Context-window optimiser")).match(/```js\n([\s\S]*?)```/);
  assert.ok(match, "the README has a js example under 'Context-window optimiser'");
  const code = match[1];
  const promised = code.split("\n").filter((line) => line.startsWith("// → ")).map((line) => line.slice(5));
  assert.equal(promised.length, 3);
  const dir = `${root}tests/js/.tmp`;
  mkdirSync(dir, { recursive: true });
  writeFileSync(`${dir}/readme-window.mjs`, code);
  const squash = (s) => s.replace(/\s+/g, " ").trim();
  for (let run = 0; run < 2; run++) { // restoreCheckpoint(0) leaves nothing behind: same output twice
    const out = execFileSync(process.execPath, [`${dir}/readme-window.mjs`], { encoding: "utf8" });
    assert.deepEqual(out.trim().split("\n").map(squash), promised.map(squash));
  }
});
