#!/usr/bin/env node
// What installing toolctx costs a project: `npm pack` of pkg/ (or the tarball given),
// `npm install` of it into an empty scratch project, then files and bytes (apparent
// size) under its node_modules, per package. Needs the npm registry when the package
// has dependencies.
//
//   node bench/install-size.mjs [toolctx-x.y.z.tgz]        (after `make pkg`)

import { execFileSync } from "node:child_process";
import { lstatSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const repoRoot = resolve(fileURLToPath(import.meta.url), "..", "..");
const scratch = mkdtempSync(join(tmpdir(), "toolctx-install-size-"));
const npm = (args, cwd) => execFileSync("npm", args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] }).trim();

/** Files and bytes under `dir` (symbolic links count as files of their own size). */
function walk(dir) {
  let files = 0;
  let bytes = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      const sub = walk(path);
      files += sub.files;
      bytes += sub.bytes;
    } else {
      files += 1;
      bytes += lstatSync(path).size;
    }
  }
  return { files, bytes };
}

/** The installed packages of a node_modules folder (scoped ones included), by name. */
function packages(nodeModules) {
  const found = [];
  for (const entry of readdirSync(nodeModules, { withFileTypes: true })) {
    if (!entry.isDirectory() || entry.name.startsWith(".")) continue;
    if (entry.name.startsWith("@")) {
      for (const scoped of readdirSync(join(nodeModules, entry.name))) found.push(`${entry.name}/${scoped}`);
    } else {
      found.push(entry.name);
    }
  }
  return found.sort();
}

try {
  const tarball = process.argv[2]
    ? resolve(process.argv[2])
    : join(scratch, npm(["pack", join(repoRoot, "pkg"), "--pack-destination", scratch, "--silent"], repoRoot));
  const app = join(scratch, "app");
  execFileSync("mkdir", [app]);
  writeFileSync(join(app, "package.json"), JSON.stringify({ name: "app", private: true, type: "module" }));
  npm(["install", "--no-audit", "--no-fund", "--loglevel=error", tarball], app);

  const nodeModules = join(app, "node_modules");
  const kib = (n) => `${(n / 1024).toFixed(1)} KiB`;
  console.log(`npm install ${tarball.split("/").pop()} into an empty project:`);
  for (const name of packages(nodeModules)) {
    const { files, bytes } = walk(join(nodeModules, name));
    console.log(`  ${name.padEnd(24)} ${String(files).padStart(5)} files  ${kib(bytes).padStart(12)}`);
  }
  const total = walk(nodeModules);
  console.log(`  ${"node_modules (total)".padEnd(24)} ${String(total.files).padStart(5)} files  ${kib(total.bytes).padStart(12)}  (${total.bytes} bytes)`);
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
