// Read-only access to a bare git directory (the snapshots the session's fetch tool puts
// under /work/.mirror/owner+name/repo): the tree at HEAD, file contents, history. No work
// tree is needed and nothing is written.

import { execFileSync, spawnSync } from "node:child_process";

const MAX_BUFFER = 1 << 30;

/** Runs git on the directory and returns its standard output as text. */
export function git(gitDir, args) {
  return execFileSync("git", ["--git-dir", gitDir, "-c", "core.quotePath=false", ...args], {
    encoding: "utf8",
    maxBuffer: MAX_BUFFER,
    env: { ...process.env, GIT_PAGER: "cat", TZ: "UTC", LC_ALL: "C" },
  });
}

export const headCommit = (gitDir) => git(gitDir, ["rev-parse", "HEAD"]).trim();

/** Every blob at HEAD as {path, size, sha}, in path order. */
export function listTree(gitDir) {
  return git(gitDir, ["ls-tree", "-r", "-l", "-z", "HEAD"])
    .split("\0")
    .filter(Boolean)
    .map((line) => {
      const [meta, path] = line.split("\t");
      const [mode, type, sha, size] = meta.split(/\s+/);
      return { path, mode, type, sha, size: Number(size) };
    })
    .filter((e) => e.type === "blob" && e.mode !== "120000") // symbolic links hold a path, not text
    .sort((a, b) => (a.path < b.path ? -1 : 1));
}

/**
 * The contents of many blobs in one `git cat-file --batch` (one process, not one a file).
 * Returns a Map from sha to Buffer.
 */
export function readBlobs(gitDir, shas) {
  const input = shas.join("\n") + "\n";
  const out = spawnSync("git", ["--git-dir", gitDir, "cat-file", "--batch"], { input, maxBuffer: MAX_BUFFER }).stdout;
  const blobs = new Map();
  let at = 0;
  while (at < out.length) {
    const eol = out.indexOf(10, at);
    const [sha, type, size] = out.subarray(at, eol).toString().split(" ");
    if (type === "missing") {
      at = eol + 1;
      continue;
    }
    const start = eol + 1;
    blobs.set(sha, out.subarray(start, start + Number(size)));
    at = start + Number(size) + 1; // the content is followed by a newline
  }
  return blobs;
}

/** Non-merge commits from HEAD, newest first: {sha, subject, files}. */
export function commits(gitDir) {
  const text = git(gitDir, ["log", "--no-merges", "--no-renames", "--format=%x01%H%x00%s", "--name-only", "HEAD"]);
  return text
    .split("\x01")
    .filter(Boolean)
    .map((chunk) => {
      const [head, ...rest] = chunk.split("\n");
      const [sha, subject] = head.split("\0");
      return { sha, subject, files: rest.filter(Boolean) };
    });
}

/**
 * The blobs any commit holds at a path that `keep(path)` accepts, one per path (the
 * newest version reached first): {path, sha, size}, in path order. Blobs the snapshot
 * lacks (it leaves out files of 4 MiB and more) are left out.
 */
export function historyBlobs(gitDir, keep) {
  const shaOf = new Map();
  for (const line of git(gitDir, ["rev-list", "--all", "--objects", "--missing=allow-any"]).split("\n")) {
    const space = line.indexOf(" ");
    const path = line.slice(space + 1);
    if (space > 0 && keep(path) && !shaOf.has(path)) shaOf.set(path, line.slice(0, space));
  }
  const input = [...shaOf.values()].join("\n") + "\n";
  const sizes = new Map();
  for (const line of spawnSync("git", ["--git-dir", gitDir, "cat-file", "--batch-check"], { input, maxBuffer: MAX_BUFFER }).stdout.toString().split("\n")) {
    const [sha, type, size] = line.split(" ");
    if (type === "blob") sizes.set(sha, Number(size));
  }
  return [...shaOf]
    .filter(([, sha]) => sizes.has(sha))
    .map(([path, sha]) => ({ path, sha, size: sizes.get(sha) }))
    .sort((a, b) => (a.path < b.path ? -1 : 1));
}
