// SQLite FTS5 (node-sqlite3-wasm, in memory) as a third engine: the same four fields as
// MiniSearch, one configuration per tokenizer, ranked by bm25() with its defaults
// (k1 1.2, b 0.75, every column weighted 1).

import sqlite from "node-sqlite3-wasm";
import { CUTOFF } from "./metrics.mjs";
import { argsText, resultText } from "./engines.mjs";

/** The two configurations compared: plain Unicode words, and the same words Porter-stemmed. */
export const FTS5_TOKENIZERS = { fts5: "unicode61", fts5porter: "porter unicode61" };

/**
 * A query's words as an FTS5 query: each run of letters, marks and digits quoted as an
 * FTS5 string (a `"` inside doubled, though a run holds none), the strings joined by OR.
 * Nothing of the query reaches FTS5's syntax (no column filter, NEAR, `*` or `^`), so
 * punctuation can never make the query fail. A run of CJK characters stays one string,
 * which unicode61 reads as one token, as it reads the records. Null when no word is left.
 */
export function fts5Query(text) {
  const words = [...new Set(text.match(/[\p{L}\p{M}\p{N}]+/gu) ?? [])];
  return words.length ? words.map((w) => `"${w.replaceAll('"', '""')}"`).join(" OR ") : null;
}

/**
 * An in-memory FTS5 table of the records (rowid = position in `records`), and
 * rank(query) → the first ten record ids by bm25() (lower is better in SQLite).
 * `descriptions` as for MiniSearch (toolctx's, else the argument text). close() when
 * done: the table lives in the wasm module's memory, which no collection frees.
 */
export function buildFts5(records, descriptions, tokenizer) {
  const db = new sqlite.Database(":memory:");
  db.exec(`CREATE VIRTUAL TABLE records USING fts5(toolName, description, args, content, tokenize = '${tokenizer}')`);
  const insert = db.prepare("INSERT INTO records(rowid, toolName, description, args, content) VALUES (?, ?, ?, ?, ?)");
  db.exec("BEGIN");
  records.forEach((r, i) => insert.run([i, r.toolName, descriptions?.[i] ?? argsText(r.args), argsText(r.args), resultText(r.result)]));
  db.exec("COMMIT");
  insert.finalize();
  const search = db.prepare(`SELECT rowid FROM records WHERE records MATCH ? ORDER BY bm25(records) LIMIT ${CUTOFF}`);
  return {
    rank: async (q) => {
      const match = fts5Query(q);
      return { ids: match ? search.all([match]).map((row) => records[row.rowid].id) : [] };
    },
    close: () => {
      search.finalize();
      db.close();
    },
  };
}
