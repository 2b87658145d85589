#!/usr/bin/env node
// Latency of the shared stores against their local servers (make bench), with the Node fs
// adapter as the baseline in the same run: milliseconds per save (`saveContext` in a
// session, persistThreshold 0) and per load (`loadContexts` of one record), for 1 KB and
// 64 KB results, one operation at a time; and the round trips each costs (S3: fetches;
// Redis: commands sent, a Lua script counting as one). Median of 5 rounds after a warm-up; the
// adapters run round-robin, round by round, so drift falls on all of them alike.
// redis-server and s3s-fs run on 127.0.0.1 (free ports), started and stopped here.
//   node bench/scaling.mjs          (after `make pkg`)

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { createClient } from "redis";
import { ContextManager } from "toolctx";
import { nodeStorage } from "toolctx/node";
import { redisStorage } from "toolctx/redis";
import { s3Storage } from "toolctx/s3";
import { startRedis, startS3 } from "../tests/servers/local.mjs";

const SIZES = [1024, 64 * 1024];
const ROUNDS = 5;
const N = Number(process.env.N ?? 200);

const top = mkdtempSync(`${tmpdir()}/toolctx-scaling-`);
const redis = await startRedis();
const s3 = await startS3();
const client = createClient({ url: redis.url });
await client.connect();

let fetches = 0;
const counting = (request) => (fetches++, fetch(request));
let commands = 0;
/** The node-redis client, counting the commands the adapter sends. */
const countingClient = {
  get isOpen() {
    return client.isOpen;
  },
  sendCommand(args, options) {
    commands++;
    return client.sendCommand(args, options);
  },
};

const adapters = {
  "node fs (baseline)": { make: () => nodeStorage(), requests: null },
  redis: { make: () => redisStorage({ client: countingClient }), requests: async () => commands },
  s3: {
    make: () => s3Storage({ endpoint: s3.endpoint, bucket: s3.bucket, accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey, fetch: counting }),
    requests: async () => fetches,
  },
};

const result = (size) => ({ text: "x".repeat(size - 40) });

async function round(name, storage, size, tag) {
  const contextDir = name.startsWith("node") ? `${top}/${tag}` : `/bench/${tag}`;
  const m = await ContextManager.open({ contextDir, fileSystem: storage, session: true, persistThreshold: 0 });
  const count = adapters[name].requests;
  const value = result(size);
  let before = count ? await count() : 0;
  let t0 = performance.now();
  const paths = [];
  for (let i = 0; i < N; i++) paths.push(await m.saveContext("grep", { i }, value));
  const save = (performance.now() - t0) / N;
  const saveRequests = count ? (await count()) - before : NaN;
  const reader = await ContextManager.open({ contextDir, fileSystem: storage, session: m.sessionId });
  before = count ? await count() : 0;
  t0 = performance.now();
  for (const p of paths) await reader.loadContexts([p]);
  const load = (performance.now() - t0) / N;
  const loadRequests = count ? (await count()) - before : NaN;
  return { save, load, saveRequests: saveRequests / N, loadRequests: loadRequests / N };
}

const samples = {};
try {
  const storages = Object.fromEntries(Object.entries(adapters).map(([name, a]) => [name, a.make()]));
  for (const name of Object.keys(adapters)) await round(name, storages[name], 1024, `warm-${name.split(" ")[0]}`);
  for (let r = 0; r < ROUNDS; r++) {
    for (const size of SIZES) {
      for (const name of Object.keys(adapters)) {
        const got = await round(name, storages[name], size, `${name.split(" ")[0]}-${size}-${r}`);
        for (const [k, v] of Object.entries(got)) (samples[`${name}\u0000${size}\u0000${k}`] ??= []).push(v);
      }
    }
  }
} finally {
  await client.close();
  await Promise.all([redis.stop(), s3.stop()]);
  rmSync(top, { recursive: true, force: true });
}

const median = (xs) => xs.sort((a, b) => a - b)[xs.length >> 1];
const cell = (name, size, k, digits) => {
  const v = median(samples[`${name}\u0000${size}\u0000${k}`]);
  return Number.isNaN(v) ? "-" : v.toFixed(digits);
};
console.log(`Shared stores, ms per operation (median of ${ROUNDS} rounds of ${N}; local servers on 127.0.0.1; node ${process.version})`);
console.log("| adapter | save 1 KB | load 1 KB | save 64 KB | load 64 KB | requests per save | requests per load |");
console.log("|---|---:|---:|---:|---:|---:|---:|");
for (const name of Object.keys(adapters)) {
  console.log(
    `| ${name} | ${cell(name, 1024, "save", 3)} | ${cell(name, 1024, "load", 3)} | ${cell(name, 65536, "save", 3)} | ${cell(name, 65536, "load", 3)} | ` +
      `${cell(name, 1024, "saveRequests", 2)} | ${cell(name, 1024, "loadRequests", 2)} |`,
  );
}
