// `toolctx select "<query>"`: the records relevant to a query, best first, with scores and
// matched words (selectRelevant); `--all-sessions` ranks every session from its manifest.

import { relative } from "node:path";

import { nodeStorage } from "../../adapters/node.js";
import { ContextManager, existingStore, pointerJson, readStore, sum, toSlashes } from "../store.js";
import { count, humanBytes, out, plural, print, printJson, shorten, table } from "../ui.js";

export async function selectCommand(query, opts) {
  const dir = existingStore(opts);
  if (opts.allSessions) return searchSessions(dir, query, opts);
  const { root, pointers } = await readStore(dir, { session: opts.session });
  const options = { pointers, fallback: opts.fallback ? "all" : "none", strategy: opts.strategy };
  for (const key of ["limit", "maxBytes", "maxTokens"]) if (opts[key] !== undefined) options[key] = opts[key];
  const scored = await root.selectRelevant(query, options);
  const bySession = new Map(pointers.map((p) => [p.filepath, p]));
  const results = scored.map((c) => {
    const p = bySession.get(c.filepath) ?? c.pointer;
    return { ...pointerJson({ ...c.pointer, session: p.session ?? null, path: p.path }), score: c.score, matched: c.matched };
  });
  if (opts.json) return printJson({ dir, query, strategy: opts.strategy, results });
  if (results.length === 0) return print(out.dim(`no record matches "${query}"`));
  print(rankedTable(results), out.dim(`${count(results.length)} of ${plural(pointers.length, "record")}, ${humanBytes(sum(results))}`));
}

/** The table `select` prints: rank, score, handle, tool, description, matched words, size, file. */
function rankedTable(results) {
  const rows = results.map((r, i) => [
    String(i + 1),
    r.score.toFixed(2),
    r.handle,
    out.cyan(r.toolName),
    shorten(r.toolDescription, 48),
    r.matched.join(" "),
    humanBytes(r.size),
    r.session ? `${r.session}/…/${r.filename}` : r.filename,
  ]);
  const columns = [
    { title: "#", align: "right" },
    { title: "SCORE", align: "right" },
    { title: "HANDLE" },
    { title: "TOOL" },
    { title: "DESCRIPTION" },
    { title: "MATCHED" },
    { title: "SIZE", align: "right" },
    { title: "FILE" },
  ];
  return table(columns, rows);
}

// select --all-sessions: ContextManager.search, from the sessions' manifests alone.
async function searchSessions(dir, query, opts) {
  const hits = await ContextManager.search({ contextDir: dir, fileSystem: nodeStorage() }, query, { limit: opts.limit ?? 10 });
  const results = hits.map((h) => ({
    ...pointerJson({ ...h.pointer, session: h.sessionId, path: toSlashes(relative(dir, h.filepath)) }),
    score: h.score,
    matched: h.matched,
  }));
  if (opts.json) return printJson({ dir, query, strategy: "bm25", results });
  if (results.length === 0) return print(out.dim(`no record of any session matches "${query}"`));
  print(rankedTable(results), out.dim(`${count(results.length)}, ${humanBytes(sum(results))}`));
}
