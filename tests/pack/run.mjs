#!/usr/bin/env node
// Packaging tests on the real tarball: `npm pack` the package in pkg/, install it into
// scratch projects, and use it as users do — Node ESM and require, the `toolctx` bin,
// strict TypeScript consumers (tsc) and @arethetypeswrong/cli, Deno, Bun, edge workers
// (workerd, edge-runtime), and a page bundled by Vite and loaded in headless Chromium.
// The package has no runtime dependencies, and the browser bundle holds no `node:` import.
//
//   node tests/pack/run.mjs        (after `make pkg`)

import { execFileSync, spawnSync } from "node:child_process";
import { closeSync, cpSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { chromium } from "playwright-core";
import { launchChromium, repoRoot, serve } from "../js/browser/serve.mjs";
import { watchWasm } from "../js/browser/wasm-fetches.mjs";
import { bundleForEdgeLight, bundleForWorkerd } from "../edge/bundle.mjs";
import { checkScenario, edgeLightHandler, workerdHandler } from "../edge/check.mjs";
import { fetchFromEdgeLight, fetchFromWorkerd } from "../edge/runtimes.mjs";

const bin = (name) => join(repoRoot, "node_modules", ".bin", name);
const scratch = mkdtempSync(join(tmpdir(), "toolctx-pack-"));
const results = [];

function run(cmd, args, cwd, env = {}) {
  return execFileSync(cmd, args, { cwd, encoding: "utf8", env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
}

async function check(name, fn) {
  try {
    await fn();
    results.push([name, true]);
    console.log(`ok - ${name}`);
  } catch (err) {
    results.push([name, false]);
    console.log(`not ok - ${name}\n  ${String(err.stderr || err.stack || err).replaceAll("\n", "\n  ")}`);
  }
}

// The script every server runtime runs: save, list, select, load through the default
// storage in a fresh folder, and print a line the test compares.
const SMOKE = `
import { ContextManager } from "toolctx";
import { memoryStorage } from "toolctx/memory";
const dir = process.argv[2] ?? Deno.args[0];
const m = await ContextManager.open({ contextDir: dir, persistThreshold: 0 });
const fp = await m.saveContext("readFile", { path: "src/auth/login.ts" }, "body", 1, "q");
await m.saveContext("listDirectory", { path: "docs" }, ["a.md"], 2, "q");
const picked = m.selectRelevantContexts("login", m.getAllPointers());
const [record] = await m.loadContexts(picked);
const mem = new ContextManager({ contextDir: dir, fileSystem: memoryStorage() });
console.log(JSON.stringify({ ok: picked[0] === fp && record.result === "body", hash: ContextManager.hashQuery("x"), size: m.size, mem: mem.size }));
`;

/** tsc's exit code and diagnostics (tsc prints them on stdout). */
function tsc(args, cwd) {
  const r = spawnSync(bin("tsc"), args, { cwd, encoding: "utf8" });
  return { code: r.status, out: `${r.stdout}${r.stderr}`.trim() };
}

// Strict TypeScript projects over the installed package (the consumer files are in
// tests/pack/types/): Node (`--module nodenext`, @types/node from this repository) and
// a bundled browser app (`--moduleResolution bundler`, DOM, no Node types). Declaration
// files are checked too (`skipLibCheck` off, tsc's default).
const TSCONFIG_NODE = {
  compilerOptions: {
    strict: true, module: "nodenext", target: "es2022", lib: ["es2022"], types: ["node"],
    typeRoots: [join(repoRoot, "node_modules", "@types")], outDir: "out", skipLibCheck: false,
  },
  files: ["consumer.mts", "consumer.cts"],
};
const TSCONFIG_WEB = {
  compilerOptions: {
    strict: true, module: "esnext", moduleResolution: "bundler", target: "es2022", lib: ["es2022", "dom"], types: [],
    noEmit: true, skipLibCheck: false,
  },
  files: ["consumer.mts"],
};

// Problems @arethetypeswrong/cli may report, and why they are accepted. toolctx is
// ESM only; in Node `require("toolctx")` works through require(esm) (Node 20.19+,
// 22.12+; checked above), which TypeScript types under `--module nodenext` (the CJS
// consumer). attw's resolution modes predate require(esm), so:
// - node16-cjs / CJSResolvesToESM: "a require call resolves to ESM" is that feature;
// - node10 / NoResolution: TypeScript's node10 resolution ignores `exports`, so it cannot
//   see the subpaths (toolctx/node...); TypeScript 7 no longer has node10.
// Anything else (types that disagree with the JS, a wrong module kind, an untyped or
// unresolved entry point under node16-esm or bundler) fails the test.
const ATTW_ACCEPTED = new Set(["CJSResolvesToESM@node16-cjs", "NoResolution@node10"]);

const expectSmoke = (out) => {
  const line = JSON.parse(out.trim().split("\n").pop());
  if (!line.ok || line.size !== 2 || line.hash !== "q_2d711642b726b044" || line.mem !== 0) {
    throw new Error(`unexpected output: ${out}`);
  }
};

try {
  const tarball = join(scratch, run("npm", ["pack", join(repoRoot, "pkg"), "--pack-destination", scratch, "--silent"], repoRoot).trim());

  await check("npm pack: the tarball holds the package files and no build leftovers", () => {
    const listing = run("tar", ["-tzf", tarball], scratch).split("\n");
    for (const f of ["package/index.node.js", "package/index.js", "package/bin/toolctx.js", "package/index.deno.js", "package/index.workerd.js", "package/index.edge-light.js", "package/edge.js", "package/toolctx_core_bg.wasm", "package/toolctx_conversation_bg.wasm", "package/toolctx_window_bg.wasm", "package/conversation.d.ts", "package/window.d.ts", "package/adapters/opfs.js", "package/integrations/ai-sdk.js", "package/tools.js", "package/references.js", "package/grep.js", "package/adapters/cloudflare.js", "package/integrations/ai-sdk.d.ts", "package/README.md", "package/LICENSE-MIT"]) {
      if (!listing.includes(f)) throw new Error(`${f} missing from the tarball`);
    }
    const stray = listing.filter((f) => /\.built$|\.gitignore$|\.tmp$/.test(f));
    if (stray.length) throw new Error(`stray files: ${stray}`);
  });

  const app = join(scratch, "app");
  mkdirSync(app);
  writeFileSync(join(app, "package.json"), JSON.stringify({ name: "app", private: true, type: "module" }));
  run("npm", ["install", "--no-audit", "--no-fund", "--loglevel=error", tarball], app);
  await check("package.json: no runtime dependencies, only optional peers; installing toolctx installs nothing else", () => {
    const manifest = JSON.parse(readFileSync(join(app, "node_modules", "toolctx", "package.json"), "utf8"));
    for (const field of ["dependencies", "optionalDependencies", "bundleDependencies", "bundledDependencies"]) {
      if (manifest[field] !== undefined && Object.keys(manifest[field]).length > 0) {
        throw new Error(`${field}: ${JSON.stringify(manifest[field])}`);
      }
    }
    // The integrations' and shared stores' libraries (ai, @anthropic-ai/sdk, unstorage) are optional peers: never installed with toolctx.
    const required = Object.keys(manifest.peerDependencies ?? {}).filter((name) => manifest.peerDependenciesMeta?.[name]?.optional !== true);
    if (required.length) throw new Error(`peer dependencies not marked optional: ${required}`);
    const installed = readdirSync(join(app, "node_modules")).filter((name) => !name.startsWith("."));
    if (installed.join() !== "toolctx") throw new Error(`node_modules holds ${installed.join(", ")}`);
  });

  writeFileSync(join(app, "smoke.mjs"), SMOKE.replace("process.argv[2] ?? Deno.args[0]", "process.argv[2]"));
  writeFileSync(join(app, "smoke-deno.mjs"), SMOKE.replace("process.argv[2] ?? Deno.args[0]", "Deno.args[0]"));

  await check("node: import from ESM", () => expectSmoke(run("node", ["smoke.mjs", join(scratch, "store-node")], app)));

  await check("toolctx/ai-sdk: exported, and without its optional peer `ai` it fails to import naming it", () => {
    const r = spawnSync("node", ["--input-type=module", "-e", 'await import("toolctx/ai-sdk")'], { cwd: app, encoding: "utf8" });
    if (r.status === 0 || !/Cannot find package 'ai'/.test(r.stderr)) throw new Error(`status ${r.status}: ${r.stderr}`);
  });

  await check("node: require() from CommonJS", () => {
    writeFileSync(
      join(app, "smoke.cjs"),
      `const { ContextManager } = require("toolctx"); const { nodeStorage } = require("toolctx/node");
       const m = new ContextManager({ contextDir: process.argv[2], fileSystem: nodeStorage(), persistThreshold: 0 });
       m.saveContext("t", {}, 1).then((fp) => console.log(JSON.stringify({ fp, size: m.size })));`,
    );
    const out = JSON.parse(run("node", ["smoke.cjs", join(scratch, "store-cjs")], app));
    if (out.size !== 1 || !out.fp.startsWith(join(scratch, "store-cjs"))) throw new Error(JSON.stringify(out));
  });

  await check("bin: the tarball installs the toolctx command line, which reads a store", () => {
    const toolctx = join(app, "node_modules", ".bin", "toolctx");
    const help = run(toolctx, ["--help"], app);
    if (!help.startsWith("Usage: toolctx")) throw new Error(`unexpected --help: ${help}`);
    const npxHelp = run("npx", ["--no-install", "toolctx", "--help"], app);
    if (npxHelp !== help) throw new Error(`npx toolctx --help differs:\n${npxHelp}`);
    const summary = JSON.parse(run(toolctx, ["--dir", join(scratch, "store-node"), "summary", "--json"], app));
    if (summary.records !== 2 || summary.tasks.join() !== "1,2") throw new Error(`unexpected summary: ${JSON.stringify(summary)}`);
    const viaNpx = JSON.parse(run("npx", ["--no-install", "toolctx", "--dir", join(scratch, "store-node"), "ls", "--json"], app));
    if (viaNpx.records.length !== 2) throw new Error(`npx toolctx ls: ${JSON.stringify(viaNpx)}`);
  });

  cpSync(join(repoRoot, "tests", "pack", "types"), app, { recursive: true });
  // Not tsconfig.json: Deno would read it (for `deno check` and the Deno runs below).
  writeFileSync(join(app, "tsconfig.node.json"), JSON.stringify(TSCONFIG_NODE));
  writeFileSync(join(app, "tsconfig.web.json"), JSON.stringify(TSCONFIG_WEB));

  await check("types: a strict Node consumer (ESM and CommonJS) type-checks, compiles and runs against the installed package", () => {
    const { code, out } = tsc(["-p", "tsconfig.node.json"], app);
    if (code !== 0) throw new Error(`tsc --strict (node):\n${out}`);
    const line = JSON.parse(run("node", [join("out", "consumer.mjs"), join(scratch, "store-ts")], app).trim());
    const want = {
      fp: true, records: 2, result: ["src/auth/login.ts"], scored: 2, size: 2, code: "NOT_SERIALIZABLE", disposable: "function",
      role: "tool", resolved: 1, messages: 2, duplicatesReplaced: 1, memory: 0,
      created: "File created successfully at: /memories/a.md", clearedToolUses: 1,
      subpaths: { same: true, window: 7, tokens: 2 },
    };
    for (const [k, v] of Object.entries(want)) {
      if (JSON.stringify(line[k]) !== JSON.stringify(v)) throw new Error(`consumer.mts printed ${k} = ${JSON.stringify(line[k])}, expected ${JSON.stringify(v)}: ${JSON.stringify(line)}`);
    }
    run("node", [join("out", "consumer.cjs")], app);
  });

  await check("types: the same consumer type-checks as a bundled browser app (DOM, no Node types)", () => {
    const { code, out } = tsc(["-p", "tsconfig.web.json"], app);
    if (code !== 0) throw new Error(`tsc --strict (bundler):\n${out}`);
  });

  await check("types: deno check (Deno's own TypeScript) accepts the same consumer", () => {
    run(bin("deno"), ["check", "consumer.mts"], app);
  });

  await check("types: the public types reach no wasm-bindgen file and hold no `any`", () => {
    const { code, out } = tsc(["-p", "tsconfig.node.json", "--listFilesOnly"], app);
    if (code !== 0) throw new Error(out);
    const pkgDir = join(app, "node_modules", "toolctx");
    const reached = out.split("\n").filter((f) => f.startsWith(pkgDir)).map((f) => relative(pkgDir, f));
    for (const want of ["index.d.ts", "types.d.ts", "adapters/node.d.ts", "adapters/opfs.d.ts"]) {
      if (!reached.includes(want)) throw new Error(`${want} not reached: ${reached}`);
    }
    const core = reached.filter((f) => f.startsWith("toolctx_"));
    if (core.length) throw new Error(`the public types reach ${core}`);
    for (const file of reached) {
      const code = readFileSync(join(pkgDir, file), "utf8").replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, "");
      const hit = code.split("\n").find((l) => /\bany\b/.test(l));
      if (hit) throw new Error(`${file}: ${hit.trim()}`);
    }
  });

  await check("types: wasm-bindgen internals (initSync, InitOutput, toolctx_core.js) do not type-check", () => {
    const { out } = tsc(["--ignoreConfig", "--strict", "--noEmit", "--module", "nodenext", "--target", "es2022", "internal.mts"], app);
    const lines = readFileSync(join(app, "internal.mts"), "utf8").split("\n");
    const internal = lines.flatMap((l, i) => (/^import .* from "toolctx/.test(l) ? [i + 1] : []));
    const failed = new Set([...out.matchAll(/^internal\.mts\((\d+),\d+\): error/gm)].map((m) => Number(m[1])));
    const elsewhere = out.split("\n").filter((l) => /error TS/.test(l) && !l.startsWith("internal.mts"));
    if (internal.length !== 4) throw new Error(`internal.mts should import 4 internals, found ${internal.length}`);
    const compiled = internal.filter((n) => !failed.has(n));
    if (compiled.length || elsewhere.length) {
      throw new Error(`lines that type-check: ${compiled.map((n) => lines[n - 1]).join(" | ") || "none"}; other errors: ${elsewhere.join(" | ") || "none"}`);
    }
  });

  await check("types: @arethetypeswrong/cli finds no problem in the tarball beyond the accepted ones", () => {
    // Into a file: through a pipe, attw's report (over 128 KiB) can be cut short at exit.
    const report = join(scratch, "attw.json");
    const fd = openSync(report, "w");
    const r = spawnSync(bin("attw"), [tarball, "--format", "json"], { cwd: scratch, encoding: "utf8", stdio: ["ignore", fd, "pipe"] });
    closeSync(fd);
    const problems = JSON.parse(readFileSync(report, "utf8")).analysis.problems;
    const rejected = problems.filter((p) => !ATTW_ACCEPTED.has(`${p.kind}@${p.resolutionKind}`));
    if (rejected.length) throw new Error(JSON.stringify(rejected));
    if (problems.length === 0 && r.status !== 0) throw new Error(r.stderr);
  });

  await check("deno: import by name (deno condition, Deno fs by default)", () =>
    expectSmoke(run(bin("deno"), ["run", "-A", "--no-check", "smoke-deno.mjs", join(scratch, "store-deno")], app)),
  );

  await check("bun: import by name (bun condition)", () =>
    expectSmoke(run(bin("bun"), ["smoke.mjs", join(scratch, "store-bun")], app)),
  );

  await check("cross-runtime: a store written by Node gives identical pointers, records and bytes in Deno and Bun", () => {
    const store = join(scratch, "store-shared");
    writeFileSync(
      join(app, "write.mjs"),
      `import { ContextManager } from "toolctx";
       const m = new ContextManager({ contextDir: process.argv[2], persistThreshold: 0 });
       for (let i = 0; i < 5; i++) await m.saveContext("grep", { pattern: "p" + i, dir: "src" }, { hits: [i, "é🙂"] }, i);`,
    );
    writeFileSync(
      join(app, "read.mjs"),
      `import { ContextManager } from "toolctx";
       const dir = globalThis.Deno ? Deno.args[0] : process.argv[2];
       const names = (globalThis.Deno ? [...Deno.readDirSync(dir)].map((e) => e.name) : (await import("node:fs")).readdirSync(dir)).filter((n) => n.endsWith(".json")).sort(); // the records, not .index/
       const m = new ContextManager({ contextDir: dir });
       await m.rebuildIndex();
       const pointers = m.getAllPointers();
       const records = await m.loadContexts(names.map((n) => dir + "/" + n));
       const bytes = await Promise.all(names.map((n) => (globalThis.Deno ? Deno.readTextFile(dir + "/" + n) : (import("node:fs/promises")).then((f) => f.readFile(dir + "/" + n, "utf8")))));
       console.log(JSON.stringify({ names, pointers, records, bytes }));`,
    );
    run("node", ["write.mjs", store], app);
    const fromNode = run("node", ["read.mjs", store], app);
    const fromDeno = run(bin("deno"), ["run", "-A", "--no-check", "read.mjs", store], app);
    const fromBun = run(bin("bun"), ["read.mjs", store], app);
    const parsed = JSON.parse(fromNode);
    if (parsed.records.length !== 5) throw new Error(`node loaded ${parsed.records.length} records`);
    if (parsed.pointers.length !== 5) throw new Error(`node rebuilt ${parsed.pointers.length} pointers`);
    if (fromDeno !== fromNode) throw new Error(`deno differs:\n${fromDeno}\nvs\n${fromNode}`);
    if (fromBun !== fromNode) throw new Error(`bun differs:\n${fromBun}\nvs\n${fromNode}`);
  });

  // Edge workers bundled from the installed package as wrangler and Vercel's build do
  // (tests/edge/): real workerd through miniflare, and edge-runtime.
  cpSync(join(repoRoot, "tests", "edge", "scenario.mjs"), join(app, "scenario.mjs"));
  const handler = (contents) => ({ stdin: { contents, resolveDir: app, sourcefile: "handler.mjs" }, absWorkingDir: app });

  await check("workerd: a worker imports the package by name (workerd condition) and runs the edge scenario", async () => {
    const bundle = await bundleForWorkerd(handler(workerdHandler));
    checkScenario((await fetchFromWorkerd(bundle)).body);
  });

  await check("edge-runtime: an edge function imports the package by name (edge-light condition) and runs the edge scenario", async () => {
    const bundle = await bundleForEdgeLight(handler(edgeLightHandler));
    checkScenario((await fetchFromEdgeLight(bundle)).body);
  });

  // A page bundled by Vite from the installed package.
  const web = join(scratch, "web");
  mkdirSync(join(web, "src"), { recursive: true });
  writeFileSync(join(web, "package.json"), JSON.stringify({ name: "web", private: true, type: "module" }));
  run("npm", ["install", "--no-audit", "--no-fund", "--loglevel=error", tarball], web);
  writeFileSync(join(web, "index.html"), `<!doctype html><script type="module" src="/src/main.js"></script>`);
  writeFileSync(
    join(web, "src", "main.js"),
    `import { ContextManager } from "toolctx";
     import { indexedDbStorage } from "toolctx/indexeddb";
     const debug = [];
     const m = new ContextManager({ contextDir: "app/ctx", persistThreshold: 0, onDebug: (msg) => debug.push(msg) });
     const fp = await m.saveContext("fetch", { url: "https://example.test/auth" }, { status: 200 });
     const idb = new ContextManager({ contextDir: "app/ctx", fileSystem: indexedDbStorage(), persistThreshold: 0 });
     const fp2 = await idb.saveContext("grep", { pattern: "login" }, ["x"]);
     const [a] = await m.loadContexts([fp]);
     const [b] = await idb.loadContexts([fp2]);
     window.__result = { fp, status: a.result.status, grep: b.result[0], storage: debug.find((d) => d.startsWith("opfs")) };`,
  );
  writeFileSync(join(web, "vite.config.mjs"), `export default { build: { target: "es2022" }, logLevel: "error" };`);

  await check("vite: the package bundles for the browser without node: imports", () => {
    run("node", [join(repoRoot, "node_modules", "vite", "bin", "vite.js"), "build"], web);
    const assets = join(web, "dist", "assets");
    const files = readdirSync(assets);
    if (!files.some((f) => f.endsWith(".wasm"))) throw new Error(`no wasm asset: ${files}`);
    for (const f of files.filter((f) => f.endsWith(".js"))) {
      const code = readFileSync(join(assets, f), "utf8");
      const hit = code.match(/["'`]node:[a-z/]+["'`]/);
      if (hit) throw new Error(`${f} imports ${hit[0]}`);
    }
  });

  await check("chromium: the Vite-bundled page saves and loads through OPFS (default) and IndexedDB", async () => {
    const site = join(scratch, "site");
    cpSync(join(web, "dist"), site, { recursive: true });
    const server = await serve(`${site}/`);
    const browser = await launchChromium(chromium);
    try {
      const page = await browser.newPage();
      const errors = [];
      page.on("pageerror", (e) => errors.push(e.message));
      await page.goto(`${server.url}/index.html`);
      await page.waitForFunction(() => window.__result !== undefined || false, null, { timeout: 30_000 }).catch(() => {});
      const result = await page.evaluate(() => window.__result);
      if (!result) throw new Error(`no result; page errors: ${errors.join("; ")}`);
      if (result.status !== 200 || result.grep !== "x" || !result.fp.startsWith("app/ctx/fetch_") || result.storage !== "opfs storage") {
        throw new Error(JSON.stringify(result));
      }
    } finally {
      await browser.close();
      server.close();
    }
  });

  // A page fetches only the wasm modules whose exports it uses (index.js and its
  // browser-*.js, package.json "sideEffects"): three pages bundled apart by Vite. Vite copies
  // every wasm file the package names into dist/assets (each glue names its own), so what
  // is checked is what the page's JavaScript loads and what Chromium fetches.
  const pages = {
    manager: `import { ContextManager } from "toolctx";
      const m = new ContextManager({ contextDir: "app/ctx", persistThreshold: 0 });
      window.__result = { fp: await m.saveContext("fetch", { url: "https://example.test/a" }, { status: 200 }) };`,
    // The window functions are synchronous: usable as soon as the import resolves.
    window: `import { estimateTokens, optimizeWindow } from "toolctx";
      const { messages } = optimizeWindow([{ role: "user", content: "hi" }, { role: "assistant", content: "hello" }]);
      window.__result = { tokens: estimateTokens("abcdefgh"), messages: messages.length };`,
    both: `import { ContextManager, optimizeWindow } from "toolctx";
      const messages = optimizeWindow([{ role: "user", content: "hi" }]).messages.length;
      const m = new ContextManager({ contextDir: "app/both", persistThreshold: 0 });
      window.__result = { messages, fp: await m.saveContext("grep", { pattern: "x" }, ["x"]) };`,
  };
  const assetsOf = {};
  await check("vite: a page bundles the loading of only the wasm modules it imports", () => {
    for (const [name, main] of Object.entries(pages)) {
      const root = join(web, "pages", name);
      mkdirSync(root, { recursive: true });
      writeFileSync(join(root, "index.html"), `<!doctype html><script type="module" src="./main.js"></script>`);
      writeFileSync(join(root, "main.js"), main);
      writeFileSync(join(root, "vite.config.mjs"), `export default { build: { target: "es2022" }, logLevel: "error" };`);
      run("node", [join(repoRoot, "node_modules", "vite", "bin", "vite.js"), "build"], root);
      const assets = join(root, "dist", "assets");
      const code = readdirSync(assets).filter((f) => f.endsWith(".js")).map((f) => readFileSync(join(assets, f), "utf8")).join("\n");
      assetsOf[name] = ["core", "conversation", "window"].filter((m) => {
        const file = readdirSync(assets).find((f) => f.startsWith(`toolctx_${m}_bg`) && f.endsWith(".wasm"));
        return file !== undefined && code.includes(file);
      });
    }
    const want = { manager: ["core"], window: ["window"], both: ["core", "window"] };
    if (JSON.stringify(assetsOf) !== JSON.stringify(want)) {
      throw new Error(`the pages' JavaScript names ${JSON.stringify(assetsOf)}, expected ${JSON.stringify(want)}`);
    }
  });

  await check("chromium: each bundled page fetches only its wasm modules (the core and window ones side by side), and the window functions work right after the import", async () => {
    const browser = await launchChromium(chromium);
    const seen = {};
    try {
      for (const name of Object.keys(pages)) {
        const server = await serve(`${join(web, "pages", name, "dist")}/`);
        try {
          const page = await browser.newPage();
          const errors = [];
          page.on("pageerror", (e) => errors.push(e.message));
          const wasm = await watchWasm(page, { together: name === "both" ? ["core", "window"] : [] });
          await page.goto(`${server.url}/index.html`);
          await page.waitForFunction(() => window.__result !== undefined, null, { timeout: 30_000 }).catch(() => {});
          seen[name] = { result: await page.evaluate(() => window.__result), fetched: [...wasm.requested].sort(), apart: wasm.apart, errors };
          await page.close();
        } finally {
          server.close();
        }
      }
    } finally {
      await browser.close();
    }
    const { manager, window, both } = seen;
    const ok = manager.fetched.join() === "core" && typeof manager.result?.fp === "string" &&
      window.fetched.join() === "window" && window.result?.tokens === 2 && window.result?.messages === 2 &&
      both.fetched.join() === "core,window" && both.apart.length === 0 && both.result?.messages === 1 && typeof both.result?.fp === "string";
    if (!ok) throw new Error(JSON.stringify(seen));
  });
} finally {
  rmSync(scratch, { recursive: true, force: true });
}

const failed = results.filter(([, ok]) => !ok).length;
console.log(`pack: ${results.length - failed} passed, ${failed} failed`);
process.exitCode = failed ? 1 : 0;
