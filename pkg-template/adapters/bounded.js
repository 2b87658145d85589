// A call to a backend bounded by a timeout and an AbortSignal, for the adapters over
// servers and drivers (toolctx/deno-kv, toolctx/unstorage). A call that runs out rejects
// with code "TIMEOUT" or "ABORTED" at once; the backend may still complete it later (a
// write may land), which the caller treats as a failed operation.

import { invalidArgument, typedError as typed } from "./errors.js";

/** Checks the `timeoutMs` and `signal` options of an adapter; returns them. */
export function boundsOf(options, adapter) {
  const { timeoutMs, signal } = options;
  const invalid = (message) => invalidArgument(`${adapter}: ${message}`);
  if (timeoutMs !== undefined && !(typeof timeoutMs === "number" && timeoutMs > 0)) throw invalid("timeoutMs must be a positive number of ms");
  if (signal !== undefined && !(signal && typeof signal.aborted === "boolean" && typeof signal.addEventListener === "function")) {
    throw invalid("signal must be an AbortSignal");
  }
  return { timeoutMs, signal };
}

/**
 * Runs `run()`; rejects with TIMEOUT past `timeoutMs`, with ABORTED once `signal` aborts
 * (also before it starts). `what` names the operation in those messages.
 */
export function bounded(what, run, { timeoutMs, signal }) {
  if (signal?.aborted) return Promise.reject(typed("ABORTED", `${what}: aborted`, signal.reason));
  if (timeoutMs === undefined && signal === undefined) return Promise.resolve().then(run);
  return new Promise((resolve, reject) => {
    let timer;
    const onAbort = () => settle(() => reject(typed("ABORTED", `${what}: aborted`, signal.reason)));
    const settle = (fn) => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      fn();
    };
    if (timeoutMs !== undefined) timer = setTimeout(() => settle(() => reject(typed("TIMEOUT", `${what}: no answer within ${timeoutMs} ms`))), timeoutMs);
    signal?.addEventListener("abort", onAbort, { once: true });
    Promise.resolve()
      .then(run)
      .then(
        (value) => settle(() => resolve(value)),
        (err) => settle(() => reject(err)),
      );
  });
}
