// toolctx/tools' references: how the model names a saved tool output, and what it reads
// there. tools.js re-exports the public part (parseReference, lineView, findRecord,
// resolveHandles, POINTER_SCHEME); the tools use the rest (locate, recordOf, linesOf,
// lineRange, jsonPath), and tools.js and grep.js word their messages with its helpers
// (count, clip, quoted).
//
// - A reference is a handle (`ctx:…`), optionally with a slice: `#L10-40` for lines,
//   `#$.hits[0:5]` for a JSON path. Models decorate it (quotes, backticks, brackets,
//   punctuation after it); parseReference forgives that, and nothing else: a handle
//   followed by prose is prose.
// - A record is found by its handle, a `toolctx://` pointer, a filepath or a file name
//   (findRecord), through the manager's core (`manager[READER]`, protocol.js) when it has
//   one, else through its pointers (a stand-in such as the MCP server's store view).
// - A record reads as its line view (the core's, crates/core/src/view.rs): a string is its
//   own lines; an object a field per line (a multi-line string field as its lines); an
//   array an element per line. Lines are numbered from 1, as search_context's passages are.
// - resolveHandles replaces the references in a tool call's arguments by what they name,
//   walking without recursion, so a cycle or a 100,000-deep argument is copied as it is.
//
// It imports nothing but errors.js and protocol.js (tools.js and grep.js import it), so
// toolctx/tools loads wherever the manager does.

import { toolctxError } from "./errors.js";
import { READER } from "./protocol.js";

/** The scheme of the older pointers (`toolctx://<filename>` or `toolctx://<filepath>`), accepted as input. */
export const POINTER_SCHEME = "toolctx://";

// ---- what every part of toolctx/tools shares ------------------------------------------------

/** An INVALID_ARGUMENT error unless `manager` is a ContextManager (or a stand-in): `what` names the caller. */
export function checkManager(manager, what) {
  if (!manager || typeof manager.loadContexts !== "function" || typeof manager.getAllPointers !== "function") {
    throw toolctxError("INVALID_ARGUMENT", `toolctx/tools: ${what} needs a toolctx ContextManager`);
  }
}

/** A number as a message writes it (1,234). */
export const count = (n) => n.toLocaleString("en-US");
/** `text` cut at `max` characters, an ellipsis saying so. */
export const clip = (text, max) => (text.length <= max ? text : `${text.slice(0, Math.max(0, max - 1))}…`);
/** A value as a message quotes it: JSON where it can be, clipped. */
export const quoted = (value) => {
  let text;
  try {
    text = typeof value === "bigint" ? `${value}n` : JSON.stringify(value);
  } catch {
    text = undefined; // a cycle
  }
  return clip(text ?? String(typeof value === "symbol" ? value.description : typeof value), 60);
};

// ---- references -----------------------------------------------------------------------------

/** A handle, optionally with a slice: lines (`#L10-40`, `#L10`) or a JSON path (`#$` and
 * what follows it, without white space but inside quoted keys). Nothing else: a handle
 * followed by prose is prose. */
const HANDLE_WITH_SLICE = /^(ctx:[a-z2-7]{10,12})(?:#(L\d+(?:-L?\d+)?|\$(?:[^\s"]|"(?:[^"\\]|\\.)*")*))?$/i;
/** What models put around a handle: quotes and brackets of every kind, and punctuation after it. */
const OPENERS = "`'\"“‘«<([{";
const CLOSERS = "`'\"”’»>)]}";
/** What a model puts after a handle: punctuation, and a closing quote or bracket without its opener. */
const TRAILING = /[.,;:!?)>'"`”’»]$/;

/**
 * The handle and slice `text` names, as a model writes it (`ctx:…`, `ctx:…#L10-40`,
 * `ctx:…#$.a[0]`), forgiving what models put around it: white space, a pair of quotes,
 * backticks (one or three) or brackets, and punctuation after it. Undefined when `text` is
 * anything else (prose that mentions a handle included).
 */
export function parseReference(text) {
  if (typeof text !== "string" || text.length > 4096) return undefined;
  let t = text.trim();
  // Peeled one layer at a time: a pair (quotes, backticks, brackets), else a character after
  // it (punctuation, a closer without its opener), else an opener without its closer.
  for (;;) {
    const open = OPENERS.indexOf(t[0]);
    let next;
    if (open >= 0 && t.length > 1 && t[t.length - 1] === CLOSERS[open]) next = t.slice(1, -1);
    else if (TRAILING.test(t) && !HANDLE_WITH_SLICE.test(t)) next = t.slice(0, -1);
    else if (open >= 0 && !HANDLE_WITH_SLICE.test(t)) next = t.slice(1);
    else break;
    t = next.trim();
  }
  const m = HANDLE_WITH_SLICE.exec(t);
  return m ? { handle: m[1].toLowerCase(), slice: m[2] } : undefined;
}

/** A result as the model reads it: its line view (see the module's docs; `manager`'s core makes it), as lines. */
export function lineView(result, manager) {
  checkManager(manager, "lineView");
  if (result === undefined) return [];
  return manager[READER].lines(JSON.stringify(result)).split("\n");
}

/**
 * The pointer of the record `ref` names: a handle (`ctx:…`, decorated or with a slice as
 * models write it), a `toolctx://` pointer (a file name or a filepath after the scheme), a
 * filepath or a file name. A NOT_FOUND error, worded for the model, when no record of
 * `manager` has it.
 */
export function findRecord(manager, ref) {
  checkManager(manager, "findRecord");
  return locate(manager, ref).pointer;
}

/** The pointer of the record `ref` names (findRecord) and the slice given with its handle (`#L…`, `#$…`), if any. */
export function locate(manager, ref) {
  if (typeof ref !== "string" || ref.trim() === "") {
    throw toolctxError("INVALID_ARGUMENT", `handle: a record is named by its handle (ctx:…), which search_context and grep_context print; got ${quoted(ref)}`);
  }
  const reference = parseReference(ref);
  const text = ref.trim();
  const name = text.startsWith(POINTER_SCHEME) ? text.slice(POINTER_SCHEME.length) : text;
  // A handle or a filepath names one pointer, read alone; a file name is looked for.
  const filepath = reference ? manager.resolveHandle(reference.handle) : name;
  const found = filepath === undefined ? undefined : pointerAt(manager, filepath);
  if (found) return { pointer: found, slice: reference?.slice };
  if (!reference) {
    const named = manager.getAllPointers().find((p) => p.filename === name || p.handle === name);
    if (named) return { pointer: named };
    if (/^\W*ctx:[a-z2-7]{10,12}#/i.test(text)) {
      throw toolctxError("INVALID_ARGUMENT", `handle: a slice is #L<from>-<to> (lines) or #$<path> (a JSON path such as $.hits[0:5]); got ${clip(text, 80)}`);
    }
  }
  throw toolctxError("NOT_FOUND", `handle: no saved tool output has the handle ${clip(reference?.handle ?? text, 120)}; search_context lists the handles that exist`);
}

/** The pointer at `filepath`, or undefined: the core's one pointer, else (a stand-in for a
 * manager) a look through every pointer. */
function pointerAt(manager, filepath) {
  const reader = manager[READER];
  if (typeof reader?.pointerAt !== "function") return manager.getAllPointers().find((p) => p.filepath === filepath);
  return reader.pointerAt(filepath);
}

/** The record of `pointer`, or NOT_FOUND when it can no longer be read. */
export async function recordOf(manager, pointer) {
  const [record] = await manager.loadContexts([pointer.filepath]);
  if (!record) throw toolctxError("NOT_FOUND", `handle: the saved output ${pointer.handle} can no longer be read (removed since)`);
  return record;
}

/** The line view of the record of `pointer`. */
export async function linesOf(manager, pointer) {
  return lineView((await recordOf(manager, pointer)).result, manager);
}

/**
 * A `#L<from>-<to>` slice as 1-based lines `{from, to}` of a view of `total` lines: the
 * bounds in either order, `to` past the end read as the end. An INVALID_ARGUMENT error
 * naming what exists when the lines start past the end.
 */
export function lineRange(slice, total, handle) {
  const m = /^L(\d+)(?:-L?(\d+))?$/i.exec(slice);
  if (!m) throw toolctxError("INVALID_ARGUMENT", `handle: #${clip(slice, 40)} is no line slice: read lines with #L<from>-<to>`);
  let [from, to] = [Number(m[1]), m[2] === undefined ? Number(m[1]) : Number(m[2])];
  if (to < from) [from, to] = [to, from];
  if (from < 1) throw toolctxError("INVALID_ARGUMENT", `handle: lines are numbered from 1 (${handle}#L${m[1]}${m[2] ? `-${m[2]}` : ""})`);
  if (from > total) {
    throw toolctxError("INVALID_ARGUMENT", `handle: ${handle} has ${count(total)} lines, so #L${from}${to === from ? "" : `-${to}`} is past its end; ask for lines 1-${count(total)}`);
  }
  return { from, to: Math.min(to, total) };
}

// ---- references passed by handle ----------------------------------------------------------------

/** How many different references one resolveHandles call resolves at most. */
const MAX_REFERENCES = 100;

/** Whether `value` is a container resolveHandles copies: an array, or a plain object (its prototype Object.prototype or null). */
function copied(value) {
  if (value === null || typeof value !== "object") return false;
  if (Array.isArray(value)) return true;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/**
 * A copy of `args` in which every string that is exactly a handle, optionally with a
 * slice, is replaced by the stored value: `ctx:…` the whole result; `ctx:…#L10-40` (or
 * `#L10`) those lines of its line view, as one string; `ctx:…#$.hits[0:5]` the part a
 * JSON path names (`.key`, `["key"]`, `[i]`, `[start:end]`). Quotes, backticks and
 * trailing punctuation a model puts around a handle are forgiven (`parseReference`).
 * Arrays and plain objects are copied (own keys such as `__proto__` stay keys; a cycle
 * or any depth of nesting is copied as it is); other values are kept as they are. A
 * handle no record has, or a slice that does not apply, is an error whose message names
 * the argument and the model can act on. `options.asText`: a stored value that is not a
 * string is given as its JSON text (indented), for a parameter that takes text.
 */
export async function resolveHandles(args, manager, options = {}) {
  checkManager(manager, "resolveHandles");
  const asText = options?.asText === true;
  // 1. The references, each once with where it was first seen (a walk without recursion:
  // any depth, cycles seen once; a place is its key and its parent's place, made a path
  // only for an error).
  const texts = new Map();
  const seen = new Set();
  const stack = [{ value: args, key: undefined, parent: undefined }];
  while (stack.length > 0) {
    const place = stack.pop();
    const { value } = place;
    if (typeof value === "string") {
      const reference = parseReference(value);
      if (reference && !texts.has(value)) texts.set(value, { reference, place });
    } else if (copied(value) && !seen.has(value)) {
      seen.add(value);
      const array = Array.isArray(value);
      // Pushed last to first, so that places are visited in order: an error names the first.
      for (const key of Object.keys(value).reverse()) stack.push({ value: value[key], key: array ? Number(key) : key, parent: place });
    }
  }
  if (texts.size > MAX_REFERENCES) {
    throw toolctxError("INVALID_ARGUMENT", `the arguments hold ${count(texts.size)} different handles; at most ${MAX_REFERENCES} are resolved in one call`);
  }
  // 2. Their values, each record read once; an error names the argument the handle was in.
  const values = new Map();
  const records = new Map();
  for (const [text, { reference, place }] of texts) {
    try {
      const value = await resolveOne(manager, reference, records);
      values.set(text, asText && typeof value !== "string" ? (JSON.stringify(value, null, 2) ?? String(value)) : value);
    } catch (error) {
      if (error?.code !== "NOT_FOUND" && error?.code !== "INVALID_ARGUMENT") throw error; // the storage's, not the model's
      const code = error.code === "NOT_FOUND" ? "NOT_FOUND" : "INVALID_ARGUMENT";
      throw toolctxError(code, `${pathOf(place)}: ${error.message.replace(/^handle: /, "")}`, { cause: error });
    }
  }
  // 3. The copy, with the same shape (cycles and shared parts included).
  const copies = new Map();
  const pending = [];
  const copyOf = (value) => {
    if (typeof value === "string") return values.has(value) ? values.get(value) : value;
    if (!copied(value)) return value;
    let copy = copies.get(value);
    if (copy === undefined) {
      copy = Array.isArray(value) ? new Array(value.length) : Object.create(Object.getPrototypeOf(value));
      copies.set(value, copy);
      pending.push(value);
    }
    return copy;
  };
  const root = copyOf(args);
  while (pending.length > 0) {
    const value = pending.pop();
    const copy = copies.get(value);
    for (const key of Object.keys(value)) {
      // defineProperty, not assignment: an own "__proto__" key stays a key.
      Object.defineProperty(copy, key, { value: copyOf(value[key]), writable: true, enumerable: true, configurable: true });
    }
  }
  return root;
}

/** A place of resolveHandles' walk as a path (`text`, `items[2].path`; the arguments themselves: `arguments`). */
function pathOf(place) {
  const parts = [];
  for (let at = place; at?.parent !== undefined; at = at.parent) {
    parts.push(typeof at.key === "number" ? `[${at.key}]` : /^[A-Za-z_$][\w$]*$/.test(at.key) ? `.${at.key}` : `[${JSON.stringify(at.key)}]`);
  }
  const path = parts.reverse().join("");
  return path === "" ? "arguments" : path.replace(/^\./, "");
}

/** The value `{handle, slice}` names; `records` keeps each record (and its line view) read by this call. */
async function resolveOne(manager, { handle, slice }, records) {
  const pointer = findRecord(manager, handle);
  let read = records.get(pointer.filepath);
  if (read === undefined) records.set(pointer.filepath, (read = { record: await recordOf(manager, pointer) }));
  const { record } = read;
  if (slice === undefined) return record.result;
  const text = `${pointer.handle}#${slice}`;
  if (slice.startsWith("$")) return jsonPath(record.result, slice, text);
  const view = (read.view ??= lineView(record.result, manager));
  const { from, to } = lineRange(slice, view.length, pointer.handle);
  return view.slice(from - 1, to).join("\n");
}

/** The part of `value` that `path` ($, .key, ["key"], [i], [start:end]) names; errors begin with `name`. */
export function jsonPath(value, path, text, name = clip(text, 80)) {
  const step = /^(?:\.([A-Za-z_$][\w$-]*)|\[\s*"((?:[^"\\]|\\.)*)"\s*\]|\[\s*(-?\d+)\s*\]|\[\s*(-?\d+)?\s*:\s*(-?\d+)?\s*\])/;
  const where = name === clip(text, 80) ? "" : ` (in ${clip(text, 80)})`;
  const fail = (why) => toolctxError("INVALID_ARGUMENT", `${name}: ${why}${where}`);
  let rest = path.slice(1);
  let at = value;
  while (rest.length > 0) {
    const m = step.exec(rest);
    if (!m) throw fail(`cannot read the JSON path at "${clip(rest, 60)}"; a path is $ then .key, ["key"], [i] or [start:end]`);
    rest = rest.slice(m[0].length);
    let key = m[1];
    if (m[2] !== undefined) {
      try {
        key = JSON.parse(`"${m[2]}"`);
      } catch {
        throw fail(`["${clip(m[2], 40)}"] is not a JSON string (a bad escape)`);
      }
    }
    if (key !== undefined) {
      if (at === null || typeof at !== "object" || Array.isArray(at) || !Object.hasOwn(at, key)) throw fail(`no field "${clip(key, 60)}" there`);
      at = at[key];
    } else if (m[3] !== undefined) {
      if (!Array.isArray(at)) throw fail(`[${m[3]}] needs an array`);
      const i = Number(m[3]) < 0 ? at.length + Number(m[3]) : Number(m[3]);
      if (i < 0 || i >= at.length) throw fail(`index ${m[3]} is outside the ${at.length} elements`);
      at = at[i];
    } else {
      if (!Array.isArray(at) && typeof at !== "string") throw fail("a slice needs an array or a string");
      at = at.slice(m[4] === undefined ? 0 : Number(m[4]), m[5] === undefined ? undefined : Number(m[5]));
    }
  }
  return at;
}
