// Docs that run: the S3, Redis, PostgreSQL and SQLite examples of docs/storage.md ("Shared
// stores") run against the local servers (SQLite: a file in a temporary folder) and print
// what the docs say they print.
//   node --test tests/servers/readme.test.mjs        (after `make pkg`)

import { test, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { fileURLToPath } from "node:url";
import { startPostgres, startRedis, startS3 } from "./local.mjs";

const root = fileURLToPath(new URL("../../", import.meta.url));
const readme = readFileSync(`${root}docs/storage.md`, "utf8");
const section = readme.slice(readme.indexOf("## Shared stores"), readme.indexOf("## Deno KV"));
const examples = [...section.matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1]);

const s3 = await startS3();
const redis = await startRedis();
const postgres = await startPostgres();
const sqliteDir = mkdtempSync(`${tmpdir()}/toolctx-readme-`);
after(async () => {
  await Promise.all([s3.stop(), redis.stop(), postgres.stop()]);
  rmSync(sqliteDir, { recursive: true, force: true });
});

function runs(name, code, env) {
  const promised = code.split("\n").filter((line) => line.startsWith("// [")).map((line) => line.slice(3));
  assert.equal(promised.length, 1, "one documented output line");
  const dir = `${root}tests/js/.tmp`;
  mkdirSync(dir, { recursive: true });
  writeFileSync(`${dir}/readme-${name}.mjs`, code);
  const out = execFileSync(process.execPath, [`${dir}/readme-${name}.mjs`], { encoding: "utf8", env: { ...process.env, ...env }, timeout: 120_000 });
  assert.equal(out.replace(/\s+/g, ""), promised[0].replace(/\s+/g, ""));
}

test("README: the S3 example runs against s3s-fs and prints what it says", () => {
  assert.equal(examples.length, 4, "an S3, a Redis, a PostgreSQL and a SQLite example");
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

test("docs: the PostgreSQL example runs against PostgreSQL and prints what it says", () => {
  runs("postgres", examples[2], { DATABASE_URL: postgres.connectionString });
});

test("docs: the SQLite example runs over a file and prints what it says", () => {
  runs("sqlite", examples[3], { SQLITE_PATH: `${sqliteDir}/agent-context.db` });
});
