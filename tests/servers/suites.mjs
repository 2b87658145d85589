// The shared conformance suites against toolctx/redis, toolctx/s3 and toolctx/postgres under
// another runtime (Deno, Bun): the servers are started on 127.0.0.1 first, and stopped by the
// last test.

import { ContextManager, ConversationStore } from "toolctx";
import { postgresStorage } from "toolctx/postgres";
import { redisStorage } from "toolctx/redis";
import { s3Storage } from "toolctx/s3";
import { runLockTests, runSeedApiTests, runSessionTests, runStorageHostTests } from "../js/conformance.mjs";
import { SPREAD_RACE_DELAYS, runConversationTests } from "../js/conversation.mjs";
import { startPostgres, startRedis, startS3 } from "./local.mjs";

export async function runServerSuites({ runtime, test, assert }) {
  const redis = await startRedis();
  const s3 = await startS3();
  const postgres = await startPostgres();
  const opened = [];
  let n = 0;
  const fresh = (tag) => `/${runtime}-${tag}-${++n}`;
  const adapters = {
    redis: () => {
      const storage = redisStorage({ url: redis.url });
      opened.push(storage);
      return storage;
    },
    s3: () => s3Storage({ endpoint: s3.endpoint, bucket: s3.bucket, accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey }),
    // Small pools: the suites make hundreds of storages.
    postgres: () => {
      const storage = postgresStorage({ connectionString: postgres.connectionString }, { poolSize: 2 });
      opened.push(storage);
      return storage;
    },
  };
  for (const [adapter, makeStorage] of Object.entries(adapters)) {
    const name = `${runtime} ${adapter}`;
    runStorageHostTests({ name, makeStorage, test, assert, tmpDir: () => fresh("host") });
    runSeedApiTests({ name, makeStorage, ContextManager, test, assert, contextDir: () => fresh("seed") });
    runSessionTests({ name, makeStorage, ContextManager, test, assert, contextDir: () => fresh("ses") });
    runLockTests({ name, makeStorage, test, assert, tmpDir: () => fresh("lock") });
    runConversationTests(test, assert, makeStorage, { ConversationStore, name, contextDir: () => fresh("conv"), raceDelays: SPREAD_RACE_DELAYS });
  }
  test(`[${runtime}] the servers stop`, async () => {
    await Promise.all(opened.map((s) => s.close()));
    await Promise.all([redis.stop(), s3.stop(), postgres.stop()]);
  });
}
