// A plain-JavaScript implementation of the seed's ContextManager (the TypeScript class
// toolctx descends from, /work/shared/seeds/000 and 001), kept to what the benchmarks
// compare: one JS object per pointer, one write per save, keywords split from every
// description on every query. It is the baseline, not a reference for behaviour:
//   - the record is `JSON.stringify(record, null, 2)` (the reference implementation the
//     seed recreates pretty-prints its records; the seed documents say only "serialize
//     to JSON"), written with one fs.promises.writeFile;
//   - argsHash is md5 over JSON.stringify(args) (key order matters, as in the seed);
//   - loadContexts reads the files one after another and skips what fails.

import { createHash, randomBytes } from "node:crypto";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";

const words = (name) =>
  name
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .split(/[_\-\s]+/)
    .filter(Boolean)
    .map((w) => w.toLowerCase());

export class SeedContextManager {
  #dir;
  #pointers = [];
  #counter = 0;
  #dirReady;

  constructor({ contextDir }) {
    this.#dir = contextDir;
  }

  #describe(toolName, args) {
    const parts = Object.entries(args).map(([k, v]) => {
      const s = typeof v === "string" ? v : JSON.stringify(v);
      return `${k}=${s.length > 80 ? `${s.slice(0, 77)}...` : s}`;
    });
    return `${words(toolName).join(" ")}${parts.length ? ` (${parts.join(", ")})` : ""}`;
  }

  async saveContext(toolName, args, result, taskId, queryId) {
    this.#dirReady ??= mkdir(this.#dir, { recursive: true });
    await this.#dirReady;
    const argsHash = createHash("md5").update(JSON.stringify(args)).digest("hex").slice(0, 12);
    const random = randomBytes(4).toString("hex").slice(0, 4);
    const filename = `${toolName}_${argsHash}_${Date.now()}_${this.#counter++}_${random}.json`;
    const filepath = join(this.#dir, filename);
    const toolDescription = this.#describe(toolName, args);
    const record = { toolName, toolDescription, args, timestamp: new Date().toISOString(), taskId, queryId, result };
    await writeFile(filepath, JSON.stringify(record, null, 2));
    this.#pointers.push({ filepath, filename, toolName, toolDescription, args, taskId, queryId });
    return filepath;
  }

  getAllPointers() {
    return this.#pointers.map((p) => ({ ...p }));
  }

  getPointersForQuery(queryId) {
    return this.#pointers.filter((p) => p.queryId === queryId).map((p) => ({ ...p }));
  }

  async loadContexts(filepaths) {
    const out = [];
    for (const path of filepaths) {
      try {
        out.push(JSON.parse(await readFile(path, "utf8")));
      } catch {
        // The seed logs a warning and skips the file.
      }
    }
    return out;
  }

  selectRelevantContexts(query, pointers) {
    const keywords = query.toLowerCase().split(/\s+/).filter((w) => w.length > 2);
    const scored = pointers.map((p) => {
      const text = p.toolDescription.toLowerCase().split(/[^a-z0-9]+/);
      return { p, score: keywords.filter((k) => text.includes(k)).length };
    });
    const hits = scored.filter((s) => s.score > 0).sort((a, b) => b.score - a.score);
    return (hits.length ? hits : scored).map((s) => s.p.filepath);
  }
}
