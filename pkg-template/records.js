// A record as loadContexts returns it: the bytes a host read are parsed here, in
// JavaScript (they never cross into wasm), and the header fields are checked as the
// core checks them (crates/core/src/record.rs: RecordView), so a torn or foreign file is skipped.

// A fatal decoder is many times slower than a replacing one in Bun and Deno (about 9x
// and 6x on 64 KB), so bytes are decoded replacing, and decoded again fatally (to
// refuse them) only when the text holds a U+FFFD, which valid records almost never do.
const replacing = new TextDecoder("utf-8");
const fatal = new TextDecoder("utf-8", { fatal: true });

function decode(bytes) {
  const text = replacing.decode(bytes);
  return text.includes("\uFFFD") ? fatal.decode(bytes) : text;
}

/** The text of what a host's read gave; undefined when it is neither bytes nor a string. */
function textOf(value) {
  if (typeof value === "string") return value;
  if (value instanceof ArrayBuffer || ArrayBuffer.isView(value)) return decode(value);
  return undefined;
}

const optional = (v, type) => v === undefined || v === null || typeof v === type;

/**
 * The record in `value` (a string or bytes from the host), or a string saying why it is
 * not one (the core words the onDebug warning: "Failed to load <path>: not a whole
 * record (<why>)").
 */
export function parseRecord(value) {
  let record;
  try {
    const text = textOf(value); // a fatal decode throws on bytes that are not UTF-8
    if (text === undefined) return "storage read returned neither bytes, a string nor undefined";
    record = JSON.parse(text);
  } catch (err) {
    return `not a toolctx record: ${err?.message ?? err}`;
  }
  if (record === null || typeof record !== "object" || Array.isArray(record)) {
    return "not a toolctx record: not an object";
  }
  const { v, toolName, toolDescription, args, argsHash, timestamp, taskId, queryId, toolCallId } = record;
  if (!optional(v, "number") || (typeof v === "number" && !(Number.isInteger(v) && v >= 0))) {
    return "not a toolctx record: v is not a version number";
  }
  if (typeof v === "number" && v > 1) return `record format v${v} is newer than this toolctx reads`;
  if (typeof toolName !== "string" || typeof timestamp !== "string") {
    return "not a toolctx record: toolName and timestamp must be strings";
  }
  if (args === null || typeof args !== "object" || Array.isArray(args)) {
    return "record args is not an object";
  }
  const typed = optional(toolDescription, "string") && optional(argsHash, "string") && optional(taskId, "number") &&
    optional(queryId, "string") && optional(toolCallId, "string");
  if (!typed) return "not a toolctx record: a field has the wrong type";
  return record;
}
