// Lock files for the file-system adapters (toolctx/node, toolctx/bun, toolctx/deno):
// mutual exclusion between processes, also between containers that share a volume.
//
// The design is proper-lockfile's (github.com/moxystudio/node-proper-lockfile,
// lib/lockfile.js, read at 4.1.2), without its dependencies and with a takeover that
// only one contender can win:
// - a lock is a file created exclusively (O_EXCL), holding its holder's random token;
// - the holder refreshes the file's mtime every staleMs / 2 (a heartbeat), so a lock is
//   stale only when its mtime is older than staleMs: its holder stopped (crashed, was
//   killed, froze). A process id means nothing in another PID namespace: none is used;
// - a stale lock is taken over through a claim: the contender creates
//   `<lock>.<stale token>.claim` exclusively, so exactly one contender removes that
//   lock, and only after checking again that the file still holds that token and is
//   still stale. (proper-lockfile stats and then removes: a second contender that judged
//   the same lock stale removes the first one's fresh lock.) A claim left by a claimant
//   that crashed goes stale too and is taken over the same way;
// - the heartbeat reads the token before it touches the file: a holder whose lock was
//   taken over (or removed) learns it, and its lock() call rejects with
//   ELOCKCOMPROMISED once fn has finished (fn cannot be stopped midway: what it did may
//   have overlapped with the new holder);
// - release removes the file only if it still holds our token.
//
// The heartbeat timer is unref'd: it never keeps a process alive. Waiting for a lock
// keeps it alive, as any pending file operation does.

import { sleep } from "./backoff.js";
import { typedError } from "./errors.js";
import { randomHex } from "./random.js";

function unref(timer) {
  if (typeof timer?.unref === "function") timer.unref();
  else if (typeof globalThis.Deno?.unrefTimer === "function") globalThis.Deno.unrefTimer(timer);
}

/** The part of a lock file's text that names its claim file. */
const claimId = (text) => text.replace(/[^0-9A-Za-z]/g, "").slice(0, 32) || "0";

/**
 * @param {{
 *   create(path: string, text: string): Promise<void>,   // exclusively, making parent folders; EEXIST when taken
 *   inspect(path: string): Promise<{text: string, mtimeMs: number} | undefined>, // undefined when missing
 *   touch(path: string): Promise<void>,                  // mtime := now
 *   remove(path: string): Promise<void>,                 // idempotent
 * }} files
 * @param {{staleMs?: number, waitMs?: number}} [options]
 * @returns {<T>(name: string, fn: () => Promise<T>) => Promise<T>}
 */
export function fileLock(files, { staleMs = 30_000, waitMs = 60_000 } = {}) {
  if (!(Number.isFinite(staleMs) && staleMs > 0)) {
    throw typedError("INVALID_ARGUMENT", `lockStaleMs must be a positive number of milliseconds (got ${staleMs})`);
  }
  const isStale = (seen) => Date.now() - seen.mtimeMs > staleMs;

  async function removeIfOurs(path, token) {
    if ((await files.inspect(path))?.text === token) await files.remove(path);
  }

  /** Creates `path` for `token`, taking a stale one over first. False when it is held. */
  async function take(path, token) {
    try {
      await files.create(path, token);
      return true;
    } catch (err) {
      if (err?.code !== "EEXIST") throw err;
    }
    const seen = await files.inspect(path);
    if (seen === undefined) return take(path, token); // released meanwhile
    if (!isStale(seen)) return false;
    const claim = `${path}.${claimId(seen.text)}.claim`;
    if (!(await take(claim, token))) return false; // another contender is taking it over
    try {
      const now = await files.inspect(path);
      if (now !== undefined && now.text === seen.text && isStale(now)) await files.remove(path);
    } finally {
      await removeIfOurs(claim, token);
    }
    return take(path, token);
  }

  /** Refreshes the lock's mtime every staleMs / 2 while it is still ours. */
  function heartbeat(name, token) {
    let lost; // why the lock is no longer ours
    let stopped = false;
    let lastRefresh = Date.now();
    let timer;
    let beating = Promise.resolve();
    const schedule = () => {
      timer = setTimeout(() => {
        beating = refresh().then(() => {
          if (!stopped && lost === undefined) schedule();
        });
      }, staleMs / 2);
      unref(timer);
    };
    async function refresh() {
      try {
        const now = await files.inspect(name);
        if (now?.text !== token) {
          lost = now === undefined ? "was removed" : "was taken over";
          return;
        }
        await files.touch(name);
        lastRefresh = Date.now();
      } catch (err) {
        // Try again at the next beat, unless the lock may have gone stale meanwhile.
        if (Date.now() - lastRefresh > staleMs) lost = `could not be refreshed (${err?.message ?? err})`;
      }
    }
    schedule();
    return {
      /** Stops refreshing; resolves to why the lock is not ours any more, or undefined. */
      async stop() {
        stopped = true;
        clearTimeout(timer);
        await beating;
        if (lost === undefined) {
          const now = await files.inspect(name);
          if (now?.text !== token) lost = now === undefined ? "was removed" : "was taken over";
        }
        return lost;
      },
    };
  }

  return async function lock(name, fn) {
    const token = randomHex(12);
    const started = Date.now();
    for (let attempt = 0; !(await take(name, token)); attempt++) {
      if (Date.now() - started > waitMs) throw typedError("ELOCKED", `lock ${name} is held (waited ${waitMs} ms)`);
      await sleep(Math.min(2 ** Math.min(attempt, 6), 50));
    }
    const beat = heartbeat(name, token);
    let result;
    let failure;
    let failed = false;
    try {
      result = await fn();
    } catch (err) {
      failed = true;
      failure = err;
    }
    const lost = await beat.stop();
    if (lost !== undefined) {
      throw typedError(
        "ELOCKCOMPROMISED",
        `lock ${name} ${lost} while its holder ran: another process may have held it at the same time (stale time ${staleMs} ms)`,
        failure,
      );
    }
    await removeIfOurs(name, token);
    if (failed) throw failure;
    return result;
  };
}
