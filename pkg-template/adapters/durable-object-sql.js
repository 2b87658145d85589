// toolctx/cloudflare's durableObjectSqlStorage: records as rows of one table in the SQLite
// database of the Durable Object the code runs in (`ctx.storage.sql`), over the key-value
// base, with no Cloudflare SDK.
//
// The table is toolctx/sqlite's and d1Storage's (base/sqlite-table.js: one row a file, `id
// INTEGER PRIMARY KEY`, path UNIQUE, bytes BLOB, size, created, modified), so one search
// push-down (FTS5 over that table) serves all three and plain SQL reads a record whole.
// Its default name is "toolctx_records": durableObjectStorage keeps its own, differently
// shaped "toolctx_files" in the same database, and the two can live in one object. Each
// operation is one statement of `sql.exec`, atomic on its own: an exclusive create is
// INSERT ... ON CONFLICT DO NOTHING and EEXIST when the cursor wrote no row
// (`rowsWritten`), an append concatenates in SQL, readRange is substr() of the BLOB, list
// a key range reduced to the folder's children in SQL.
//
// `sql.exec` is synchronous, and so is this host: the driver runs its calls without
// waiting a turn; a failure is a rejected Promise, typed (base/backend.js).
//
// lock(name, fn) is the object's queue (durable-object.js's objectLock, shared with
// durableObjectStorage over the same `ctx.storage`): a Durable Object is one instance in
// the world and runs one thing at a time, and everyone using its storage runs inside it,
// so a queue in the object is a real mutual exclusion, and it ends with the object (an
// object that is evicted or crashes loses its queue with its holders: nothing waits out
// a lease). No lease rows are written.
//
// The difference from durableObjectStorage: a row holds at most 2 MB (the SQLite of a
// Durable Object limits a string, BLOB or row to that), so a value over `maxValueBytes`
// is refused with TOO_LARGE, and an append that would grow a row past it changes no row
// (the limit is in the statement) and is TOO_LARGE too; nothing is written either way. durableObjectStorage cuts
// values into cells and has no such limit.

import { toolctxError } from "../errors.js";
import { backendFailure, sqliteCode } from "./base/backend.js";
import { keyValueStorage } from "./base/key-value.js";
import { maxValueBytes, tableName } from "./base/sql.js";
import { checkColumns, childNames, rangeParams, rowBytes, sqliteTable } from "./base/sqlite-table.js";
import { objectLock } from "./durable-object.js";

/** A Durable Object's SQLite limit on a string, BLOB or row, in bytes. */
const DO_MAX_ROW_BYTES = 2_000_000;
/** The largest value written by default: the row limit less room for the path and the numbers beside it. */
export const DO_SQL_MAX_VALUE_BYTES = DO_MAX_ROW_BYTES - 16 * 1024;

/**
 * A StorageHost over the SQLite database of a Durable Object (`ctx.storage`): one table,
 * one row a file, answering synchronously.
 * @param {import("./cloudflare.d.ts").DurableObjectStorageLike} storage
 * @param {import("./cloudflare.d.ts").DurableObjectSqlStorageOptions} [options]
 * @returns {import("./cloudflare.d.ts").CloudflareSqlStorage}
 */
export function durableObjectSqlStorage(storage, options = {}) {
  if (!storage || typeof storage.sql?.exec !== "function") {
    throw toolctxError(
      "INVALID_ARGUMENT",
      "durableObjectSqlStorage needs the storage of a SQLite-backed Durable Object (ctx.storage, class listed in new_sqlite_classes)",
    );
  }
  const table = tableName(options.table ?? "toolctx_records", "durableObjectSqlStorage");
  const maxValue = maxValueBytes(options, DO_SQL_MAX_VALUE_BYTES, "durableObjectSqlStorage");
  const sql = sqliteTable(table);
  const exec = (text, ...params) => storage.sql.exec(text, ...params);
  /** `err`, a failure of `what`, typed (base/backend.js) with SQLite's result code as `sqliteCode`. */
  const failure = (what, err) => {
    const code = sqliteCode(err);
    return backendFailure(`Durable Object SQL ${what}`, err, code === undefined ? undefined : { sqliteCode: code });
  };
  let columns;
  try {
    for (const text of sql.schema) exec(text);
    columns = exec(sql.columns, table).toArray();
  } catch (err) {
    throw failure(`create table ${table}`, err);
  }
  checkColumns(columns, table, "durableObjectSqlStorage"); // durableObjectStorage's own table, "toolctx_files", has other columns

  /** `run()` under a typed failure: a value at once, or a rejected Promise (never a synchronous throw). */
  function call(what, run) {
    try {
      return run();
    } catch (err) {
      return Promise.reject(failure(what, err));
    }
  }
  const checkSize = (what, path, bytes) => {
    if (bytes.length > maxValue) throw toolctxError("TOO_LARGE", `Durable Object SQL ${what} ${path}: ${bytes.length} bytes is over the ${maxValue}-byte value limit; nothing was written`);
  };
  const grown = (path, bytes) =>
    toolctxError("TOO_LARGE", `Durable Object SQL append ${path}: ${bytes.length} more bytes would grow the row past the ${maxValue}-byte value limit; nothing was written`);
  /** The parameters of a row's insert: (path, bytes, size, created, modified). */
  const row = (path, bytes) => {
    const now = Date.now();
    return [path, bytes, bytes.length, now, now];
  };
  const first = (cursor) => cursor.toArray()[0];

  return {
    ...keyValueStorage({
      description: `Durable Object SQL storage (table ${table}): one row a file`,
      maxValueBytes: maxValue,
      get: (path) =>
        call(`read ${path}`, () => {
          const found = first(exec(sql.select, path));
          return found === undefined ? undefined : rowBytes(found, path, "Durable Object SQL");
        }),
      getRange: (path, offset, length) =>
        call(`read range ${path}`, () => {
          const found = first(exec(sql.range, ...rangeParams(path, offset, length)));
          return found === undefined ? undefined : rowBytes(found, path, "Durable Object SQL");
        }),
      put: (path, bytes) =>
        call(`write ${path}`, () => {
          checkSize("write", path, bytes);
          exec(sql.upsert, ...row(path, bytes));
        }),
      create: (path, bytes) =>
        call(`write ${path}`, () => {
          checkSize("write", path, bytes);
          return exec(sql.create, ...row(path, bytes)).rowsWritten > 0;
        }),
      append: (path, bytes) =>
        call(`append ${path}`, () => {
          checkSize("append", path, bytes);
          if (exec(sql.appendWithin, ...row(path, bytes), maxValue).rowsWritten === 0) throw grown(path, bytes);
        }),
      delete: (path) =>
        call(`remove ${path}`, () => {
          exec(sql.remove, path);
        }),
      children: (dir) =>
        call(`list ${dir}`, () => {
          const { sql: text, params } = sql.children(dir);
          return childNames(exec(text, ...params).toArray());
        }),
      /** Mutual exclusion by name among everyone using this object's storage (see above). */
      lock: objectLock(storage),
    }),
    table,
  };
}
