// What a model (or a hostile tester) sends to toolctx/tools: every input is answered, in a
// bounded time, with a text that names the parameter (SPEC §1: the model-facing tools never
// stall and never throw past `execute`); resolveHandles copies what it is given faithfully.
// Each test guards against a hang with a generous timeout, never a tight one.
import { test } from "node:test";
import assert from "node:assert/strict";
import { ContextManager } from "toolctx";
import { memoryStorage } from "toolctx/memory";
import { contextTools, resolveHandles, findRecord } from "toolctx/tools";

const GUARD = { timeout: 30_000 };
let n = 0;
const manager = () => new ContextManager({ contextDir: `/hostile/${++n}`, fileSystem: memoryStorage() });
const byName = (m, options) => Object.fromEntries(contextTools(m, options).map((t) => [t.name, t]));
const handleOf = (m, filepath) => m.getAllPointers().find((p) => p.filepath === filepath).handle;

async function codeOf(promise) {
  try {
    await promise;
  } catch (error) {
    return error.code;
  }
  return "resolved";
}

test("grep_context: a catastrophic pattern is matched in linear time", GUARD, async () => {
  const m = manager();
  const line = `${"a".repeat(5000)}!`;
  const h = handleOf(m, await m.saveContext("cat", {}, [line, "aaa", "b"]));
  const { grep_context } = byName(m);
  const text = await grep_context.execute({ pattern: "(a+)+$" });
  assert.match(text, new RegExp(`${h}`));
  assert.match(text, /2: aaa/);
  assert.doesNotMatch(text, /1: a/);
  // The same through a handle, and other classic ReDoS shapes.
  for (const pattern of ["(a|aa)+$", "(a*)*b", "^(([a-z])+.)+[A-Z]([a-z])+$", "(.*a){20}"]) {
    assert.equal(typeof (await grep_context.execute({ pattern, handle: h })), "string", pattern);
  }
});

test("grep_context: what a linear-time matcher cannot do is said, naming the parameter", GUARD, async () => {
  const m = manager();
  await m.saveContext("t", {}, "foobar\nfoo bar");
  const { grep_context } = byName(m);
  const answer = await grep_context.run({ pattern: "foo(?=bar)" });
  assert.equal(answer.error.code, "INVALID_ARGUMENT");
  assert.match(answer.text, /^grep_context: pattern: look-around/);
  assert.match(await grep_context.execute({ pattern: "(a)\\1" }), /pattern: back-references/);
  assert.match(await grep_context.execute({ pattern: "(" }), /pattern: not a regular expression/);
  // (?i) and the /…/i form a model writes both work.
  assert.match(await grep_context.execute({ pattern: "(?i)FOO BAR" }), /2: foo bar/);
  assert.match(await grep_context.execute({ pattern: "/FOOBAR/i" }), /1: foobar/);
  // Plain text is found as it is (a substring search): the same lines as the regular expression.
  for (const [plain, regex] of [["foo", "fo[o]"], ["(?i)FOO", "(?i)F[O]O"], ["o b", "o\\sb"]]) {
    assert.equal(await grep_context.execute({ pattern: plain }), (await grep_context.execute({ pattern: regex })).replaceAll(regex, plain), plain);
  }
});

test("grep_context: scanning stops at its time budget and says how far it got", GUARD, async () => {
  const m = manager();
  // Many records of long lines and a slow (but linear) pattern.
  const line = "ab".repeat(20_000);
  for (let i = 0; i < 40; i++) await m.saveContext("t", { i }, Array.from({ length: 20 }, () => line));
  const { grep_context } = byName(m, { grepMillis: 50 });
  const text = await grep_context.execute({ pattern: "(?:a|b){1,60}c" });
  assert.match(text, /No line matches/);
  assert.match(text, /stopped after 50 ms: searched \d+ of 40 saved outputs/);
});

test("resolveHandles: arguments that refer to themselves are copied with their cycle", GUARD, async () => {
  const m = manager();
  const h = handleOf(m, await m.saveContext("t", {}, "stored"));
  const args = { a: { b: h } };
  args.a.self = args;
  args.list = [args.a];
  args.list.push(args.list);
  const out = await resolveHandles(args, m);
  assert.equal(out.a.b, "stored");
  assert.equal(out.a.self, out);
  assert.equal(out.list[0], out.a);
  assert.equal(out.list[1], out.list);
  assert.notEqual(out, args);
  assert.equal(args.a.b, h, "the input is not changed");
});

test("resolveHandles: 100,000 levels of nesting resolve, without a RangeError", GUARD, async () => {
  const m = manager();
  const h = handleOf(m, await m.saveContext("t", {}, "deep value"));
  let args = { h };
  for (let i = 0; i < 100_000; i++) args = { next: args };
  let out = await resolveHandles(args, m);
  for (let i = 0; i < 100_000; i++) out = out.next;
  assert.equal(out.h, "deep value");
});

test("resolveHandles: an own __proto__ key stays a key, and its handle is resolved", GUARD, async () => {
  const m = manager();
  const h = handleOf(m, await m.saveContext("t", {}, "stored"));
  const args = JSON.parse(`{"__proto__": {"isAdmin": true, "x": "${h}"}, "y": "${h}"}`);
  const out = await resolveHandles(args, m);
  assert.equal(Object.getPrototypeOf(out), Object.prototype);
  assert.equal(out.isAdmin, undefined);
  assert.ok(Object.hasOwn(out, "__proto__"));
  assert.deepEqual(Object.getOwnPropertyDescriptor(out, "__proto__").value, { isAdmin: true, x: "stored" });
  assert.equal(out.y, "stored");
  assert.equal({}.isAdmin, undefined, "Object.prototype untouched");
});

test("resolveHandle: a value that is not a string is INVALID_ARGUMENT, never a wasm fault", GUARD, async () => {
  const m = manager();
  await m.saveContext("t", {}, "x");
  for (const value of [12345, {}, null, [], undefined, true, Symbol("s"), 10n]) {
    let error;
    try {
      m.resolveHandle(value);
    } catch (e) {
      error = e;
    }
    assert.equal(error?.code, "INVALID_ARGUMENT", String(value?.toString?.() ?? value));
    assert.match(error.message, /handle/);
  }
  assert.equal(m.resolveHandle("ctx:aaaaaaaaaa"), undefined);
  assert.equal(m.size, 1, "the manager still works");
});

test("resolveHandles: a bad escape in a JSON path slice is INVALID_ARGUMENT", GUARD, async () => {
  const m = manager();
  const h = handleOf(m, await m.saveContext("t", {}, { a: 1 }));
  assert.equal(await codeOf(resolveHandles({ x: `${h}#$["\\x"]` }, m)), "INVALID_ARGUMENT");
});

test("resolveHandles: an error names the argument the handle was in", GUARD, async () => {
  const m = manager();
  const h = handleOf(m, await m.saveContext("t", {}, "one line"));
  const failure = async (args) => {
    try {
      await resolveHandles(args, m);
    } catch (error) {
      return `${error.code} ${error.message}`;
    }
  };
  assert.match(await failure({ text: "ctx:aaaaaaaaaa" }), /^NOT_FOUND text: no saved tool output has the handle ctx:aaaaaaaaaa/);
  assert.match(await failure({ items: [{ path: "x" }, { path: `${h}#L5` }] }), /^INVALID_ARGUMENT items\[1\]\.path: ctx:\w+ has 1 lines/);
  assert.match(await failure({ "a b": `${h}#$.nope` }), /^INVALID_ARGUMENT \["a b"\]: ctx:\w+#\$\.nope: no field "nope"/);
  assert.match(await failure("ctx:aaaaaaaaaa"), /^NOT_FOUND arguments: no saved/);
});

test("handles as models decorate them: quotes, backticks, trailing punctuation, slices", GUARD, async () => {
  const m = manager();
  const file = Array.from({ length: 60 }, (_, i) => `line ${i + 1}`).join("\n");
  const h = handleOf(m, await m.saveContext("read", {}, file));
  const forms = [`\`${h}\``, `"${h}"`, `'${h}'`, `${h}.`, `${h},`, ` ${h} `, `“${h}”`, `(${h})`, `<${h}>`, `\`\`\`${h}\`\`\``, h.toUpperCase()];
  const out = await resolveHandles(Object.fromEntries(forms.map((f, i) => [i, f])), m);
  for (let i = 0; i < forms.length; i++) assert.equal(out[i], file, forms[i]);
  // Prose that mentions a handle is left alone.
  assert.equal((await resolveHandles({ x: `see ${h}` }, m)).x, `see ${h}`);
  const sliced = await resolveHandles({ a: `\`${h}#L10-12\``, b: `${h}#L12-10.` }, m);
  assert.equal(sliced.a, "line 10\nline 11\nline 12");
  assert.equal(sliced.b, "line 10\nline 11\nline 12");
  assert.equal(findRecord(m, `"${h}#L3"`).handle, h);

  const { read_context } = byName(m);
  const read = await read_context.execute({ handle: `${h}#L10-40` });
  assert.match(read, /lines 10–40 of 60/);
  assert.match(read, /^10 {2}line 10$/m);
  assert.doesNotMatch(read, /line 41/);
  assert.match(await read_context.execute({ handle: `\`${h}#L40-10\`` }), /lines 10–40 of 60/);
  assert.match(await read_context.execute({ handle: `${h}#L55-80` }), /lines 55–60 of 60/);
  const past = await read_context.run({ handle: `${h}#L70-80` });
  assert.equal(past.error.code, "INVALID_ARGUMENT");
  assert.match(past.text, /handle: .*60 lines/);
});

test("every tool answers a wrong type, a huge number or a missing parameter with a text naming it", GUARD, async () => {
  const m = manager();
  const h = handleOf(m, await m.saveContext("t", {}, "x\ny"));
  const tools = byName(m);
  const cases = [
    ["read_context", { handle: 12345 }, /handle/],
    ["read_context", {}, /handle/],
    ["read_context", { handle: h, offset: 1e300 }, /offset/],
    ["read_context", { handle: h, offset: -3 }, /offset/],
    ["read_context", { handle: h, limit: Infinity }, /limit/],
    ["read_context", { handle: h, limit: "5" }, /limit/],
    ["search_context", { query: { text: "x" } }, /query/],
    ["search_context", { query: "x", limit: 2 ** 60 }, null],
    ["grep_context", { pattern: 42 }, /pattern/],
    ["grep_context", { pattern: "x", handle: ["ctx:a"] }, /handle/],
    ["grep_context", { pattern: "x".repeat(10_000) }, /pattern/],
    ["grep_context", null, /pattern/],
    ["grep_context", "x", /pattern/],
  ];
  for (const [name, input, named] of cases) {
    const text = await tools[name].execute(input);
    assert.equal(typeof text, "string", `${name} ${JSON.stringify(input)}`);
    if (named) assert.match(text, named, `${name} ${JSON.stringify(input)}: ${text}`);
  }
  // A query of a megabyte is clipped, not refused.
  assert.match(await tools.search_context.execute({ query: `x ${"word ".repeat(200_000)}` }), /query clipped/);
});

// ---- a property test: random JSON of every hostile kind at every tool -----------------------

/** A small seeded generator (mulberry32), so a failure names its seed. */
function random(seed) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function hostileValue(rand, handles, depth = 0) {
  const pick = (list) => list[Math.floor(rand() * list.length)];
  const h = pick(handles);
  const kinds = [
    () => h,
    () => pick([`\`${h}\``, `"${h}".`, `${h}#L1-3`, `${h}#L3-1,`, `${h}#$[0]`, `${h}#$["\\x"]`, `${h}#$.a..b`, `${h}#L0`, "ctx:zzzzzzzzzz", "ctx:", "#L1"]),
    () => pick([1e308, -1e308, 2 ** 53 + 1, -0, 0.5, NaN, Infinity, 10 ** 21, -1]),
    () => pick(["(a+)+$", "(a|aa)*c", "[", "\\", "(?<=a)b", "(x)\\1", ".*".repeat(50), "a{1000}{1000}", "(".repeat(100), "", "\u0000", "\ud800"]),
    () => pick([null, true, false, undefined]),
    () => "x".repeat(Math.floor(rand() * 3000)),
    () => (depth > 6 ? "leaf" : Array.from({ length: Math.floor(rand() * 4) }, () => hostileValue(rand, handles, depth + 1))),
    () => {
      if (depth > 6) return {};
      const o = JSON.parse('{"__proto__": {"polluted": true}}');
      for (let i = 0; i < 3; i++) o[pick(["handle", "pattern", "query", "offset", "limit", "constructor", "toString", "x"])] = hostileValue(rand, handles, depth + 1);
      return o;
    },
    () => {
      let deep = { h };
      for (let i = 0; i < 5000; i++) deep = [deep];
      return deep;
    },
    () => {
      const o = { h };
      o.self = o;
      return o;
    },
  ];
  return pick(kinds)();
}

test("property: random hostile input at every tool and resolveHandles: no hang, no throw, no prototype change", GUARD, async () => {
  const m = manager();
  const handles = [
    handleOf(m, await m.saveContext("read", { path: "a.ts" }, Array.from({ length: 50 }, (_, i) => `line ${i}`).join("\n"))),
    handleOf(m, await m.saveContext("hits", {}, [{ a: 1 }, { a: 2 }])),
    handleOf(m, await m.saveContext("as", {}, `${"a".repeat(3000)}!`)),
  ];
  const tools = contextTools(m, { grepMillis: 100 });
  const seed = Number(process.env.HOSTILE_SEED ?? Date.now() % 100_000);
  const rand = random(seed);
  const started = Date.now();
  for (let i = 0; i < 300; i++) {
    const tool = tools[i % tools.length];
    const input = rand() < 0.8 ? { handle: hostileValue(rand, handles), pattern: hostileValue(rand, handles), query: hostileValue(rand, handles), offset: hostileValue(rand, handles), limit: hostileValue(rand, handles) } : hostileValue(rand, handles);
    const t0 = Date.now();
    const text = await tool.execute(input);
    assert.equal(typeof text, "string", `seed ${seed}, case ${i}`);
    assert.ok(Date.now() - t0 < 10_000, `seed ${seed}, case ${i}: ${tool.name} took ${Date.now() - t0} ms`);
    try {
      await resolveHandles(input, m);
    } catch (error) {
      assert.ok(["INVALID_ARGUMENT", "NOT_FOUND"].includes(error.code), `seed ${seed}, case ${i}: ${error.stack}`);
    }
  }
  assert.equal({}.polluted, undefined, `seed ${seed}`);
  assert.equal(Object.getPrototypeOf({}), Object.prototype);
  assert.ok(Date.now() - started < 120_000);
});

test("references: prose after a handle stays prose; quotes and brackets pair; a lone closer is punctuation", GUARD, async () => {
  const m = manager();
  const h = handleOf(m, await m.saveContext("t", {}, "l1\nl2\nl3"));
  const out = await resolveHandles({ note: `${h}#L1 is the line`, a: `(${h}#L1-2)`, b: `${h}#L1-2)`, c: `"${h}'`, d: `${h}#$["a b"]` }, m).catch((e) => e);
  assert.equal(out.code, "INVALID_ARGUMENT", "d: the record is a string, not an object");
  const ok = await resolveHandles({ note: `${h}#L1 is the line`, a: `(${h}#L1-2)`, b: `${h}#L1-2)`, c: `"${h}'` }, m);
  assert.equal(ok.note, `${h}#L1 is the line`);
  assert.equal(ok.a, "l1\nl2");
  assert.equal(ok.b, "l1\nl2");
  assert.equal(ok.c, "l1\nl2\nl3", "a closing quote of another kind is trailing punctuation");
  const j = handleOf(m, await m.saveContext("t", {}, { "a b": [1, 2, 3] }));
  assert.deepEqual((await resolveHandles({ x: `${j}#$["a b"][-2:]`, y: `${j}#$["a b"][:1]` }, m)), { x: [2, 3], y: [1] });
  const { read_context } = byName(m);
  assert.match(await read_context.execute({ handle: `${h}#lines` }), /^read_context: handle: a slice is #L<from>-<to>/);
});

test("resolveHandles: each record is read once a call, and at most 100 different handles are resolved", GUARD, async () => {
  const m = manager();
  const big = Array.from({ length: 40_000 }, (_, i) => `line ${i + 1} ${"x".repeat(40)}`).join("\n");
  const h = handleOf(m, await m.saveContext("t", {}, big));
  let reads = 0;
  const counting = new Proxy(m, {
    get: (target, key) => (key === "loadContexts" ? (paths) => (reads++, target.loadContexts(paths)) : typeof target[key] === "function" ? target[key].bind(target) : target[key]),
  });
  const items = Array.from({ length: 100 }, (_, i) => `${h}#L${i + 1}`);
  const out = await resolveHandles({ items }, counting);
  assert.equal(out.items[99], `line 100 ${"x".repeat(40)}`);
  assert.equal(reads, 1);
  const many = await resolveHandles({ items: [...items, `${h}#L101`] }, m).catch((e) => e);
  assert.equal(many.code, "INVALID_ARGUMENT");
  assert.match(many.message, /101 different handles; at most 100/);
});

test("resolveHandles: an error names the first argument, in order", GUARD, async () => {
  const m = manager();
  const error = await resolveHandles({ a: "ctx:aaaaaaaaaa", b: "ctx:bbbbbbbbbb" }, m).catch((e) => e);
  assert.match(error.message, /^a: no saved tool output has the handle ctx:aaaaaaaaaa/);
});

test("grep_context: a handle with a line slice greps those lines; the matcher lets other work run", GUARD, async () => {
  const m = manager();
  const h = handleOf(m, await m.saveContext("t", {}, Array.from({ length: 100 }, (_, i) => `row ${i + 1}`).join("\n")));
  const { grep_context } = byName(m, { grepContext: 0 });
  const text = await grep_context.execute({ pattern: "row \\d+5$", handle: `${h}#L20-50` });
  assert.deepEqual(text.split("\n").slice(1), ["  25: row 25", "  --", "  35: row 35", "  --", "  45: row 45"]);
  assert.match(await grep_context.execute({ pattern: "row", handle: `${h}#$.x` }), /^grep_context: handle: grep_context reads lines/);
  // Only the lines matched are said to be matched in part: a long line outside the slice is not.
  const long = handleOf(m, await m.saveContext("t", {}, ["short row", "x".repeat(20_000)]));
  assert.match(await grep_context.execute({ pattern: "ro[w]", handle: long }), /\[1 lines longer than 16,384 characters were matched in their first 16,384\]$/);
  assert.doesNotMatch(await grep_context.execute({ pattern: "ro[w]", handle: `${long}#L1` }), /longer than/);
  assert.doesNotMatch(await grep_context.execute({ pattern: "row", handle: long }), /longer than/, "plain text reads whole lines");
  // A slow grep (it runs to its budget: 4 MB of lines at ~8 µs a character) lets a timer
  // set before it fire before it ends.
  const slow = handleOf(m, await m.saveContext("t", {}, Array.from({ length: 1000 }, () => "ab".repeat(2_000))));
  let fired;
  setTimeout(() => (fired ??= "during the grep"), 0);
  await byName(m, { grepMillis: 300 }).grep_context.execute({ pattern: "(?:a|b){1,60}c", handle: slow });
  fired ??= "after it";
  assert.equal(fired, "during the grep");
});

test("resolveHandles {asText}: a stored value that is not a string comes as its JSON text, at any depth", GUARD, async () => {
  const m = manager();
  const j = handleOf(m, await m.saveContext("t", {}, { rows: [1, 2] }));
  const s = handleOf(m, await m.saveContext("t", {}, "plain"));
  let args = { j, s, slice: `${j}#$.rows` };
  for (let i = 0; i < 1000; i++) args = { next: args };
  let out = await resolveHandles(args, m, { asText: true });
  for (let i = 0; i < 1000; i++) out = out.next;
  assert.deepEqual(out, { j: JSON.stringify({ rows: [1, 2] }, null, 2), s: "plain", slice: JSON.stringify([1, 2], null, 2) });
});
