// The lease lock's steps over lock files (toolctx/node, toolctx/bun, toolctx/deno): mutual
// exclusion between processes, also between containers that share a volume.
//
// The design is proper-lockfile's (github.com/moxystudio/node-proper-lockfile,
// lib/lockfile.js, read at 4.1.2), without its dependencies, with a takeover that only
// one contender can win, and with locks that die with their holder (SPEC §4, STYLE 23):
// - a lock is a file created exclusively (O_EXCL), holding its holder's random token and
//   who the holder is (holder.js: host, pid, the process's start time, boot, pid namespace);
// - the lease is the file's mtime: the holder refreshes it (lease-lock.js), so a lock is
//   expired when its mtime is older than the lease: its holder stopped (crashed, was
//   killed, froze);
// - a lock is dead when its holder ran on this machine, in this pid namespace, and its
//   process has ended (SIGKILL, process.exit, a crash; `gone`): it is taken over at once,
//   without waiting out the lease. A holder on another machine or in another container,
//   or where the platform cannot tell, is judged by the lease alone (a process id means
//   nothing in another PID namespace);
// - an expired or dead lock is taken over through a claim: the contender creates
//   `<lock>.<the stale token>.claim` exclusively, so exactly one contender removes that
//   lock, and only after checking again that the file still holds that token and is
//   still expired or dead. (proper-lockfile stats and then removes: a second contender
//   that judged the same lock stale removes the first one's fresh lock.) A claim left by a
//   claimant that crashed is taken over the same way;
// - a refresh reads the token before it touches the file, so a holder whose lock was
//   taken over (or removed) learns it; release removes the file only if it still holds
//   our token.
// A path where a folder is expected that is a file (or a lock path that is a folder)
// fails with the primitives' STORAGE error: never judged "held" and tried again.

import { holderOf, lockText, tokenOf } from "./holder.js";

/** How many times in a row a lock found taken and then missing is tried again at once. */
const RACES = 16;

/** The part of a lock file's text that names its claim file. */
const claimId = (text) => tokenOf(text).replace(/[^0-9A-Za-z]/g, "").slice(0, 32) || "0";

/**
 * @param {{
 *   create(path: string, text: string): Promise<void>,   // exclusively, making parent folders; EEXIST when taken
 *   inspect(path: string): Promise<{text: string, mtimeMs: number} | undefined>, // undefined when missing
 *   touch(path: string): Promise<void>,                  // mtime := now
 *   remove(path: string): Promise<void>,                 // idempotent
 *   holder?(): object,                                   // who this process is (holder.js `me`)
 *   gone?(holder: object): boolean,                      // whether that holder's process has certainly ended
 * }} files
 * @returns the `acquire`, `refresh` and `release` of lease-lock.js
 */
export function lockFiles(files) {
  const textOf = (token) => (files.holder === undefined ? token : lockText(token, files.holder()));
  const ours = (seen, token) => seen !== undefined && tokenOf(seen.text) === token;
  /** Whether the lock file `seen` may be taken over: its lease ran out, or its holder is gone. */
  const stale = (seen, leaseMs) => Date.now() - seen.mtimeMs > leaseMs || files.gone?.(holderOf(seen.text)) === true;

  async function removeIfOurs(path, token) {
    if (!ours(await files.inspect(path), token)) return false;
    await files.remove(path);
    return true;
  }

  /** Creates `path` for `token`, taking a stale one over first. False when it is held. */
  async function take(path, token, leaseMs) {
    for (let race = 0; race < RACES; race++) {
      try {
        await files.create(path, textOf(token));
        return true;
      } catch (err) {
        if (err?.code !== "EEXIST") throw err;
      }
      const seen = await files.inspect(path);
      if (seen === undefined) continue; // released meanwhile
      if (!stale(seen, leaseMs)) return false;
      const claim = `${path}.${claimId(seen.text)}.claim`;
      if (!(await take(claim, token, leaseMs))) return false; // another contender is taking it over
      try {
        const now = await files.inspect(path);
        if (now !== undefined && now.text === seen.text && stale(now, leaseMs)) await files.remove(path);
      } finally {
        await removeIfOurs(claim, token);
      }
    }
    return false; // taken and freed again and again: the lease lock waits a little
  }

  return {
    acquire: async (path, token, leaseMs) => ((await take(path, token, leaseMs)) ? { path, token } : undefined),
    async refresh({ path, token }) {
      if (!ours(await files.inspect(path), token)) return false;
      await files.touch(path);
      return true;
    },
    release: ({ path, token }) => removeIfOurs(path, token),
  };
}
