// toolctx/cloudflare's r2Storage: records as objects of an R2 bucket binding
// (`env.MY_BUCKET`), over the key-value base, with no Cloudflare SDK.
//
// Exclusive create is R2's conditional put (`onlyIf: {etagDoesNotMatch: "*"}`, HTTP's
// `If-None-Match: *`), decided by R2 itself; a put replaces an object whole; listing pages
// with a "/" delimiter; append is a compare-and-swap on the ETag; lock is a lease object,
// created exclusively, taken over by a compare-and-swap once expired, refreshed while held.
// readRange is a ranged get (`range: {offset, length}`); where R2 refuses the range, the
// object's size (a head) tells a range past its end (empty) from a failure.

import { toolctxError } from "../errors.js";
import { exponential, sleep } from "./base/backoff.js";
import { backendCall } from "./base/backend.js";
import { concat } from "./base/bytes.js";
import { keyValueStorage } from "./base/key-value.js";
import { leaseLock, lockOptions } from "./base/lease-lock.js";

/** R2's number at the end of a binding error's message ("... (10020)"). */
const R2_CODE = /\((\d{5})\)\s*$/;
/** The condition of a put that creates: no object under the key yet. */
const ABSENT = { etagDoesNotMatch: "*" };
/** The wait after an append lost a race: up to 2^n ms, at most 50, fully jittered. */
const raceDelay = exponential({ baseMs: 1, maxMs: 50, jitter: 1 });
/** The longest pause of the lock between two tries (R2 requests cost more than a local lock file's). */
const LOCK_MAX_PAUSE_MS = 200;

/** An R2 binding call; its error typed (base/backend.js) with R2's number as `r2Code`, e.g. 10020. */
function r2(op, key, call) {
  const r2Code = (err) => Number(R2_CODE.exec(String(err?.message ?? ""))?.[1]) || undefined;
  return backendCall(`R2 ${op} of ${JSON.stringify(key)}`, {}, call, (err) => ({ r2Code: r2Code(err) }));
}

/**
 * A StorageHost over an R2 bucket binding. `prefix` (default "") is put before every path.
 * @param {import("./cloudflare.d.ts").R2BucketLike} bucket
 * @param {import("./cloudflare.d.ts").R2StorageOptions} [options]
 * @returns {import("./cloudflare.d.ts").CloudflareStorage}
 */
export function r2Storage(bucket, options = {}) {
  const { prefix = "", appendAttempts = 50 } = options;
  if (!bucket || typeof bucket.put !== "function" || typeof bucket.list !== "function") {
    throw toolctxError("INVALID_ARGUMENT", "r2Storage needs an R2 bucket binding (env.MY_BUCKET)");
  }
  const keyOf = (path) => prefix + path;
  const leased = (leaseMs) => ({ customMetadata: { expires: String(Date.now() + leaseMs) } });
  /**
   * A lease object in the bucket: created exclusively, or taken over by a compare-and-swap
   * on its ETag once its lease (`customMetadata.expires`) has passed; refreshed and
   * deleted only while it is still the object we wrote.
   */
  const lock = leaseLock(
    {
      async acquire(name, token, leaseMs) {
        const key = keyOf(name);
        let put = await r2("put", key, () => bucket.put(key, token, { onlyIf: ABSENT, ...leased(leaseMs) }));
        if (put === null) {
          const holder = await r2("head", key, () => bucket.head(key));
          if (holder === null || !(Number(holder.customMetadata?.expires) < Date.now())) return undefined;
          put = await r2("put", key, () => bucket.put(key, token, { onlyIf: { etagMatches: holder.etag }, ...leased(leaseMs) }));
        }
        return put === null ? undefined : { key, token, etag: put.etag };
      },
      async refresh(hold, leaseMs) {
        const renewed = await r2("put", hold.key, () => bucket.put(hold.key, hold.token, { onlyIf: { etagMatches: hold.etag }, ...leased(leaseMs) }));
        if (renewed !== null) hold.etag = renewed.etag;
        return renewed !== null;
      },
      async release({ key, etag }) {
        const holder = await r2("head", key, () => bucket.head(key));
        if (holder?.etag !== etag) return false;
        await r2("delete", key, () => bucket.delete(key));
        return true;
      },
    },
    { label: "R2 lock", maxPauseMs: LOCK_MAX_PAUSE_MS, ...lockOptions(options, "r2Storage", { lease: ["leaseMs"] }) },
  );

  return keyValueStorage({
    description: "R2 storage: objects in a bucket, exclusive create by a conditional put",
    async get(path) {
      const key = keyOf(path);
      const object = await r2("get", key, () => bucket.get(key));
      return object === null ? undefined : new Uint8Array(await object.arrayBuffer());
    },
    /**
     * A ranged get. R2 refuses a range that starts past the object's end (10039), and
     * miniflare one that starts at its end (an unspecified error, 0): after a refusal, the
     * object's size says whether the range was empty (or the object gone) or the get failed.
     */
    async getRange(path, offset, length) {
      const key = keyOf(path);
      try {
        const object = await r2("get", key, () => bucket.get(key, { range: { offset, length } }));
        return object === null ? undefined : new Uint8Array(await object.arrayBuffer());
      } catch (err) {
        const object = await r2("head", key, () => bucket.head(key)).catch(() => {
          throw err;
        });
        if (object === null) return undefined;
        if (offset >= object.size) return new Uint8Array(0);
        throw err;
      }
    },
    async put(path, bytes) {
      const key = keyOf(path);
      await r2("put", key, () => bucket.put(key, bytes));
    },
    /** R2 decides: a conditional put answers null when the key exists. */
    async create(path, bytes) {
      const key = keyOf(path);
      return (await r2("put", key, () => bucket.put(key, bytes, { onlyIf: ABSENT }))) !== null;
    },
    /** Read, join, and put only if the object is still the one read (its ETag); again after a lost race. */
    async append(path, tail) {
      const key = keyOf(path);
      for (let attempt = 0; attempt < appendAttempts; attempt++) {
        const current = await r2("get", key, () => bucket.get(key));
        const head = current === null ? new Uint8Array(0) : new Uint8Array(await current.arrayBuffer());
        const onlyIf = current === null ? ABSENT : { etagMatches: current.etag };
        if ((await r2("put", key, () => bucket.put(key, concat([head, tail]), { onlyIf }))) !== null) return;
        await sleep(raceDelay(attempt));
      }
      throw toolctxError("STORAGE", `R2 append to ${JSON.stringify(key)} lost ${appendAttempts} races in a row to other writers`);
    },
    async delete(path) {
      const key = keyOf(path);
      await r2("delete", key, () => bucket.delete(key));
    },
    /** The objects and sub-folders (R2's delimited prefixes) right below `folder`, page by page. */
    async keys(folder) {
      const within = keyOf(folder);
      const found = [];
      let cursor;
      do {
        const page = await r2("list", within, () => bucket.list({ prefix: within, delimiter: "/", cursor }));
        for (const object of page.objects) found.push(object.key.slice(within.length));
        for (const sub of page.delimitedPrefixes ?? []) found.push(sub.slice(within.length));
        cursor = page.truncated ? page.cursor : undefined;
      } while (cursor);
      return found;
    },
    lock,
  });
}
