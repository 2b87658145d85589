// A request to the backend of an adapter over a server, a database or a driver
// (toolctx/redis, toolctx/deno-kv, toolctx/unstorage, toolctx/cloudflare), under the
// adapter's deadline, its failure typed: the core and the caller see a code of the table
// (errors.js) and the backend's own error as the cause.

import { CODES, toolctxError } from "../../errors.js";
import { withDeadline } from "./deadline.js";

/**
 * `err`, a failure of `what`, as a typed error: one that has a code of the table already
 * (TIMEOUT, EEXIST, ...) as it is; out of space as QUOTA_EXCEEDED; any other as STORAGE
 * with `err` as its cause and `fields` (`status`, ...) as properties. A message quotes the
 * backend's message, so an adapter whose backend may quote a secret classifies first.
 */
export function backendFailure(what, err, fields) {
  if (typeof err?.code === "string" && Object.hasOwn(CODES, err.code)) return err;
  const full = err?.code === "ENOSPC" || err?.code === "EDQUOT" || err?.name === "QuotaExceededError";
  return toolctxError(full ? "QUOTA_EXCEEDED" : "STORAGE", `${what} failed: ${err?.message ?? err}`, { cause: err, ...fields });
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
