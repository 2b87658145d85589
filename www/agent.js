// The scripted agent: four tools over the bundled corpus (a small web app's source and
// docs, in www/corpus/) and a fixed plan, so the playground runs without a model.

const files = import.meta.glob("./corpus/**/*", { query: "?raw", import: "default", eager: true });

/** The corpus as `path → text`, paths relative to the corpus root ("src/auth/login.ts"). */
export const corpus = Object.fromEntries(
  Object.entries(files)
    .map(([path, text]) => [path.slice("./corpus/".length), text])
    .sort(([a], [b]) => a.localeCompare(b)),
);

const normalise = (path) => path.replace(/^\.?\/*/, "").replace(/\/+$/, "");

export const tools = {
  /** Direct children of a folder; folders end in "/". */
  listDirectory({ path }) {
    const dir = normalise(path);
    const prefix = dir === "" ? "" : `${dir}/`;
    const children = new Set();
    for (const file of Object.keys(corpus)) {
      if (!file.startsWith(prefix)) continue;
      const rest = file.slice(prefix.length);
      const slash = rest.indexOf("/");
      children.add(slash === -1 ? rest : rest.slice(0, slash + 1));
    }
    if (children.size === 0) throw new Error(`no such directory: ${path}`);
    return [...children].sort();
  },

  /** A file's text. */
  readFile({ path }) {
    const text = corpus[normalise(path)];
    if (text === undefined) throw new Error(`no such file: ${path}`);
    return text;
  },

  /** Lines matching a case-insensitive pattern, as `file:line: text`. */
  grep({ pattern, path = "" }) {
    const re = new RegExp(pattern, "i");
    const prefix = normalise(path);
    const hits = [];
    for (const [file, text] of Object.entries(corpus)) {
      if (prefix && !file.startsWith(`${prefix}/`)) continue;
      text.split("\n").forEach((line, i) => {
        if (re.test(line)) hits.push(`${file}:${i + 1}: ${line.trim()}`);
      });
    }
    return hits;
  },

  /** Files ranked by how many query terms they contain, with the best matching lines. */
  codeSearch({ query, limit = 4 }) {
    const terms = query.toLowerCase().split(/\W+/).filter((t) => t.length > 2);
    const results = [];
    for (const [file, text] of Object.entries(corpus)) {
      const lines = text.split("\n");
      const scored = lines
        .map((line, i) => ({ line: i + 1, text: line.trim(), hits: terms.filter((t) => line.toLowerCase().includes(t)).length }))
        .filter((l) => l.hits > 0);
      const score = scored.reduce((sum, l) => sum + l.hits, 0);
      if (score === 0) continue;
      scored.sort((a, b) => b.hits - a.hits || a.line - b.line);
      results.push({ path: file, score, matches: scored.slice(0, 3).map(({ line, text }) => ({ line, text })) });
    }
    return results.sort((a, b) => b.score - a.score || a.path.localeCompare(b.path)).slice(0, limit);
  },
};

/** What the scripted agent investigates. */
export const TASK = "Why are users with two tabs open signed out with a token expired error?";

/** The plan: [taskId, tool, args]. Task 1 explores, 2 reads the auth code, 3 the HTTP layer. */
export const PLAN = [
  [1, "listDirectory", { path: "." }],
  [1, "readFile", { path: "README.md" }],
  [1, "listDirectory", { path: "src/auth" }],
  [2, "grep", { pattern: "token_expired" }],
  [2, "readFile", { path: "src/auth/refresh.ts" }],
  [2, "readFile", { path: "docs/auth.md" }],
  [2, "codeSearch", { query: "refresh token rotate tabs" }],
  [2, "readFile", { path: "src/auth/login.ts" }],
  [2, "readFile", { path: "src/auth/session.ts" }],
  [3, "grep", { pattern: "retry", path: "src/http" }],
  [3, "readFile", { path: "src/http/client.ts" }],
  [3, "readFile", { path: "src/auth/refresh.ts" }],
];

/**
 * Runs the plan, saving every output with `manager.saveContext`, and calls
 * `onStep({step, tool, args, filepath})` after each save.
 */
export async function runAgent(manager, queryId, onStep) {
  for (const [step, [taskId, tool, args]] of PLAN.entries()) {
    const result = tools[tool](args);
    const filepath = await manager.saveContext(tool, args, result, { taskId, queryId });
    await onStep({ step, tool, args, filepath });
  }
}
