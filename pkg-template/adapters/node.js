// toolctx/node: a StorageHost over Node's fs/promises (also used by Bun).
//
// Folders are created 0700 and files 0600: tool outputs hold secrets.
// - exclusive writes create the file with O_EXCL ("wx"): a save never replaces
//   another record; a torn file left by a crash does not parse and is skipped;
// - replacing writes go to a temporary name in the same folder and are renamed
//   over the target, so a reader never sees half a file;
// - reads refuse to follow a symbolic link (O_NOFOLLOW), so a link planted in the
//   store cannot point a read outside it.

import { constants } from "node:fs";
import { mkdir, open, readdir, rename, rm, rmdir, unlink, appendFile } from "node:fs/promises";
import { dirname } from "node:path";
import { randomBytes } from "node:crypto";

const DIR_MODE = 0o700;
const FILE_MODE = 0o600;
const NOFOLLOW = constants.O_NOFOLLOW ?? 0;

function ignore(codes) {
  return (err) => {
    if (!codes.includes(err?.code)) throw err;
  };
}

/**
 * @param {import("./node.d.ts").NodeStorageOptions} [options]
 * @returns {import("../index.js").StorageHost}
 */
export function nodeStorage(options = {}) {
  const strict = options.durability === "strict";
  const madeDirs = new Set();

  async function ensureDir(dir) {
    if (madeDirs.has(dir)) return;
    await mkdir(dir, { recursive: true, mode: DIR_MODE });
    madeDirs.add(dir);
  }

  async function writeFresh(path, data) {
    const handle = await open(path, "wx", FILE_MODE);
    try {
      await handle.writeFile(data);
      if (strict) await handle.sync();
    } catch (err) {
      await handle.close().catch(() => {});
      await unlink(path).catch(() => {});
      throw err;
    }
    await handle.close();
  }

  return {
    description: "node fs storage",
    async read(path) {
      let handle;
      try {
        handle = await open(path, constants.O_RDONLY | NOFOLLOW);
      } catch (err) {
        if (err?.code === "ENOENT" || err?.code === "ENOTDIR") return undefined;
        throw err;
      }
      try {
        return new Uint8Array(await handle.readFile());
      } finally {
        await handle.close();
      }
    },

    async write(path, data, { exclusive = false } = {}) {
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
      const tmp = `${path}.${randomBytes(6).toString("hex")}.tmp`;
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
    },

    async append(path, data) {
      await ensureDir(dirname(path));
      await appendFile(path, data, { mode: FILE_MODE });
    },

    async remove(path) {
      await rm(path, { force: true });
    },

    async list(dir) {
      try {
        const entries = await readdir(dir, { withFileTypes: true });
        return entries.map((e) => (e.isDirectory() ? `${e.name}/` : e.name)).sort();
      } catch (err) {
        if (err?.code === "ENOENT" || err?.code === "ENOTDIR") return [];
        throw err;
      }
    },

    async removeDir(path) {
      madeDirs.delete(path);
      await rmdir(path).catch(ignore(["ENOENT"]));
    },
  };
}

