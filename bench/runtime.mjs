// The runtime a bench runs in (Node, Deno or Bun): its toolctx storage and its plain
// whole-file I/O, the floor toolctx is measured against.
//   node:  fs.promises.writeFile (flag "wx", mode 0600) / fs.promises.readFile
//   deno:  Deno.writeTextFile (createNew, mode 0600) / Deno.readTextFile
//   bun:   Bun.write / Bun.file().text() (Bun.write cannot create exclusively)

import { readFile, writeFile } from "node:fs/promises";

const HOSTS = {
  node: async () => ({
    version: process.version,
    storage: (await import("toolctx/node")).nodeStorage,
    write: (path, text) => writeFile(path, text, { flag: "wx", mode: 0o600 }),
    read: (path) => readFile(path, "utf8"),
  }),
  deno: async () => ({
    version: Deno.version.deno,
    storage: (await import("toolctx/deno")).denoStorage,
    write: (path, text) => Deno.writeTextFile(path, text, { createNew: true, mode: 0o600 }),
    read: (path) => Deno.readTextFile(path),
  }),
  bun: async () => ({
    version: Bun.version,
    storage: (await import("toolctx/bun")).bunStorage,
    write: (path, text) => Bun.write(path, text),
    read: (path) => Bun.file(path).text(),
  }),
};

const name = typeof Deno !== "undefined" ? "deno" : typeof Bun !== "undefined" ? "bun" : "node";

/** `{name, version, storage(), write(path, text), read(path)}` of the runtime running this. */
export const runtime = { name, ...(await HOSTS[name]()) };
