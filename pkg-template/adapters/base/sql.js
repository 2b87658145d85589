// What the adapters over SQL databases (toolctx/postgres, toolctx/sqlite, D1, Durable Object
// SQLite) share: the name of their table, checked where it enters and quoted wherever it is
// written into a statement (every value travels as a parameter; a name cannot); and their
// largest value, checked where it enters.

import { toolctxError } from "../../errors.js";

/** PostgreSQL keeps the first 63 bytes of a name and drops the rest silently: longer ones are refused. */
const MAX_NAME_BYTES = 63;

/**
 * `name` if it can name a table: 1 to 63 bytes of UTF-8, no NUL, no surrounding spaces;
 * else INVALID_ARGUMENT from `adapter`. Any other character is allowed: the name is
 * always quoted (`quoteIdentifier`).
 */
export function tableName(name, adapter) {
  const bytes = typeof name === "string" ? new TextEncoder().encode(name).length : 0;
  if (typeof name !== "string" || bytes === 0 || bytes > MAX_NAME_BYTES || name.includes("\0") || name.trim() !== name) {
    throw toolctxError("INVALID_ARGUMENT", `${adapter}: table must be a name of 1 to ${MAX_NAME_BYTES} bytes, without NUL or surrounding spaces (got ${JSON.stringify(String(name)).slice(0, 80)})`);
  }
  return name;
}

/** `name` as a quoted SQL identifier: in double quotes, each double quote doubled (SQL's rule, PostgreSQL's and SQLite's). */
export function quoteIdentifier(name) {
  return `"${name.replaceAll('"', '""')}"`;
}

/** The `maxValueBytes` option (`fallback`: the database's own limit) if it is a whole number ≥ 1; else INVALID_ARGUMENT from `adapter`. */
export function maxValueBytes(options, fallback, adapter) {
  const max = options.maxValueBytes ?? fallback;
  if (!(Number.isInteger(max) && max >= 1)) throw toolctxError("INVALID_ARGUMENT", `${adapter}: maxValueBytes must be a whole number ≥ 1`);
  return max;
}
