// toolctx/sqlite: a StorageHost over a SQLite database, for one machine's processes that
// share a database file (or one process's in-memory database). The database is one the
// runtime has: Bun's `bun:sqlite`, `node:sqlite` (Node 22.5 and later, Deno), else npm
// `better-sqlite3` (an optional peer, for Node 20); or a database object handed in as
// `database` with their shape (`prepare(sql)` giving statements with `get`, `all` and
// `run`, and `exec(sql)`).
//
// SQLite answers synchronously, and so does this host (base/key-value.js): the driver runs
// its calls without waiting a turn. One table (`table`, default "toolctx_files", created
// if missing), one row a file, its statements shared with toolctx/cloudflare's D1 and
// Durable Object SQL storages (base/sqlite-table.js: the table, the one-statement
// exclusive create and append, readRange by substr(), list as a key range), and so is how
// a table or a row of the wrong shape is typed: a table of the name given with other
// columns is INVALID_ARGUMENT when the storage is made; a row whose bytes column holds an
// INTEGER, a REAL or a NULL (written by other SQL) is CORRUPT_RECORD when read; TEXT there
// is read as its UTF-8 bytes;
// - lock(name, fn): a lease row in `<table>_locks` holding its holder (host, pid, start
//   time, boot id: base/holder.js) and an expiry, taken in a BEGIN IMMEDIATE transaction.
//   A holder on this machine whose process has ended is recognised and its lock taken
//   over at once; only a holder that cannot be judged (another machine on a network
//   file system, where SQLite's own locking is not to be trusted anyway) is waited out
//   by its lease. SQLite's own locks do not fit: a transaction held open as a lock would
//   hold every other writer of the file for as long.
// The database runs in WAL mode (readers do not wait for a writer) with a busy timeout
// (`busyTimeoutMs`, default 5 000): a writer waits for another process's write that long,
// blocking its thread, then fails with TIMEOUT. `durability: "strict"` sets
// synchronous=FULL (survives power loss); the default NORMAL survives a process crash.

import { toolctxError } from "../errors.js";
import { backendFailure, sqliteCode } from "./base/backend.js";
import { holders } from "./base/holder.js";
import { keyValueStorage } from "./base/key-value.js";
import { leaseLock, lockOptions } from "./base/lease-lock.js";
import { maxValueBytes, tableName } from "./base/sql.js";
import { checkColumns, childNames, rangeParams, rowBytes, sqliteTable } from "./base/sqlite-table.js";
import { builtin } from "./builtin.js";

/** What base/holder.js needs to tell a holder that has ended (Node, Bun, Deno). */
function processes() {
  const { readFileSync, readlinkSync } = builtin("node:fs");
  const { hostname } = builtin("node:os");
  return holders({
    hostname,
    pid: globalThis.process.pid,
    readText: (path) => readFileSync(path, "utf8"),
    readLink: (path) => readlinkSync(path),
    signalZero(pid) {
      try {
        globalThis.process.kill(pid, 0);
        return true;
      } catch (err) {
        if (err?.code === "ESRCH") return false;
        return err?.code === "EPERM" ? true : undefined;
      }
    },
  });
}

/** node:sqlite, or undefined where the runtime has none: `process.getBuiltinModule` answers
 * undefined for it, the `require` of the Node 20 releases before that throws. */
function nodeSqliteModule() {
  try {
    return builtin("node:sqlite");
  } catch {
    return undefined;
  }
}

/** A database at `path` from the runtime's SQLite: bun:sqlite, node:sqlite, else better-sqlite3. */
function openDatabase(path) {
  if (globalThis.Bun !== undefined) {
    const { Database } = builtin("bun:sqlite");
    return new Database(path, { create: true, strict: true });
  }
  const nodeSqlite = nodeSqliteModule();
  if (nodeSqlite?.DatabaseSync !== undefined) return new nodeSqlite.DatabaseSync(path);
  let BetterSqlite3;
  try {
    const { createRequire } = builtin("node:module");
    BetterSqlite3 = createRequire(import.meta.url)("better-sqlite3");
  } catch (err) {
    throw toolctxError(
      "INVALID_ARGUMENT",
      "toolctx/sqlite: this runtime has no node:sqlite (Node 22.5 or later, Deno) nor bun:sqlite; install better-sqlite3 (npm install better-sqlite3) or pass a `database`",
      { cause: err },
    );
  }
  return new BetterSqlite3(path);
}

/** Closes `db`, a database opened for a storage whose making failed (if it was opened): the failure to give is that one, not the close's. */
function closeQuietly(db) {
  try {
    db?.close();
  } catch {
    // the open's own failure is the one to give
  }
}

/**
 * @param {import("./sqlite.d.ts").SqliteStorageSource} source
 * @param {import("./sqlite.d.ts").SqliteStorageOptions} [options]
 * @returns {import("./sqlite.d.ts").SqliteStorage}
 */
export function sqliteStorage(source, options = {}) {
  if (source === null || typeof source !== "object") throw toolctxError("INVALID_ARGUMENT", "sqliteStorage needs {path} or {database}");
  const given = source.database;
  if (given !== undefined && (given === null || typeof given.prepare !== "function" || typeof given.exec !== "function")) {
    throw toolctxError("INVALID_ARGUMENT", "sqliteStorage: database must be a SQLite database object (better-sqlite3, node:sqlite's DatabaseSync, bun:sqlite's Database)");
  }
  if (given === undefined && (typeof source.path !== "string" || source.path === "")) {
    throw toolctxError("INVALID_ARGUMENT", 'sqliteStorage needs {path} (a file, or ":memory:") or {database}');
  }
  const table = tableName(options.table ?? "toolctx_files", "sqliteStorage");
  const sql = sqliteTable(table);
  const busyTimeoutMs = options.busyTimeoutMs ?? 5000;
  if (!(Number.isInteger(busyTimeoutMs) && busyTimeoutMs >= 0)) throw toolctxError("INVALID_ARGUMENT", "sqliteStorage: busyTimeoutMs must be a whole number of ms ≥ 0");
  const durability = options.durability ?? "relaxed";
  if (durability !== "relaxed" && durability !== "strict") throw toolctxError("INVALID_ARGUMENT", 'sqliteStorage: durability must be "relaxed" or "strict"');
  const maxValue = maxValueBytes(options, 1_000_000_000, "sqliteStorage"); // SQLite's default SQLITE_MAX_LENGTH
  const where = given === undefined ? source.path : "the database given";

  /** `err`, a failure of `what`, typed (base/backend.js) with SQLite's result code as `sqliteCode`. */
  const failure = (what, err) => {
    const code = sqliteCode(err);
    return backendFailure(what, err, code === undefined ? undefined : { sqliteCode: code });
  };

  let db;
  try {
    db = given ?? openDatabase(source.path);
    db.exec(`PRAGMA busy_timeout = ${busyTimeoutMs}`);
    if (given === undefined) {
      db.exec("PRAGMA journal_mode = WAL");
      db.exec(`PRAGMA synchronous = ${durability === "strict" ? "FULL" : "NORMAL"}`);
    }
    db.exec(sql.schema.join(";\n"));
    checkColumns(db.prepare(sql.columns).all(table), table, "sqliteStorage"); // else INVALID_ARGUMENT: every statement would fail
  } catch (err) {
    if (given === undefined) closeQuietly(db);
    if (err?.code === "INVALID_ARGUMENT") throw err;
    throw failure(`sqlite open ${where}`, err);
  }
  const owned = given === undefined;
  let closed = false;

  const statements = new Map();
  /** The prepared statement of `sql` (prepared once). */
  const statement = (sql) => {
    let prepared = statements.get(sql);
    if (prepared === undefined) statements.set(sql, (prepared = db.prepare(sql)));
    return prepared;
  };
  /** bytes as the drivers bind a BLOB: better-sqlite3 takes only Buffers. */
  const blob = globalThis.Buffer === undefined ? (bytes) => bytes : (bytes) => globalThis.Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
  /** `run()` under a typed failure: a value at once, or a rejected Promise (never a synchronous throw). */
  function call(what, run) {
    if (closed) return Promise.reject(toolctxError("STORAGE", `${what}: sqliteStorage was closed`));
    try {
      return run();
    } catch (err) {
      return Promise.reject(failure(what, err));
    }
  }
  const checkSize = (what, path, bytes) => {
    if (bytes.length > maxValue) throw toolctxError("TOO_LARGE", `sqlite ${what} ${path}: ${bytes.length} bytes is over the ${maxValue}-byte value limit; nothing was written`);
  };

  const who = processes();
  const now = () => Date.now();
  /** A value for two placeholders (created and modified): plain `?` only, which every driver numbers alike. */
  const twice = (value) => [value, value];
  /** `fn` in a BEGIN IMMEDIATE transaction (the write lock taken first: two takers cannot both see a lock free). */
  const immediate = (fn) => {
    db.exec("BEGIN IMMEDIATE");
    try {
      const result = fn();
      db.exec("COMMIT");
      return result;
    } catch (err) {
      // SQLite may have rolled back itself (SQLITE_FULL, an I/O error): the error to give is `err`.
      try {
        db.exec("ROLLBACK");
      } catch {
        // no transaction was left to roll back
      }
      throw err;
    }
  };
  const lock = leaseLock(
    {
      async acquire(name, token, leaseMs) {
        const taken = await call(`sqlite lock ${name}`, () =>
          immediate(() => {
            const row = statement(sql.lockHolder).get(name);
            if (row != null && row.expires > now()) { // no row: undefined (bun:sqlite: null)
              let holder;
              try {
                holder = JSON.parse(row.holder);
              } catch {
                holder = undefined;
              }
              if (!who.gone(holder)) return false;
            }
            statement(sql.lockPut).run(name, token, JSON.stringify(who.me()), now() + leaseMs);
            return true;
          }),
        );
        return taken ? { name, token } : undefined;
      },
      refresh: async ({ name, token }, leaseMs) =>
        (await call(`sqlite lock refresh ${name}`, () => statement(sql.lockRefresh).run(now() + leaseMs, name, token))).changes > 0,
      release: async ({ name, token }) => (await call(`sqlite unlock ${name}`, () => statement(sql.lockRelease).run(name, token))).changes > 0,
    },
    { label: "sqlite lock", ...lockOptions(options, "sqliteStorage") },
  );

  return {
    ...keyValueStorage({
      description: `sqlite storage (${where}, table ${table})`,
      maxValueBytes: maxValue,
      get: (path) =>
        call(`sqlite read ${path}`, () => {
          const row = statement(sql.select).get(path);
          return row == null ? undefined : rowBytes(row, path, "sqlite"); // no row: undefined (bun:sqlite: null)
        }),
      getRange: (path, offset, length) =>
        call(`sqlite read range ${path}`, () => {
          const row = statement(sql.range).get(...rangeParams(path, offset, length));
          return row == null ? undefined : rowBytes(row, path, "sqlite");
        }),
      put: (path, bytes) =>
        call(`sqlite write ${path}`, () => {
          checkSize("write", path, bytes);
          statement(sql.upsert).run(path, blob(bytes), bytes.length, ...twice(now()));
        }),
      create: (path, bytes) =>
        call(`sqlite write ${path}`, () => {
          checkSize("write", path, bytes);
          return statement(sql.create).run(path, blob(bytes), bytes.length, ...twice(now())).changes === 1;
        }),
      append: (path, bytes) =>
        call(`sqlite append ${path}`, () => {
          checkSize("append", path, bytes);
          statement(sql.append).run(path, blob(bytes), bytes.length, ...twice(now()));
        }),
      delete: (path) =>
        call(`sqlite remove ${path}`, () => {
          statement(sql.remove).run(path);
        }),
      children: (dir) =>
        call(`sqlite list ${dir}`, () => {
          const { sql: text, params } = sql.children(dir);
          return childNames(statement(text).all(...params));
        }),
      lock,
    }),
    table,
    close() {
      if (closed) return;
      closed = true;
      if (owned) db.close();
    },
  };
}
