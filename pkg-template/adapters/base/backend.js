// A request to the backend of an adapter over a server, a database or a driver
// (toolctx/redis, /s3, /deno-kv, /unstorage, /cloudflare), under the adapter's deadline,
// its failure typed: the core and the caller see a code of the table (errors.js) and the
// backend's own error as the cause.
//
// `classify` is the one place where a backend's failure becomes a code: every adapter
// over a backend calls it, through `backendCall`, `backendFailure` or (toolctx/s3, which
// reads an HTTP answer rather than an error) `answerFailure`. `transient` is the one place
// that tells a failure worth trying again (a server away or restarting, a connection
// lost) for the adapters over a database (toolctx/postgres).

import { CODES, toolctxError } from "../../errors.js";
import { withDeadline } from "./deadline.js";

/** The errno codes and DOM error name of a medium out of space. */
const OUT_OF_SPACE = new Set(["ENOSPC", "EDQUOT", "QuotaExceededError"]);
/** HTTP's statuses for refused credentials (401) and refused permission (403). */
const REFUSED = new Set([401, 403]);
/** HTTP's answer to a conditional write whose condition failed (`If-None-Match: *` on a taken key). */
const PRECONDITION_FAILED = 412;
/** S3's error codes for refused credentials or permission, a missing bucket, an object over the limit. */
const AUTH_CODES = new Set(["InvalidAccessKeyId", "SignatureDoesNotMatch", "AccessDenied", "InvalidToken", "ExpiredToken"]);
const NO_BUCKET_CODES = new Set(["NoSuchBucket"]);
const TOO_LARGE_CODES = new Set(["EntityTooLarge"]);
/** How servers that answer in text refuse credentials or permission (Redis: WRONGPASS, NOAUTH, NOPERM). */
export const AUTH_MESSAGE = /WRONGPASS|NOAUTH|NOPERM|invalid password/i;

// PostgreSQL's SQLSTATE codes (an error's `sqlState` fact: node-postgres's `err.code`), by
// what they mean here: class 28 and 42501 refuse credentials or permission; 53100 is a
// full disk; 57014 a statement cancelled (statement_timeout) and 55P03 a lock not had in
// lock_timeout; 54000 a value over a limit (a bytea over 1 GB). Class 08 is a connection
// lost or refused; 57P01-57P03 a server shutting down, crashed or starting; 53300 too many
// connections; 40001 and 40P01 a transaction to run again.
const PG_AUTH = /^(28...|42501)$/;
const PG_OUT_OF_SPACE = new Set(["53100"]);
const PG_TIMEOUT = new Set(["57014", "55P03"]);
const PG_TOO_LARGE = new Set(["54000"]);
const PG_TRANSIENT = /^(08...|57P0[123]|53300|40001|40P01)$/;
// SQLite's result codes (an error's `sqliteCode` fact): a full disk, a value over
// SQLITE_MAX_LENGTH, a database another connection kept busy past the busy timeout.
const SQLITE_OUT_OF_SPACE = new Set(["SQLITE_FULL"]);
const SQLITE_TOO_LARGE = new Set(["SQLITE_TOOBIG"]);
const SQLITE_BUSY = new Set(["SQLITE_BUSY", "SQLITE_LOCKED"]);
/** SQLite's primary result codes that have a code of the table (node:sqlite gives only the number). */
const SQLITE_RESULT_CODES = { 5: "SQLITE_BUSY", 6: "SQLITE_LOCKED", 13: "SQLITE_FULL", 18: "SQLITE_TOOBIG" };
/** A result code quoted in an error's message: D1's ("D1_ERROR: string or blob too big: SQLITE_TOOBIG") and a Durable Object's `sql.exec`; its primary code (`SQLITE_BUSY` of `SQLITE_BUSY_SNAPSHOT`). */
const SQLITE_CODE_IN_MESSAGE = /\b(SQLITE_[A-Z]+)(?:_[A-Z0-9_]+)?\b/;
/** The words SQLite says for a value over its length limit, where no code comes with them. */
const SQLITE_TOO_BIG_MESSAGE = /string or blob too big/i;

/**
 * The SQLite result code of a failure (an error's `sqliteCode` fact, primary code only:
 * "SQLITE_BUSY"): better-sqlite3's and bun:sqlite's `code`, node:sqlite's `errcode`, or
 * the code D1 and a Durable Object's SQL quote in their messages (they have no field for
 * it); a message that says a value is too big without a code is SQLITE_TOOBIG.
 */
export function sqliteCode(err) {
  if (typeof err?.code === "string" && err.code.startsWith("SQLITE_")) return err.code.replace(/^(SQLITE_[A-Z]+)_.*$/, "$1");
  if (typeof err?.errcode === "number") return SQLITE_RESULT_CODES[err.errcode & 0xff];
  const message = String(err?.message ?? "");
  const quoted = SQLITE_CODE_IN_MESSAGE.exec(message)?.[1];
  if (quoted !== undefined) return quoted;
  return SQLITE_TOO_BIG_MESSAGE.test(message) ? "SQLITE_TOOBIG" : undefined;
}

/** The errno codes of a connection refused, reset or cut (Node's, Deno's and Bun's alike). */
const CONNECTION_LOST = new Set(["ECONNREFUSED", "ECONNRESET", "EPIPE", "ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH", "ENOENT", "EAI_AGAIN"]);

/**
 * How a failure that has no code of the table yet gets one, the first rule that holds:
 * from the backend's error (`err`) and what its adapter read from the answer (`facts`:
 * `status`, HTTP's; `backendCode`, S3's `<Code>`; `sqlState`, PostgreSQL's; `sqliteCode`,
 * SQLite's result code).
 * @type {{ code: string, when(err: any, facts: { status?: number, backendCode?: string, sqlState?: string, sqliteCode?: string }): boolean }[]}
 */
const RULES = [
  {
    code: "QUOTA_EXCEEDED",
    when: (err, { sqlState, sqliteCode }) => OUT_OF_SPACE.has(err?.code) || OUT_OF_SPACE.has(err?.name) || PG_OUT_OF_SPACE.has(sqlState) || SQLITE_OUT_OF_SPACE.has(sqliteCode),
  },
  {
    code: "UNAUTHORIZED",
    when: (err, { status, backendCode, sqlState }) =>
      REFUSED.has(status) || AUTH_CODES.has(backendCode) || PG_AUTH.test(sqlState ?? "") || AUTH_MESSAGE.test(String(err?.message ?? "")),
  },
  { code: "TIMEOUT", when: (_, { sqlState, sqliteCode }) => PG_TIMEOUT.has(sqlState) || SQLITE_BUSY.has(sqliteCode) },
  { code: "TOO_LARGE", when: (_, { sqlState, sqliteCode }) => PG_TOO_LARGE.has(sqlState) || SQLITE_TOO_LARGE.has(sqliteCode) },
  { code: "EEXIST", when: (_, { status }) => status === PRECONDITION_FAILED },
  { code: "NOT_FOUND", when: (_, { backendCode }) => NO_BUCKET_CODES.has(backendCode) },
  { code: "TOO_LARGE", when: (_, { backendCode }) => TOO_LARGE_CODES.has(backendCode) },
  { code: "STORAGE", when: () => true },
];

/**
 * The code of the table for a failure of a backend: an error that has one already
 * (TIMEOUT, EEXIST, TOO_LARGE, ... made by the adapter) keeps it; any other gets the
 * code of the first of RULES that holds (out of space, refused credentials or
 * permission, a refused conditional create, no such bucket, too large; else STORAGE).
 * @param {any} err  the backend's error, if it threw one (any value)
 * @param {{ status?: number, backendCode?: string, sqlState?: string, sqliteCode?: string }} [facts]
 */
export function classify(err, facts = {}) {
  if (typeof err?.code === "string" && Object.hasOwn(CODES, err.code)) return err.code;
  return RULES.find((rule) => rule.when(err, facts)).code;
}

/**
 * Whether a failure of a database's driver may pass if tried again: the connection was
 * refused, reset or cut, the server is shutting down, restarting or out of connections,
 * or the transaction was chosen to run again (a serialization failure, a deadlock).
 * node-postgres reports a connection cut in the middle of a query only in words
 * ("Connection terminated"), with no code.
 * @param {any} err
 * @param {{ sqlState?: string }} [facts]
 */
export function transient(err, { sqlState } = {}) {
  if (PG_TRANSIENT.test(sqlState ?? "")) return true;
  if (CONNECTION_LOST.has(err?.code)) return true;
  return /^Connection terminated/.test(String(err?.message ?? ""));
}

/** Whether `err` (its message, stack and the fields drivers copy their input to, its causes) quotes one of `secrets`. */
function quotes(err, secrets, depth = 0) {
  if (secrets.length === 0 || err === undefined || err === null || depth > 5) return false;
  if (typeof err !== "object") return secrets.some((secret) => String(err).includes(secret));
  for (const value of [err.message, err.stack, err.input, err.detail, err.hint, err.where]) {
    if (typeof value === "string" && secrets.some((secret) => value.includes(secret))) return true;
  }
  return quotes(err.cause, secrets, depth + 1);
}

/**
 * `err`, a failure of `what`, as a typed error (`classify`): one that has a code of the
 * table already as it is; any other with its code, `err` as its cause and `fields`
 * (`status`, `r2Code`, ...) as properties. The message quotes the backend's message,
 * except where it refused the credentials: that message may quote them (a Redis URL
 * holds its password), so only its first word is kept, and the backend's error is not
 * kept as the cause either (SPEC §9: no secret in a message or a cause). Where the
 * adapter knows its secrets (`secrets`: a connection string, a password), an error that
 * quotes one anywhere keeps neither its message nor its cause.
 * @param {string} what
 * @param {any} err
 * @param {Record<string, unknown>} [fields]
 * @param {string[]} [secrets]
 */
export function backendFailure(what, err, fields, secrets = []) {
  const code = classify(err, fields);
  if (code === err?.code) return err;
  const message = String(err?.message ?? err);
  if (code === "UNAUTHORIZED") {
    return toolctxError(code, `${what} refused: wrong credentials or no permission (${message.split(/\s/)[0]})`, { ...fields });
  }
  if (quotes(err, secrets)) {
    return toolctxError(code, `${what} failed: the backend's error quoted a secret (the connection string or its password), so it is left out`, { ...fields });
  }
  return toolctxError(code, `${what} failed: ${message}`, { cause: err, ...fields });
}

/**
 * A failed answer of a backend over HTTP (toolctx/s3), typed by `classify` from `facts`
 * (its status and the backend's code): `what` is the whole message, which names the
 * request and the answer and never a secret; `fields` become properties.
 */
export function answerFailure(what, facts, fields) {
  const code = classify(undefined, facts);
  return toolctxError(code, what, fields);
}

/**
 * Runs `run(signal)` under `deadline` (`{timeoutMs, signal}` of deadline.js, or `{}`);
 * its failure typed by `backendFailure`, with `fieldsOf(err)` when given.
 */
export async function backendCall(what, deadline, run, fieldsOf) {
  try {
    return await withDeadline(what, deadline, run);
  } catch (err) {
    throw backendFailure(what, err, fieldsOf?.(err));
  }
}
