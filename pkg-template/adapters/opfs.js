// toolctx/opfs: a StorageHost over the Origin Private File System.
//
// Paths are keys under the origin's OPFS root ("agent/context/x.json"). Replacing
// writes use `createWritable()`, which writes a swap file and swaps it in on close:
// a reader sees the old file or the new one. New records (exclusive writes) are
// created under a Web Lock on their path, so two tabs can never both create one; in a
// dedicated worker they are written through a `FileSystemSyncAccessHandle`, the
// fastest OPFS path. A torn record left by a crash does not parse and is skipped.
//
// `readRange` slices the file's `File` (`getFile()`), and the browser reads only the
// slice, in every context. Not through a sync access handle: it locks its file, so two
// workers reading one index segment at once would fail each other (and a writer).

import { toolctxError } from "../errors.js";
import { bytesOf } from "./base/bytes.js";
import { badRange } from "./base/range.js";
import { webLock } from "./base/web-lock.js";

function isMissing(err) {
  return err?.name === "NotFoundError" || err?.name === "TypeMismatchError";
}

function exists(path) {
  return toolctxError("EEXIST", `EEXIST: file already exists: ${path}`);
}

function parts(path) {
  const list = path.split("/").filter((p) => p !== "" && p !== ".");
  if (list.includes("..")) {
    throw toolctxError("OUTSIDE_STORE", `${path} climbs out of the store`);
  }
  return list;
}

function inDedicatedWorker() {
  return (
    typeof DedicatedWorkerGlobalScope !== "undefined" &&
    globalThis instanceof DedicatedWorkerGlobalScope &&
    typeof FileSystemFileHandle !== "undefined" &&
    "createSyncAccessHandle" in FileSystemFileHandle.prototype
  );
}

/**
 * @param {import("./opfs.d.ts").OpfsStorageOptions} [options]
 * @returns {import("./host.js").StorageHost}
 */
export function opfsStorage(options = {}) {
  const syncHandles = options.syncAccessHandles ?? inDedicatedWorker();
  let rootPromise;
  const root = () => (rootPromise ??= navigator.storage.getDirectory());

  async function dirAt(names, create) {
    let dir = await root();
    for (const name of names) dir = await dir.getDirectoryHandle(name, { create });
    return dir;
  }

  /** The parent folder's handle and the file name of `path`. */
  async function locate(path, create) {
    const names = parts(path);
    const file = names.pop();
    if (file === undefined) throw toolctxError("INVALID_ARGUMENT", `not a file path: ${path}`);
    return [await dirAt(names, create), file];
  }

  const locked = (path, fn) => webLock(`opfs:${path}`, fn);

  async function writeSync(handle, data) {
    const access = await handle.createSyncAccessHandle();
    try {
      access.truncate(0);
      const view = bytesOf(data);
      let at = 0;
      while (at < view.length) at += access.write(view.subarray(at), { at });
      access.flush();
    } finally {
      access.close();
    }
  }

  async function writeAsync(handle, data) {
    const writable = await handle.createWritable();
    try {
      await writable.write(bytesOf(data));
    } catch (err) {
      await writable.abort().catch(() => {});
      throw err;
    }
    await writable.close();
  }

  /** Removes a file or an empty folder; a missing one is fine. */
  async function removeEntry(path) {
    try {
      const [dir, name] = await locate(path, false);
      await dir.removeEntry(name);
    } catch (err) {
      if (!isMissing(err)) throw err;
    }
  }

  /** The bytes of `part(file)` of the `File` at `path` (the whole file by default), or undefined when there is none. */
  async function readFile(path, part = (file) => file) {
    try {
      const [dir, name] = await locate(path, false);
      const file = await (await dir.getFileHandle(name)).getFile();
      return new Uint8Array(await part(file).arrayBuffer());
    } catch (err) {
      if (isMissing(err)) return undefined;
      throw err;
    }
  }

  return {
    description: syncHandles ? "opfs storage (sync access handles)" : "opfs storage",
    read: (path) => readFile(path),
    async readRange(path, offset, length) {
      const bad = badRange(offset, length);
      if (bad !== undefined) throw bad;
      return readFile(path, (file) => file.slice(offset, offset + length));
    },
    async write(path, data, { exclusive = false } = {}) {
      const [dir, name] = await locate(path, true);
      if (!exclusive) return writeAsync(await dir.getFileHandle(name, { create: true }), data);
      await locked(path, async () => {
        try {
          await dir.getFileHandle(name);
          throw exists(path);
        } catch (err) {
          if (!isMissing(err)) throw err;
        }
        const handle = await dir.getFileHandle(name, { create: true });
        try {
          await (syncHandles ? writeSync(handle, data) : writeAsync(handle, data));
        } catch (err) {
          await dir.removeEntry(name).catch(() => {});
          throw err;
        }
      });
    },
    async append(path, data) {
      const [dir, name] = await locate(path, true);
      await locked(path, async () => {
        const handle = await dir.getFileHandle(name, { create: true });
        const writable = await handle.createWritable({ keepExistingData: true });
        await writable.seek((await handle.getFile()).size);
        await writable.write(bytesOf(data));
        await writable.close();
      });
    },
    remove: removeEntry,
    async list(path) {
      let dir;
      try {
        dir = await dirAt(parts(path), false);
      } catch (err) {
        if (isMissing(err)) return [];
        throw err;
      }
      const names = [];
      for await (const [name, handle] of dir.entries()) names.push(handle.kind === "directory" ? `${name}/` : name);
      return names.sort();
    },
    // removeEntry without `recursive` fails on a folder that is not empty, as it must.
    removeDir: removeEntry,
    lock: webLock,
  };
}
