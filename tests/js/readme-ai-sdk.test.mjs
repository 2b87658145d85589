// Docs that run: the README's Vercel AI SDK example is executed against the built
// package and the real `ai`, and what it prints must be what its `// → ` lines say.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../../", import.meta.url));

test("the README's Vercel AI SDK example runs and prints what it says", () => {
  const readme = readFileSync(`${root}docs/guides/integrations.md`, "utf8");
  const match = readme.slice(readme.indexOf("## Vercel AI SDK")).match(/```js\n([\s\S]*?)```/);
  assert.ok(match, "the README has a js example under 'Vercel AI SDK'");
  const code = match[1];
  const promised = code.split("\n").filter((line) => line.startsWith("// → ")).map((line) => line.slice(5));
  assert.equal(promised.length, 3);
  const dir = `${root}tests/js/.tmp`;
  mkdirSync(dir, { recursive: true });
  writeFileSync(`${dir}/readme-ai-sdk.mjs`, code);
  const squash = (s) => s.replace(/\s+/g, " ").trim();
  const out = execFileSync(process.execPath, [`${dir}/readme-ai-sdk.mjs`], { encoding: "utf8" });
  assert.deepEqual(out.trim().split("\n").map(squash), promised.map(squash));
});
