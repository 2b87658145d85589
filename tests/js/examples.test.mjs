// Docs that run: each framework's offline example in examples/ (the framework's own
// offline model) is run as a user would run it, and must pass its own checks: a stored
// output handed by handle to a tool whose parameter is a string, read back by offset,
// grepped and searched, and usage within 2% of js-tiktoken's o200k count.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../../", import.meta.url));

for (const name of ["ai-sdk", "openai-agents", "langchain", "anthropic"]) {
  test(`examples/${name}.mjs runs offline and passes its checks`, { timeout: 120_000 }, async () => {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [`examples/${name}.mjs`], { cwd: root, encoding: "utf8" });
    assert.equal(stderr, "");
    assert.match(stdout, /^\[toolctx\] The output of queryOrders \(32,194 characters in 600 lines\) was saved as ctx:… instead of being shown in full\.$/m);
    assert.match(stdout, /^tokens saved: \d+ \(o200k, measured: \d+\)/m);
  });
}
