// Stack traces: what `deno` printed for the spec tests of the Deno repository
// (tests/specs/**/__test__.jsonc name a command and the file holding its expected
// output), beside the scripts of those tests, which throw with the very words of the
// error. An expected output may hold `[WILDCARD]` where the real one varies (a path, a
// timing); it is kept as it is written.

import { bash, messageQueries, readFileRecords, repoName, toQueries } from "./corpus.mjs";
import { headCommit, listTree, readBlobs } from "./git.mjs";
import { sample } from "./prng.mjs";

/** Bump when records or queries change shape: cached corpora of another version are rebuilt. */
export const TRACES_VERSION = 1;
const SPECS = "tests/specs/";
const TRACE_RECORDS = 500; // outputs with a stack trace, sampled
const OTHER_RECORDS = 300; // other outputs, sampled
const MAX_OUTPUT_LINES = 40; // what a terminal shows of one command without scrolling far
const MAX_SCRIPT_BYTES = 64 * 1024;
const SCRIPT = /\.[cm]?[jt]sx?$/;
const FRAME = /^\s+at /; // a V8 stack frame
const WILDCARD = /\[WILDCARD\]|\[WILDLINE\]|\[UNORDERED_START\]/;

/** `__test__.jsonc` as JSON: comments and trailing commas dropped; null when it still does not parse. */
function parseJsonc(text) {
  try {
    return JSON.parse(text.replace(/^\s*\/\/.*$/gm, "").replace(/,(\s*[}\]])/g, "$1"));
  } catch {
    return null;
  }
}

/** Every {args, output} of a spec test (top level, `tests`, `steps`, at any depth) whose output is a file. */
function commands(spec) {
  const out = [];
  const walk = (v) => {
    if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === "object") {
      if (v.args && typeof v.output === "string" && v.output.endsWith(".out")) out.push({ args: Array.isArray(v.args) ? v.args.join(" ") : v.args, output: v.output });
      Object.values(v).forEach(walk);
    }
  };
  walk(spec);
  return out;
}

/**
 * The error line of each stack trace in an output: a line that starts `error: ` and
 * has a frame (`    at …`) below it before the next such line, as an agent would quote
 * it: "Uncaught" and "(in promise)" dropped, so `error: Uncaught (in promise) TypeError:
 * x` gives "TypeError: x". Lines holding a wildcard are not text anyone saw.
 */
function errorLines(output) {
  const lines = output.split("\n");
  const out = [];
  lines.forEach((line, i) => {
    if (!line.startsWith("error: ") || WILDCARD.test(line)) return;
    const next = lines.slice(i + 1).findIndex((l) => l.startsWith("error: "));
    const below = next < 0 ? lines.slice(i + 1) : lines.slice(i + 1, i + 1 + next);
    if (below.some((l) => FRAME.test(l))) out.push(line.replace(/^error: (Uncaught )?(\(in promise\) )?/, ""));
  });
  return out;
}

/** Records (sampled command outputs as `bash` calls, the scripts of their tests) and the `stacktraces` set. */
export function buildTracesCorpus(gitDir, { maxQueries = 200 } = {}) {
  const name = repoName(gitDir);
  const tree = listTree(gitDir).filter((e) => e.path.startsWith(SPECS));
  const wanted = tree.filter((e) => e.path.endsWith("/__test__.jsonc") || e.path.endsWith(".out") || (SCRIPT.test(e.path) && e.size <= MAX_SCRIPT_BYTES));
  const blobs = readBlobs(gitDir, wanted.map((e) => e.sha));
  const text = new Map(wanted.map((e) => [e.path, blobs.get(e.sha)?.toString("utf8")]));

  const runs = [];
  for (const e of wanted.filter((x) => x.path.endsWith("/__test__.jsonc"))) {
    const dir = e.path.slice(0, -"__test__.jsonc".length);
    for (const c of commands(parseJsonc(text.get(e.path)) ?? {})) {
      const output = text.get(dir + c.output);
      if (output && output.split("\n").length <= MAX_OUTPUT_LINES) runs.push({ id: `bash deno ${dir}${c.output}`, dir, args: c.args, output });
    }
  }
  const unique = [...new Map(runs.map((r) => [r.id, r])).values()]; // two steps may print the same file
  const traced = unique.filter((r) => errorLines(r.output).length);
  const others = unique.filter((r) => !errorLines(r.output).length);
  const shown = [...sample(traced, TRACE_RECORDS, `${name}:traces`, (r) => r.id), ...sample(others, OTHER_RECORDS, `${name}:other-runs`, (r) => r.id)];
  const dirs = new Set(shown.map((r) => r.dir));
  const scripts = wanted.filter((e) => SCRIPT.test(e.path) && dirs.has(e.path.slice(0, e.path.lastIndexOf("/") + 1))).map((e) => ({ path: e.path, text: text.get(e.path) }));

  const traces = messageQueries(shown, errorLines); // the error line of a trace → every output that printed it
  return {
    name,
    head: headCommit(gitDir),
    version: TRACES_VERSION,
    records: [...shown.map((r) => bash(r.id, `cd ${r.dir} && deno ${r.args}`, r.output)), ...readFileRecords(scripts)],
    queries: { stacktraces: toQueries(traces, maxQueries, `${name}:stacktraces`) },
  };
}
