// toolctx/cloudflare's d1Storage: records as rows of one table in a D1 database binding
// (`env.MY_DB`), over the key-value base, with no Cloudflare SDK.
//
// The table is toolctx/sqlite's (base/sqlite-table.js: one row a file, `id INTEGER PRIMARY
// KEY`, path UNIQUE, bytes BLOB, size, created, modified), created with its locks' table
// on the first call. Each operation is one statement, so each is atomic on its own: an
// exclusive create is INSERT ... ON CONFLICT DO NOTHING and EEXIST when D1 reports no row
// changed (`meta.changes`), an append concatenates in SQL, readRange is substr() of the
// BLOB, list a key range reduced to the folder's children in SQL.
//
// lock(name, fn) is a lease row in `<table>_locks`, taken by one conditional upsert (where
// the row is missing or its lease has run out), refreshed every third of the lease while
// `fn` runs, deleted if still ours (base/lease-lock.js). D1 has no session and no holder
// whose end it can see: a worker that dies holding a lock blocks the others until its
// lease runs out (`lockLeaseMs`, 30 s).
//
// D1 holds at most 2,000,000 bytes in a row (its documented limit on a string, BLOB or
// row): a value over `maxValueBytes` is refused with TOO_LARGE before it is written (the first call of an isolate still creates the tables), and an
// append that would grow a row past it changes no row (the limit is in the statement) and
// is TOO_LARGE too; nothing is written either way. A SQLITE_TOOBIG of D1 itself is
// TOO_LARGE as well (base/backend.js).

import { toolctxError } from "../errors.js";
import { backendFailure, sqliteCode } from "./base/backend.js";
import { keyValueStorage } from "./base/key-value.js";
import { leaseLock, lockOptions } from "./base/lease-lock.js";
import { maxValueBytes, tableName } from "./base/sql.js";
import { checkColumns, childNames, rangeParams, rowBytes, sqliteTable } from "./base/sqlite-table.js";

/** D1's limit on a string, BLOB or row, in bytes. */
const D1_MAX_ROW_BYTES = 2_000_000;
/** The largest value written by default: the row limit less room for the path and the numbers beside it. */
export const D1_MAX_VALUE_BYTES = D1_MAX_ROW_BYTES - 16 * 1024;
/** The longest pause of the lock between two tries (a D1 query is a request). */
const LOCK_MAX_PAUSE_MS = 200;

/**
 * A StorageHost over a D1 database binding: one table, one row a file.
 * @param {import("./cloudflare.d.ts").D1DatabaseLike} database
 * @param {import("./cloudflare.d.ts").D1StorageOptions} [options]
 * @returns {import("./cloudflare.d.ts").CloudflareSqlStorage}
 */
export function d1Storage(database, options = {}) {
  if (!database || typeof database.prepare !== "function" || typeof database.batch !== "function") {
    throw toolctxError("INVALID_ARGUMENT", "d1Storage needs a D1 database binding (env.MY_DB)");
  }
  const table = tableName(options.table ?? "toolctx_files", "d1Storage");
  const maxValue = maxValueBytes(options, D1_MAX_VALUE_BYTES, "d1Storage");
  const sql = sqliteTable(table);
  const statement = (text, ...params) => database.prepare(text).bind(...params);

  /** The tables, created once (again after a failure), and checked to have this table's columns (else INVALID_ARGUMENT). */
  let ready;
  const schema = () =>
    (ready ??= database
      .batch([...sql.schema.map((text) => database.prepare(text)), statement(sql.columns, table)])
      .then((results) => checkColumns(results.at(-1).results, table, "d1Storage"))
      .catch((err) => {
        ready = undefined;
        throw err;
      }));
  /** `run()` after the schema, its failure typed (base/backend.js) with SQLite's result code as `sqliteCode`. */
  async function call(what, run) {
    try {
      await schema();
      return await run();
    } catch (err) {
      const code = sqliteCode(err);
      throw backendFailure(`D1 ${what}`, err, code === undefined ? undefined : { sqliteCode: code });
    }
  }
  const checkSize = (what, path, bytes) => {
    if (bytes.length > maxValue) throw toolctxError("TOO_LARGE", `D1 ${what} ${path}: ${bytes.length} bytes is over the ${maxValue}-byte value limit; nothing was written`);
  };
  const grown = (path, bytes) =>
    toolctxError("TOO_LARGE", `D1 append ${path}: ${bytes.length} more bytes would grow the row past the ${maxValue}-byte value limit; nothing was written`);
  /** The parameters of a row's insert: (path, bytes, size, created, modified). */
  const row = (path, bytes) => {
    const now = Date.now();
    return [path, bytes, bytes.length, now, now];
  };

  const lock = leaseLock(
    {
      async acquire(name, token, leaseMs) {
        const now = Date.now();
        const { meta } = await call(`lock ${name}`, () => statement(sql.lockTake, name, token, "{}", now + leaseMs, now).run());
        return meta.changes > 0 ? { name, token } : undefined;
      },
      refresh: async ({ name, token }, leaseMs) =>
        (await call(`lock refresh ${name}`, () => statement(sql.lockRefresh, Date.now() + leaseMs, name, token).run())).meta.changes > 0,
      release: async ({ name, token }) => (await call(`unlock ${name}`, () => statement(sql.lockRelease, name, token).run())).meta.changes > 0,
    },
    { label: "D1 lock", maxPauseMs: LOCK_MAX_PAUSE_MS, ...lockOptions(options, "d1Storage") },
  );

  return {
    ...keyValueStorage({
      description: `D1 storage (table ${table}): one row a file`,
      maxValueBytes: maxValue,
      get: (path) =>
        call(`read ${path}`, async () => {
          const found = await statement(sql.select, path).first();
          return found === null ? undefined : rowBytes(found, path, "D1");
        }),
      getRange: (path, offset, length) =>
        call(`read range ${path}`, async () => {
          const found = await statement(sql.range, ...rangeParams(path, offset, length)).first();
          return found === null ? undefined : rowBytes(found, path, "D1");
        }),
      put: (path, bytes) =>
        call(`write ${path}`, async () => {
          checkSize("write", path, bytes);
          await statement(sql.upsert, ...row(path, bytes)).run();
        }),
      create: (path, bytes) =>
        call(`write ${path}`, async () => {
          checkSize("write", path, bytes);
          return (await statement(sql.create, ...row(path, bytes)).run()).meta.changes === 1;
        }),
      append: (path, bytes) =>
        call(`append ${path}`, async () => {
          checkSize("append", path, bytes);
          if ((await statement(sql.appendWithin, ...row(path, bytes), maxValue).run()).meta.changes === 0) throw grown(path, bytes);
        }),
      delete: (path) =>
        call(`remove ${path}`, async () => {
          await statement(sql.remove, path).run();
        }),
      children: (dir) =>
        call(`list ${dir}`, async () => {
          const { sql: text, params } = sql.children(dir);
          return childNames((await statement(text, ...params).all()).results);
        }),
      lock,
    }),
    table,
  };
}
