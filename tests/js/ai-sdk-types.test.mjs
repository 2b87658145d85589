// toolctx/ai-sdk's declarations type-check, strictly, against the installed `ai` types
// and are usable as documented (tests/js/types/ai-sdk.mts).
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../../", import.meta.url));

test("ai-sdk: the declarations type-check under tsc --strict with the real ai types", () => {
  const r = spawnSync(`${root}node_modules/.bin/tsc`, [
    "--ignoreConfig", "--strict", "--noEmit", "--module", "nodenext", "--target", "es2022", "--lib", "es2022,dom",
    "--types", "node", "--typeRoots", `${root}node_modules/@types`, "tests/js/types/ai-sdk.mts",
  ], { cwd: root, encoding: "utf8" });
  assert.equal(r.status, 0, r.stdout + r.stderr);
});
