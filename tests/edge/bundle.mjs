// Bundles a script (a path, or esbuild's `{stdin: {contents, resolveDir}, absWorkingDir?}`)
// the way each edge platform's own build does, so the tests load the package by name
// through its export conditions, as users' deployments do:
//
// - workerd (Cloudflare Workers): wrangler bundles with esbuild and the conditions
//   `workerd`, `worker`, `browser`; every `*.wasm` or `*.wasm?module` import becomes a
//   separate CompiledWasm module next to the bundle (wrangler's default module rules).
//   The result feeds miniflare's `modules` option.
// - edge-light (Vercel Edge Functions, Next.js middleware): the build resolves the
//   `edge-light` condition and turns `import m from "./x.wasm?module"` into a read of a
//   wasm binding that the runtime compiles before the code runs (`globalThis.wasm_<hash>`);
//   a plain `.wasm` import has no loader there. The result is a script for edge-runtime.

import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { basename, resolve } from "node:path";
import * as esbuild from "esbuild";

const sha1 = (bytes) => createHash("sha1").update(bytes).digest("hex");

/** → { code, modules: [{ name, bytes }] }: an ES module bundle and its wasm modules. */
export async function bundleForWorkerd(entry) {
  const modules = [];
  const wasmModules = {
    name: "wrangler-module-rules",
    setup(build) {
      build.onResolve({ filter: /\.wasm(\?module)?$/ }, (args) => {
        const file = resolve(args.resolveDir, args.path.replace(/\?module$/, ""));
        const bytes = readFileSync(file);
        const name = `${sha1(bytes)}-${basename(file)}`;
        if (!modules.some((m) => m.name === name)) modules.push({ name, bytes });
        return { path: `./${name}`, external: true };
      });
    },
  };
  const code = await build(entry, {
    format: "esm",
    conditions: ["workerd", "worker", "browser"],
    plugins: [wasmModules],
  });
  return { code, modules };
}

/** → { code, wasm: [{ name, bytes }] }: a classic script and the wasm bindings it reads. */
export async function bundleForEdgeLight(entry) {
  const wasm = [];
  const wasmBindings = {
    name: "edge-wasm-bindings",
    setup(build) {
      build.onResolve({ filter: /\.wasm\?module$/ }, (args) => ({
        path: resolve(args.resolveDir, args.path.replace(/\?module$/, "")),
        namespace: "edge-wasm",
      }));
      build.onLoad({ filter: /.*/, namespace: "edge-wasm" }, (args) => {
        const bytes = readFileSync(args.path);
        const name = `wasm_${sha1(bytes)}`;
        if (!wasm.some((w) => w.name === name)) wasm.push({ name, bytes });
        return { contents: `export default globalThis[${JSON.stringify(name)}];`, loader: "js" };
      });
    },
  };
  const code = await build(entry, {
    format: "iife",
    conditions: ["edge-light", "worker", "browser"],
    plugins: [wasmBindings],
  });
  return { code, wasm };
}

async function build(entry, options) {
  const result = await esbuild.build({
    ...(typeof entry === "string" ? { entryPoints: [entry] } : entry),
    bundle: true,
    write: false,
    platform: "neutral",
    mainFields: ["browser", "module", "main"],
    target: "es2022",
    loader: { ".json": "text" },
    logLevel: "silent",
    ...options,
  });
  return result.outputFiles[0].text;
}
