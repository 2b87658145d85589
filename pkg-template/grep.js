// toolctx/tools' line matching, for grep_context (tools.js): a pattern as a model writes
// it made a matcher (linePattern), and lines scanned with it in bounded time (scan).
//
// Bounded by design: a regular expression is matched by the core's linear-time matcher
// (crates/core/src/grep.rs: no look-around, no back-references; a pattern such as `(a+)+$`
// cannot backtrack), reached through the manager (`manager[READER].matchingLines`,
// protocol.js), so it is that manager's core; a line is matched in its first
// `maxMatchChars` characters. A pattern with no regular-expression syntax is plain text,
// found with the engine's substring search, in the whole line. scan hands the matcher
// chunks of lines, looks at the clock between chunks, lets other work run, and stops at
// its deadline saying how far it got.
//
// It imports nothing but errors.js, protocol.js and references.js (the message helpers).

import { toolctxError } from "./errors.js";
import { READER } from "./protocol.js";
import { count, quoted } from "./references.js";

/**
 * The core's matcher for a pattern as a model writes it: a plain pattern, or the
 * JavaScript literal form `/…/i` (its flags: `i` → case-insensitive, `s` → `.` matches
 * anything; `g`, `m`, `u` and `y` mean nothing for one line).
 */
export function linePattern(manager, pattern, s) {
  if (typeof pattern !== "string" || pattern.length === 0) throw toolctxError("INVALID_ARGUMENT", `pattern must be a regular expression (a non-empty string), got ${quoted(pattern)}`);
  if (pattern.length > s.maxPatternChars) {
    throw toolctxError("INVALID_ARGUMENT", `pattern is ${count(pattern.length)} characters; at most ${count(s.maxPatternChars)}: match a distinctive part of the line`);
  }
  const literal = /^\/(.+)\/([gimsuy]+)$/s.exec(pattern);
  const source = literal ? `${literal[2].includes("i") ? "(?i)" : ""}${literal[2].includes("s") ? "(?s)" : ""}${literal[1]}` : pattern;
  const plain = PLAIN_TEXT.exec(source);
  if (plain) return plainText(plain[2], plain[1] !== undefined);
  const reader = manager[READER];
  try {
    reader.matchingLines(source, ""); // compiled now, so a pattern that does not compile fails here
  } catch (error) {
    if (error?.code !== "INVALID_ARGUMENT") throw error;
    throw toolctxError("INVALID_ARGUMENT", `pattern: ${error.message}`, { cause: error });
  }
  return {
    wholeLines: false, // the automaton's time grows with the line: maxMatchChars bounds it
    // One crossing into the core a chunk; the core keeps the pattern it compiled above.
    matchingLines: (lines) => reader.matchingLines(source, lines.join("\n")),
  };
}

/** A pattern with no regular-expression syntax (optionally after `(?i)`): text to find as it is. */
const PLAIN_TEXT = /^(\(\?i\))?([^\\^$.|?*+()[\]{}]+)$/;

/**
 * The matcher of a plain-text pattern, with the interface of the core's (linePattern):
 * the text is found with `includes` (the engine's own substring search, many times faster
 * than the core's automaton, which has no literal search of its own), case-folded with
 * `(?i)`.
 */
function plainText(text, caseless) {
  const needle = caseless ? text.toLowerCase() : text;
  return {
    wholeLines: true, // a substring search is fast enough for any line
    matchingLines(lines) {
      const hits = [];
      lines.forEach((line, i) => {
        if ((caseless ? line.toLowerCase() : line).includes(needle)) hits.push(i);
      });
      return hits;
    },
  };
}

/** Characters of lines handed to the matcher at once: the time between two looks at the clock. */
const GREP_CHUNK_CHARS = 8 * 1024;

/** How long a grep matches before it lets other work run (the MCP server's other calls). */
const GREP_YIELD_MS = 20;

/** A turn of the event loop (a macrotask: timers and I/O run). */
const yieldToOthers = () => new Promise((resolve) => setTimeout(resolve, 0));

/**
 * The 0-based numbers of the lines of `lines` from `from` up to `to` that match, scanned
 * in chunks until `enough` matches, `to`, or `deadline`, letting other work run every
 * GREP_YIELD_MS and after a last chunk that took that long: `{hits, next, clipped}`, where `next` is the first line not scanned and
 * `clipped` counts the lines matched in their first maxMatchChars characters only.
 */
export async function scan(pattern, lines, { from, to, enough, deadline }, s) {
  const hits = [];
  let clipped = 0;
  let i = from;
  let since = Date.now();
  while (i < to && hits.length < enough && Date.now() < deadline) {
    const chunk = [];
    let chars = 0;
    for (let j = i; j < to && (chunk.length === 0 || chars < GREP_CHUNK_CHARS); j++) {
      const cut = lines[j].length > s.maxMatchChars && !pattern.wholeLines;
      const line = cut ? lines[j].slice(0, s.maxMatchChars) : lines[j];
      if (cut) clipped++;
      chunk.push(line);
      chars += line.length + 1;
    }
    for (const k of pattern.matchingLines(chunk)) hits.push(i + k);
    i += chunk.length;
    // After the chunk, not before it: a chunk that ran past the deadline (a slow pattern
    // on a loaded machine) still lets other work run before the grep ends.
    if (Date.now() - since >= GREP_YIELD_MS) {
      await yieldToOthers();
      since = Date.now();
    }
  }
  return { hits, next: i, clipped };
}
