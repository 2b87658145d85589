// The two edge runtimes, started by the tests on this machine, nothing remote:
// workerd through miniflare (on 127.0.0.1) and Vercel's edge-runtime emulator.

import { Log, LogLevel, Miniflare } from "miniflare";
import { EdgeRuntime } from "edge-runtime";

/** Runs a bundled worker module in workerd; resolves to the response of one GET, parsed. */
export async function fetchFromWorkerd({ code, modules }, path = "/") {
  const mf = new Miniflare({
    host: "127.0.0.1",
    port: 0,
    cf: false, // no request to workers.cloudflare.com for the `request.cf` placeholder
    compatibilityDate: "2025-09-01",
    modules: [
      { type: "ESModule", path: "/worker/worker.mjs", contents: code },
      ...modules.map(({ name, bytes }) => ({ type: "CompiledWasm", path: `/worker/${name}`, contents: bytes })),
    ],
    modulesRoot: "/worker",
  });
  try {
    const response = await mf.dispatchFetch(`http://127.0.0.1${path}`);
    const text = await response.text();
    if (!response.ok) throw new Error(`workerd answered ${response.status}: ${text}`);
    return { body: JSON.parse(text) };
  } finally {
    await mf.dispose();
  }
}

/**
 * Runs a bundled script in edge-runtime (no code generation from strings): its wasm
 * bindings are compiled in the edge realm before the script runs, as the platform provides
 * them, then one fetch event; resolves to the response, parsed.
 */
export async function fetchFromEdgeLight({ code, wasm }) {
  const runtime = new EdgeRuntime({
    extend(context) {
      context.__wasmBytes = Object.fromEntries(wasm.map(({ name, bytes }) => [name, bytes]));
      return context;
    },
  });
  runtime.evaluate(
    `for (const [name, bytes] of Object.entries(globalThis.__wasmBytes)) globalThis[name] = new WebAssembly.Module(bytes);
     delete globalThis.__wasmBytes;`,
  );
  runtime.evaluate(code);
  const response = await runtime.dispatchFetch("http://127.0.0.1/");
  await response.waitUntil();
  const text = await response.text();
  if (!response.ok) throw new Error(`edge-runtime answered ${response.status}: ${text}`);
  return { body: JSON.parse(text) };
}

/**
 * Starts workers in workerd, each a bundled module with its miniflare options (bindings),
 * and keeps them running: → { fetch(worker, path, init) → parsed JSON, dispose() }.
 * Workers given the same R2 bucket, KV namespace or Durable Object share it.
 */
export async function startWorkerd({ code, modules }, workers) {
  const mf = new Miniflare({
    host: "127.0.0.1",
    port: 0,
    cf: false, // no request to workers.cloudflare.com for the `request.cf` placeholder
    log: process.env.MINIFLARE_LOG ? new Log(LogLevel.DEBUG) : undefined, // MINIFLARE_LOG=1: workerd's log on stderr
    workers: workers.map((options) => ({
      compatibilityDate: "2025-09-01",
      modules: [
        { type: "ESModule", path: "/worker/worker.mjs", contents: code },
        ...modules.map(({ name, bytes }) => ({ type: "CompiledWasm", path: `/worker/${name}`, contents: bytes })),
      ],
      modulesRoot: "/worker",
      ...options,
    })),
  });
  await mf.ready;
  return {
    async fetch(worker, path, init) {
      const response = await (await mf.getWorker(worker)).fetch(`http://127.0.0.1${path}`, init);
      const text = await response.text();
      if (!response.ok) throw new Error(`workerd (${worker} ${path}) answered ${response.status}: ${text}`);
      return JSON.parse(text);
    },
    dispose: () => mf.dispose(),
  };
}
