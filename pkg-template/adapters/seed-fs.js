// Wraps the seed's IFileSystem (readFile, writeFile, readdir, unlink, mkdir,
// exists, rename) as a StorageHost, so seed users keep their injected file systems.

import { toolctxError } from "../errors.js";

const decoder = new TextDecoder();

function parentOf(path) {
  const i = path.lastIndexOf("/");
  return i > 0 ? path.slice(0, i) : undefined;
}

function isMissing(err) {
  return err?.code === "ENOENT" || err?.code === "ENOTDIR";
}

/** @param {import("../index.js").IFileSystem} fs */
export function fromFileSystem(fs) {
  async function ensureParent(path) {
    const dir = parentOf(path);
    if (dir !== undefined && fs.mkdir) await fs.mkdir(dir, { recursive: true });
  }
  const text = (data) => (typeof data === "string" ? data : decoder.decode(data));
  return {
    description: "seed IFileSystem",
    async read(path) {
      if (fs.exists && !(await fs.exists(path))) return undefined;
      try {
        return await fs.readFile(path, "utf-8");
      } catch (err) {
        if (isMissing(err)) return undefined;
        throw err;
      }
    },
    async write(path, data, { exclusive = false } = {}) {
      await ensureParent(path);
      if (exclusive && fs.exists && (await fs.exists(path))) {
        throw toolctxError("EEXIST", `EEXIST: file already exists: ${path}`);
      }
      if (!exclusive && fs.rename) {
        const tmp = `${path}.${Math.random().toString(36).slice(2, 10)}.tmp`;
        await fs.writeFile(tmp, text(data));
        await fs.rename(tmp, path);
        return;
      }
      await fs.writeFile(path, text(data));
    },
    async remove(path) {
      try {
        await fs.unlink(path);
      } catch (err) {
        if (!isMissing(err)) throw err;
      }
    },
    async list(dir) {
      if (fs.exists && !(await fs.exists(dir))) return [];
      try {
        return await fs.readdir(dir);
      } catch (err) {
        if (isMissing(err)) return [];
        throw err;
      }
    },
  };
}
