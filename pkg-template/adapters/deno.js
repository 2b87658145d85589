// toolctx/deno: a StorageHost over Deno's file APIs, on the file-system base (base/fs.js)
// as toolctx/node is: folders 0700, files 0600; exclusive writes create the file with
// `createNew` (O_EXCL); replacing writes go to a temporary name and are renamed over the
// target; `lock(name, fn)` holds a lock file at `name`. A read that symbolic links would
// take outside the store (`read(path, {root})`) is refused; Deno has no O_NOFOLLOW, so
// the file itself is checked with lstat. `readRange` does the same checks, then opens the
// file, seeks to the offset and reads only the range (with blocking calls up to
// syncReadMaxBytes).

import { containment, DIR_MODE, FILE_MODE, fsStorage, isMissing, outsideStore } from "./base/fs.js";
import { rangeLength } from "./base/range.js";

const decoder = new TextDecoder();
const encoder = new TextEncoder();
const bytes = (data) => (typeof data === "string" ? encoder.encode(data) : data);

function dirname(path) {
  const i = path.lastIndexOf("/");
  return i <= 0 ? "/" : path.slice(0, i);
}

/** Gives Deno's error classes the `code` the base and the core read (EEXIST, ENOENT, ...). */
function withCode(err) {
  if (err && typeof err === "object" && !err.code) {
    if (err instanceof Deno.errors.AlreadyExists) err.code = "EEXIST";
    else if (err instanceof Deno.errors.NotFound) err.code = "ENOENT";
    else if (Deno.errors.NotADirectory && err instanceof Deno.errors.NotADirectory) err.code = "ENOTDIR";
  }
  return err;
}

/** `fn` whose errors have Node's codes. */
const coded =
  (fn) =>
  async (...args) => {
    try {
      return await fn(...args);
    } catch (err) {
      throw withCode(err);
    }
  };

/** What base/holder.js needs: who this process is, and whether another one runs. Without
 * --allow-sys (hostname) or --allow-read of /proc, a holder is judged by its lease alone. */
const granted = (descriptor) => Deno.permissions?.querySync?.(descriptor).state === "granted"; // never a prompt
const os = {
  hostname: () => (granted({ name: "sys", kind: "hostname" }) ? Deno.hostname() : undefined),
  get pid() {
    return Deno.pid; // read when a lock is taken: importing this module outside Deno stays harmless
  },
  readText: (path) => (granted({ name: "read", path }) ? Deno.readTextFileSync(path) : undefined),
  readLink: (path) => (granted({ name: "read", path }) ? Deno.readLinkSync(path) : undefined),
};

const ignoreMissing = (err) => {
  if (!isMissing(withCode(err))) throw err;
};

/**
 * @param {import("./deno.d.ts").DenoStorageOptions} [options]
 * @returns {import("./host.js").StorageHost}
 */
export function denoStorage(options = {}) {
  const strict = options.durability === "strict";
  // As in toolctx/node: small files are created and read with blocking calls, which
  // skip the op round trips of the asynchronous API (bench/io.mjs).
  const syncCreateMax = options.syncCreateMaxBytes ?? 256 * 1024;
  const syncReadMax = options.syncReadMaxBytes ?? 256 * 1024;
  const inside = containment({ realpathSync: Deno.realPathSync, dirname, sep: "/" });

  // Synchronous: an lstat and a realpath over cached folder entries cost microseconds,
  // less than two asynchronous op round trips.
  function assertInside(path, root) {
    const info = Deno.lstatSync(path);
    if (info.isSymlink) throw outsideStore(path);
    inside(path, root);
    return info;
  }

  async function createFile(path, data) {
    if (!strict) {
      // One call (open O_EXCL, write, close) instead of three ops; a failed write leaves no part.
      const view = bytes(data);
      const opts = { createNew: true, mode: FILE_MODE };
      try {
        return view.length <= syncCreateMax ? Deno.writeFileSync(path, view, opts) : await Deno.writeFile(path, view, opts);
      } catch (err) {
        if (!(err instanceof Deno.errors.AlreadyExists) && !isMissing(withCode(err))) await Deno.remove(path).catch(() => {});
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

  async function inspect(path) {
    let file;
    try {
      file = await Deno.open(path, { read: true });
    } catch (err) {
      if (withCode(err).code === "ENOENT") return undefined; // a file where a folder is: ENOTDIR
      throw err;
    }
    try {
      const info = await file.stat();
      const text = new Uint8Array(info.size); // a token: a few bytes
      let at = 0;
      for (let n; at < text.length && (n = await file.read(text.subarray(at))) !== null; ) at += n;
      return { text: decoder.decode(text.subarray(0, at)), mtimeMs: info.mtime?.getTime() ?? Number.NaN };
    } finally {
      file.close();
    }
  }

  /** The bytes [offset, offset + length) of the open `file` (fewer at its end), with blocking calls. */
  function readAtSync(file, offset, length) {
    const out = new Uint8Array(rangeLength(file.statSync().size, offset, length));
    file.seekSync(offset, Deno.SeekMode.Start);
    for (let at = 0, n; at < out.length; at += n) {
      n = file.readSync(out.subarray(at));
      if (!n) return out.subarray(0, at); // the end (null): it shrank
    }
    return out;
  }

  /** The bytes [offset, offset + length) of the open `file` (fewer at its end). */
  async function readAt(file, offset, length) {
    const out = new Uint8Array(rangeLength((await file.stat()).size, offset, length));
    await file.seek(offset, Deno.SeekMode.Start);
    for (let at = 0, n; at < out.length; at += n) {
      n = await file.read(out.subarray(at));
      if (!n) return out.subarray(0, at); // the end (null): it shrank
    }
    return out;
  }

  /** A range of the file at `path`, with the checks of `read`; never the whole file. */
  async function readRange(path, offset, length, { root } = {}) {
    const blocking = syncReadMax > 0 && length <= syncReadMax;
    let file;
    try {
      if (root !== undefined) assertInside(path, root);
      file = blocking ? Deno.openSync(path, { read: true }) : await Deno.open(path, { read: true });
    } catch (err) {
      if (isMissing(withCode(err))) return undefined;
      throw err;
    }
    try {
      return blocking ? readAtSync(file, offset, length) : await readAt(file, offset, length);
    } finally {
      file.close();
    }
  }

  return fsStorage(
    {
      description: "deno fs storage",
      dirname,
      read: coded(async (path, { root } = {}) => {
        try {
          if (root !== undefined && assertInside(path, root).size <= syncReadMax) return Deno.readFileSync(path);
          return await Deno.readFile(path);
        } catch (err) {
          if (isMissing(withCode(err))) return undefined;
          throw err;
        }
      }),
      readRange: coded(readRange),
      mkdir: coded((dir) => Deno.mkdir(dir, { recursive: true, mode: DIR_MODE })),
      createFile: coded(createFile),
      rename: coded(Deno.rename),
      appendFile: coded((path, data) => Deno.writeFile(path, bytes(data), { append: true, create: true, mode: FILE_MODE })),
      removeFile: coded((path) => Deno.remove(path).catch(ignoreMissing)),
      removeDir: coded((path) => Deno.remove(path).catch(ignoreMissing)),
      readDir: coded(async (dir) => {
        const names = [];
        for await (const entry of Deno.readDir(dir)) names.push(entry.isDirectory ? `${entry.name}/` : entry.name);
        return names;
      }),
      inspect: coded(inspect),
      touch: coded(async (path) => {
        const now = new Date();
        await Deno.utime(path, now, now);
      }),
      os,
      // Deno.exit() dispatches "unload"; an uncaught exception does not (the holder check then).
      onExit: (fn) => globalThis.addEventListener("unload", fn),
      readTextSync(path) {
        try {
          return Deno.readTextFileSync(path);
        } catch {
          return undefined;
        }
      },
      removeFileSync: (path) => Deno.removeSync(path),
    },
    options,
    "denoStorage",
  );
}
