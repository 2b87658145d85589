// One writer process of the many-writer suite (see many-writers.mjs, `nodeWriters`):
//   node many-writers-child.mjs '{"storageModule":"toolctx/redis", "storageExport":"redisStorage",
//                                 "storageOptions":{...}, "contextDir":..., "writer":0, "perWriter":500}'

import { ContextManager } from "toolctx";
import { writerTask } from "./many-writers.mjs";

const job = JSON.parse(process.argv[2]);
const makeStorage = (await import(job.storageModule))[job.storageExport];
const storage = await makeStorage(job.storageOptions);
try {
  const result = await writerTask({ ContextManager, storage, contextDir: job.contextDir, writer: job.writer, perWriter: job.perWriter });
  process.stdout.write(JSON.stringify(result));
} finally {
  await storage.close?.();
}
