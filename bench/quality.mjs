#!/usr/bin/env node
// Ranking quality on a labelled set: the tool calls of bench/relevance/corpus.json are
// saved through ContextManager (memory storage), each query of
// bench/relevance/queries.json goes through selectRelevant(query, {strategy}), and the
// ranking is scored against the records labelled as the ones that should come first:
//   P@5  how many of the first five are labelled relevant, ÷ 5 (mean over queries; the
//        ceiling is below 1 because some queries have fewer than five relevant records);
//   MRR  the mean of 1 / rank of the first relevant record (0 when none is returned).
// Strategies: the plain-JS seed's selectRelevantContexts (bench/seed.mjs) on the same
// pointers; overlap; BM25 over the metadata only (description, tool name, argument
// values: indexContentBytes 0); BM25F over the metadata and the first 16 KiB of each
// result (the default). The peer is MiniSearch (npm, BM25+) indexing the same records:
// tool name, description, args and the full result text, with its default settings.
// "hybrid (test embedder)": the default with the embed option set to a stand-in for a
// model, a hashed bag of words in 64 dimensions (testEmbed below): it shows the cost and
// the plumbing of reciprocal rank fusion, not what a real embedding model would add.
// Parameters are the textbook ones (k1 = 1.2, b = 0.75; metadata weight 1, content 0.5),
// never fitted to this set, and the labels were written before any ranking was run.
//   node bench/quality.mjs [--verbose]          (after `make pkg`)

import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import MiniSearch from "minisearch";
import { ContextManager, memoryStorage } from "toolctx";
import { SeedContextManager } from "./seed.mjs";

const load = (name) => JSON.parse(readFileSync(new URL(`./relevance/${name}`, import.meta.url), "utf8"));
const K = 5;

/** A deterministic stand-in for an embedding model: lower-cased words hashed (FNV-1a) into 64 counts. */
export const testEmbed = (texts) =>
  texts.map((text) => {
    const v = new Float32Array(64);
    for (const word of text.toLowerCase().split(/[^a-z0-9]+/).filter(Boolean)) {
      let h = 2166136261;
      for (let i = 0; i < word.length; i++) h = Math.imul(h ^ word.charCodeAt(i), 16777619);
      v[(h >>> 0) % 64] += 1;
    }
    return v;
  });

function score(ranked, relevant) {
  const hits = ranked.slice(0, K).filter((id) => relevant.has(id)).length;
  const first = ranked.findIndex((id) => relevant.has(id));
  return { p5: hits / K, rr: first < 0 ? 0 : 1 / (first + 1) };
}

export async function benchQuality({ verbose = false } = {}) {
  const corpus = load("corpus.json");
  const queries = load("queries.json");
  const ids = new Set(corpus.map((r) => r.id));
  for (const { query, relevant } of queries) {
    const unknown = relevant.filter((id) => !ids.has(id));
    if (relevant.length === 0 || unknown.length) throw new Error(`bad labels for "${query}": ${unknown.join(", ") || "none"}`);
  }
  const idOf = new Map();
  const store = async (options) => {
    const m = new ContextManager({ contextDir: "/bench/relevance", fileSystem: memoryStorage(), persistThreshold: 0, ...options });
    for (const record of corpus) idOf.set(await m.saveContext(record.toolName, record.args, record.result), record.id);
    return m;
  };
  const m = await store({});
  const meta = await store({ indexContentBytes: 0 });
  const hybrid = await store({ embed: testEmbed });
  const pointers = m.getAllPointers();
  const seed = new SeedContextManager({ contextDir: "/unused" });
  const mini = new MiniSearch({ fields: ["toolName", "description", "args", "content"], idField: "id" });
  mini.addAll(
    pointers.map((p, i) => ({
      id: p.filepath,
      toolName: p.toolName,
      description: p.toolDescription,
      args: Object.values(p.args).map(String).join(" "),
      content: typeof corpus[i].result === "string" ? corpus[i].result : JSON.stringify(corpus[i].result ?? ""),
    })),
  );
  const paths = async (manager, q, options) => (await manager.selectRelevant(q, options)).map((c) => c.filepath);

  const rankers = {
    "seed (plain JS)": async (q) => seed.selectRelevantContexts(q, pointers),
    overlap: (q) => paths(m, q, { strategy: "overlap" }),
    "bm25, metadata only": (q) => paths(meta, q),
    "bm25f + content (default)": (q) => paths(m, q),
    "hybrid (test embedder)": (q) => paths(hybrid, q),
    "MiniSearch (peer)": async (q) => mini.search(q).map((r) => r.id),
  };
  const perQuery = [];
  const totals = Object.fromEntries(Object.keys(rankers).map((name) => [name, { p5: 0, rr: 0 }]));
  for (const { query, relevant } of queries) {
    const rel = new Set(relevant);
    const row = { query, relevant: rel.size };
    for (const [name, rank] of Object.entries(rankers)) {
      const ranked = (await rank(query)).map((path) => idOf.get(path));
      const s = score(ranked, rel);
      totals[name].p5 += s.p5;
      totals[name].rr += s.rr;
      row[`${name} P@5`] = s.p5;
      row[`${name} RR`] = +s.rr.toFixed(2);
      if (verbose && name.startsWith("bm25f")) row["bm25f top 3"] = ranked.slice(0, 3).map((id) => (rel.has(id) ? `*${id}` : id)).join(" ");
    }
    perQuery.push(row);
  }
  const n = queries.length;
  const ceiling = queries.reduce((s, q) => s + Math.min(K, q.relevant.length) / K, 0) / n;
  const summary = Object.fromEntries(
    Object.entries(totals).map(([name, t]) => [name, { "P@5": +(t.p5 / n).toFixed(3), MRR: +(t.rr / n).toFixed(3) }]),
  );
  summary["ceiling (all relevant first)"] = { "P@5": +ceiling.toFixed(3), MRR: 1 };
  return { records: corpus.length, queries: n, summary, perQuery };
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const verbose = process.argv.includes("--verbose");
  const { records, queries, summary, perQuery } = await benchQuality({ verbose });
  if (verbose) {
    console.log("Per query (P@5, reciprocal rank; * marks a relevant record)");
    console.table(perQuery);
  }
  console.log(`Ranking quality: ${queries} labelled queries over ${records} tool-output records (bench/relevance/)`);
  console.table(summary);
}
