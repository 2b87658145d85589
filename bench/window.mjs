#!/usr/bin/env node
// The context-window optimiser on a generated 2,000-message agent conversation with
// repeated file reads (60 files of 1-30 KB, each read 1-20 times, writes in between,
// structured tool calls and the seed's Cline text forms), against a plain-JS
// implementation of the seed's algorithm (bench/window-seed.mjs) in the same process.
// Medians of 9 runs after 2 warm-ups.
//   node bench/window.mjs
import { estimateTokens, findDuplicateFileReads, optimizeWindow } from "toolctx";
import { seedOptimize } from "./window-seed.mjs";

let state = 42;
const random = () => ((state = (state * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);

const FILES = Array.from({ length: 60 }, (_, i) => ({
  path: `src/${["auth", "db", "api", "ui", "core"][i % 5]}/module${i}.ts`,
  bytes: 1024 + Math.floor(random() ** 2 * 29 * 1024), // 1-30 KB, most of them small
  reads: 1 + ((i * 7) % 20),
  writes: i % 4 === 0 ? 1 + (i % 3) : 0,
}));

function body(file, version) {
  let out = "";
  for (let line = 0; out.length < file.bytes; line++) {
    out += `export function ${file.path.split("/")[1]}_${line}(input: string) { return input + "v${version}-${line}"; }\n`;
  }
  return out;
}

const events = [];
for (const file of FILES) {
  for (let r = 0; r < file.reads; r++) events.push({ kind: "read", file });
  for (let w = 0; w < file.writes; w++) events.push({ kind: "write", file });
}
const PAIRS = 998; // 3 + 2 * 998 + 1 = 2,000 messages
while (events.length < PAIRS) events.push({ kind: "grep" });
for (let i = events.length - 1; i > 0; i--) {
  const j = Math.floor(random() * (i + 1));
  [events[i], events[j]] = [events[j], events[i]];
}

const messages = [
  { role: "user", content: "<task>Migrate the services to the new API client</task>" },
  { role: "assistant", content: [{ type: "text", text: "I will look at the code first." }] },
  { role: "user", content: "Go ahead." },
];
events.slice(0, PAIRS).forEach((e, i) => {
  const version = i;
  const id = `toolu_${i}`;
  const style = random();
  if (e.kind === "grep") {
    messages.push({ role: "assistant", content: [{ type: "tool_use", id, name: "grep", input: { pattern: `todo${i}` } }] });
    messages.push({ role: "user", content: [{ type: "tool_result", tool_use_id: id, content: `src/x.ts:${i}: // TODO ${i}` }] });
  } else if (e.kind === "read" && style < 0.7) {
    const name = style < 0.35 ? "read_file" : "Read";
    const input = name === "Read" ? { file_path: e.file.path } : { path: e.file.path };
    messages.push({ role: "assistant", content: [{ type: "text", text: "Reading." }, { type: "tool_use", id, name, input }] });
    messages.push({ role: "user", content: [{ type: "tool_result", tool_use_id: id, content: body(e.file, version) }] });
  } else if (e.kind === "read" && style < 0.9) {
    messages.push({ role: "assistant", content: [{ type: "text", text: `<read_file><path>${e.file.path}</path></read_file>` }] });
    messages.push({ role: "user", content: [
      { type: "text", text: `[read_file for '${e.file.path}'] Result:` },
      { type: "text", text: body(e.file, version) },
      { type: "text", text: "<environment_details>\n# Current Time\n...\n</environment_details>" },
    ] });
  } else if (e.kind === "read") {
    messages.push({ role: "assistant", content: [{ type: "text", text: "Can you show me that file?" }] });
    messages.push({ role: "user", content: `Here: <file_content path="${e.file.path}">\n${body(e.file, version)}</file_content>` });
  } else if (style < 0.5) {
    const input = { path: e.file.path, content: body(e.file, version) };
    messages.push({ role: "assistant", content: [{ type: "tool_use", id, name: "write_to_file", input }] });
    messages.push({ role: "user", content: [{ type: "tool_result", tool_use_id: id, content: "The file was written." }] });
  } else {
    messages.push({ role: "assistant", content: [{ type: "text", text: `<replace_in_file><path>${e.file.path}</path>...</replace_in_file>` }] });
    messages.push({ role: "user", content: [
      { type: "text", text: `[replace_in_file for '${e.file.path}'] Result:` },
      { type: "text", text: `The content was successfully saved to ${e.file.path}.\n\n<final_file_content path="${e.file.path}">\n${body(e.file, version)}</final_file_content>\n\nIMPORTANT: ...` },
    ] });
  }
});
messages.push({ role: "user", content: "Now run the tests." });

const median = (xs) => xs.sort((a, b) => a - b)[xs.length >> 1];
function time(fn, runs = 9) {
  for (let i = 0; i < 2; i++) fn();
  const out = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    fn();
    out.push(performance.now() - t0);
  }
  return median(out);
}

const ours = optimizeWindow(messages, { now: 1 });
const seed = seedOptimize(messages);
if (JSON.stringify(ours.messages) !== JSON.stringify(seed.messages)) {
  console.error("warning: toolctx and the plain-JS baseline disagree on the result");
}
const tOurs = time(() => optimizeWindow(messages, { now: 1 }));
const tSeed = time(() => seedOptimize(messages));
const tJson = time(() => JSON.parse(JSON.stringify(messages)));
const tStringify = time(() => JSON.stringify(messages));
const tEstimate = time(() => estimateTokens(messages)); // crossing in: stringify + parse in wasm
const tFind = time(() => findDuplicateFileReads(messages)); // + the scan
const { tokensBefore, tokensAfter } = ours.metrics;
const seedAfter = estimateTokens(seed.messages);
const mb = (JSON.stringify(messages).length / 2 ** 20).toFixed(1);
console.log(`Window optimiser: ${messages.length} messages (${mb} MB of JSON), ${FILES.length} files read 1-20 times (median of 9)`);
console.table({
  "toolctx optimizeWindow": {
    "time (ms)": +tOurs.toFixed(1),
    "÷ baseline": +(tOurs / tSeed).toFixed(2),
    "tokens before": tokensBefore,
    "tokens after": tokensAfter,
    "saved %": +((100 * (tokensBefore - tokensAfter)) / tokensBefore).toFixed(1),
    "copies replaced": ours.metrics.duplicatesReplaced,
  },
  "plain-JS seed": {
    "time (ms)": +tSeed.toFixed(1),
    "÷ baseline": 1,
    "tokens before": tokensBefore,
    "tokens after": seedAfter,
    "saved %": +((100 * (tokensBefore - seedAfter)) / tokensBefore).toFixed(1),
    "copies replaced": "",
  },
});
console.log("Where the time goes (ms): JSON.stringify of the messages", +tStringify.toFixed(1),
  "| estimateTokens (stringify + parse in wasm)", +tEstimate.toFixed(1),
  "| findDuplicateFileReads (+ scan)", +tFind.toFixed(1),
  "| JSON round trip in JS", +tJson.toFixed(1));
