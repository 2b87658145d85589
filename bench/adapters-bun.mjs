import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { bunStorage } from "toolctx/bun";
import { nodeStorage } from "toolctx/node";
import { memoryStorage } from "toolctx/memory";
import { benchAdapters } from "./adapters.mjs";

const top = mkdtempSync(`${tmpdir()}/toolctx-bench-`);
// The floor: the fastest exclusive create under Bun (openSync wx + writeSync) and readFileSync.
const raw = {
  async write(p, d) {
    mkdirSync(p.slice(0, p.lastIndexOf("/")), { recursive: true });
    const fd = openSync(p, "wx", 0o600);
    writeSync(fd, d);
    closeSync(fd);
  },
  read: async (p) => readFileSync(p),
};
const rows = await benchAdapters(
  {
    "bun: raw openSync/readFileSync (floor)": () => raw,
    "bun: bun": () => bunStorage(),
    "bun: node": () => nodeStorage(),
    "bun: memory": () => memoryStorage(),
  },
  (t) => `${top}/${t}`,
);
rmSync(top, { recursive: true, force: true });
console.log(JSON.stringify(rows));
