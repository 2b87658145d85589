import { denoStorage } from "toolctx/deno";
import { memoryStorage } from "toolctx/memory";
import { benchAdapters } from "./adapters.mjs";

const top = await Deno.makeTempDir({ prefix: "toolctx-bench-" });
// The floor: Deno.writeFile with createNew and Deno.readFile.
const raw = {
  async write(p, d) {
    await Deno.mkdir(p.slice(0, p.lastIndexOf("/")), { recursive: true });
    await Deno.writeFile(p, d, { createNew: true, mode: 0o600 });
  },
  read: (p) => Deno.readFile(p),
};
const rows = await benchAdapters(
  { "deno: raw Deno.writeFile/readFile (floor)": () => raw, "deno: deno": () => denoStorage(), "deno: memory": () => memoryStorage() },
  (t) => `${top}/${t}`,
);
await Deno.remove(top, { recursive: true });
console.log(JSON.stringify(rows));
