#!/usr/bin/env node
// Every path of this repository that a comment or a document names exists (issue 34:
// comments pointed at the core's manager module and extras.js long after they were split).
//
// A path here is a token with at least one folder and an extension of this repository's
// files (`crates/core/src/store/save.rs`, `adapters/base/fs.js`, `docs/protocol.md`), in a comment of
// a source, script or test, or in the prose of a document (not its code blocks, whose
// paths are a user's: `src/auth/login.ts`). It is found when it names a file or folder of
// the working tree relative to the repository's root, to the folder of the file that
// names it, or to pkg-template/ (the package's files name each other as they are
// published; pkg/ is pkg-template/ plus the build's output). Tokens inside URLs, other
// packages' files and the build's outputs (pkg/toolctx_*, target/) are not paths of the
// tree; CHANGELOG.md and docs/benchmarks-history.md name what was, and are not read. A
// path from a folder at the root (`crates/…`, `docs/…`) must be there; `src/…` must be in
// the crate of the file that names it; a shorter one (`store/save.rs`) must end a path of
// the tree. Run by `make lint`; exits 1 and
// lists each missing path with where it is named.
//
//   node scripts/check-paths.mjs

import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, normalize } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));

/** The files whose comments are read, and the documents whose prose is. */
const CODE = /\.(rs|js|mjs|sh|toml)$|^Makefile$/;
const PROSE = /\.md$/;
const SKIPPED = new Set(["CHANGELOG.md", "docs/benchmarks-history.md"]);

/** A comment's text in a line of code (`//`, `///`, `/*`, ` * `, `#`), or undefined. */
function commentOf(line, file) {
  const hash = /\.(sh|toml)$|Makefile$/.test(file);
  const at = hash ? line.indexOf("#") : line.search(/\/\/|\/\*|^\s*\*/);
  return at < 0 ? undefined : line.slice(at);
}

/** A path as written: folders, then a file name with an extension this repository uses. */
const PATH = /(?<![\w@./:-])((?:\.\.?\/)*(?:[\w-]+\/)+[\w.-]*\.(?:rs|js|mjs|md|json|sh|toml|html|wasm))(?![\w/])/g;

/** Paths that are not files of the tree: other packages' files and the build's outputs. */
const NOT_OURS = /^(node_modules|target|test-output|pkg\/toolctx_|pkg\/bin\/toolctx\.js|pkg\/types\.d\.ts|pkg\/index\.node\.js)\b/;

/** Whether `path`, named in `file`, is a file or folder of the tree. */
function found(path, file) {
  const bases = [root, join(root, dirname(file)), join(root, "pkg-template")];
  if (bases.some((base) => existsSync(normalize(join(base, path))))) return true;
  const tail = path.replace(/^(\.\.?\/)+/, "");
  const first = tail.split("/")[0];
  // `src/…` is a crate's: the crate of the file that names it (from elsewhere, a path
  // names its crate: `crates/core/src/plan.rs`).
  if (first === "src") {
    const crate = /^crates\/[^/]+\//.exec(file)?.[0];
    return crate !== undefined && existsSync(join(root, crate, tail));
  }
  // A path from the root's folders (`crates/…`, `docs/…`) was looked up there already.
  if (rootFolders.has(first)) return false;
  // A path within a part (`store/save.rs` in the core's crate, `base/fs.js` among the
  // adapters): the end of a tracked file's path.
  if (tracked.some((f) => f === tail || f.endsWith(`/${tail}`))) return true;
  // A path whose first folder is no folder of the tree is an example (`a/b/c.json`, a
  // user's `agent/context/x.json`, another package's `lib/lockfile.js`), not a reference.
  return !folders.has(tail.split("/")[0]);
}

const tracked = execFileSync("git", ["ls-files", "--cached", "--others", "--exclude-standard"], { cwd: root, encoding: "utf8" })
  .split("\n")
  .filter((f) => f !== "" && existsSync(join(root, f)));
const folders = new Set(tracked.flatMap((f) => f.split("/").slice(0, -1)));
const rootFolders = new Set(tracked.filter((f) => f.includes("/")).map((f) => f.split("/")[0]));
const files = tracked.filter((f) => !SKIPPED.has(f) && (CODE.test(f) || PROSE.test(f)));

const missing = [];
for (const file of files) {
  const prose = PROSE.test(file);
  let fenced = false;
  readFileSync(join(root, file), "utf8").split("\n").forEach((line, i) => {
    if (prose && line.trimStart().startsWith("```")) fenced = !fenced;
    const text = prose ? (fenced ? undefined : line) : commentOf(line, file);
    if (text === undefined) return;
    // A URL's path is the server's, not ours.
    for (const [, path] of text.replace(/[a-z][\w+.-]*:\/\/\S+/gi, "").matchAll(PATH)) {
      if (NOT_OURS.test(path) || found(path, file)) continue;
      missing.push(`${file}:${i + 1}: ${path}`);
    }
  });
}

if (missing.length > 0) {
  console.error(`${missing.length} path(s) named but not in the tree:\n${missing.join("\n")}`);
  process.exit(1);
}
console.log(`check-paths: every path named in ${files.length} files exists`);
