// What a model can send to toolctx/tools, timed: the worst answer time per input kind
// (SPEC §1: every input answered within 1 s). The baseline in the same run is the same
// tools answering an ordinary call of each kind, and for grep, JavaScript's own RegExp on
// the catastrophic pattern at growing line lengths (what grep_context used before).
//
//   node bench/hostile.mjs            (make pkg first)
//
// The store: 200 records of 64 lines each of a 5,000-character line of `a` ending in `!`
// (the shape that stalls a backtracking engine on `(a+)+$`), ~64 MB of lines in all, plus
// a 300-line source file, a JSON record, a "minified" file of 20 lines of 100,000
// characters and a 2 MB log; node fs in a temporary folder.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ContextManager } from "toolctx";
import { nodeStorage } from "toolctx/node";
import { contextTools, resolveHandles } from "toolctx/tools";

const dir = mkdtempSync(join(tmpdir(), "toolctx-hostile-"));
const manager = await ContextManager.open({ contextDir: dir, fileSystem: nodeStorage() });
const AS = `${"a".repeat(5000)}!`;
for (let i = 0; i < 200; i++) await manager.saveContext("cat", { i }, Array.from({ length: 64 }, () => AS));
const file = await manager.saveContext("readFile", { path: "src/a.ts" }, Array.from({ length: 300 }, (_, i) => `line ${i + 1}`).join("\n"));
const json = await manager.saveContext("grep", {}, { hits: Array.from({ length: 50 }, (_, i) => ({ file: `f${i}.ts`, line: i })) });
const minified = await manager.saveContext("readFile", { path: "dist/app.min.js" }, Array.from({ length: 20 }, () => "ab".repeat(50_000)).join("\n"));
const twoMb = await manager.saveContext("readFile", { path: "big.log" }, Array.from({ length: 40_000 }, (_, i) => `line ${i} ${"x".repeat(45)}`).join("\n"));
const handle = (fp) => manager.getAllPointers().find((p) => p.filepath === fp).handle;
const [h, j, min, big] = [handle(file), handle(json), handle(minified), handle(twoMb)];
const tools = Object.fromEntries(contextTools(manager).map((t) => [t.name, t]));

async function timed(fn) {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
}

const cyclic = () => {
  const o = { h, list: [] };
  o.self = o;
  o.list.push(o, o.list);
  return o;
};
const deep = (n) => {
  let o = { h };
  for (let i = 0; i < n; i++) o = { next: o };
  return o;
};

const kinds = {
  "grep: catastrophic patterns over 200 records of 5,000-char lines": [
    () => tools.grep_context.execute({ pattern: "(a+)+$" }),
    () => tools.grep_context.execute({ pattern: "(a|aa)+b" }),
    () => tools.grep_context.execute({ pattern: "(?:a?){40}a{40}c" }),
    () => tools.grep_context.execute({ pattern: "\\w{1,100}\\s{1,100}\\w{1,100}z" }),
    () => tools.grep_context.execute({ pattern: `(${Array.from({ length: 60 }, (_, i) => `a${i % 10}`).join("|")})+b` }),
  ],
  "grep: the slowest patterns over 100,000-character lines (one record)": [
    () => tools.grep_context.execute({ pattern: "\\w{1,100}\\s{1,100}\\w{1,100}z", handle: min }),
    () => tools.grep_context.execute({ pattern: "(?:a?){40}a{40}c", handle: min }),
  ],
  "grep: patterns that do not compile (look-around, back-reference, too large, 10k chars)": [
    () => tools.grep_context.execute({ pattern: "a(?=b)" }),
    () => tools.grep_context.execute({ pattern: "(a)\\1" }),
    () => tools.grep_context.execute({ pattern: "a{1000}{1000}" }),
    () => tools.grep_context.execute({ pattern: "x".repeat(10_000) }),
  ],
  "wrong types and huge numbers (every tool)": [
    () => tools.read_context.execute({ handle: 12345 }),
    () => tools.read_context.execute({ handle: h, offset: 1e300 }),
    () => tools.read_context.execute({ handle: h, limit: 2 ** 60 }),
    () => tools.search_context.execute({ query: { a: 1 } }),
    () => tools.grep_context.execute({ pattern: "x", limit: Infinity }),
    () => tools.grep_context.execute(null),
  ],
  "decorated handles and slices": [
    () => tools.read_context.execute({ handle: `\`${h}#L10-40\`` }),
    () => tools.read_context.execute({ handle: `"${h}#L40-10".` }),
    () => tools.read_context.execute({ handle: `${j}#$.hits[0:5]` }),
    () => resolveHandles({ a: `\`${h}\``, b: `${h},`, c: `${j}#$["\\x"]` }, manager).catch((e) => e),
  ],
  "a query of a megabyte": [() => tools.search_context.execute({ query: "word ".repeat(200_000) })],
  "resolveHandles: cycles, 100,000-deep nesting, own __proto__": [
    () => resolveHandles(cyclic(), manager),
    () => resolveHandles(deep(100_000), manager),
    () => resolveHandles(JSON.parse(`{"__proto__": {"isAdmin": true, "x": "${h}"}}`), manager),
  ],
  "resolveHandles: 100 line slices of a 2 MB record; 101 (refused)": [
    () => resolveHandles({ items: Array.from({ length: 100 }, (_, i) => `${big}#L${i + 1}-${i + 400}`) }, manager),
    () => resolveHandles({ items: Array.from({ length: 101 }, (_, i) => `${big}#L${i + 1}`) }, manager).catch((e) => e),
  ],
  "resolveHandle: values that are not strings": [
    () => [12345, {}, null, [], Symbol("s")].forEach((v) => {
      try {
        manager.resolveHandle(v);
      } catch {
        // INVALID_ARGUMENT
      }
    }),
  ],
};

const ordinary = {
  "read 200 lines": () => tools.read_context.execute({ handle: h }),
  "search": () => tools.search_context.execute({ query: "line file" }),
  "grep one file": () => tools.grep_context.execute({ pattern: "line 1\\d\\b", handle: h }),
};

console.log("toolctx/tools: the worst answer time per input kind (ms; 3 runs each, the worst kept)\n");
for (const [kind, calls] of Object.entries(kinds)) {
  let worst = 0;
  for (let round = 0; round < 3; round++) for (const call of calls) worst = Math.max(worst, await timed(call));
  console.log(`  ${kind.padEnd(92)} ${worst.toFixed(1).padStart(8)}`);
}
console.log("\nbaseline, ordinary calls on the same store (ms, worst of 3):\n");
for (const [kind, call] of Object.entries(ordinary)) {
  let worst = 0;
  for (let round = 0; round < 3; round++) worst = Math.max(worst, await timed(call));
  console.log(`  ${kind.padEnd(92)} ${worst.toFixed(1).padStart(8)}`);
}
console.log("\nJavaScript's RegExp (what grep_context used before) on /(a+)+$/ over one line of n a's and '!' (ms):\n");
for (const n of [19, 21, 23, 25, 27]) {
  const line = `${"a".repeat(n)}!`;
  const ms = await timed(() => /(a+)+$/.test(line));
  console.log(`  n = ${n}: ${ms.toFixed(1)}`);
}

await manager.close();
rmSync(dir, { recursive: true, force: true });
