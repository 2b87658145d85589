// toolctx/deno: a StorageHost over Deno's file APIs.
//
// The same behaviour as toolctx/node: folders 0700, files 0600; exclusive writes
// create the file with `createNew` (O_EXCL); replacing writes go to a temporary name
// and are renamed over the target; a read that symbolic links would take outside the
// store (`read(path, {root})`) is refused; `lock(name, fn)` holds a lock file at `name`
// (file-lock.js: refreshed while held, taken over once stale, `lockStaleMs`, default 30 s).

import { outsideStore } from "./errors.js";
import { fileLock } from "./file-lock.js";
import { randomHex } from "./random.js";

const DIR_MODE = 0o700;
const FILE_MODE = 0o600;

function dirname(path) {
  const i = path.lastIndexOf("/");
  return i <= 0 ? "/" : path.slice(0, i);
}

/** Gives Deno's error classes the `code` the core reads (EEXIST, ENOSPC, ...). */
function withCode(err) {
  if (err && typeof err === "object" && !err.code) {
    if (err instanceof Deno.errors.AlreadyExists) err.code = "EEXIST";
    else if (err instanceof Deno.errors.NotFound) err.code = "ENOENT";
  }
  return err;
}

function isMissing(err) {
  return err instanceof Deno.errors.NotFound || err?.code === "ENOENT" || err?.code === "ENOTDIR";
}

/**
 * @param {import("./deno.d.ts").DenoStorageOptions} [options]
 * @returns {import("../index.js").StorageHost}
 */
export function denoStorage(options = {}) {
  const strict = options.durability === "strict";
  // As in toolctx/node: small files are created and read with blocking calls, which
  // skip the op round trips of the asynchronous API (bench/io.mjs).
  const syncCreateMax = options.syncCreateMaxBytes ?? 256 * 1024; // as toolctx/node
  const syncReadMax = options.syncReadMaxBytes ?? 256 * 1024;
  const madeDirs = new Set();
  const realRoots = new Map();
  const encoder = new TextEncoder();
  const decoder = new TextDecoder();
  const bytes = (data) => (typeof data === "string" ? encoder.encode(data) : data);

  async function ensureDir(dir) {
    if (madeDirs.has(dir)) return;
    await Deno.mkdir(dir, { recursive: true, mode: DIR_MODE });
    madeDirs.add(dir);
  }

  // Synchronous: an lstat and a realpath over cached folder entries cost microseconds,
  // less than two asynchronous op round trips.
  function assertInside(path, root) {
    const info = Deno.lstatSync(path);
    if (info.isSymlink) throw outsideStore(path);
    let realRoot = realRoots.get(root);
    if (realRoot === undefined) {
      realRoot = Deno.realPathSync(root);
      realRoots.set(root, realRoot);
    }
    const realDir = Deno.realPathSync(dirname(path));
    if (realDir !== realRoot && !realDir.startsWith(realRoot.endsWith("/") ? realRoot : `${realRoot}/`)) {
      throw outsideStore(path);
    }
    return info;
  }

  async function writeFresh(path, data) {
    if (!strict) {
      // One call (open O_EXCL, write, close) instead of three ops; a failed write leaves no part.
      const view = bytes(data);
      const opts = { createNew: true, mode: FILE_MODE };
      try {
        return view.length <= syncCreateMax ? Deno.writeFileSync(path, view, opts) : await Deno.writeFile(path, view, opts);
      } catch (err) {
        if (!(err instanceof Deno.errors.AlreadyExists) && !isMissing(err)) await Deno.remove(path).catch(() => {});
        throw err;
      }
    }
    const file = await Deno.open(path, { write: true, createNew: true, mode: FILE_MODE });
    try {
      const view = bytes(data);
      for (let at = 0; at < view.length; ) at += await file.write(view.subarray(at));
      await file.sync(); // only strict writes come here
    } catch (err) {
      file.close();
      await Deno.remove(path).catch(() => {});
      throw err;
    }
    file.close();
  }

  async function write(path, data, { exclusive = false } = {}) {
    const dir = dirname(path);
    await ensureDir(dir);
    if (exclusive) {
      try {
        return await writeFresh(path, data);
      } catch (err) {
        if (!isMissing(err)) throw err;
        madeDirs.delete(dir); // the folder went away after we made it: again
        await ensureDir(dir);
        return await writeFresh(path, data);
      }
    }
    const tmp = `${path}.${randomHex(6)}.tmp`;
    try {
      await writeFresh(tmp, data);
      await Deno.rename(tmp, path);
    } catch (err) {
      await Deno.remove(tmp).catch(() => {});
      throw err;
    }
  }

  const guard =
    (fn) =>
    async (...args) => {
      try {
        return await fn(...args);
      } catch (err) {
        throw withCode(err);
      }
    };

  return {
    description: "deno fs storage",
    read: guard(async (path, { root } = {}) => {
      try {
        if (root !== undefined && assertInside(path, root).size <= syncReadMax) return Deno.readFileSync(path);
        return await Deno.readFile(path);
      } catch (err) {
        if (isMissing(err)) return undefined;
        throw err;
      }
    }),
    write: guard(write),
    append: guard(async (path, data) => {
      await ensureDir(dirname(path));
      await Deno.writeFile(path, bytes(data), { append: true, create: true, mode: FILE_MODE });
    }),
    remove: guard(async (path) => {
      await Deno.remove(path).catch((err) => {
        if (!isMissing(err)) throw err;
      });
    }),
    list: guard(async (dir) => {
      const names = [];
      try {
        for await (const entry of Deno.readDir(dir)) names.push(entry.isDirectory ? `${entry.name}/` : entry.name);
      } catch (err) {
        if (isMissing(err)) return [];
        throw err;
      }
      return names.sort();
    }),
    lock: fileLock(
      {
        create: guard((path, text) => write(path, text, { exclusive: true })),
        inspect: guard(async (path) => {
          let file;
          try {
            file = await Deno.open(path, { read: true });
          } catch (err) {
            if (isMissing(err)) return undefined;
            throw err;
          }
          try {
            const info = await file.stat();
            const bytes = new Uint8Array(info.size); // a token: a few bytes
            let at = 0;
            for (let n; at < bytes.length && (n = await file.read(bytes.subarray(at))) !== null; ) at += n;
            return { text: decoder.decode(bytes.subarray(0, at)), mtimeMs: info.mtime?.getTime() ?? Number.NaN };
          } finally {
            file.close();
          }
        }),
        touch: guard(async (path) => {
          const now = new Date();
          await Deno.utime(path, now, now);
        }),
        remove: guard(async (path) => {
          await Deno.remove(path).catch((err) => {
            if (!isMissing(err)) throw err;
          });
        }),
      },
      { staleMs: options.lockStaleMs },
    ),
    removeDir: guard(async (path) => {
      madeDirs.delete(path);
      await Deno.remove(path).catch((err) => {
        if (!isMissing(err)) throw err;
      });
    }),
  };
}
