// A request to the backend of an adapter over a server, a database or a driver
// (toolctx/redis, /s3, /deno-kv, /unstorage, /cloudflare), under the adapter's deadline,
// its failure typed: the core and the caller see a code of the table (errors.js) and the
// backend's own error as the cause.
//
// `classify` is the one place where a backend's failure becomes a code: every adapter
// over a backend calls it, directly (toolctx/s3, which reads an HTTP answer) or through
// `backendFailure` and `backendCall`.

import { CODES, toolctxError } from "../../errors.js";
import { withDeadline } from "./deadline.js";

/** The errno codes and DOM error name of a medium out of space. */
const OUT_OF_SPACE = new Set(["ENOSPC", "EDQUOT", "QuotaExceededError"]);
/** HTTP's statuses for refused credentials (401) and refused permission (403). */
const REFUSED = new Set([401, 403]);
/** HTTP's answer to a conditional write whose condition failed (`If-None-Match: *` on a taken key). */
const PRECONDITION_FAILED = 412;
/** S3's error codes for refused credentials or permission. */
const AUTH_CODES = new Set(["InvalidAccessKeyId", "SignatureDoesNotMatch", "AccessDenied", "InvalidToken", "ExpiredToken"]);
/** How servers that answer in text refuse credentials or permission (Redis: WRONGPASS, NOAUTH, NOPERM). */
export const AUTH_MESSAGE = /WRONGPASS|NOAUTH|NOPERM|invalid password/i;

/**
 * The code of the table for a failure of a backend: `err`, the backend's error (if it
 * threw one), and `facts` its adapter read from the answer: `status` (HTTP) and
 * `backendCode` (S3's `<Code>`).
 *   - an error with a code of the table already (TIMEOUT, EEXIST, TOO_LARGE, ...): that code;
 *   - out of space (ENOSPC, EDQUOT, a QuotaExceededError): QUOTA_EXCEEDED;
 *   - credentials or permission refused (401, 403, S3's auth codes, Redis's WRONGPASS,
 *     NOAUTH, NOPERM): UNAUTHORIZED;
 *   - a conditional create refused (412): EEXIST;
 *   - a bucket that does not exist: NOT_FOUND; an object over the server's limit: TOO_LARGE;
 *   - anything else: STORAGE.
 */
export function classify(err, { status, backendCode } = {}) {
  if (typeof err?.code === "string" && Object.hasOwn(CODES, err.code)) return err.code;
  if (OUT_OF_SPACE.has(err?.code) || OUT_OF_SPACE.has(err?.name)) return "QUOTA_EXCEEDED";
  if (REFUSED.has(status) || AUTH_CODES.has(backendCode) || AUTH_MESSAGE.test(String(err?.message ?? ""))) return "UNAUTHORIZED";
  if (status === PRECONDITION_FAILED) return "EEXIST";
  if (backendCode === "NoSuchBucket") return "NOT_FOUND";
  if (backendCode === "EntityTooLarge") return "TOO_LARGE";
  return "STORAGE";
}

/**
 * `err`, a failure of `what`, as a typed error (`classify`): one that has a code of the
 * table already as it is; any other with that code, `err` as its cause and `fields`
 * (`status`, `r2Code`, ...) as properties. The message quotes the backend's message,
 * except where it refused the credentials: that message may quote them (a Redis URL
 * holds its password), so only its first word is kept.
 */
export function backendFailure(what, err, fields) {
  const code = classify(err, fields);
  if (code === err?.code) return err;
  const message = String(err?.message ?? err);
  const said = code === "UNAUTHORIZED" ? `refused: wrong credentials or no permission (${message.split(/\s/)[0]})` : `failed: ${message}`;
  return toolctxError(code, `${what} ${said}`, { cause: err, ...fields });
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
