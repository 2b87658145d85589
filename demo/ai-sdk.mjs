#!/usr/bin/env node
// toolctx/ai-sdk with the Vercel AI SDK, offline: generateText drives real tools over
// this repository with a scripted model (the SDK's MockLanguageModelV4 from `ai/test`).
// The same tool calls run twice: with the tools as they are, and wrapped by
// withToolContext. The mock records every prompt it received; the demo prints the
// tokens the model saw each way (estimateTokens: 4 UTF-8 bytes a token, over the JSON
// of each call's messages and tool definitions), and what the wrapper itself counted
// (usageOf). Wrapped, the model also hands a saved output to another tool by its handle
// (resolveHandles) instead of copying it into its call.
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
import { usageOf, withToolContext } from "toolctx/ai-sdk";
import { callTools, say, scriptedModel, toolResults, handleIn } from "../tests/js/ai-sdk.mjs";

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
  countMatches: tool({
    description: "Count the lines of a text that match a regular expression",
    inputSchema: jsonSchema({ type: "object", properties: { text: { type: "string" }, pattern: { type: "string" } }, required: ["text", "pattern"] }),
    execute: async ({ text, pattern }) => {
      const re = new RegExp(pattern);
      return { lines: text.split("\n").length, matching: text.split("\n").filter((line) => re.test(line)).length };
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
  ["readFile", { path: "crates/core/src/naming.rs" }],
  ["readFile", { path: "docs/api.md" }],
  ["grep", { pattern: "\\b(fn|struct|enum|impl)\\b", path: "crates" }],
]);

// Without toolctx the model has every output in full: it answers, and copies the whole
// grep output into countMatches to count the definitions in it.
const lastText = (prompt) => toolResults(prompt).at(-1).output.value;
const grepOutput = (prompt) => toolResults(prompt).find((r) => r.toolName === "grep").output.value;
const plainScript = [
  explore,
  (prompt) => callTools([["countMatches", { text: grepOutput(prompt), pattern: "\\bstruct\\b" }]]),
  say("{toolName}_{argsHash12}_{epochMs}_{counter}_{random4}.json"),
];

// With it, the model has handles and previews, and reads what it needs: it looks for the
// API reference among the saved outputs, greps it, reads the section it found, and passes the
// grep output to countMatches by its handle.
let found;
const wrappedScript = [
  explore,
  callTools([["search_context", { query: "records file name", limit: 3 }]]),
  (prompt) => {
    const api = lastText(prompt).split("\n").find((line) => line.includes("path=docs/api.md"));
    return callTools([["grep_context", { pattern: "^## Records$", handle: handleIn(api) }]]);
  },
  (prompt) => {
    const text = lastText(prompt);
    found = { handle: handleIn(text), line: Number(/^ {2}(\d+):/m.exec(text)[1]) };
    return callTools([["read_context", { handle: found.handle, offset: found.line, limit: 4 }]]);
  },
  (prompt) => callTools([["countMatches", { text: handleIn(grepOutput(prompt)), pattern: "\\bstruct\\b" }]]),
  (prompt) => {
    const { lines, matching } = lastText(prompt);
    return say(`From docs/api.md:\n${lastText(wrappedModel.doGenerateCalls[4].prompt)}\n${matching.toLocaleString("en-US")} of the ${lines.toLocaleString("en-US")} lines of the grep output declare a struct.`);
  },
];

// ---- the two runs -----------------------------------------------------------------------------

/** Tokens of each call the mock received: its messages and tool definitions, as JSON. */
const seen = (model) => model.doGenerateCalls.map((call) => estimateTokens(JSON.stringify({ prompt: call.prompt, tools: call.tools })));

const dir = flags.dir ?? (await mkdtemp(join(tmpdir(), "toolctx-ai-sdk-")));
const manager = await ContextManager.open({ contextDir: dir, session: true });

const plainModel = scriptedModel(plainScript);
await generateText({ model: plainModel, tools, prompt: question, stopWhen: stepCountIs(10) });

const wrappedModel = scriptedModel(wrappedScript);
const wrapped = withToolContext(tools, manager, { resolveHandles: ["countMatches"] });
const run = await generateText({ model: wrappedModel, tools: wrapped, prompt: question, stopWhen: stepCountIs(10) });

const without = seen(plainModel);
const withIt = seen(wrappedModel);
const sum = (xs) => xs.reduce((a, b) => a + b, 0);
const n = (x) => x.toLocaleString("en-US");

console.log(`toolctx/ai-sdk demo — question: "${question}"`);
console.log(`store: ${manager.getContextDir()}\n`);
console.log("Saved tool outputs (what the model got instead of a large one):");
for (const p of manager.getAllPointers()) {
  const result = run.steps.flatMap((s) => s.toolResults).find((r) => r.toolCallId === p.toolCallId);
  const output = wrappedModel.doGenerateCalls.flatMap((c) => toolResults(c.prompt)).find((r) => r.toolCallId === p.toolCallId)?.output;
  const sent = output?.type === "text" && output.value.startsWith("[toolctx]") ? `${p.handle} + preview, ${n(output.value.length)} chars` : "in full";
  console.log(`  ${p.toolName.padEnd(14)} ${n(p.size).padStart(8)} bytes  → ${sent}${result?.toolName === "countMatches" ? `  (input: ${JSON.stringify(p.args)})` : ""}`);
}
console.log(`\nThe model's calls: ${run.steps.map((s) => s.toolCalls.map((c) => c.toolName).join("+") || "answer").join(" → ")}`);
const answer = run.text.split("\n");
console.log(`It found docs/api.md at ${found.handle}, line ${found.line}, and read:\n${answer.slice(2, 6).map((l) => `  │ ${l}`).join("\n")}`);
console.log(`It passed the grep output to countMatches by its handle, not as ${n(manager.getAllPointers().find((p) => p.toolName === "grep").size)} bytes of arguments:\n  │ ${answer.at(-1)}\n`);
console.log("Tokens the model saw (estimateTokens over each prompt and its tool definitions):");
console.log(`  without toolctx: ${without.length} calls, ${n(sum(without))} tokens (largest prompt ${n(Math.max(...without))})`);
console.log(`  with toolctx:    ${withIt.length} calls, ${n(sum(withIt))} tokens (largest prompt ${n(Math.max(...withIt))})`);
console.log(`  → ${(sum(without) / sum(withIt)).toFixed(1)}× fewer tokens, every output still retrievable by handle.`);
const usage = usageOf(wrapped);
console.log("What the wrapper counted (usageOf):");
console.log(`  ${usage.outputsOffloaded} outputs offloaded: ${n(usage.charsKeptOut)} characters (~${n(usage.tokensKeptOut)} tokens) kept out of the prompt`);
console.log(`  ${usage.readsBack} reads back (read_context, search_context, grep_context): ${n(usage.charsReadBack)} characters`);

await manager.endSession(); // removes this run's records
await manager.close();
if (!flags.dir) await rm(dir, { recursive: true, force: true });
