// What the network adapters (toolctx/s3, toolctx/redis) share: a deadline per operation
// (the `timeout` option and the caller's AbortSignal), retry with backoff, and path
// splitting. Web APIs only, so it loads in Node, Deno, Bun, workers and browsers.

import { sleep } from "./backoff.js";
import { typedError } from "./errors.js";

/**
 * Runs `work(signal)` under a deadline: it rejects with code "TIMEOUT" after `timeout` ms
 * (0 or undefined: none) and with code "ABORTED" when `outer` aborts. `signal` aborts in
 * both cases, so `work` can cancel its request.
 */
export async function withDeadline(what, timeout, outer, work) {
  if (outer?.aborted) throw typedError("ABORTED", `${what}: aborted`, outer.reason);
  const controller = new AbortController();
  let timer;
  let onAbort;
  const stopped = new Promise((_, reject) => {
    if (timeout > 0) {
      timer = setTimeout(() => {
        const err = typedError("TIMEOUT", `${what}: no answer within ${timeout} ms`);
        controller.abort(err);
        reject(err);
      }, timeout);
    }
    onAbort = () => {
      const err = typedError("ABORTED", `${what}: aborted`, outer.reason);
      controller.abort(err);
      reject(err);
    };
    outer?.addEventListener("abort", onAbort, { once: true });
  });
  try {
    return await Promise.race([work(controller.signal), stopped]);
  } finally {
    clearTimeout(timer);
    outer?.removeEventListener("abort", onAbort);
  }
}

/**
 * Calls `attempt()` up to `retries + 1` times while it throws an error for which
 * `retryable(err)` holds, waiting `base * 2^n` ms (with jitter, at most 2 s) in between.
 */
export async function withRetry(attempt, { retries, base, retryable }) {
  for (let n = 0; ; n++) {
    try {
      return await attempt();
    } catch (err) {
      if (n >= retries || !retryable(err)) throw err;
      await sleep(Math.min(2000, base * 2 ** n) * (0.5 + Math.random() / 2));
    }
  }
}

/** `path` split into its folder and its name: "a/b/c.json" → ["a/b", "c.json"]. */
export function splitPath(path) {
  const slash = path.lastIndexOf("/");
  return slash === -1 ? ["", path] : [path.slice(0, slash), path.slice(slash + 1)];
}

/** A folder path without its trailing slashes ("a/b/" → "a/b"). */
export function folder(dir) {
  return dir.replace(/\/+$/, "");
}
