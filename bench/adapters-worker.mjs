import { opfsStorage } from "/pkg/adapters/opfs.js";
import { benchAdapters } from "./adapters.mjs";

const run = Date.now().toString(36);
postMessage(
  await benchAdapters(
    {
      "chromium worker: opfs (sync handles)": () => opfsStorage(),
      "chromium worker: opfs (async)": () => opfsStorage({ syncAccessHandles: false }),
    },
    (t) => `bench-w-${run}/${t}`,
    { n: 150 },
  ),
);
