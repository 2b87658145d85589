// One writer process of the Deno KV many-writer test (deno-kv.suite.mjs): opens the shared
// KV file, runs many-writers.mjs's writerTask, prints its result as JSON.
//   deno run -A --unstable-kv --no-check tests/js/deno-kv-writer.mjs KV_PATH CONTEXT_DIR WRITER PER_WRITER

import { ContextManager } from "toolctx";
import { denoKvStorage } from "toolctx/deno-kv";
import { writerTask } from "./many-writers.mjs";

const [path, contextDir, writer, perWriter] = Deno.args;
const storage = denoKvStorage({ path });
const result = await writerTask({ ContextManager, storage, contextDir, writer: Number(writer), perWriter: Number(perWriter) });
await storage.close();
console.log(JSON.stringify(result));
