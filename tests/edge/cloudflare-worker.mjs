// The worker behind tests/edge/cloudflare.test.mjs, run in workerd by miniflare with a local
// R2 bucket (env.BUCKET), KV namespace (env.KV), D1 database (env.DB) and SQLite-backed
// Durable Object (env.STORE). Routes, each answering JSON:
//   GET  /{r2|kv|d1|do|dosql}/suites         the shared conformance suites over that adapter
//   POST /{r2|kv|do}/fleet?writers=&n=       many writers (on the coordinator, which has the
//                                            other workers as service bindings W0, W1, …):
//                                            a stale session planted, the writers started at
//                                            once, one per worker, then the ninth → everything
//   POST /{r2|kv|do}/plant|write|read?dir=   the steps of /fleet, run where they are sent
//   GET  /{r2|kv|d1|do|dosql}/faults         faults and bad input                  → findings
// Requests for "do" and "dosql" go to one Durable Object (by name), which runs them over its
// own storage (durableObjectStorage, durableObjectSqlStorage).

import { ContextManager } from "toolctx";
import { d1Storage, durableObjectSqlStorage, durableObjectStorage, kvStorage, r2Storage } from "toolctx/cloudflare";
import { runLockTests, runSeedApiTests, runSessionTests, runStorageHostTests } from "../js/conformance.mjs";
import assert from "../js/browser/assert.mjs";
import { run, test } from "../js/browser/harness.mjs";
import { plantStaleSession, readAll, writeShare } from "./cloudflare-writers.mjs";
import { faults } from "./cloudflare-faults.mjs";

function suites(name, makeStorage) {
  const runId = crypto.randomUUID().slice(0, 8);
  let n = 0;
  const fresh = (tag) => `ctx-${runId}/${tag}-${n++}`;
  runStorageHostTests({ name, makeStorage, test, assert, tmpDir: () => fresh("host") });
  runSeedApiTests({ name, makeStorage, ContextManager, test, assert, contextDir: () => fresh("seed") });
  runSessionTests({ name, makeStorage, ContextManager, test, assert, contextDir: () => fresh("session") });
  runLockTests({ name, makeStorage, test, assert, tmpDir: () => fresh("lock") });
  return run();
}

async function json(response) {
  const text = await response.text();
  if (!response.ok) throw new Error(`answered ${response.status}: ${text}`);
  return JSON.parse(text);
}

/** The many-writer run, from the coordinator: each step is a request to a worker of its own. */
async function fleet(url, env) {
  const backend = url.pathname.split("/")[1];
  const writers = Number(url.searchParams.get("writers"));
  const n = Number(url.searchParams.get("n"));
  const dir = `fleet-${crypto.randomUUID().slice(0, 8)}`;
  const step = (worker, path, init) => worker.fetch(`http://workerd/${backend}/${path}&dir=${dir}`, { method: "POST", ...init }).then(json);
  const { staleId } = await step(env.SELF, "plant?");
  const summaries = await Promise.all(Array.from({ length: writers }, (_, i) => step(env[`W${i}`], `write?writer=${i}&n=${n}`)));
  const sessions = summaries.map(({ writer, sessionId }) => ({ writer, sessionId }));
  const seen = await step(env.SELF, "read?", { body: JSON.stringify(sessions) });
  return { staleId, summaries, seen };
}

async function handle(request, backend, makeStorage, extra) {
  const url = new URL(request.url);
  const action = url.pathname.split("/")[2];
  const storage = makeStorage();
  const contextDir = url.searchParams.get("dir");
  switch (action) {
    case "suites":
      return suites(backend, makeStorage);
    case "plant":
      return { staleId: await plantStaleSession({ storage, contextDir }) };
    case "write": {
      const writer = Number(url.searchParams.get("writer"));
      const perWriter = Number(url.searchParams.get("n"));
      return writeShare({ storage, contextDir, writer, perWriter });
    }
    case "read":
      return readAll({ storage, contextDir, sessions: await request.json() });
    case "faults":
      return faults(backend, makeStorage, extra);
    default:
      throw new Error(`no route ${url.pathname}`);
  }
}

async function answer(work) {
  try {
    return Response.json(await work());
  } catch (err) {
    return new Response(`${err?.stack ?? err}`, { status: 500 });
  }
}

export class Store {
  constructor(ctx) {
    this.ctx = ctx;
  }

  fetch(request) {
    const backend = new URL(request.url).pathname.split("/")[1];
    const make = backend === "dosql" ? () => durableObjectSqlStorage(this.ctx.storage) : () => durableObjectStorage(this.ctx.storage);
    return answer(() => handle(request, backend, make, { storage: this.ctx.storage }));
  }
}

export default {
  fetch(request, env) {
    const url = new URL(request.url);
    const backend = url.pathname.split("/")[1];
    if (url.pathname.endsWith("/fleet")) return answer(() => fleet(url, env));
    if (backend === "do" || backend === "dosql") {
      const name = url.searchParams.get("object") ?? "fleet";
      return env.STORE.get(env.STORE.idFromName(name)).fetch(request);
    }
    const makeStorage = { r2: () => r2Storage(env.BUCKET), kv: () => kvStorage(env.KV), d1: () => d1Storage(env.DB) }[backend];
    if (!makeStorage) return new Response(`no backend ${backend}`, { status: 404 });
    return answer(() => handle(request, backend, makeStorage, { env }));
  },
};
