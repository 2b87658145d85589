// Docs that run: the README's S3 and Redis examples ("Shared stores") run against the
// local servers and print what the README says they print.
//   node --test tests/servers/readme.test.mjs        (after `make pkg`)

import { test, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { startRedis, startS3 } from "./local.mjs";

const root = fileURLToPath(new URL("../../", import.meta.url));
const readme = readFileSync(`${root}docs/storage.md`, "utf8");
const section = readme.slice(readme.indexOf("## Shared stores"), readme.indexOf("## Deno KV"));
const examples = [...section.matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1]);

const s3 = await startS3();
const redis = await startRedis();
after(() => Promise.all([s3.stop(), redis.stop()]));

function runs(name, code, env) {
  const promised = code.split("\n").filter((line) => line.startsWith("// [")).map((line) => line.slice(3));
  assert.equal(promised.length, 1, "one documented output line");
  const dir = `${root}tests/js/.tmp`;
  mkdirSync(dir, { recursive: true });
  writeFileSync(`${dir}/readme-${name}.mjs`, code);
  const out = execFileSync(process.execPath, [`${dir}/readme-${name}.mjs`], { encoding: "utf8", env: { ...process.env, ...env } });
  assert.equal(out.replace(/\s+/g, ""), promised[0].replace(/\s+/g, ""));
}

test("README: the S3 example runs against s3s-fs and prints what it says", () => {
  assert.equal(examples.length, 2, "an S3 and a Redis example");
  runs("s3", examples[0], {
    S3_ENDPOINT: s3.endpoint,
    S3_BUCKET: s3.bucket,
    S3_ACCESS_KEY_ID: s3.accessKeyId,
    S3_SECRET_ACCESS_KEY: s3.secretAccessKey,
  });
});

test("README: the Redis example runs against redis-server and prints what it says", () => {
  runs("redis", examples[1], { REDIS_URL: redis.url });
});
