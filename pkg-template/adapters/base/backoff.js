// Waiting between the attempts of a retry (busy files, contended locks, flaky servers),
// and the retry loop itself, written once.

/** Resolves after `ms` milliseconds. */
export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Exponential backoff with jitter: before attempt n + 1, `baseMs * 2^n` ms, at most
 * `maxMs`, times a random factor in (1 - jitter, 1], so writers that failed together do
 * not retry together.
 */
export function exponential({ baseMs, maxMs, jitter = 0.5 }) {
  return (n) => Math.min(maxMs, baseMs * 2 ** n) * (1 - jitter * Math.random());
}

/**
 * `attempt(n)` for n = 0, 1, ...: again while it throws an error that `retryable(err)`
 * holds for, at most `retries` more times, waiting `delayMs(n)` before attempt n + 1.
 * The last error is thrown as it is.
 * @template T
 * @param {(n: number) => Promise<T>} attempt
 * @param {{ retries: number, retryable(err: unknown): boolean, delayMs(n: number): number }} policy
 * @returns {Promise<T>}
 */
export async function retry(attempt, { retries, retryable, delayMs }) {
  for (let n = 0; ; n++) {
    try {
      return await attempt(n);
    } catch (err) {
      if (n >= retries || !retryable(err)) throw err;
      await sleep(delayMs(n));
    }
  }
}
