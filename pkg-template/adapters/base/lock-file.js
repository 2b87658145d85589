// The lease lock's steps over lock files (toolctx/node, toolctx/bun, toolctx/deno): mutual
// exclusion between processes, also between containers that share a volume.
//
// The design is proper-lockfile's (github.com/moxystudio/node-proper-lockfile,
// lib/lockfile.js, read at 4.1.2), without its dependencies and with a takeover that
// only one contender can win:
// - a lock is a file created exclusively (O_EXCL), holding its holder's random token;
// - the lease is the file's mtime: the holder refreshes it (lease-lock.js), so a lock is
//   expired only when its mtime is older than the lease: its holder stopped (crashed, was
//   killed, froze). A process id means nothing in another PID namespace: none is used;
// - an expired lock is taken over through a claim: the contender creates
//   `<lock>.<expired token>.claim` exclusively, so exactly one contender removes that
//   lock, and only after checking again that the file still holds that token and is
//   still expired. (proper-lockfile stats and then removes: a second contender that
//   judged the same lock stale removes the first one's fresh lock.) A claim left by a
//   claimant that crashed expires too and is taken over the same way;
// - a refresh reads the token before it touches the file, so a holder whose lock was
//   taken over (or removed) learns it; release removes the file only if it still holds
//   our token.

/** The part of a lock file's text that names its claim file. */
const claimId = (text) => text.replace(/[^0-9A-Za-z]/g, "").slice(0, 32) || "0";

/**
 * @param {{
 *   create(path: string, text: string): Promise<void>,   // exclusively, making parent folders; EEXIST when taken
 *   inspect(path: string): Promise<{text: string, mtimeMs: number} | undefined>, // undefined when missing
 *   touch(path: string): Promise<void>,                  // mtime := now
 *   remove(path: string): Promise<void>,                 // idempotent
 * }} files
 * @returns the `acquire`, `refresh` and `release` of lease-lock.js
 */
export function lockFiles(files) {
  async function removeIfOurs(path, token) {
    if ((await files.inspect(path))?.text !== token) return false;
    await files.remove(path);
    return true;
  }

  /** Creates `path` for `token`, taking an expired one over first. False when it is held. */
  async function take(path, token, leaseMs) {
    try {
      await files.create(path, token);
      return true;
    } catch (err) {
      if (err?.code !== "EEXIST") throw err;
    }
    const expired = (seen) => Date.now() - seen.mtimeMs > leaseMs;
    const seen = await files.inspect(path);
    if (seen === undefined) return take(path, token, leaseMs); // released meanwhile
    if (!expired(seen)) return false;
    const claim = `${path}.${claimId(seen.text)}.claim`;
    if (!(await take(claim, token, leaseMs))) return false; // another contender is taking it over
    try {
      const now = await files.inspect(path);
      if (now !== undefined && now.text === seen.text && expired(now)) await files.remove(path);
    } finally {
      await removeIfOurs(claim, token);
    }
    return take(path, token, leaseMs);
  }

  return {
    acquire: async (path, token, leaseMs) => ((await take(path, token, leaseMs)) ? { path, token } : undefined),
    async refresh({ path, token }) {
      if ((await files.inspect(path))?.text !== token) return false;
      await files.touch(path);
      return true;
    },
    release: ({ path, token }) => removeIfOurs(path, token),
  };
}
