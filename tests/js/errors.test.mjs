// The package's errors (SPEC §9): one constructor (pkg-template/errors.js re-exports it
// from host.js) and one table of codes, which docs/errors.md shows and every code given
// to the constructor comes from.

import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../../", import.meta.url));
const template = join(root, "pkg-template");
const { CODES, LEGACY_CODES, toolctxError } = await import(new URL("../../pkg-template/errors.js", import.meta.url));

/** Every .js file under `dir`. */
function jsFiles(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return jsFiles(path);
    return entry.name.endsWith(".js") ? [path] : [];
  });
}

/** The text of the first argument of each `toolctxError(` call in `source` (not its definition). */
function firstArguments(source) {
  const found = [];
  for (const match of source.matchAll(/(?<!function )\btoolctxError\(/g)) {
    const line = source.slice(source.lastIndexOf("\n", match.index) + 1, match.index).trim();
    if (line.startsWith("//") || line.startsWith("*")) continue; // a comment naming it
    let depth = 0;
    let end = match.index + match[0].length;
    for (; end < source.length; end++) {
      const c = source[end];
      if ("([{".includes(c)) depth++;
      else if (")]}".includes(c)) {
        if (depth === 0) break;
        depth--;
      } else if (c === "," && depth === 0) break;
    }
    found.push(source.slice(match.index + match[0].length, end).trim());
  }
  return found;
}

const sources = jsFiles(template).map((path) => ({ file: relative(template, path), source: readFileSync(path, "utf8") }));
const known = (code) => Object.hasOwn(CODES, code) || Object.hasOwn(LEGACY_CODES, code);

test("every code given to toolctxError in pkg-template is in the table", () => {
  const used = new Map(); // code → files
  const note = (code, file) => used.set(code, [...(used.get(code) ?? []), file]);
  for (const { file, source } of sources) {
    for (const arg of firstArguments(source)) {
      const literals = [...arg.matchAll(/"([^"]*)"/g)].map((m) => m[1]);
      if (literals.length > 0) {
        for (const code of literals) note(code, file);
        continue;
      }
      // A code held in a variable: the literals the file assigns to it (`typed = "X"`, `lostCode: "X"`).
      assert.match(arg, /^[A-Za-z]\w*$/, `${file}: toolctxError(${arg}, …): a code is a literal or a variable`);
      // Every literal on the lines that assign it (`code = x === "A" ? "A" : "B"` assigns both).
      const assigned = [...source.matchAll(new RegExp(`\\b${arg}\\s*[=:](?!=)([^;\\n]*)`, "g"))].flatMap((m) => [...m[1].matchAll(/"([^"]*)"/g)].map((q) => q[1]));
      assert.ok(assigned.length > 0, `${file}: no literal is assigned to ${arg}, the code it passes to toolctxError`);
      for (const code of assigned) note(code, file);
    }
    // Callers that name the variable elsewhere (fs.js passes lostCode to lease-lock.js).
    for (const m of source.matchAll(/\blostCode:\s*"([^"]*)"/g)) note(m[1], file);
  }
  assert.ok(used.size >= 10, `found the codes in use: ${[...used.keys()]}`);
  const unknown = [...used].filter(([code]) => !known(code));
  assert.deepEqual(unknown, [], "codes outside errors.js's CODES (and LEGACY_CODES)");
});

test("the adapters, the integrations, tools.js, host.js, conversation.js, window.js, clear-tool-uses.js and bin/mcp.js make their errors with toolctxError only", () => {
  const scope = sources.filter(({ file }) =>
    /^(adapters|integrations)\/|^(tools|references|grep|host|errors|conversation|window|clear-tool-uses)\.js$|^bin\/mcp\.js$/.test(file));
  for (const file of ["conversation.js", "window.js", "clear-tool-uses.js", "bin/mcp.js"]) {
    assert.ok(scope.some((s) => s.file === file), `${file} is in scope`);
  }
  assert.ok(scope.length > 20, `${scope.length} files`);
  for (const { file, source } of scope) {
    assert.doesNotMatch(source, /Object\.assign\(new (Type)?Error/, `${file} builds an error by hand`);
    assert.doesNotMatch(source, /\bnew (Type|Range)?Error\([^)]*\)[^;\n]*code/, `${file} gives a hand-made error a code`);
    if (file === "host.js") continue;
    assert.doesNotMatch(source, /function (toolctxError|typedError|typed|codeError|fail)\(/, `${file} defines an error constructor of its own`);
  }
});

test("every code the Rust core gives its errors (crates/core/src/error.rs) is in the table", () => {
  const rust = readFileSync(join(root, "crates", "core", "src", "error.rs"), "utf8");
  const body = rust.slice(rust.indexOf("pub fn code(self)"), rust.indexOf("type Source"));
  const codes = [...body.matchAll(/=> "([A-Z_]+)"/g)].map((m) => m[1]);
  assert.ok(codes.length >= 10, `read ${codes.length} codes from crates/core/src/error.rs`);
  for (const code of codes) assert.ok(Object.hasOwn(CODES, code), `${code} (crates/core/src/error.rs) is in CODES`);
});

test("the table is SPEC §9's codes, each with a one-line meaning, frozen", () => {
  assert.deepEqual(Object.keys(CODES).sort(), [
    "ABORTED", "CLOSED", "CORRUPT_RECORD", "EEXIST", "INTERNAL", "INVALID_ARGUMENT", "LOCK_LOST", "NOT_FOUND",
    "NOT_SERIALIZABLE", "OUTSIDE_STORE", "QUOTA_EXCEEDED", "READ_ONLY", "STORAGE", "TIMEOUT", "TOO_LARGE",
    "UNAUTHORIZED", "UNSUPPORTED",
  ]);
  for (const [code, meaning] of Object.entries(CODES)) assert.match(meaning, /^[^\n]{10,120}$/, code);
  assert.ok(Object.isFrozen(CODES) && Object.isFrozen(LEGACY_CODES));
  for (const [legacy, code] of Object.entries(LEGACY_CODES)) assert.ok(Object.hasOwn(CODES, code), `${legacy} means ${code}`);
});

test("docs/errors.md shows the same table: each code with the same meaning", () => {
  const doc = readFileSync(join(root, "docs", "errors.md"), "utf8");
  /** The first column (a code) and the second of the rows of the section under `heading`. */
  const rows = (heading) => {
    const start = doc.indexOf(`\n${heading}\n`);
    assert.ok(start >= 0, heading);
    const next = doc.indexOf("\n## ", start + 1);
    const section = doc.slice(start, next === -1 ? undefined : next);
    return Object.fromEntries([...section.matchAll(/^\| `([A-Z_]+)` \| `?([^|`]+?)`? \|/gm)].map((m) => [m[1], m[2]]));
  };
  const codes = rows("## Codes");
  assert.deepEqual(Object.keys(codes).sort(), Object.keys(CODES).sort(), "the codes of docs/errors.md");
  for (const [code, meaning] of Object.entries(codes)) assert.equal(meaning, CODES[code], `the meaning of ${code}`);
  assert.deepEqual(rows("## Kept for compatibility"), { ...LEGACY_CODES }, "the legacy codes of docs/errors.md, and what each means");
});

test("toolctxError: an Error named ToolctxError with its code, the cause only when given, and fields", () => {
  const cause = new Error("the backend's");
  const err = toolctxError("STORAGE", "R2 put failed", { cause, r2Code: 10020 });
  assert.ok(err instanceof Error);
  assert.equal(err.name, "ToolctxError");
  assert.equal(err.code, "STORAGE");
  assert.equal(err.message, "R2 put failed");
  assert.equal(err.cause, cause);
  assert.equal(err.r2Code, 10020);
  const bare = toolctxError("TIMEOUT", "no answer");
  assert.equal(Object.hasOwn(bare, "cause"), false);
  assert.equal(String(bare), "ToolctxError: no answer");
});
