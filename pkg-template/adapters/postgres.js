// toolctx/postgres: a StorageHost over PostgreSQL, for fleets of Node, Bun and Deno
// processes that keep their state in a database they already run. The client is npm `pg`
// (node-postgres, an optional peer dependency): a pool made from `connectionString`, or a
// `pg.Pool` (or a pool of its shape: `query`, `connect`) handed in as `pool`.
//
// Why node-postgres rather than `postgres` (postgres.js): it is the pool most deployments
// already hold (LangGraph's PostgresStore, Mastra, Drizzle, Kysely and Prisma's adapter
// all take a `pg.Pool`), so `{pool}` shares the application's connections; its
// `pool.connect()` hands out one connection to keep, which a session-level advisory lock
// needs; it runs under Node, Bun and Deno (npm:pg) with bytea as Buffers both ways; and
// other drivers of its shape (@neondatabase/serverless's Pool) fit the same `{pool}`.
//
// One table (`table`, default "toolctx_files", created if missing), one row a file:
//   id bigint identity (a row's number, for an index kept beside the table: the search
//   push-down's tsvector table refers to it), path text COLLATE "C" UNIQUE, bytes bytea,
//   size bigint, created and modified timestamptz.
// - read: one SELECT; readRange: `substring(bytes from offset + 1 for length)`, so only
//   the range crosses the network;
// - write: INSERT ... ON CONFLICT (path) DO UPDATE (a reader sees the old row or the new);
//   exclusive: INSERT ... ON CONFLICT DO NOTHING, atomic (no row inserted: EEXIST);
//   append: one INSERT ... ON CONFLICT DO UPDATE SET bytes = bytes || the new bytes;
// - list: the paths in the range [prefix, prefix with its last "/" made "0"), a btree range
//   under the "C" collation (byte order: "0" follows "/"), reduced to the folder's direct
//   children by the server; no LIKE, so no pattern in a path is ever interpreted;
// - lock(name, fn): a session-level advisory lock (pg_try_advisory_lock on a 64-bit hash
//   of the table and the name) held on one connection kept out of the pool while any lock
//   is held: a lock dies with its holder (the server ends the session when the process or
//   its connection does), never waited out. Within one storage, holders of one name queue
//   in the process first (advisory locks are re-entrant within a session).
// Failures are typed in base/backend.js (SQLSTATE → code); a request that failed for a
// connection refused or lost (`transient`) is tried again when that cannot repeat its
// effect: every request whose connection was never had, and the idempotent ones (read,
// list, replace, remove; an exclusive create recognises its own row). No message or cause
// holds the connection string or the password.

import { toolctxError } from "../errors.js";
import { backendFailure, transient } from "./base/backend.js";
import { exponential, retry, sleep } from "./base/backoff.js";
import { deadlineOf, withDeadline } from "./base/deadline.js";
import { keyValueStorage } from "./base/key-value.js";
import { folderPrefix } from "./base/listing.js";
import { queueLock } from "./base/queue-lock.js";
import { maxValueBytes, quoteIdentifier, tableName } from "./base/sql.js";

const MAX_BACKOFF_MS = 2000;
/** PostgreSQL's largest bytea (1 GB less a header). */
const PG_MAX_VALUE = 1024 * 1024 * 1024 - 64;

/** `prefix` with its last character ("/") made the next one ("0"): the end of the folder's key range. */
const rangeEnd = (prefix) => `${prefix.slice(0, -1)}0`;

/** The texts a message must never hold: the connection string, its user-info part, its password (raw and decoded). */
function secretsOf(options) {
  const secrets = [];
  const add = (value) => {
    if (typeof value === "string" && value !== "") secrets.push(value);
  };
  for (const source of [options.connectionString, options.pool?.options?.connectionString]) {
    if (typeof source !== "string") continue;
    add(source);
    const userInfo = /^[^:]*:\/\/([^/?#]*)@/.exec(source)?.[1] ?? /^[^:]*:\/\/(.*)@/.exec(source)?.[1];
    add(userInfo);
    const password = userInfo?.slice(userInfo.indexOf(":") + 1);
    if (userInfo?.includes(":")) {
      add(password);
      try {
        add(decodeURIComponent(password));
      } catch {
        // not percent-encoded properly: the raw form is enough
      }
    }
  }
  const pooled = options.pool?.options?.password;
  if (typeof pooled === "string") add(pooled);
  return secrets;
}

/**
 * @param {import("./postgres.d.ts").PostgresStorageSource} source
 * @param {import("./postgres.d.ts").PostgresStorageOptions} [options]
 * @returns {import("./postgres.d.ts").PostgresStorage}
 */
export function postgresStorage(source, options = {}) {
  if (source === null || typeof source !== "object") {
    throw toolctxError("INVALID_ARGUMENT", "postgresStorage needs {connectionString} or {pool}");
  }
  const given = source.pool;
  if (given !== undefined && (given === null || typeof given.query !== "function" || typeof given.connect !== "function")) {
    throw toolctxError("INVALID_ARGUMENT", "postgresStorage: pool must be a pg.Pool (or a pool with query() and connect())");
  }
  if (given === undefined && (typeof source.connectionString !== "string" || source.connectionString === "")) {
    throw toolctxError("INVALID_ARGUMENT", "postgresStorage needs {connectionString} (a postgresql:// URL) or {pool} (a pg.Pool)");
  }
  const table = tableName(options.table ?? "toolctx_files", "postgresStorage");
  const quoted = quoteIdentifier(table);
  const deadline = deadlineOf(options, "postgresStorage", 10_000);
  const retries = options.retries ?? 3;
  const retryBaseMs = options.retryBaseMs ?? 100;
  if (!(Number.isInteger(retries) && retries >= 0)) throw toolctxError("INVALID_ARGUMENT", "postgresStorage: retries must be a whole number ≥ 0");
  if (!(Number.isFinite(retryBaseMs) && retryBaseMs >= 0)) throw toolctxError("INVALID_ARGUMENT", "postgresStorage: retryBaseMs must be a number of ms ≥ 0");
  const lockWaitMs = options.lockWaitMs ?? 60_000;
  if (!(Number.isFinite(lockWaitMs) && lockWaitMs >= 0)) throw toolctxError("INVALID_ARGUMENT", `postgresStorage: lockWaitMs must be a number of milliseconds (got ${lockWaitMs})`);
  const maxValue = maxValueBytes(options, PG_MAX_VALUE, "postgresStorage");
  const poolSize = options.poolSize ?? 10;
  if (!(Number.isInteger(poolSize) && poolSize >= 2)) throw toolctxError("INVALID_ARGUMENT", "postgresStorage: poolSize must be a whole number ≥ 2 (a held lock keeps one connection)");
  const secrets = secretsOf(source);
  const owned = given === undefined;
  /** @type {any} */
  let pool = given;
  let opening;
  let schemaReady;
  let closed = false;

  /** The failure of `what` typed (base/backend.js), with the SQLSTATE of an error the server sent
   * (pg's DatabaseError, which has a `severity`; an errno such as EPIPE is no SQLSTATE) as
   * `sqlState`; without a word of a secret. */
  function failure(what, err) {
    const fromServer = err?.severity !== undefined && typeof err?.code === "string" && /^[0-9A-Z]{5}$/.test(err.code);
    const sqlState = fromServer ? err.code : undefined;
    return backendFailure(what, err, sqlState === undefined ? undefined : { sqlState }, secrets);
  }

  async function open() {
    if (pool !== undefined) return pool;
    let pg;
    try {
      pg = await import("pg");
    } catch (err) {
      throw toolctxError("INVALID_ARGUMENT", "toolctx/postgres needs the npm package `pg` (npm install pg), or a `pool`", { cause: err });
    }
    if (closed) throw closedError();
    const Pool = pg.Pool ?? pg.default?.Pool;
    const made = new Pool({
      connectionString: source.connectionString,
      max: poolSize,
      // our deadline answers first; the driver's bounds what it started
      connectionTimeoutMillis: deadline.timeoutMs === undefined ? 0 : deadline.timeoutMs + 1000,
      statement_timeout: deadline.timeoutMs ?? 0,
      idleTimeoutMillis: 10_000,
      keepAlive: true,
      allowExitOnIdle: true,
    });
    // An idle connection the server ended emits "error"; without a listener it would end the process.
    made.on("error", () => {});
    pool = made;
    return made;
  }

  const closedError = () => toolctxError("STORAGE", "postgresStorage was closed: it opens no connection after close()");

  /** The connections of the pool that have our "error" listener. */
  const listening = new WeakSet();

  /** A connection of the pool, under the caller's abort: one had after the deadline went is given back. */
  async function connection(signal) {
    if (closed) throw closedError();
    opening ??= open().catch((err) => {
      opening = undefined;
      throw err;
    });
    const ready = await opening;
    let client;
    try {
      client = await ready.connect();
    } catch (err) {
      throw Object.assign(failure("postgres connect", err), { unsent: true, retryable: transient(err, { sqlState: err?.code }) });
    }
    if (!listening.has(client)) {
      // A connection cut while checked out between two queries emits "error" (the next query
      // rejects as well); without a listener it would end the process.
      listening.add(client);
      client.on("error", () => {});
    }
    if (signal?.aborted) {
      client.release();
      throw signal.reason;
    }
    return client;
  }

  /** `sql` with `values` on a connection of the pool; a connection that failed is not given back to it. */
  async function once(what, sql, values, signal) {
    const client = await connection(signal);
    try {
      const result = await client.query(sql, values);
      client.release();
      return result;
    } catch (err) {
      const lost = transient(err, { sqlState: err?.code });
      client.release(lost ? err : undefined);
      throw Object.assign(failure(what, err), { retryable: lost });
    }
  }

  /** The table, created once if missing (CREATE under a transaction-level advisory lock, so that creators in parallel do not collide). */
  function schema() {
    // Shared by every operation waiting for it, so under no caller's deadline: each caller's own bounds its wait.
    schemaReady ??= (async () => {
      const found = await once(`postgres open ${table}`, "SELECT to_regclass($1) IS NOT NULL AS found", [quoted], undefined);
      if (found.rows[0].found) return;
      const client = await connection(undefined);
      try {
        await client.query("BEGIN");
        await client.query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", [`toolctx schema ${table}`]);
        await client.query(`CREATE TABLE IF NOT EXISTS ${quoted} (
          id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
          path text COLLATE "C" NOT NULL UNIQUE,
          bytes bytea NOT NULL,
          size bigint NOT NULL,
          created timestamptz NOT NULL DEFAULT now(),
          modified timestamptz NOT NULL DEFAULT now())`);
        await client.query("COMMIT");
        client.release();
      } catch (err) {
        client.release(err);
        throw Object.assign(failure(`postgres create table ${table}`, err), { retryable: transient(err, { sqlState: err?.code }) });
      }
    })().catch((err) => {
      schemaReady = undefined; // the next operation tries again
      throw err;
    });
    return schemaReady;
  }

  const policy = (idempotent) => ({
    retries,
    retryable: (err) => err?.retryable === true && (idempotent || err.unsent === true),
    delayMs: exponential({ baseMs: retryBaseMs, maxMs: MAX_BACKOFF_MS }),
  });

  /**
   * One statement under the deadline, the table made first; tried again on a transient
   * failure where that cannot repeat its effect. `onRetry` runs before each new attempt.
   */
  function query(what, sql, values, { idempotent = true, onRetry = undefined } = {}) {
    return withDeadline(what, deadline, (signal) =>
      retry(async (n) => {
        if (n > 0) onRetry?.();
        await schema();
        return once(what, sql, values, signal);
      }, policy(idempotent)),
    ).catch((err) => {
      throw err?.code === undefined ? failure(what, err) : err;
    });
  }

  const bytesOf = (row) => (row === undefined ? undefined : new Uint8Array(row.bytes.buffer, row.bytes.byteOffset, row.bytes.length));
  const checkSize = (what, path, bytes) => {
    if (bytes.length > maxValue) {
      throw toolctxError("TOO_LARGE", `postgres ${what} ${path}: ${bytes.length} bytes is over the ${maxValue}-byte value limit; nothing was written`);
    }
  };
  const sameBytes = (a, b) => a !== undefined && a.length === b.length && a.every((byte, i) => byte === b[i]);

  const SELECT = `SELECT bytes FROM ${quoted} WHERE path = $1`;
  // substring takes int offsets: one past 2^31 is past the end of any bytea (at most 1 GB)
  const RANGE = `SELECT substring(bytes from least($2::bigint, 2147483647)::int for least($3::bigint, 2147483647)::int) AS bytes
    FROM ${quoted} WHERE path = $1`;
  const UPSERT = `INSERT INTO ${quoted} (path, bytes, size) VALUES ($1, $2, $3)
    ON CONFLICT (path) DO UPDATE SET bytes = EXCLUDED.bytes, size = EXCLUDED.size, modified = now()`;
  const CREATE = `INSERT INTO ${quoted} (path, bytes, size) VALUES ($1, $2, $3) ON CONFLICT (path) DO NOTHING`;
  const APPEND = `INSERT INTO ${quoted} AS t (path, bytes, size) VALUES ($1, $2, $3)
    ON CONFLICT (path) DO UPDATE SET bytes = t.bytes || EXCLUDED.bytes, size = t.size + EXCLUDED.size, modified = now()`;
  const DELETE = `DELETE FROM ${quoted} WHERE path = $1`;
  // The direct children of a folder: each path in its range cut after the prefix, up to and
  // with its next "/". `$2::text IS NULL`: the root, whose range has no end.
  const CHILDREN = `SELECT DISTINCT CASE WHEN s.slash > 0 THEN left(s.rest, s.slash) ELSE s.rest END AS name
    FROM (SELECT r.rest, strpos(r.rest, '/') AS slash
          FROM (SELECT substr(path, length($1::text) + 1) AS rest FROM ${quoted}
                WHERE path >= $1 AND ($2::text IS NULL OR path < $2)) r) s`;

  const inProcess = queueLock();
  /** The connection that holds this storage's advisory locks, while it holds any; and the one
   * being had, so that locks of two names taken at once share one connection. */
  let holder;
  let pending;

  /** The connection for locks: kept out of the pool while a lock is held; its loss aborts every hold
   * on it. A broken connection (see leaveLockConnection) takes no new user. */
  async function lockConnection(signal) {
    for (;;) {
      // The caller's deadline went (a retry that slept past it, a wait for another name's connection): no
      // new share of the connection, which nobody would give back.
      if (signal?.aborted) throw signal.reason;
      if (holder !== undefined && !holder.lost.signal.aborted && !holder.broken) {
        holder.users++;
        return holder;
      }
      if (pending === undefined) break;
      const had = pending;
      await had.catch(() => undefined);
      if (pending === had) pending = undefined;
    }
    const had = (async () => {
      const client = await connection(signal);
      const lost = new AbortController();
      const onLost = (err) => {
        if (!lost.signal.aborted) lost.abort(err);
      };
      const onEnd = () => onLost(new Error("the connection ended"));
      client.on("error", onLost);
      client.on("end", onEnd);
      holder = { client, users: 1, lost, listeners: { onLost, onEnd } };
      return holder;
    })();
    pending = had;
    try {
      return await had;
    } finally {
      if (pending === had) pending = undefined;
    }
  }

  /** One user fewer of `held`; the last gives the connection back, or ends it when a lock query or an
   * unlock failed: a query that failed or timed out may still take its lock on the server, which then
   * dies with the connection. */
  function leaveLockConnection(held, broken) {
    if (broken) held.broken = true;
    if (--held.users > 0) return;
    if (holder === held) holder = undefined;
    held.client.off("error", held.listeners.onLost);
    held.client.off("end", held.listeners.onEnd);
    held.client.release(held.broken || held.lost.signal.aborted ? new Error("advisory lock connection ended") : undefined);
  }

  const lockKey = (name) => `toolctx ${table} ${name}`;
  const lostError = (name, cause) =>
    toolctxError("LOCK_LOST", `postgres lock ${name}: the connection holding it was lost before its holder finished; another holder may have held it at the same time`, { cause });

  async function lock(name, fn, { wait = true } = {}) {
    return inProcess(
      name,
      async () => {
        const what = `postgres lock ${name}`;
        const held = await withDeadline(what, deadline, (signal) =>
          retry(() => lockConnection(signal), policy(true)).then((had) => {
            // had once the deadline went: the caller has rejected and will never leave it, so it is left here
            if (signal?.aborted) {
              leaveLockConnection(had, false);
              throw signal.reason;
            }
            return had;
          }),
        ).catch((err) => {
          throw err?.code === undefined ? failure(what, err) : err;
        });
        let taken = false;
        // Whether the last try was answered: only then is the connection known to hold no lock it took.
        let answered = false;
        try {
          const giveUp = Date.now() + (wait ? lockWaitMs : -1);
          for (let attempt = 0; !taken; attempt++) {
            answered = false;
            const result = await withDeadline(what, deadline, () =>
              held.client.query("SELECT pg_try_advisory_lock(hashtextextended($1, 0)) AS taken", [lockKey(name)]),
            ).catch((err) => {
              throw err?.code === "TIMEOUT" ? err : failure(what, err);
            });
            answered = true;
            taken = result.rows[0].taken === true;
            if (taken) break;
            if (Date.now() > giveUp) throw toolctxError("TIMEOUT", `${what} is held by another holder (${wait ? `waited ${lockWaitMs} ms` : "not waited for"})`);
            await sleep(Math.min(2 ** attempt, 50) * (0.5 + Math.random()));
          }
        } catch (err) {
          leaveLockConnection(held, !answered);
          throw err;
        }
        let result;
        let failed = false;
        let thrown;
        try {
          result = await fn({ signal: held.lost.signal });
        } catch (err) {
          failed = true;
          thrown = err;
        }
        let released = false;
        if (!held.lost.signal.aborted) {
          released = await withDeadline(`postgres unlock ${name}`, deadline, () =>
            held.client.query("SELECT pg_advisory_unlock(hashtextextended($1, 0)) AS released", [lockKey(name)]),
          ).then(
            (r) => r.rows[0].released === true,
            () => false,
          );
        }
        leaveLockConnection(held, !released);
        if (!released) throw lostError(name, failed ? thrown : undefined);
        if (failed) throw thrown;
        return result;
      },
      { wait },
    );
  }

  return {
    ...keyValueStorage({
      description: `postgres storage (table ${table})`,
      maxValueBytes: maxValue,
      async get(path) {
        const { rows } = await query(`postgres read ${path}`, SELECT, [path]);
        return bytesOf(rows[0]);
      },
      async getRange(path, offset, length) {
        const { rows } = await query(`postgres read range ${path}`, RANGE, [path, offset + 1, length]);
        return bytesOf(rows[0]);
      },
      async put(path, bytes) {
        checkSize("write", path, bytes);
        await query(`postgres write ${path}`, UPSERT, [path, bytes, bytes.length]);
      },
      /** INSERT ... ON CONFLICT DO NOTHING: atomic. A create tried again after its answer was lost may find its own row: the same bytes are ours. */
      async create(path, bytes) {
        checkSize("write", path, bytes);
        let retried = false;
        const { rowCount } = await query(`postgres write ${path}`, CREATE, [path, bytes, bytes.length], { onRetry: () => (retried = true) });
        if (rowCount === 1) return true;
        if (!retried) return false;
        const { rows } = await query(`postgres read ${path}`, SELECT, [path]);
        return sameBytes(bytesOf(rows[0]), bytes);
      },
      async append(path, bytes) {
        checkSize("append", path, bytes);
        await query(`postgres append ${path}`, APPEND, [path, bytes, bytes.length], { idempotent: false });
      },
      async delete(path) {
        await query(`postgres remove ${path}`, DELETE, [path]);
      },
      async children(dir) {
        const prefix = folderPrefix(dir);
        const { rows } = await query(`postgres list ${dir}`, CHILDREN, [prefix, prefix === "" ? null : rangeEnd(prefix)]);
        return rows.map((row) => row.name).filter((name) => name !== "").sort();
      },
      lock,
    }),
    table,
    async close() {
      closed = true;
      const ending = owned ? pool : undefined;
      opening = undefined;
      pool = owned ? undefined : pool;
      if (ending !== undefined) await ending.end();
    },
  };
}
