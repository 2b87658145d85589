// What the network adapters (toolctx/s3, toolctx/redis) share: typed errors, a deadline
// per operation (the `timeout` option and the caller's AbortSignal), retry with backoff,
// and random tokens. Web APIs only, so it loads in Node, Deno, Bun, workers and browsers.

/** An `Error` with a stable `code` (and the original error as `cause`). */
export function typedError(code, message, cause) {
  const err = new Error(message, cause === undefined ? undefined : { cause });
  err.code = code;
  return err;
}

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** 16 random bytes as hex: unique per process and per call. */
export function randomToken() {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

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

const encoder = new TextEncoder();

/** Bytes of a write's `data` (a string is UTF-8 encoded; bytes are copied). */
export function toBytes(data) {
  if (typeof data === "string") return encoder.encode(data);
  if (data instanceof ArrayBuffer) return new Uint8Array(data.slice(0));
  return new Uint8Array(data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength));
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
