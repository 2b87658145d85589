// The two engines, given the same records in the same order, each behind the same small
// interface: build(records) once, then rank(query) → record ids, best first.

import MiniSearch from "minisearch";
import { prng } from "./prng.mjs";
import { CUTOFF } from "./metrics.mjs";

/** Argument values as one text: strings as they are, anything else as JSON. */
export const argsText = (args) => Object.values(args).map((v) => (typeof v === "string" ? v : JSON.stringify(v))).join(" ");

/** Every string value of a result (at any depth), one per line: what a full-text engine indexes. */
export function resultText(result) {
  const out = [];
  const walk = (v) => {
    if (typeof v === "string") out.push(v);
    else if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === "object") Object.values(v).forEach(walk);
  };
  walk(result);
  return out.join("\n");
}

/** toolctx, or null when the package is not built (then only MiniSearch runs). */
export async function loadToolctx() {
  try {
    return await import("toolctx");
  } catch (error) {
    return { error };
  }
}

/**
 * A toolctx store of the records, in memory, every record written (persistThreshold 0).
 * The clock and the random part of the file names are seeded so that two runs save the
 * same store (the ranking must not depend on the wall clock).
 */
export async function buildToolctx({ ContextManager, memoryStorage }, records, name) {
  let tick = Date.UTC(2025, 0, 1);
  const manager = new ContextManager({
    contextDir: `/eval/${name}`,
    fileSystem: memoryStorage(),
    persistThreshold: 0,
    clock: () => tick++,
    random: prng(`${name}:toolctx-names`),
  });
  const filepaths = [];
  for (const r of records) filepaths.push(await manager.saveContext(r.toolName, r.args, r.result));
  // A save leaves the tokenising of its result to the next query (the index catches up
  // then): one query here, so the build's time and memory are those of the whole index.
  await manager.selectRelevant("", { limit: 1 });
  return { manager, filepaths };
}

/** The rankers of a built toolctx store: selectRelevant (the engine) and selectRelevantContexts (the seed's method). */
export function toolctxRankers(manager, filepaths, records) {
  const idOf = new Map(filepaths.map((path, i) => [path, records[i].id]));
  const pointers = manager.getAllPointers(); // once: the method copies every pointer per call
  return {
    toolctx: async (q) => {
      const hits = await manager.selectRelevant(q, { limit: CUTOFF });
      return { ids: hits.map((h) => idOf.get(h.filepath)), fallback: hits.length > 0 && hits.every((h) => h.score === 0) };
    },
    seed: async (q) => ({ ids: manager.selectRelevantContexts(q, pointers).slice(0, CUTOFF).map((p) => idOf.get(p)) }),
  };
}

/** The description toolctx gave each record (same order), for MiniSearch's description field. */
export const toolctxDescriptions = (manager) => manager.getAllPointers().map((p) => p.toolDescription);

/**
 * MiniSearch 7 with its defaults (BM25+, its tokenizer, no prefix or fuzzy matching) over
 * the fields toolctx ranks on: tool name, description, argument values and the result's
 * text. `descriptions` are toolctx's when it is built, else the argument text again.
 */
export function buildMiniSearch(records, descriptions) {
  const ms = new MiniSearch({ idField: "id", fields: ["toolName", "description", "args", "content"] });
  ms.addAll(
    records.map((r, i) => ({
      id: r.id,
      toolName: r.toolName,
      description: descriptions?.[i] ?? argsText(r.args),
      args: argsText(r.args),
      content: resultText(r.result),
    })),
  );
  return ms;
}

export const miniSearchRanker = (ms) => async (q) => ({ ids: ms.search(q).slice(0, CUTOFF).map((r) => r.id) });
