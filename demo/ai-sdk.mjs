#!/usr/bin/env node
// toolctx/ai-sdk with the Vercel AI SDK, offline: generateText drives real tools over
// this repository with a scripted model (the SDK's MockLanguageModelV4 from `ai/test`).
// The same tool calls run twice: with the tools as they are, and wrapped by
// withToolContext. The mock records every prompt it received; the demo prints the
// tokens the model saw each way (estimateTokens: 4 UTF-8 bytes a token, over the JSON
// of each call's messages and tool definitions).
//
//   node demo/ai-sdk.mjs [--dir DIR]
//
// Without --dir the records go to a temporary folder, removed at the end.

import { mkdtemp, readFile, readdir, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { generateText, jsonSchema, stepCountIs, tool } from "ai";
import { ContextManager, estimateTokens } from "toolctx";
import { withToolContext } from "toolctx/ai-sdk";
import { callTools, say, scriptedModel, toolResults, pointerIn } from "../tests/js/ai-sdk.mjs";

const repo = resolve(fileURLToPath(new URL("..", import.meta.url)));
const { values: flags } = parseArgs({ options: { dir: { type: "string" } } });
const question = "How does toolctx name the file of a record?";

// ---- the tools: real work over the repository ----------------------------------------

const SKIP = new Set([".git", "node_modules", "target", "pkg"]);
const pathInput = jsonSchema({ type: "object", properties: { path: { type: "string" } }, required: ["path"] });

const tools = {
  listDirectory: tool({
    description: "List a folder of the repository",
    inputSchema: pathInput,
    execute: async ({ path }) =>
      (await readdir(join(repo, path), { withFileTypes: true }))
        .filter((e) => !SKIP.has(e.name))
        .map((e) => (e.isDirectory() ? `${e.name}/` : e.name))
        .sort(),
  }),
  readFile: tool({
    description: "Read a file of the repository",
    inputSchema: pathInput,
    execute: async ({ path }) => readFile(join(repo, path), "utf8"),
  }),
  grep: tool({
    description: "Lines of the files under a folder that match a regular expression",
    inputSchema: jsonSchema({ type: "object", properties: { pattern: { type: "string" }, path: { type: "string" } }, required: ["pattern", "path"] }),
    execute: async ({ pattern, path }) => {
      const re = new RegExp(pattern);
      const hits = [];
      for await (const file of walk(join(repo, path))) {
        const text = await readFile(file, "utf8").catch(() => "");
        text.split("\n").forEach((line, i) => re.test(line) && hits.push(`${relative(repo, file)}:${i + 1}: ${line.trim()}`));
      }
      return hits.join("\n");
    },
  }),
};

async function* walk(dir) {
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (SKIP.has(entry.name)) continue;
    const full = join(dir, entry.name);
    if (entry.isDirectory()) yield* walk(full);
    else if ((await stat(full)).size < 1 << 20) yield full;
  }
}

// ---- the model's script -----------------------------------------------------------------

const explore = callTools([
  ["listDirectory", { path: "." }],
  ["readFile", { path: "src/naming.rs" }],
  ["readFile", { path: "README.md" }],
  ["grep", { pattern: "\\b(fn|struct|enum|impl)\\b", path: "src" }],
]);

// Without toolctx the model has every output in full and answers at once.
const plainScript = [explore, say("{toolName}_{argsHash12}_{epochMs}_{counter}_{random4}.json")];

// With it, the model has pointers and previews, and reads what it needs: it looks for
// the README among the saved outputs, greps it, and reads the paragraph it found.
let found;
const lastText = (prompt) => toolResults(prompt).at(-1).output.value;
const wrappedScript = [
  explore,
  callTools([["search_context", { query: "README records file name", k: 3 }]]),
  (prompt) => {
    const readme = lastText(prompt).split("\n").find((line) => line.includes("path=README.md"));
    return callTools([["grep_context", { pattern: "^\\*\\*Records\\.\\*\\*", pointer: pointerIn(readme) }]]);
  },
  (prompt) => {
    found = lastText(prompt).match(/^(toolctx:\/\/\S+?):(\d+):/);
    return callTools([["read_context", { pointer: found[1], offset: Number(found[2]) - 1, limit: 4 }]]);
  },
  (prompt) => say(`From the README:\n${lastText(prompt)}`),
];

// ---- the two runs -----------------------------------------------------------------------------

/** Tokens of each call the mock received: its messages and tool definitions, as JSON. */
const seen = (model) => model.doGenerateCalls.map((call) => estimateTokens(JSON.stringify({ prompt: call.prompt, tools: call.tools })));

const dir = flags.dir ?? (await mkdtemp(join(tmpdir(), "toolctx-ai-sdk-")));
const manager = await ContextManager.open({ contextDir: dir, session: true });

const plainModel = scriptedModel(plainScript);
await generateText({ model: plainModel, tools, prompt: question, stopWhen: stepCountIs(10) });

const wrappedModel = scriptedModel(wrappedScript);
const run = await generateText({ model: wrappedModel, tools: withToolContext(tools, manager), prompt: question, stopWhen: stepCountIs(10) });

const without = seen(plainModel);
const withIt = seen(wrappedModel);
const sum = (xs) => xs.reduce((a, b) => a + b, 0);

console.log(`toolctx/ai-sdk demo — question: "${question}"`);
console.log(`store: ${manager.getContextDir()}\n`);
console.log("Saved tool outputs (what the model got instead of a large one):");
for (const p of manager.getAllPointers()) {
  const output = toolResults(wrappedModel.doGenerateCalls[1].prompt).find((r) => r.toolCallId === p.toolDescription.match(/\[tool call (.+)\]$/)[1]).output;
  const sent = output.type === "text" && output.value.startsWith("[toolctx]") ? `pointer + preview, ${output.value.length.toLocaleString("en-US")} chars` : "in full";
  console.log(`  ${p.toolName.padEnd(14)} ${String(p.size.toLocaleString("en-US")).padStart(8)} bytes  → ${sent}`);
}
console.log(`\nThe model's calls: ${run.steps.map((s) => s.toolCalls.map((c) => c.toolName).join("+") || "answer").join(" → ")}`);
console.log(`It found the README at ${found[1]}, line ${found[2]}, and read:\n${run.text.split("\n").slice(2, 6).map((l) => `  │ ${l}`).join("\n")}\n`);
console.log("Tokens the model saw (estimateTokens over each prompt and its tool definitions):");
console.log(`  without toolctx: ${without.length} calls, ${sum(without).toLocaleString("en-US")} tokens (largest prompt ${Math.max(...without).toLocaleString("en-US")})`);
console.log(`  with toolctx:    ${withIt.length} calls, ${sum(withIt).toLocaleString("en-US")} tokens (largest prompt ${Math.max(...withIt).toLocaleString("en-US")})`);
console.log(`  → ${(sum(without) / sum(withIt)).toFixed(1)}× fewer tokens, every output still retrievable by pointer.`);

await manager.endSession(); // removes this run's records
await manager.close();
if (!flags.dir) await rm(dir, { recursive: true, force: true });
