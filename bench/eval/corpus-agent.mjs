// Real agent transcripts: SWE-agent trajectories from repositories that publish them
// (SWE-agent's own demonstrations and test data: fixing issues, solving CTF tasks; runs
// of SWE-agent-LM-32B and Claude 4 Sonnet on SWE-bench Verified kept by a trajectory
// analysis), a seeded sample of those in the repository's history. Each step's
// observation is saved as the record of its tool call: one of SWE-agent's own tools
// (`str_replace_editor`, `open`, `edit`…) named by the command's first word, else
// `bash`; the whole command is its argument. Queries are what the agent wrote later: the
// text it quoted in a later thought from an earlier observation, and the exception line
// of a Python traceback.

import { addQuery, repoName, toQueries } from "./corpus.mjs";
import { headCommit, historyBlobs, readBlobs } from "./git.mjs";
import { sample } from "./prng.mjs";

/** Bump when records or queries change shape: cached corpora of another version are rebuilt. */
export const AGENT_VERSION = 2;
const TRAJECTORY = /\.traj$/;
const TRAJECTORIES = 80; // sampled: one store of some 1,500 observations
// A trajectory file holds every message the model saw; beyond this it is a long run that would crowd out the others.
const MAX_TRAJECTORY_BYTES = 2 * 1024 * 1024;
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

// The commands SWE-agent's interfaces give the model besides the shell (its tool bundles).
const AGENT_TOOLS = new Set([
  "str_replace_editor", "open", "goto", "scroll_up", "scroll_down", "create", "edit", "insert", "set_cursors",
  "find_file", "search_dir", "search_file", "filemap", "submit", "exit_forfeit",
  "decompile", "disassemble", "debug_start", "debug_stop", "connect_start", "connect_sendline", "connect_stop",
]);

/** One record per step: the tool (SWE-agent's own, else bash), the command as its argument, the observation as its result. */
function stepRecord(path, index, step) {
  const command = step.action.trim();
  const first = command.match(/^[\w-]+/)?.[0];
  const tool = AGENT_TOOLS.has(first) ? first : "bash";
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

/** Records of sampled trajectories (any in the history, one version a path), and the `later` and `tracebacks` sets. */
export function buildAgentCorpus(gitDir, { maxQueries = 200 } = {}) {
  const name = repoName(gitDir);
  const files = historyBlobs(gitDir, (path) => TRAJECTORY.test(path)).filter((b) => b.size <= MAX_TRAJECTORY_BYTES);
  const picked = sample(files, TRAJECTORIES, `${name}:trajectories`, (b) => b.path);
  const blobs = readBlobs(gitDir, picked.map((b) => b.sha));
  const trajectories = picked.map((b) => ({ path: b.path, steps: steps(JSON.parse(blobs.get(b.sha).toString("utf8"))) }));
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
