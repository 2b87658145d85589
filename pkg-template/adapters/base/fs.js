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
//   refreshed while held, taken over once its lease ran out, `lockLeaseMs`, default 30 s,
//   or at once when its holder's process has ended, holder.js). `lock(name, fn, {wait:
//   false})` gives up at once (TIMEOUT) when another holder has it: the background index
//   work never waits. A process that exits (process.exit, an uncaught exception; not
//   SIGKILL) removes the lock files it holds on the way out;
// - a path the store expects as a folder that is a file (mkdir EEXIST or ENOTDIR, a
//   listing ENOTDIR), or a lock path that is a folder, is a STORAGE error at once.
//
// Reads are the runtime's own (each has its fastest path), checked with `containment`;
// so are range reads (`readRange`, which reads only the range: open, read at the offset,
// close), whose arguments are checked here.

import { toolctxError } from "../../errors.js";
import { randomHex } from "./random.js";
import { leaseLock, lockOptions } from "./lease-lock.js";
import { lockFiles } from "./lock-file.js";
import { holders, tokenOf } from "./holder.js";
import { badRange } from "./range.js";

export const DIR_MODE = 0o700;
export const FILE_MODE = 0o600;

/** A missing file or folder, by the codes Node's errors carry (the Deno primitives give them too). */
export const isMissing = (err) => err?.code === "ENOENT" || err?.code === "ENOTDIR";

/** A folder of the store's that is a file: the error of any call that meets one. */
export const notAFolder = (path, cause) =>
  toolctxError("STORAGE", `${path} is a file where the store expects a folder (or a parent of it is)`, { cause });

/** The locks this process holds through any file-system storage: removed if it exits holding them. */
const heldAtExit = new Map();
let exitHooked = false;

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
 *   readRange(path: string, offset: number, length: number, options?: {root?: string}): Promise<Uint8Array | undefined>, // as `read`, the bytes [offset, offset + length) only (checked: whole numbers)
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
 *   os?: Parameters<typeof holders>[0],               // what holder.js needs to tell who holds a lock and whether it lives
 *   onExit?(fn: () => void): void,                    // `fn` runs synchronously when the process exits
 *   readTextSync?(path: string): string | undefined,  // at exit: a lock file's text
 *   removeFileSync?(path: string): void,              // at exit: a lock file removed
 * }} fs  the runtime's primitives; their errors carry Node's codes (ENOENT, ENOTDIR, EEXIST)
 * @param {object} options  the adapter's options (its lock's are read here)
 * @param {string} adapter  the adapter's name, for errors about its options
 */
export function fsStorage(fs, options, adapter) {
  const madeDirs = new Set();
  const limit = fs.limit ?? ((task) => task());

  async function ensureDir(dir) {
    if (madeDirs.has(dir)) return;
    try {
      await fs.mkdir(dir);
    } catch (err) {
      // A file at the folder's path (EEXIST) or at a parent's (ENOTDIR): never a loop.
      if (err?.code === "EEXIST" || err?.code === "ENOTDIR") throw notAFolder(dir, err);
      throw err;
    }
    madeDirs.add(dir);
  }

  async function write(path, data, { exclusive = false } = {}) {
    const dir = fs.dirname(path);
    try {
      await ensureDir(dir);
      if (exclusive) return await fs.createFile(path, data);
    } catch (err) {
      if (err?.code === "ENOTDIR") throw notAFolder(dir, err);
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
      if (err?.code === "ENOTDIR") throw notAFolder(dir, err);
      throw err;
    }
  }

  /** A lock file's text and mtime; a folder in its way is a STORAGE error. */
  async function inspect(path) {
    try {
      return await fs.inspect(path);
    } catch (err) {
      if (err?.name === "ToolctxError") throw err;
      if (err?.code === "ENOTDIR") throw notAFolder(fs.dirname(path), err);
      throw toolctxError("STORAGE", `${path}: the lock file cannot be read (${err?.code ?? err?.name ?? err}); a folder there?`, { cause: err });
    }
  }

  const who = fs.os === undefined ? undefined : holders(fs.os);
  const steps = lockFiles({
    create: (path, text) => write(path, text, { exclusive: true }),
    inspect,
    touch: fs.touch,
    remove: fs.removeFile,
    holder: who?.me,
    gone: who?.gone,
  });
  const atExit = (hold) => {
    try {
      if (tokenOf(fs.readTextSync(hold.path) ?? "") === hold.token) fs.removeFileSync(hold.path);
    } catch {
      // exiting anyway: a lock file left behind is taken over later (its holder gone, or its lease run out)
    }
  };
  const canExit = typeof fs.onExit === "function" && typeof fs.readTextSync === "function" && typeof fs.removeFileSync === "function";
  const lock = leaseLock(
    {
      async acquire(path, token, leaseMs) {
        const hold = await steps.acquire(path, token, leaseMs);
        if (hold !== undefined && canExit) {
          if (!exitHooked) {
            exitHooked = true;
            fs.onExit(() => {
              for (const [hold, remove] of heldAtExit) remove(hold);
            });
          }
          heldAtExit.set(hold, atExit);
        }
        return hold;
      },
      refresh: steps.refresh,
      release(hold) {
        heldAtExit.delete(hold);
        return steps.release(hold);
      },
    },
    { label: "lock", lostCode: "ELOCKCOMPROMISED", ...lockOptions(options, adapter, { lease: ["lockStaleMs"] }) },
  );

  return {
    description: fs.description,
    read: (path, readOptions) => limit(() => fs.read(path, readOptions)),
    readRange(path, offset, length, readOptions) {
      const bad = badRange(offset, length);
      if (bad !== undefined) return Promise.reject(bad);
      return limit(() => fs.readRange(path, offset, length, readOptions));
    },
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
          if (err?.code === "ENOTDIR") throw notAFolder(dir, err);
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
