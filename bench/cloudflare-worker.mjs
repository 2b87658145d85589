// The worker behind bench/cloudflare.mjs, in workerd with miniflare's local R2, KV and
// SQLite Durable Object: GET /{memory|r2|kv|do}?n=&size=&session= saves n records of
// `size` bytes through a ContextManager (persistThreshold 0), then loads them one by one,
// and answers ms per save and per load with the requests each made to the binding (R2, KV),
// the SQL statements and transactions (Durable Object) or the storage calls (memory).

import { ContextManager } from "toolctx";
import { durableObjectStorage, kvStorage, r2Storage } from "toolctx/cloudflare";
import { memoryStorage } from "toolctx/memory";

/** `target` with the given methods counted into `calls`. */
function counting(target, methods, calls) {
  const wrapped = {};
  for (const method of methods) {
    if (typeof target[method] !== "function") continue;
    wrapped[method] = (...args) => {
      calls[method] = (calls[method] ?? 0) + 1;
      return target[method](...args);
    };
  }
  return wrapped;
}

const HOST = ["read", "write", "remove", "list", "append", "lock", "removeDir"];

/** backend → (binding or ctx.storage, calls) → a StorageHost whose backend requests are counted. */
const makers = {
  memory: (_, calls) => counting(memoryStorage(), HOST, calls),
  r2: (bucket, calls) => r2Storage(counting(bucket, ["get", "head", "put", "delete", "list"], calls)),
  kv: (kv, calls) => kvStorage(counting(kv, ["get", "put", "delete", "list"], calls)),
  do: (storage, calls) =>
    durableObjectStorage({
      sql: counting(storage.sql, ["exec"], calls),
      transactionSync: counting(storage, ["transactionSync"], calls).transactionSync,
    }),
};

const per = (calls, n) => Object.fromEntries(Object.entries(calls).map(([k, v]) => [k, Math.round((v / n) * 100) / 100]));

async function bench(url, backend, binding) {
  const n = Number(url.searchParams.get("n"));
  const size = Number(url.searchParams.get("size"));
  const session = url.searchParams.get("session") === "1";
  const contextDir = `bench-${crypto.randomUUID().slice(0, 8)}`;
  const text = "a".repeat(size);
  const calls = {};
  const reset = () => Object.keys(calls).forEach((k) => delete calls[k]);
  const options = { contextDir, fileSystem: makers[backend](binding, calls), persistThreshold: 0 };
  const manager = session ? await ContextManager.open({ ...options, session: true }) : new ContextManager(options);
  reset();
  let t0 = performance.now();
  const filepaths = [];
  for (let i = 0; i < n; i++) filepaths.push(await manager.saveContext("readFile", { path: `f${i}.ts` }, text, i, `q${i}`));
  await manager.flush();
  const save = (performance.now() - t0) / n;
  const saveCalls = per(calls, n);
  reset();
  t0 = performance.now();
  for (const fp of filepaths) await manager.loadContexts([fp]);
  const load = (performance.now() - t0) / n;
  return { save, load, saveCalls, loadCalls: per(calls, n) };
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
    return answer(() => bench(new URL(request.url), "do", this.ctx.storage));
  }
}

export default {
  fetch(request, env) {
    const url = new URL(request.url);
    const backend = url.pathname.slice(1);
    if (backend === "do") return env.STORE.get(env.STORE.idFromName("bench")).fetch(request);
    return answer(() => bench(url, backend, { memory: undefined, r2: env.BUCKET, kv: env.KV }[backend]));
  },
};
