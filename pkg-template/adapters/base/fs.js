// The file-system base of toolctx/node (and toolctx/bun, which is toolctx/node tuned) and
// toolctx/deno: what a StorageHost over a POSIX file system does the same way whatever
// the runtime's API. Each runtime gives a small table of primitives (below); the base
// does the rest:
// - folders are created 0700 and files 0600 (tool outputs hold secrets);
// - an exclusive write creates the file with O_EXCL: a save never replaces another
//   record; a torn file left by a crash does not parse and is skipped;
// - a replacing write goes to a temporary name in the same folder and is renamed over
//   the target, so a reader never sees half a file;
// - a folder made once is remembered, and made again if it went away (another manager
//   cleaned up);
// - `lock(name, fn)` holds a lock file at `name` (lock-file.js under lease-lock.js:
//   refreshed while held, taken over once its lease ran out; `lockLeaseMs`, default 30 s).
//
// Reads are the runtime's own (each has its fastest path), checked with `containment`.

import { toolctxError } from "../../errors.js";
import { randomHex } from "./random.js";
import { leaseLock, lockOptions } from "./lease-lock.js";
import { lockFiles } from "./lock-file.js";

export const DIR_MODE = 0o700;
export const FILE_MODE = 0o600;

/** A missing file or folder, by the codes Node's errors carry (the Deno primitives give them too). */
export const isMissing = (err) => err?.code === "ENOENT" || err?.code === "ENOTDIR";

/** A read that a symbolic link would take outside the store. */
export const outsideStore = (path) => toolctxError("OUTSIDE_STORE", `${path} resolves outside the store through a symbolic link`);

/**
 * `assertInside(path, root)`: throws OUTSIDE_STORE when the folder of `path`, its
 * symbolic links resolved, is not `root` or below it (`root` is resolved once).
 * Synchronous: a realpath over cached folder entries costs microseconds, less than an
 * asynchronous round trip.
 */
export function containment({ realpathSync, dirname, sep }) {
  const realRoots = new Map();
  return function assertInside(path, root) {
    let realRoot = realRoots.get(root);
    if (realRoot === undefined) {
      realRoot = realpathSync(root);
      realRoots.set(root, realRoot);
    }
    const realDir = realpathSync(dirname(path));
    if (realDir !== realRoot && !realDir.startsWith(realRoot.endsWith(sep) ? realRoot : realRoot + sep)) {
      throw outsideStore(path);
    }
  };
}

/**
 * @param {{
 *   description: string,
 *   dirname(path: string): string,
 *   read(path: string, options?: {root?: string}): Promise<Uint8Array | undefined>,
 *   mkdir(dir: string): Promise<void>,                // recursive, DIR_MODE
 *   createFile(path: string, data: unknown): Promise<void>, // O_EXCL, FILE_MODE (EEXIST when taken); removed if the write fails
 *   rename(from: string, to: string): Promise<void>,
 *   syncDir?(dir: string): Promise<void>,             // after a rename, for durability: "strict"
 *   appendFile(path: string, data: unknown): Promise<void>, // FILE_MODE
 *   removeFile(path: string): Promise<void>,          // idempotent
 *   removeDir(path: string): Promise<void>,           // an empty folder; idempotent
 *   readDir(dir: string): Promise<string[]>,          // names, sub-folders ending in "/"; ENOENT when missing
 *   inspect(path: string): Promise<{text: string, mtimeMs: number} | undefined>, // a lock file, never through a link
 *   touch(path: string): Promise<void>,               // mtime := now
 *   limit?<T>(task: () => Promise<T>): Promise<T>,    // at most so many operations at once
 * }} fs  the runtime's primitives; their errors carry Node's codes (ENOENT, ENOTDIR, EEXIST)
 * @param {object} options  the adapter's options (its lock's are read here)
 * @param {string} adapter  the adapter's name, for errors about its options
 */
export function fsStorage(fs, options, adapter) {
  const madeDirs = new Set();
  const limit = fs.limit ?? ((task) => task());

  async function ensureDir(dir) {
    if (madeDirs.has(dir)) return;
    await fs.mkdir(dir);
    madeDirs.add(dir);
  }

  async function write(path, data, { exclusive = false } = {}) {
    const dir = fs.dirname(path);
    try {
      await ensureDir(dir);
      if (exclusive) return await fs.createFile(path, data);
    } catch (err) {
      if (err?.code !== "ENOENT") throw err;
      // The folder went away after we made it (another manager cleaned up): again.
      madeDirs.delete(dir);
      await ensureDir(dir);
      if (exclusive) return await fs.createFile(path, data);
    }
    const tmp = `${path}.${randomHex(6)}.tmp`;
    try {
      await fs.createFile(tmp, data);
      await fs.rename(tmp, path);
      await fs.syncDir?.(dir);
    } catch (err) {
      await fs.removeFile(tmp).catch(() => {});
      throw err;
    }
  }

  const lock = leaseLock(
    lockFiles({ create: (path, text) => write(path, text, { exclusive: true }), inspect: fs.inspect, touch: fs.touch, remove: fs.removeFile }),
    { label: "lock", lostCode: "ELOCKCOMPROMISED", ...lockOptions(options, adapter, { lease: ["lockStaleMs"] }) },
  );

  return {
    description: fs.description,
    read: (path, readOptions) => limit(() => fs.read(path, readOptions)),
    write: (path, data, writeOptions) => limit(() => write(path, data, writeOptions)),
    append: (path, data) =>
      limit(async () => {
        await ensureDir(fs.dirname(path));
        await fs.appendFile(path, data);
      }),
    remove: (path) => limit(() => fs.removeFile(path)),
    list: (dir) =>
      limit(async () => {
        try {
          return (await fs.readDir(dir)).sort();
        } catch (err) {
          if (isMissing(err)) return [];
          throw err;
        }
      }),
    lock,
    async removeDir(path) {
      madeDirs.delete(path);
      await fs.removeDir(path);
    },
  };
}
