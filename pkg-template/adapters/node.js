// toolctx/node: a StorageHost over Node's fs/promises (also used by Bun), on the
// file-system base (base/fs.js: folders 0700, files 0600, exclusive creates, replacing
// writes renamed into place, lock files). What is Node's own:
// - reads refuse to follow a symbolic link (O_NOFOLLOW), and when the manager names
//   its store (`read(path, {root})`) a folder link that leads out of it is refused too;
// - at most `maxOpenFiles` operations run at once (default 64), so a burst of
//   thousands of saves never runs the process out of file handles (EMFILE);
// - small files are created and read with blocking calls, and a large record is written
//   from its parts with one gather write (writev);
// - `readRange` opens the file as `read` does (O_NOFOLLOW, the folder check) and reads
//   only the range at its offset: with blocking calls up to syncReadMaxBytes, through a
//   FileHandle beyond.

import { containment, DIR_MODE, FILE_MODE, fsStorage, isMissing } from "./base/fs.js";
import { rangeLength } from "./base/range.js";
import { builtin } from "./builtin.js";

/** Where a write function keeps its gather write (see driver.js). */
const WRITE_PARTS = Symbol.for("toolctx.writeParts");

const { closeSync, constants, fstatSync, openSync, readFileSync, readlinkSync, readSync, realpathSync, unlinkSync, writeSync, writevSync, fsyncSync } = builtin("node:fs");
const { mkdir, open, readdir, readFile, rename, rm, rmdir, unlink, utimes, appendFile } = builtin("node:fs/promises");
const { dirname, sep } = builtin("node:path");
const { hostname } = builtin("node:os");

/** What base/holder.js needs: who this process is, and whether another one runs (Node and Bun). */
const os = {
  hostname,
  pid: process.pid,
  readText: (path) => readFileSync(path, "utf8"),
  readLink: (path) => readlinkSync(path),
  signalZero(pid) {
    try {
      process.kill(pid, 0);
      return true;
    } catch (err) {
      if (err?.code === "ESRCH") return false;
      return err?.code === "EPERM" ? true : undefined;
    }
  },
};

const NOFOLLOW = constants.O_NOFOLLOW ?? 0;
/** What readSmallSync returns for a file past syncReadMaxBytes. */
const TOO_BIG = Symbol("too big");
const PROBE = new Uint8Array(1);
/** The default of syncCreateMaxBytes and syncReadMaxBytes. */
const SYNC_MAX = 256 * 1024;

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
 * @returns {import("./host.js").StorageHost}
 */
export function nodeStorage(options = {}) {
  const strict = options.durability === "strict";
  // Creates and reads block up to 256 KiB: a record that size is written to or read from
  // the page cache in tens of µs, less than the core's own work on the same thread (the
  // content index of a save, the JSON.parse of a load), where the asynchronous calls take
  // three or four thread-pool round trips (bench/io.mjs).
  const syncCreateMax = options.syncCreateMaxBytes ?? SYNC_MAX;
  const syncReadMax = options.syncReadMaxBytes ?? SYNC_MAX;
  const assertInside = containment({ realpathSync: realpathSync.native, dirname, sep });

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
      } catch {
        // the write's own error is the one to throw
      }
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

  /** The file at `path` opened for reading, never through a final symbolic link; undefined when missing (a file where a folder is: ENOTDIR). */
  async function openExisting(path) {
    try {
      return await open(path, constants.O_RDONLY | NOFOLLOW);
    } catch (err) {
      if (err?.code === "ENOENT") return undefined;
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
      if (isMissing(err)) return undefined;
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
      if (isMissing(err)) return undefined;
      throw err;
    }
    if (root !== undefined) assertInside(path, root);
    return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length);
  }

  /** The bytes [offset, offset + length) of the open file `fd` (fewer at its end), with blocking calls. */
  function readAtSync(fd, offset, length) {
    const out = new Uint8Array(rangeLength(fstatSync(fd).size, offset, length));
    for (let at = 0, n; at < out.length; at += n) {
      n = readSync(fd, out, at, out.length - at, offset + at);
      if (n === 0) return out.subarray(0, at); // it shrank
    }
    return out;
  }

  /** The bytes [offset, offset + length) of the open file `handle` (fewer at its end). */
  async function readAt(handle, offset, length) {
    const out = new Uint8Array(rangeLength((await handle.stat()).size, offset, length));
    for (let at = 0, n; at < out.length; at += n) {
      ({ bytesRead: n } = await handle.read(out, at, out.length - at, offset + at));
      if (n === 0) return out.subarray(0, at); // it shrank
    }
    return out;
  }

  /** A range of the file at `path`, with the checks of `read`; never the whole file. */
  async function readRange(path, offset, length, { root } = {}) {
    const flags = constants.O_RDONLY | NOFOLLOW;
    if (syncReadMax > 0 && length <= syncReadMax) {
      let fd;
      try {
        fd = openSync(path, flags);
      } catch (err) {
        if (isMissing(err)) return undefined;
        throw err;
      }
      try {
        if (root !== undefined) assertInside(path, root);
        return readAtSync(fd, offset, length);
      } finally {
        closeSync(fd);
      }
    }
    let handle;
    try {
      handle = await open(path, flags);
    } catch (err) {
      if (isMissing(err)) return undefined;
      throw err;
    }
    try {
      if (root !== undefined) assertInside(path, root);
      return await readAt(handle, offset, length);
    } finally {
      await handle.close();
    }
  }

  const host = fsStorage(
    {
      description: options.description ?? "node fs storage",
      dirname,
      read,
      readRange,
      mkdir: (dir) => mkdir(dir, { recursive: true, mode: DIR_MODE }),
      createFile: writeFresh,
      rename,
      syncDir: strict
        ? async (dir) => {
            const d = await open(dir, constants.O_RDONLY);
            await d.sync().finally(() => d.close());
          }
        : undefined,
      appendFile: (path, data) => appendFile(path, data, { mode: FILE_MODE }),
      removeFile: (path) => rm(path, { force: true }),
      removeDir: (path) =>
        rmdir(path).catch((err) => {
          if (err?.code !== "ENOENT") throw err;
        }),
      async readDir(dir) {
        const entries = await readdir(dir, { withFileTypes: true });
        return entries.map((e) => (e.isDirectory() ? `${e.name}/` : e.name));
      },
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
      limit: limiter(options.maxOpenFiles ?? 64),
      os,
      onExit: (fn) => process.on("exit", fn),
      readTextSync(path) {
        try {
          return readFileSync(path, { encoding: "utf8", flag: constants.O_RDONLY | NOFOLLOW });
        } catch {
          return undefined;
        }
      },
      removeFileSync: (path) => unlinkSync(path),
    },
    options,
    "nodeStorage",
  );
  // A record of a large result comes as its header, result and `}`: one gather write
  // (writev, in createFile) instead of a copy of the three into one buffer first (driver.js).
  host.write[WRITE_PARTS] = host.write;
  return host;
}
