#!/usr/bin/env node
// Ranking quality of toolctx beside MiniSearch and SQLite FTS5 on real tool outputs: the
// records an agent would have collected working in public repositories (file reads, grep
// hits, listings, git output, web-search results over the docs), psql output of regression
// tests, an agent's own transcripts; and queries their authors wrote (doc comments, test
// names, commit subjects, doc headings and sentences, error messages, what the agent
// wrote later) labelled by mechanical rules. See README.md beside this file.
//   node bench/eval/run.mjs [--repos DIR,…] [--max-queries N] [--json out.json] [--verbose] [--no-cache]

import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { findRepos } from "./corpus.mjs";
import { buildMiniSearch, buildToolctx, loadToolctx, miniSearchRanker, toolctxDescriptions, toolctxRankers } from "./engines.mjs";
import { buildFts5, FTS5_TOKENIZERS } from "./fts5.mjs";
import { mean, p5Ceiling, percentile, scoreRanking } from "./metrics.mjs";
import { shuffle } from "./prng.mjs";
import { loadCorpus } from "./sources.mjs";

const DEFAULT_MIRROR = "/work/.mirror";
const CACHE_DIR = fileURLToPath(new URL("../.tmp/eval/", import.meta.url));
const ENGINES = ["toolctx", "minisearch", "fts5", "fts5porter", "seed"];

function parseArgs(argv) {
  const opts = { repos: [DEFAULT_MIRROR], maxQueries: 300, json: null, verbose: false, cache: true };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--repos") opts.repos = argv[++i].split(",");
    else if (a === "--max-queries") opts.maxQueries = Number(argv[++i]);
    else if (a === "--json") opts.json = argv[++i];
    else if (a === "--verbose") opts.verbose = true;
    else if (a === "--no-cache") opts.cache = false;
    else if (a === "--help" || a === "-h") opts.help = true;
    else throw new Error(`unknown option ${a} (see --help)`);
  }
  return opts;
}

const HELP = `node bench/eval/run.mjs [options]
  --repos A,B       git directories, or folders of owner+name/repo snapshots (default ${DEFAULT_MIRROR})
  --max-queries N   queries sampled per set and repository (default 300)
  --json FILE       write every figure (and each query's ranks) to FILE
  --verbose         per set, failed queries with each engine's top 3
  --no-cache        rebuild the corpora (cached in bench/.tmp/eval/)`;

/** Heap figures after a full collection (the script re-runs itself with --expose-gc). */
function memory() {
  global.gc();
  global.gc();
  const { heapUsed, external, arrayBuffers } = process.memoryUsage();
  return { heapUsed, external, arrayBuffers };
}
const memDelta = (a, b) => Object.fromEntries(Object.keys(a).map((k) => [k, b[k] - a[k]]));

/** Every engine over one repository's records; every query of every set through each. */
async function evaluateRepo(gitDir, toolctx, opts, keepAlive) {
  const corpus = loadCorpus(gitDir, { cacheDir: opts.cache ? CACHE_DIR : null, maxQueries: opts.maxQueries });
  // Saved in a mixed order, as a session interleaves its tool calls.
  const records = shuffle(corpus.records, `${corpus.name}:order`);
  const cost = { records: records.length };
  const rankers = {};

  if (toolctx) {
    const before = memory();
    const t = performance.now();
    const { manager, filepaths } = await buildToolctx(toolctx, records, corpus.name);
    cost.toolctxBuildMs = performance.now() - t;
    cost.toolctxMemory = memDelta(before, memory());
    cost.storedBytes = manager.getAllPointers().reduce((s, p) => s + (p.size ?? 0), 0);
    Object.assign(rankers, toolctxRankers(manager, filepaths, records));
    keepAlive.push(manager);
  }
  const descriptions = rankers.toolctx ? toolctxDescriptions(keepAlive.at(-1)) : null;
  const before = memory();
  const t = performance.now();
  const ms = buildMiniSearch(records, descriptions);
  cost.miniSearchBuildMs = performance.now() - t;
  cost.miniSearchMemory = memDelta(before, memory());
  rankers.minisearch = miniSearchRanker(ms);
  keepAlive.push(ms);
  const fts5 = Object.entries(FTS5_TOKENIZERS).map(([engine, tokenizer]) => {
    const t = performance.now();
    const built = buildFts5(records, descriptions, tokenizer);
    cost[`${engine}BuildMs`] = performance.now() - t;
    rankers[engine] = built.rank;
    return built;
  });

  const latency = Object.fromEntries(Object.keys(rankers).map((e) => [e, []]));
  const sets = {};
  for (const [kind, queries] of Object.entries(corpus.queries)) sets[kind] = await evaluateSet(queries, rankers, latency);
  for (const built of fts5) built.close();
  const kinds = {};
  for (const r of records) kinds[r.toolName] = (kinds[r.toolName] ?? 0) + 1;
  return { name: corpus.name, gitDir, head: corpus.head, kinds, sets, latency, cost };
}

/** Every query of a set through every ranker: per-query ranks and tops, and the set's means. */
async function evaluateSet(queries, rankers, latency) {
  const rows = [];
  for (const { query, relevant } of queries) {
    const rel = new Set(relevant);
    const row = { query, relevant, ceiling: p5Ceiling(rel) };
    for (const [engine, rank] of Object.entries(rankers)) {
      const t = performance.now();
      const { ids, fallback } = await rank(query);
      latency[engine].push(performance.now() - t);
      row[engine] = { ...scoreRanking(ids, rel), top: ids.slice(0, 3), fallback: !!fallback };
    }
    rows.push(row);
  }
  const summary = { n: rows.length, ceiling: mean(rows.map((r) => r.ceiling)) };
  for (const engine of Object.keys(rankers)) {
    const s = rows.map((r) => r[engine]);
    summary[engine] = { MRR: mean(s.map((x) => x.rr)), P5: mean(s.map((x) => x.p5)), S1: mean(s.map((x) => x.s1)), fallbacks: s.filter((x) => x.fallback).length };
  }
  return { summary, rows };
}

// ---------------------------------------------------------------------------------------
// Reporting.

const f3 = (x) => (x === undefined ? "    -" : x.toFixed(3));
const pad = (s, n) => String(s).padEnd(n);
const lpad = (s, n) => String(s).padStart(n);

const engineLabel = {
  toolctx: "toolctx selectRelevant",
  seed: "toolctx selectRelevantContexts",
  minisearch: "MiniSearch search",
  fts5: "FTS5 unicode61 bm25()",
  fts5porter: "FTS5 porter unicode61 bm25()",
};
const shortLabel = { toolctx: "toolctx", seed: "seed", minisearch: "MiniS", fts5: "FTS5", fts5porter: "FTS5 porter" };
const OTHERS = ["minisearch", "fts5", "fts5porter"]; // what toolctx is measured against

/** A ranking's ids, `*` marking the relevant ones. */
const mark = (ids, rel) => ids.map((id) => (rel.has(id) ? `*${id}` : id)).join("  |  ") || "(nothing)";

/** Every repository's sets, in order: [{repo, kind, set}]. */
const allSets = (repos) => repos.flatMap((repo) => Object.entries(repo.sets).map(([kind, set]) => ({ repo, kind, set })));

function printTable(repos, engines) {
  const cols = [
    ...engines.map((e) => [`${shortLabel[e]} MRR`, (s) => s[e].MRR]),
    ...engines.filter((e) => e === "toolctx" || e === "minisearch").flatMap((e) => [
      [`${shortLabel[e]} P@5`, (s) => s[e].P5],
      [`${shortLabel[e]} S@1`, (s) => s[e].S1],
    ]),
    ["P@5 max", (s) => s.ceiling],
  ];
  const header = pad("query set", 28) + lpad("n", 5) + cols.map(([h]) => lpad(h, 16)).join("");
  console.log(header);
  console.log("-".repeat(header.length));
  const all = [];
  for (const { repo, kind, set } of allSets(repos)) {
    const s = set.summary;
    if (!s.n) continue;
    all.push(s);
    console.log(pad(`${repo.name.split("/")[1]} ${kind}`, 28) + lpad(s.n, 5) + cols.map(([, get]) => lpad(f3(get(s)), 16)).join(""));
  }
  console.log("-".repeat(header.length));
  const macro = (get) => mean(all.map(get));
  console.log(pad(`macro average (${all.length} sets)`, 28) + lpad(all.reduce((a, s) => a + s.n, 0), 5) + cols.map(([, get]) => lpad(f3(macro(get)), 16)).join(""));
  if (engines.includes("toolctx")) {
    const ahead = all.filter((s) => OTHERS.every((e) => s.toolctx.MRR > s[e].MRR)).length;
    console.log(`toolctx's MRR above MiniSearch's and both FTS5's on ${ahead} of ${all.length} sets`);
  }
  return Object.fromEntries(cols.map(([h, get]) => [h, macro(get)]));
}

function printCost(repos, engines) {
  const records = repos.reduce((a, r) => a + r.cost.records, 0);
  const sum = (get) => repos.reduce((a, r) => a + get(r.cost), 0);
  const kb = (bytes) => `${(bytes / records / 1024).toFixed(2)} KiB`;
  const cost = { records };
  console.log(`\nCost over ${records} records (${repos.length} stores), queries of all sets`);
  if (engines.includes("toolctx")) {
    const heap = sum((c) => c.toolctxMemory.heapUsed);
    const wasm = sum((c) => c.toolctxMemory.external - c.toolctxMemory.arrayBuffers);
    const stored = sum((c) => c.toolctxMemory.arrayBuffers);
    Object.assign(cost, { toolctxBuildMs: sum((c) => c.toolctxBuildMs), toolctxHeapBytes: heap, toolctxWasmBytes: wasm, toolctxStorageBytes: stored, storedRecordBytes: sum((c) => c.storedBytes) });
    console.log(`  toolctx    save all and index: ${(cost.toolctxBuildMs / 1000).toFixed(2)} s; memory per record: JS heap ${kb(heap)} + wasm memory ${kb(wasm)} = ${kb(heap + wasm)}`);
    console.log(`             (plus the records themselves in memoryStorage: ${kb(stored)}; their JSON is ${kb(cost.storedRecordBytes)})`);
  }
  const msHeap = sum((c) => c.miniSearchMemory.heapUsed + c.miniSearchMemory.external);
  Object.assign(cost, { miniSearchBuildMs: sum((c) => c.miniSearchBuildMs), miniSearchBytes: msHeap });
  console.log(`  MiniSearch addAll:   ${(cost.miniSearchBuildMs / 1000).toFixed(2)} s; memory per record: index ${kb(msHeap)} (it keeps no record text)`);
  for (const engine of Object.keys(FTS5_TOKENIZERS)) {
    cost[`${engine}BuildMs`] = sum((c) => c[`${engine}BuildMs`]);
    console.log(`  ${engineLabel[engine]} insert all: ${(cost[`${engine}BuildMs`] / 1000).toFixed(2)} s (in wasm memory; not measured)`);
  }
  cost.latency = {};
  for (const engine of engines) {
    const xs = repos.flatMap((r) => r.latency[engine]);
    cost.latency[engine] = { queries: xs.length, p50: percentile(xs, 50), p95: percentile(xs, 95) };
    console.log(`  ${pad(engineLabel[engine], 30)} query latency p50 ${percentile(xs, 50).toFixed(3)} ms, p95 ${percentile(xs, 95).toFixed(3)} ms (${xs.length} queries)`);
  }
  return cost;
}

/** Up to five queries per set that toolctx missed (MiniSearch's hits first), with each engine's top 3. */
function printFailures(repos, engines) {
  const primary = engines[0]; // toolctx, or MiniSearch when toolctx is not built
  for (const { repo, kind, set } of allSets(repos)) {
    const missed = set.rows.filter((r) => r[primary].rank === null);
    missed.sort((a, b) => (a.minisearch.rank ?? 99) - (b.minisearch.rank ?? 99));
    if (!missed.length) continue;
    console.log(`\n${repo.name} ${kind}: ${primary} missed ${missed.length} of ${set.rows.length}`);
    for (const r of missed.slice(0, 5)) {
      const rel = new Set(r.relevant);
      console.log(`  "${r.query}"  → relevant: ${r.relevant.slice(0, 3).join(", ")}${r.relevant.length > 3 ? ", …" : ""}`);
      for (const e of engines) console.log(`     ${pad(e, 11)} ${mark(r[e].top, rel)}`);
    }
  }
}

/**
 * Where toolctx ranks the first relevant record below the best of MiniSearch and FTS5:
 * per set, how many queries, the kind of record toolctx put first instead, and three of
 * them with toolctx's top 3 beside the winner's (`*` marks a relevant record).
 */
function printLosses(repos) {
  console.log("\nWhere toolctx loses to the best of MiniSearch and FTS5:");
  for (const { repo, kind, set } of allSets(repos)) {
    const lost = set.rows
      .map((r) => ({ r, winner: OTHERS.reduce((best, e) => (r[e].rr > r[best].rr ? e : best)) }))
      .filter(({ r, winner }) => r.toolctx.rr < r[winner].rr);
    if (!lost.length) continue;
    const firsts = {};
    for (const { r } of lost) {
      const tool = r.toolctx.top[0]?.split(" ")[0] ?? "(none)";
      firsts[tool] = (firsts[tool] ?? 0) + 1;
    }
    console.log(`\n${repo.name} ${kind}: ${lost.length} of ${set.rows.length} lost; toolctx's first record then: ${JSON.stringify(firsts)}`);
    for (const { r, winner } of lost.slice(0, 3)) {
      const rel = new Set(r.relevant);
      console.log(`  "${r.query.slice(0, 160)}"`);
      console.log(`     ${pad("toolctx", 11)} ${mark(r.toolctx.top, rel)}`);
      console.log(`     ${pad(winner, 11)} ${mark(r[winner].top, rel)}`);
    }
  }
}

/** Which kind of record each engine put first, per set (a headings query answered by the doc's readFile, say). */
function firstKinds(repos, engines) {
  const out = {};
  for (const { repo, kind, set } of allSets(repos)) {
    const key = `${repo.name} ${kind}`;
    out[key] = {};
    for (const e of engines) {
      const counts = {};
      for (const r of set.rows) {
        const tool = r[e].top[0]?.split(" ")[0] ?? "(none)";
        counts[tool] = (counts[tool] ?? 0) + 1;
      }
      out[key][e] = counts;
    }
  }
  return out;
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  if (opts.help) return console.log(HELP);
  if (typeof global.gc !== "function") {
    // Memory is measured after full collections: run again with them exposed.
    const child = spawnSync(process.execPath, ["--expose-gc", ...process.argv.slice(1)], { stdio: "inherit" });
    process.exit(child.status ?? 1);
  }
  const gitDirs = findRepos(opts.repos);
  if (!gitDirs.length) {
    console.log(`No repository snapshot under ${opts.repos.join(", ")}: nothing to evaluate.`);
    console.log("Fetch a few public repositories with the session's fetch tool (github:owner/name → /work/.mirror/owner+name/repo), then run again.");
    return;
  }
  const loaded = await loadToolctx();
  const toolctx = loaded.error ? null : loaded;
  if (!toolctx) console.log(`toolctx is not importable (${loaded.error.message.split("\n")[0]}): build it with \`make pkg\`. MiniSearch and FTS5 run alone (their description field is the argument text).\n`);
  else await warmUp(toolctx);
  const engines = toolctx ? ENGINES : OTHERS;

  const keepAlive = []; // every store stays alive to the end, so each memory delta is its own
  const repos = [];
  for (const gitDir of gitDirs) {
    const t = performance.now();
    repos.push(await evaluateRepo(gitDir, toolctx, opts, keepAlive));
    const r = repos.at(-1);
    console.log(`${r.name} (${gitDir}, HEAD ${r.head.slice(0, 12)}): ${r.cost.records} records ${JSON.stringify(r.kinds)}; queries ${Object.entries(r.sets).map(([k, set]) => `${k} ${set.rows.length}`).join(", ")} [${((performance.now() - t) / 1000).toFixed(1)} s]`);
  }
  console.log();
  const macro = printTable(repos, engines);
  const cost = printCost(repos, engines);
  if (opts.verbose) {
    printFailures(repos, engines);
    if (engines.includes("toolctx")) printLosses(repos);
    console.log("\nKind of the first record, per set:");
    for (const [set, byEngine] of Object.entries(firstKinds(repos, engines))) console.log(`  ${pad(set, 30)} ${engines.map((e) => `${e} ${JSON.stringify(byEngine[e])}`).join("  ")}`);
  }
  if (opts.json) {
    const out = {
      engines,
      repos: repos.map(({ name, gitDir, head, kinds, cost }) => ({ name, gitDir, head, records: kinds, cost })),
      sets: allSets(repos).map(({ repo, kind, set }) => ({ repo: repo.name, kind, ...set.summary })),
      macro,
      cost,
      firstKinds: firstKinds(repos, engines),
      queries: allSets(repos).flatMap(({ repo, kind, set }) => set.rows.map((row) => ({ repo: repo.name, kind, ...row }))),
    };
    writeFileSync(opts.json, JSON.stringify(out, null, 1));
    console.log(`\nwrote ${opts.json}`);
  }
}

/** Loads toolctx's wasm and its first allocations before any memory is measured. */
async function warmUp(toolctx) {
  const { manager } = await buildToolctx(toolctx, [{ toolName: "warmUp", args: { a: "b" }, result: "c" }], "warm-up");
  await manager.selectRelevant("b");
  await manager.close();
}

await main();
