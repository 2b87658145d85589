// Real agent transcripts: the trajectories SWE-agent publishes in its repository (its
// demonstrations and test data: a coding agent fixing issues, solving CTF tasks). Each
// step's observation is saved as the record of its tool call, the command's first word
// naming the tool (`open`, `search_dir`, `edit`, `python`…) and the whole command its
// argument. Queries are what the agent wrote later: the text it quoted in a later
// thought from an earlier observation, and the exception line of a Python traceback.

import { addQuery, repoName, textFiles, toQueries } from "./corpus.mjs";
import { headCommit } from "./git.mjs";

/** Bump when records or queries change shape: cached corpora of another version are rebuilt. */
export const AGENT_VERSION = 1;
const TRAJECTORY = /\.traj$/;
const MIN_QUOTE_CHARS = 8; // shorter quotes are a file name's stem or a keyword
const MAX_QUOTE_CHARS = 200;
// A quote found in more observations than this is the interface's boilerplate.
const MAX_RELEVANT = 5;
// `x`, "x" or 'x' in the agent's prose.
const QUOTE = new RegExp(`\`([^\`\\n]{${MIN_QUOTE_CHARS},${MAX_QUOTE_CHARS}})\`|"([^"\\n]{${MIN_QUOTE_CHARS},${MAX_QUOTE_CHARS}})"|'([^'\\n]{${MIN_QUOTE_CHARS},${MAX_QUOTE_CHARS}})'`, "g");
const TRACEBACK = "Traceback (most recent call last):";
const EXCEPTION_LINE = /^(?:[A-Za-z_][\w.]*\.)?[A-Z]\w*(?:Error|Exception|Exit|Interrupt)(?::.*)?$/;

/** A trajectory's steps that observed something: {thought, action, observation}. */
const steps = (traj) => (traj.trajectory ?? []).filter((s) => typeof s.observation === "string" && s.observation.trim() && typeof s.action === "string");

/** One record per step: the command's first word as the tool, the command as its argument, the observation as its result. */
function stepRecord(path, index, step) {
  const command = step.action.trim();
  const tool = command.match(/^[\w-]+/)?.[0] ?? "bash";
  return { id: `${tool} ${path}#${index}`, toolName: tool, args: { command }, result: step.observation };
}

/** The exception lines ending the Python tracebacks of an observation. */
function exceptionLines(observation) {
  const out = [];
  for (const part of observation.split(TRACEBACK).slice(1)) {
    const line = part.split("\n").map((l) => l.trim()).find((l) => EXCEPTION_LINE.test(l));
    if (line) out.push(line);
  }
  return out;
}

/** Records of every trajectory at HEAD, and the `later` and `tracebacks` sets. */
export function buildAgentCorpus(gitDir, { maxQueries = 200 } = {}) {
  const name = repoName(gitDir);
  const trajectories = textFiles(gitDir).files.filter((f) => TRAJECTORY.test(f.path)).map((f) => ({ path: f.path, steps: steps(JSON.parse(f.text)) }));
  const records = trajectories.flatMap((t) => t.steps.map((s, i) => stepRecord(t.path, i, s)));
  const holding = (text) => records.filter((r) => r.result.includes(text)).map((r) => r.id);

  // A quote in a thought, found verbatim in an observation before it in the same run → every observation holding it.
  const later = new Map();
  for (const t of trajectories) {
    t.steps.forEach((step, k) => {
      for (const m of (step.thought ?? "").matchAll(QUOTE)) {
        const quote = (m[1] ?? m[2] ?? m[3]).trim();
        if (quote.length < MIN_QUOTE_CHARS || !t.steps.slice(0, k).some((s) => s.observation.includes(quote))) continue;
        const ids = holding(quote);
        if (ids.length <= MAX_RELEVANT) addQuery(later, quote, ids);
      }
    });
  }
  // The exception line of a traceback → every observation that printed that line.
  const tracebacks = new Map();
  for (const r of records) for (const line of exceptionLines(r.result)) addQuery(tracebacks, line, holding(line));

  return {
    name,
    head: headCommit(gitDir),
    version: AGENT_VERSION,
    records,
    queries: { later: toQueries(later, maxQueries, `${name}:later`), tracebacks: toQueries(tracebacks, maxQueries, `${name}:tracebacks`) },
  };
}
