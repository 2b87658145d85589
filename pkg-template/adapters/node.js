// toolctx/node: a StorageHost over Node's fs/promises (also used by Bun).
//
// Folders are created 0700 and files 0600: tool outputs hold secrets.
// - exclusive writes create the file with O_EXCL ("wx"): a save never replaces
//   another record; a torn file left by a crash does not parse and is skipped;
// - replacing writes go to a temporary name in the same folder and are renamed
//   over the target, so a reader never sees half a file;
// - reads refuse to follow a symbolic link (O_NOFOLLOW), and when the manager names
//   its store (`read(path, {root})`) a folder link that leads out of it is refused too;
// - at most `maxOpenFiles` operations run at once (default 64), so a burst of
//   thousands of saves never runs the process out of file handles (EMFILE);
// - `lock(name, fn)` holds a lock file at `name` (file-lock.js: refreshed while held,
//   taken over once stale, `lockStaleMs`, default 30 s).

import { builtin } from "./builtin.js";
import { outsideStore } from "./errors.js";
import { fileLock } from "./file-lock.js";
import { randomHex } from "./random.js";

/** Where a write function keeps its gather write (see driver.js). */
const WRITE_PARTS = Symbol.for("toolctx.writeParts");

const { closeSync, constants, fstatSync, openSync, readSync, realpathSync, unlinkSync, writeSync, writevSync, fsyncSync } = builtin("node:fs");
const { mkdir, open, readdir, readFile, rename, rm, rmdir, unlink, utimes, appendFile } = builtin("node:fs/promises");
const { dirname, sep } = builtin("node:path");

const DIR_MODE = 0o700;
const FILE_MODE = 0o600;
const NOFOLLOW = constants.O_NOFOLLOW ?? 0;
/** What readSmallSync returns for a file past syncReadMaxBytes. */
const TOO_BIG = Symbol("too big");
const PROBE = new Uint8Array(1);
/** The default of syncCreateMaxBytes and syncReadMaxBytes. */
const SYNC_MAX = 256 * 1024;

function ignore(codes) {
  return (err) => {
    if (!codes.includes(err?.code)) throw err;
  };
}

/** Runs at most `max` tasks at once; a finishing task hands its slot to the next. */
function limiter(max) {
  let active = 0;
  const waiting = [];
  return async (task) => {
    if (active < max) active++;
    else await new Promise((resolve) => waiting.push(resolve));
    try {
      return await task();
    } finally {
      const next = waiting.shift();
      if (next) next();
      else active--;
    }
  };
}

/** Bytes of `data`: a string's length bounds them from below, which is all a threshold needs. */
function byteLength(data) {
  if (!Array.isArray(data)) return data.length;
  let n = 0;
  for (const part of data) n += part.length;
  return n;
}

/** What is left of `parts` once a gather write wrote `written` bytes of them (it may stop short). */
function unwritten(parts, written) {
  const rest = [];
  for (const part of parts) {
    if (written >= part.length) written -= part.length;
    else {
      rest.push(written > 0 ? part.subarray(written) : part);
      written = 0;
    }
  }
  return rest;
}

/**
 * @param {import("./node.d.ts").NodeStorageOptions} [options]
 * @returns {import("../index.js").StorageHost}
 */
export function nodeStorage(options = {}) {
  const strict = options.durability === "strict";
  const limit = limiter(options.maxOpenFiles ?? 64);
  // Creates and reads block up to 256 KiB: a record that size is written to or read from
  // the page cache in tens of µs, less than the core's own work on the same thread (the
  // content index of a save, the JSON.parse of a load), where the asynchronous calls take
  // three or four thread-pool round trips (bench/io.mjs).
  const syncCreateMax = options.syncCreateMaxBytes ?? SYNC_MAX;
  const syncReadMax = options.syncReadMaxBytes ?? SYNC_MAX;
  const madeDirs = new Set();
  const realRoots = new Map();

  // Synchronous: a realpath(3) call over cached folder entries costs microseconds, less
  // than an asynchronous round trip through the thread pool.
  function assertInside(path, root) {
    let realRoot = realRoots.get(root);
    if (realRoot === undefined) {
      realRoot = realpathSync.native(root);
      realRoots.set(root, realRoot);
    }
    const realDir = realpathSync.native(dirname(path));
    if (realDir !== realRoot && !realDir.startsWith(realRoot.endsWith(sep) ? realRoot : realRoot + sep)) {
      throw outsideStore(path);
    }
  }

  async function ensureDir(dir) {
    if (madeDirs.has(dir)) return;
    await mkdir(dir, { recursive: true, mode: DIR_MODE });
    madeDirs.add(dir);
  }

  function writeFreshSync(path, data) {
    const fd = openSync(path, "wx", FILE_MODE);
    try {
      if (Array.isArray(data)) {
        for (let rest = data; rest.length > 0; ) rest = unwritten(rest, writevSync(fd, rest));
      } else {
        const view = typeof data === "string" ? Buffer.from(data) : data;
        for (let at = 0; at < view.length; ) at += writeSync(fd, view, at);
      }
      if (strict) fsyncSync(fd);
    } catch (err) {
      closeSync(fd);
      try {
        unlinkSync(path);
      } catch {}
      throw err;
    }
    closeSync(fd);
  }

  async function writeFresh(path, data) {
    if (byteLength(data) <= syncCreateMax) return writeFreshSync(path, data);
    const handle = await open(path, "wx", FILE_MODE);
    try {
      if (Array.isArray(data)) {
        for (let rest = data; rest.length > 0; ) rest = unwritten(rest, (await handle.writev(rest)).bytesWritten);
      } else {
        await handle.writeFile(data);
      }
      if (strict) await handle.sync();
    } catch (err) {
      await handle.close().catch(() => {});
      await unlink(path).catch(() => {});
      throw err;
    }
    await handle.close();
  }

  /** The file at `path` opened for reading, never through a final symbolic link; undefined when missing. */
  async function openExisting(path) {
    try {
      return await open(path, constants.O_RDONLY | NOFOLLOW);
    } catch (err) {
      if (err?.code === "ENOENT" || err?.code === "ENOTDIR") return undefined;
      throw err;
    }
  }

  /**
   * The file at `path` read with blocking calls when it holds at most `syncReadMax` bytes
   * (the same checks as `read`); `TOO_BIG` when it holds more.
   */
  function readSmallSync(path, root) {
    let fd;
    try {
      fd = openSync(path, constants.O_RDONLY | NOFOLLOW);
    } catch (err) {
      if (err?.code === "ENOENT" || err?.code === "ENOTDIR") return undefined;
      throw err;
    }
    try {
      if (root !== undefined) assertInside(path, root);
      const size = fstatSync(fd).size;
      if (size > syncReadMax) return TOO_BIG;
      const out = new Uint8Array(size);
      for (let at = 0, n; at < size; at += n) {
        n = readSync(fd, out, at, size - at, null);
        if (n === 0) return out.subarray(0, at); // it shrank
      }
      // Grown since fstat: read whole the asynchronous way.
      return readSync(fd, PROBE, 0, 1, null) === 0 ? out : TOO_BIG;
    } finally {
      closeSync(fd);
    }
  }

  async function read(path, { root } = {}) {
    if (syncReadMax > 0) {
      const small = readSmallSync(path, root);
      if (small !== TOO_BIG) return small;
    }
    // One readFile (open O_NOFOLLOW, read, close: one call, where a file handle's open,
    // read and close are three round trips); the folder check runs before the bytes
    // are handed out.
    let bytes;
    try {
      bytes = await readFile(path, { flag: constants.O_RDONLY | NOFOLLOW });
    } catch (err) {
      if (err?.code === "ENOENT" || err?.code === "ENOTDIR") return undefined;
      throw err;
    }
    if (root !== undefined) assertInside(path, root);
    return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length);
  }

  async function write(path, data, { exclusive = false } = {}) {
    const dir = dirname(path);
    try {
      await ensureDir(dir);
      if (exclusive) return await writeFresh(path, data);
    } catch (err) {
      if (err?.code !== "ENOENT") throw err;
      // The folder went away after we made it (another manager cleaned up): again.
      madeDirs.delete(dir);
      await ensureDir(dir);
      if (exclusive) return await writeFresh(path, data);
    }
    const tmp = `${path}.${randomHex(6)}.tmp`;
    try {
      await writeFresh(tmp, data);
      await rename(tmp, path);
      if (strict) {
        const d = await open(dir, constants.O_RDONLY);
        await d.sync().finally(() => d.close());
      }
    } catch (err) {
      await unlink(tmp).catch(() => {});
      throw err;
    }
  }

  const hostWrite = (path, data, options) => limit(() => write(path, data, options));
  // A record of a large result comes as its header, result and `}`: one gather write
  // (writev) instead of a copy of the three into one buffer first (driver.js).
  hostWrite[WRITE_PARTS] = (path, parts, options) => limit(() => write(path, parts, options));

  return {
    description: options.description ?? "node fs storage",
    read: (path, options) => limit(() => read(path, options)),
    write: hostWrite,

    append: (path, data) =>
      limit(async () => {
        await ensureDir(dirname(path));
        await appendFile(path, data, { mode: FILE_MODE });
      }),

    remove: (path) => limit(() => rm(path, { force: true })),

    list: (dir) =>
      limit(async () => {
        try {
          const entries = await readdir(dir, { withFileTypes: true });
          return entries.map((e) => (e.isDirectory() ? `${e.name}/` : e.name)).sort();
        } catch (err) {
          if (err?.code === "ENOENT" || err?.code === "ENOTDIR") return [];
          throw err;
        }
      }),

    lock: fileLock(
      {
        create: (path, text) => write(path, text, { exclusive: true }),
        async inspect(path) {
          const handle = await openExisting(path);
          if (handle === undefined) return undefined;
          try {
            const { mtimeMs } = await handle.stat();
            return { text: await handle.readFile("utf8"), mtimeMs };
          } finally {
            await handle.close();
          }
        },
        touch(path) {
          const now = new Date();
          return utimes(path, now, now);
        },
        remove: (path) => rm(path, { force: true }),
      },
      { staleMs: options.lockStaleMs },
    ),

    async removeDir(path) {
      madeDirs.delete(path);
      await rmdir(path).catch(ignore(["ENOENT"]));
    },
  };
}

