// The SQL text of the one table the adapters over SQLite share (toolctx/sqlite,
// /cloudflare's d1Storage and durableObjectSqlStorage), written once: their drivers differ
// (synchronous statements, D1's `prepare().bind()`, a Durable Object's `sql.exec`), the
// statements do not. One row a file:
//   id INTEGER PRIMARY KEY (the rowid: an FTS5 external-content index, the search
//   push-down's, refers to it as content_rowid), path TEXT UNIQUE, bytes BLOB, size,
//   created and modified (ms since the epoch);
// and a lease row a lock in `<table>_locks`. Every statement takes plain `?` placeholders
// in order (every driver numbers them alike); the table's name is quoted (base/sql.js).
//
// - write: INSERT ... ON CONFLICT (path) DO UPDATE; exclusive: ON CONFLICT DO NOTHING, no
//   row changed → taken (atomic: one statement); append: one statement (the bytes
//   concatenated and cast back to a BLOB, so they stay bytes);
// - readRange: substr() of the value cast to a BLOB, counted in bytes (substr() of TEXT
//   counts characters: a range of TEXT, which other SQL may write, is of its UTF-8 bytes);
// - list: the paths in [prefix, prefix with its last "/" made "0") (BINARY collation:
//   byte order), reduced to the folder's direct children in SQL; no LIKE.
//
// A table or a row of the wrong shape, which other SQL can make, is typed here, once for
// sqliteStorage, d1Storage and durableObjectSqlStorage: a table of the name given without
// this table's columns is INVALID_ARGUMENT (`checkColumns`, on `columns`' answer); a row
// whose bytes column holds no bytes (an INTEGER, a REAL, a NULL) is CORRUPT_RECORD
// (`rowBytes`, on `select`'s and `range`'s `type`), where each driver would make other
// bytes of it or none.

import { toolctxError } from "../../errors.js";
import { folderPrefix } from "./listing.js";
import { quoteIdentifier } from "./sql.js";

/** The columns of the table (it may have more). */
const COLUMNS = ["id", "path", "bytes", "size", "created", "modified"];
/** The SQLite types (typeof) a file's bytes may have: a BLOB, as the adapters write them, or TEXT, as other SQL may (read as its UTF-8 bytes). */
const BYTES_TYPES = new Set(["blob", "text"]);

/** The direct children of a folder: each path of `rest` cut after the prefix, up to and with its next "/". */
const child = (rest) => `SELECT DISTINCT CASE WHEN instr(rest, '/') > 0 THEN substr(rest, 1, instr(rest, '/')) ELSE rest END AS name FROM (${rest})`;

/** The statements over table `table` (a name checked by base/sql.js's tableName) and its locks' table. */
export function sqliteTable(table) {
  const files = quoteIdentifier(table);
  const locks = quoteIdentifier(`${table}_locks`);
  const insert = `INSERT INTO ${files} (path, bytes, size, created, modified) VALUES (?, ?, ?, ?, ?)`;
  return {
    /** The two tables, created if missing: one statement each (D1 runs them as a batch). */
    schema: [
      `CREATE TABLE IF NOT EXISTS ${files} (
        id INTEGER PRIMARY KEY,
        path TEXT NOT NULL UNIQUE,
        bytes BLOB NOT NULL,
        size INTEGER NOT NULL,
        created INTEGER NOT NULL,
        modified INTEGER NOT NULL)`,
      `CREATE TABLE IF NOT EXISTS ${locks} (name TEXT PRIMARY KEY, token TEXT NOT NULL, holder TEXT NOT NULL, expires INTEGER NOT NULL)`,
    ],
    /** (table, unquoted) → name: the columns of the table, for `checkColumns` */
    columns: "SELECT name FROM pragma_table_info(?)",
    /** (path) → bytes, type (SQLite's typeof of bytes, for `rowBytes`) */
    select: `SELECT bytes, typeof(bytes) AS type FROM ${files} WHERE path = ?`,
    /**
     * (offset + 1, length, path) → bytes, the range; type, the column's (the range's own is a BLOB, or a NULL, whatever the column holds).
     * The value is cast to a BLOB first: substr() of TEXT counts characters, of a BLOB bytes
     * (TEXT's bytes in the database's encoding: UTF-8, as D1's and a Durable Object's are; a
     * UTF-16 database handed to sqliteStorage gives UTF-16 bytes, where a whole read is UTF-8).
     */
    range: `SELECT substr(CAST(${files}.bytes AS BLOB), ?, ?) AS bytes, typeof(${files}.bytes) AS type FROM ${files} WHERE path = ?`,
    /** (path, bytes, size, created, modified) */
    upsert: `${insert} ON CONFLICT (path) DO UPDATE SET bytes = excluded.bytes, size = excluded.size, modified = excluded.modified`,
    /** (path, bytes, size, created, modified): one row changed, or none where the path is taken */
    create: `${insert} ON CONFLICT (path) DO NOTHING`,
    /** (path, bytes, size, created, modified) */
    append: `${insert} ON CONFLICT (path) DO UPDATE SET bytes = CAST(bytes || excluded.bytes AS BLOB), size = size + excluded.size, modified = excluded.modified`,
    /** (path, bytes, size, created, modified, limit): one row changed, or none where the row would grow past `limit` bytes (nothing written) */
    appendWithin: `${insert} ON CONFLICT (path) DO UPDATE SET bytes = CAST(bytes || excluded.bytes AS BLOB), size = size + excluded.size, modified = excluded.modified
      WHERE ${files}.size + excluded.size <= ?`,
    /** (path) */
    remove: `DELETE FROM ${files} WHERE path = ?`,
    /** (name) → holder, expires */
    lockHolder: `SELECT holder, expires FROM ${locks} WHERE name = ?`,
    /** (name, token, holder, expires) */
    lockPut: `INSERT OR REPLACE INTO ${locks} (name, token, holder, expires) VALUES (?, ?, ?, ?)`,
    /** (name, token, holder, expires, now): one row changed where the lock was free or its lease had run out, none where it is held; one statement */
    lockTake: `INSERT INTO ${locks} (name, token, holder, expires) VALUES (?, ?, ?, ?)
      ON CONFLICT (name) DO UPDATE SET token = excluded.token, holder = excluded.holder, expires = excluded.expires WHERE ${locks}.expires <= ?`,
    /** (expires, name, token): one row changed while the lease is ours */
    lockRefresh: `UPDATE ${locks} SET expires = ? WHERE name = ? AND token = ?`,
    /** (name, token): one row changed where the lease was still ours */
    lockRelease: `DELETE FROM ${locks} WHERE name = ? AND token = ?`,
    /** The statement that lists folder `dir`, and its parameters; its rows go to `childNames`. */
    children(dir) {
      const prefix = folderPrefix(dir);
      if (prefix === "") return { sql: child(`SELECT path AS rest FROM ${files}`), params: [] };
      // substr() counts characters: the prefix's length in code points
      return { sql: child(`SELECT substr(path, ?) AS rest FROM ${files} WHERE path >= ? AND path < ?`), params: [[...prefix].length + 1, prefix, `${prefix.slice(0, -1)}0`] };
    },
  };
}

/** The largest offset or length given to substr(): it takes 32-bit numbers (a larger one wraps), and no BLOB is longer (SQLite's cap is 2^31 - 1 bytes). */
const SUBSTR_MAX = 2 ** 31 - 1;

/** The parameters of `range` for bytes [offset, offset + length) of `path`. */
export function rangeParams(path, offset, length) {
  return [Math.min(offset, SUBSTR_MAX - 1) + 1, Math.min(length, SUBSTR_MAX), path];
}

/** The names of a listing's rows (`children`), sorted. */
export function childNames(rows) {
  return rows.map((row) => row.name).filter((name) => name !== "").sort();
}

/**
 * Nothing where `rows` (the answer of `columns`) name every column of the table; else
 * INVALID_ARGUMENT from `adapter`: a table of that name exists with other columns
 * (another program's or adapter's), and every statement over it would fail.
 */
export function checkColumns(rows, table, adapter) {
  const have = new Set(rows.map((row) => String(row.name).toLowerCase())); // SQLite's names ignore ASCII case
  const missing = COLUMNS.filter((name) => !have.has(name));
  if (missing.length > 0) {
    throw toolctxError("INVALID_ARGUMENT", `${adapter}: table ${table} exists with other columns (it has no ${missing.join(", ")}): another program's or adapter's table; choose another \`table\``);
  }
}

/**
 * The bytes of `row` (a row of `select` or `range`) where its bytes column holds bytes
 * (`type` BLOB or TEXT), from what each driver answers: a BLOB as a Buffer or Uint8Array
 * (better-sqlite3, node:sqlite, bun:sqlite), an ArrayBuffer (a Durable Object; D1 in some
 * releases) or an array of numbers (D1); TEXT as a string (its UTF-8 bytes); a range of an
 * empty BLOB as null. Else CORRUPT_RECORD from `adapter`: the row of `path` holds an
 * INTEGER, a REAL or a NULL there, written by other SQL.
 * @returns {Uint8Array}
 */
export function rowBytes(row, path, adapter) {
  if (!BYTES_TYPES.has(row.type)) {
    throw toolctxError("CORRUPT_RECORD", `${adapter} read ${path}: the row's bytes column holds ${String(row.type).toUpperCase()}, not a BLOB (written by other SQL?)`);
  }
  const value = row.bytes;
  if (value === null) return new Uint8Array(0);
  if (typeof value === "string") return new TextEncoder().encode(value);
  if (ArrayBuffer.isView(value)) return new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
  if (Array.isArray(value)) return Uint8Array.from(value);
  return new Uint8Array(value);
}
