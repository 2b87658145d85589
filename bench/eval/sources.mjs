// Which corpus a repository makes, and the cache of built corpora. Most repositories are
// worked in (corpus.mjs: file reads, grep, git output, web searches over their docs);
// the others below hold a kind of text that corpus lacks, and build their own records.

import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { headCommit } from "./git.mjs";
import { buildCorpus, CORPUS_VERSION, repoName } from "./corpus.mjs";
import { AGENT_VERSION, buildAgentCorpus } from "./corpus-agent.mjs";
import { buildDocsCorpus, DOCS_VERSION } from "./corpus-docs.mjs";
import { buildSqlCorpus, SQL_VERSION } from "./corpus-sql.mjs";
import { buildTracesCorpus, TRACES_VERSION } from "./corpus-traces.mjs";

/** By repository name ("owner/name"); the first match builds the corpus, else the repository corpus. */
const SOURCES = [
  { match: /^vuejs-translations\/docs-/, build: buildDocsCorpus, version: `docs${DOCS_VERSION}` },
  { match: /^(citusdata\/citus|pgvector\/pgvector)$/, build: buildSqlCorpus, version: `sql${SQL_VERSION}` },
  { match: /^denoland\/deno$/, build: buildTracesCorpus, version: `traces${TRACES_VERSION}` },
  { match: /^(SWE-agent\/SWE-agent|lgetter\/swe-agent-trajectory-analysis)$/, build: buildAgentCorpus, version: `agent${AGENT_VERSION}` },
];
const REPOSITORY = { build: buildCorpus, version: `v${CORPUS_VERSION}` };

const sourceOf = (name) => SOURCES.find((s) => s.match.test(name)) ?? REPOSITORY;

/**
 * The corpus of one repository: {name, head, records, queries: {set: [{query, relevant}]}},
 * at most `maxQueries` a set, cached as JSON under `cacheDir` by repository, HEAD commit,
 * the builder's version and `maxQueries`.
 */
export function loadCorpus(gitDir, { cacheDir, maxQueries = 200 } = {}) {
  const name = repoName(gitDir);
  const { build, version } = sourceOf(name);
  const file = cacheDir && join(cacheDir, `${name.replace("/", "+")}-${headCommit(gitDir).slice(0, 12)}-${version}-q${maxQueries}.json`);
  if (file && existsSync(file)) return JSON.parse(readFileSync(file, "utf8"));
  const corpus = build(gitDir, { maxQueries });
  checkLabels(corpus);
  if (file) {
    mkdirSync(cacheDir, { recursive: true });
    writeFileSync(file, JSON.stringify(corpus));
  }
  return corpus;
}

/** Every record id once, and every label naming a record of the corpus. */
function checkLabels({ name, records, queries }) {
  const ids = new Set(records.map((r) => r.id));
  if (ids.size !== records.length) throw new Error(`${name}: duplicate record ids`);
  for (const set of Object.values(queries)) for (const q of set) if (!q.relevant.every((id) => ids.has(id))) throw new Error(`${name}: "${q.query}" labels a missing record`);
}
