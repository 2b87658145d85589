#!/usr/bin/env node
// Builds the published `toolctx` command line: pkg-template/bin/ (the source, read as it
// is) and the npm packages it imports (commander, cli-table3, cli-progress, ms,
// picocolors) bundled by esbuild into one file, pkg/bin/toolctx.js, so the package has no
// runtime dependencies and a browser or edge project installing it pulls none of them.
// Imports of the library itself (`../index.node.js`, `../adapters/node.js`; from
// bin/commands/, `../../…`) stay imports, rewritten to be relative to pkg/bin/toolctx.js:
// the bin uses the package's own files. The bundled packages' licences go beside it in
// pkg/bin/THIRD-PARTY-LICENSES.txt.
//
//   node scripts/bundle-cli.mjs        (run by `make pkg` after pkg-template/ is copied)

import { readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const source = join(root, "pkg-template", "bin");
const target = join(root, "pkg", "bin");

/** Whether `path` is `folder` or under it. */
function inside(folder, path) {
  const rel = relative(folder, path);
  return rel !== ".." && !rel.startsWith(`..${sep}`) && !isAbsolute(rel);
}

/**
 * A `../…` import of a file of bin/ (or bin/commands/) that leaves bin/ is the library's
 * own module, loaded from the package at run time: external, its path made relative to
 * the bundle, bin/toolctx.js (`../../adapters/node.js` from commands/ is
 * `../adapters/node.js`). One between bin/'s files (`../store.js`) is bundled, and so are a
 * bundled package's `../…` imports (its own files).
 */
const libraryExternal = {
  name: "library-external",
  setup(b) {
    b.onResolve({ filter: /^\.\.\// }, (args) => {
      if (!inside(source, args.importer)) return undefined;
      const file = resolve(dirname(args.importer), args.path);
      if (inside(source, file)) return undefined;
      return { path: relative(source, file).split(sep).join("/"), external: true };
    });
  },
};

const result = await build({
  absWorkingDir: root, // the metafile's input paths are relative to it
  entryPoints: [join(source, "toolctx.js")],
  outfile: join(target, "toolctx.js"),
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  plugins: [libraryExternal],
  // commander and cli-table3 are CommonJS and require() Node's built-ins.
  banner: { js: 'import { createRequire as __toolctxCreateRequire } from "node:module";\nconst require = __toolctxCreateRequire(import.meta.url);' },
  legalComments: "none",
  metafile: true,
  logLevel: "warning",
});

// The library stays outside the bundle: no file of pkg-template/ but bin/'s is in it.
const template = join(root, "pkg-template");
const inlined = Object.keys(result.metafile.inputs).filter((input) => {
  const file = resolve(root, input);
  return inside(template, file) && !inside(source, file);
});
if (inlined.length) throw new Error(`the library was bundled into bin/toolctx.js, not imported: ${inlined.join(", ")}`);

// Everything else in bin/ (commands/ too) is now inside toolctx.js.
for (const name of readdirSync(target)) {
  if (name !== "toolctx.js") rmSync(join(target, name), { recursive: true, force: true });
}

// One notice per bundled package: name, version, licence, and its licence file.
const packages = new Map();
for (const input of Object.keys(result.metafile.inputs)) {
  const match = /^(.*node_modules\/(?:@[^/]+\/)?[^/]+)\//.exec(input);
  if (match) packages.set(match[1], true);
}
const notices = [...packages.keys()].sort().map((dir) => {
  const abs = resolve(root, dir);
  const meta = JSON.parse(readFileSync(join(abs, "package.json"), "utf8"));
  const licenceFile = readdirSync(abs).find((f) => /^(licen[sc]e|copying)(\.|$)/i.test(f));
  const text = licenceFile ? readFileSync(join(abs, licenceFile), "utf8").trim() : `(no licence file; package.json: ${meta.license})`;
  return `${meta.name}@${meta.version} (${meta.license})\n\n${text}\n`;
});
writeFileSync(
  join(target, "THIRD-PARTY-LICENSES.txt"),
  `bin/toolctx.js bundles these packages:\n\n${notices.join(`\n${"-".repeat(72)}\n\n`)}`,
);
console.log(`bundled ${relative(root, join(target, "toolctx.js"))} with ${packages.size} packages`);
