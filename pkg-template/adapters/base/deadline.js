// A deadline for the calls of the adapters over servers and drivers (toolctx/redis,
// toolctx/s3, toolctx/deno-kv, toolctx/unstorage): `timeoutMs` and the caller's
// AbortSignal. A call that runs out rejects at once with TIMEOUT or ABORTED; the backend
// may still complete it later (a write may land), which the caller takes as failed.

import { toolctxError } from "../../errors.js";

/**
 * The `timeoutMs` (0: none) and `signal` options of `adapter`, checked; `timeoutMs` may
 * still be given by a deprecated name of `aliases` (toolctx/redis's and toolctx/s3's `timeout`).
 */
export function deadlineOf(options, adapter, defaultTimeoutMs, aliases = []) {
  const { signal } = options;
  const name = ["timeoutMs", ...aliases].find((n) => options[n] !== undefined) ?? "timeoutMs";
  const timeoutMs = options[name] ?? defaultTimeoutMs;
  const invalid = (message) => toolctxError("INVALID_ARGUMENT", `${adapter}: ${message}`);
  if (timeoutMs !== undefined && !(typeof timeoutMs === "number" && timeoutMs >= 0)) {
    throw invalid(`${name} must be a number of ms (0: no deadline)`);
  }
  if (signal !== undefined && !(signal && typeof signal.aborted === "boolean" && typeof signal.addEventListener === "function")) {
    throw invalid("signal must be an AbortSignal");
  }
  return { timeoutMs: timeoutMs > 0 && timeoutMs < 2 ** 31 ? timeoutMs : undefined, signal };
}

/**
 * Runs `work(signal)`; rejects with TIMEOUT past `timeoutMs` and with ABORTED once `signal`
 * aborts (also before it starts). The signal `work` gets aborts in both cases, so it can
 * cancel its request. `what` names the operation in those messages.
 */
export async function withDeadline(what, { timeoutMs, signal }, work) {
  if (signal?.aborted) throw toolctxError("ABORTED", `${what}: aborted`, { cause: signal.reason });
  if (timeoutMs === undefined && signal === undefined) return work(undefined);
  const controller = new AbortController();
  let timer;
  let onAbort;
  const stopped = new Promise((_, reject) => {
    const stop = (err) => {
      controller.abort(err);
      reject(err);
    };
    if (timeoutMs !== undefined) timer = setTimeout(() => stop(toolctxError("TIMEOUT", `${what}: no answer within ${timeoutMs} ms`)), timeoutMs);
    onAbort = () => stop(toolctxError("ABORTED", `${what}: aborted`, { cause: signal.reason }));
    signal?.addEventListener("abort", onAbort, { once: true });
  });
  try {
    return await Promise.race([work(controller.signal), stopped]);
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener("abort", onAbort);
  }
}
