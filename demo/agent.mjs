#!/usr/bin/env node
// The main job: a small agent loop (no model needed) that runs real tools over this
// repository, saves every output with toolctx, selects the records relevant to a
// question, loads them, and prints what happened.
//
//   node demo/agent.mjs [--dir DIR] [--question "..."] [--clean]
//
// DIR defaults to $TOOLCTX_DIR, else toolctx's default store (~/.agent/context).

import { readFile, readdir, stat } from "node:fs/promises";
import { join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { ContextManager } from "toolctx";

const repo = resolve(fileURLToPath(new URL("..", import.meta.url)));
const { values: flags } = parseArgs({
  options: {
    dir: { type: "string", default: process.env.TOOLCTX_DIR },
    question: { type: "string", default: "How is the args hash of a record computed in naming?" },
    clean: { type: "boolean", default: false },
  },
});

// ---- the tools: real work over the repository --------------------------------------

const SKIP = new Set([".git", "node_modules", "target", "pkg"]);

const tools = {
  async listDirectory({ path }) {
    const entries = await readdir(join(repo, path), { withFileTypes: true });
    return entries
      .filter((e) => !SKIP.has(e.name))
      .map((e) => (e.isDirectory() ? `${e.name}/` : e.name))
      .sort();
  },

  async readFile({ path }) {
    const text = await readFile(join(repo, path), "utf8");
    return { path, lines: text.split("\n").length, text };
  },

  async grep({ pattern, path }) {
    const re = new RegExp(pattern);
    const hits = [];
    for await (const file of walk(join(repo, path))) {
      const text = await readFile(file, "utf8").catch(() => "");
      text.split("\n").forEach((line, i) => {
        if (re.test(line)) hits.push({ file: relative(repo, file), line: i + 1, text: line.trim() });
      });
    }
    return { pattern, hits };
  },
};

async function* walk(dir) {
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (SKIP.has(entry.name)) continue;
    const full = join(dir, entry.name);
    if (entry.isDirectory()) yield* walk(full);
    else if ((await stat(full)).size < 1 << 20) yield full;
  }
}

// The agent's plan for the task: what a model would ask for, one call at a time.
const plan = [
  ["listDirectory", { path: "." }],
  ["listDirectory", { path: "crates" }],
  ["readFile", { path: "README.md" }],
  ["readFile", { path: "crates/core/src/naming.rs" }],
  ["readFile", { path: "crates/core/src/store.rs" }],
  ["grep", { pattern: "fn (args_hash|hash_query|record_filename)", path: "crates" }],
  ["grep", { pattern: "persist_threshold", path: "crates" }],
  ["grep", { pattern: "\\b(fn|impl|struct|enum|trait|mod|function|class|export)\\b", path: "." }],
  ["readFile", { path: "Cargo.toml" }],
  ["listDirectory", { path: "tests/vectors" }],
  ["readFile", { path: "tests/vectors/sanitize.json" }],
];

// ---- the loop ------------------------------------------------------------------------

const question = flags.question;
const queryId = ContextManager.hashQuery(question);
const manager = await ContextManager.open({ contextDir: flags.dir });

console.log(`toolctx demo — question: "${question}"`);
console.log(`store: ${manager.getContextDir()}   queryId: ${queryId}\n`);

const saved = [];
for (const [step, [tool, args]] of plan.entries()) {
  const result = await tools[tool](args);
  const filepath = await manager.saveContext(tool, args, result, { taskId: step + 1, queryId });
  saved.push(filepath);
}

const pointers = manager.getPointersForQuery(queryId);
const persisted = new Set((await listNames(manager.getContextDir())).map((n) => join(manager.getContextDir(), n)));
table(
  "Tool calls saved",
  ["#", "tool", "args", "bytes", "where"],
  pointers.map((p) => [
    p.taskId,
    p.toolName,
    JSON.stringify(p.args),
    p.size,
    persisted.has(p.filepath) ? "storage" : "memory (< persistThreshold)",
  ]),
);

const selected = await manager.selectRelevant(question, { pointers, limit: 4 });
table(
  `Selected for the next model call: "${question}"`,
  ["rank", "score", "tool", "matched keywords", "file"],
  selected.map((s, i) => [i + 1, s.score, s.pointer.toolName, s.matched.join(" "), s.pointer.filename]),
);

const records = await manager.loadContexts(selected.map((s) => s.filepath));
const loadedBytes = records.reduce((n, r) => n + JSON.stringify(r).length, 0);
const totalBytes = pointers.reduce((n, p) => n + p.size, 0);
console.log(
  `Loaded ${records.length} of ${pointers.length} records: ${loadedBytes.toLocaleString()} of ` +
    `${totalBytes.toLocaleString()} bytes go to the model; the rest stay behind pointers.\n`,
);

if (flags.clean) {
  await manager.clear(); // before close(): a closed manager does no more I/O
  await manager.close();
  console.log("--clean: removed this run's records.");
} else {
  await manager.close(); // writes the in-memory records out
  console.log(`close() wrote every record to ${manager.getContextDir()} (re-run with --clean to remove them).`);
}

// ---- helpers ---------------------------------------------------------------------------

async function listNames(dir) {
  return readdir(dir).catch(() => []);
}

function table(title, head, rows) {
  const cells = [head, ...rows].map((r) => r.map((c) => clip(String(c ?? ""), 60)));
  const widths = head.map((_, i) => Math.max(...cells.map((r) => r[i].length)));
  const line = (r) => r.map((c, i) => c.padEnd(widths[i])).join("  ");
  console.log(title);
  console.log(line(cells[0]));
  console.log(widths.map((w) => "─".repeat(w)).join("  "));
  for (const r of cells.slice(1)) console.log(line(r));
  console.log();
}

function clip(s, n) {
  return s.length > n ? `${s.slice(0, n - 1)}…` : s;
}
