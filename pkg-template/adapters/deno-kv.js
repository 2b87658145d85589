// toolctx/deno-kv: a StorageHost over Deno KV (`Deno.openKv`): a local SQLite file, or
// Deno Deploy's KV shared by every isolate of a deployment.
//
// Keys, under `prefix` (default ["toolctx"]):
//   [...prefix, "file", ...segments]  the head of a record: {size, gen, chunks}
//   [...prefix, "data", gen, i]       its bytes, in chunks of at most 64 KiB (KV's value limit)
//   [...prefix, "lock", ...segments]  a lock: {owner, expiresAt}, set with `expireIn`
// A folder is the set of heads under its segments, so `list` is a prefix list reduced to
// direct children, reading only the small heads; folders need no entries of their own.
//
// Every change of a head is an atomic commit checked against the versionstamp it read
// (`null` for an exclusive create), so two writers never both win. A record within KV's
// atomic limits (800 KiB of keys and values, 1000 mutations) is written in ONE commit;
// a larger one writes its chunks first under a fresh generation id, invisible until the
// head naming that generation is committed last. A reader reads the head, then the chunks
// of its generation; a chunk missing means a writer replaced the record meanwhile (old
// chunks are deleted in the commit of the new head, or after it), so it reads again. No
// partial record is ever visible. Chunks left by a crash between two steps are
// unreachable garbage.
//
// Requests: a save of a new record up to 768 KiB is one commit; a replace is a get and a
// commit; a load is a get and one getMany per 10 chunks (640 KiB), in parallel. A range
// (`readRange`) reads the head and only the chunks that hold it: every chunk but the last
// is 64 KiB, so chunk i starts at i × 64 KiB.

import { toolctxError } from "../errors.js";
import { retry, sleep } from "./base/backoff.js";
import { backendCall, backendFailure } from "./base/backend.js";
import { concat } from "./base/bytes.js";
import { deadlineOf } from "./base/deadline.js";
import { keyValueStorage } from "./base/key-value.js";
import { leaseLock, lockOptions } from "./base/lease-lock.js";
import { randomHex } from "./base/random.js";

const PART = 65536; // Deno KV's largest value
const ATOMIC_BYTES = 768 * 1024; // under KV's 800 KiB of keys + values per commit
const ATOMIC_MUTATIONS = 1000;
const KEY_BYTES = 2048;
const GET_MANY = 10;
const FOLDED_DELETES = 100; // old chunks deleted in the commit that replaces their head, up to this many
const LIST_BATCH = 500; // heads per request of a listing
const encoder = new TextEncoder();
const invalid = (message) => toolctxError("INVALID_ARGUMENT", message);

/** SQLite's answers when another connection holds the file. */
const BUSY = /database is locked|database table is locked|SQLITE_BUSY/i;
/** Retries of a busy call before it fails: about 20 s at the longest waits. */
const BUSY_RETRIES = 400;
/** The wait before busy retry n + 1: 1 ms and up to 2^n more (n at most 6), at most 50 ms. */
const busyDelay = (n) => Math.min(1 + Math.random() * 2 ** Math.min(n, 6), 50);

/**
 * Runs a KV call again while SQLite reports the file busy: a local KV file opened by several
 * processes (or connections) answers "database is locked" instead of waiting, and a call
 * that failed so changed nothing. Other errors pass through.
 */
async function retryBusy(call) {
  const busy = (err) => BUSY.test(String(err?.message));
  try {
    return await retry(() => call(), { retries: BUSY_RETRIES, retryable: busy, delayMs: busyDelay });
  } catch (err) {
    if (busy(err)) throw toolctxError("STORAGE", "the Deno KV file stayed locked by other writers", { cause: err });
    throw err;
  }
}

/** "/a//b/c.json" → ["a", "b", "c.json"]: a KV key has no notion of a root or of empty names. */
function segments(path) {
  return String(path).split("/").filter((s) => s !== "");
}

/** The encoded size of a key of strings and numbers, as Deno KV counts it against 2 KiB. */
function keyBytes(key) {
  let size = 0;
  for (const part of key) {
    if (typeof part === "string") {
      const utf8 = encoder.encode(part);
      size += 2 + utf8.length + utf8.filter((b) => b === 0).length;
    } else size += 9;
  }
  return size;
}

function checkOptions(options) {
  if (options === null || typeof options !== "object") throw invalid("denoKvStorage(options): options must be an object");
  const { kv, path, prefix = ["toolctx"] } = options;
  if (kv !== undefined && (kv === null || typeof kv.atomic !== "function" || typeof kv.list !== "function")) {
    throw invalid("denoKvStorage({kv}): kv must be a Deno.Kv (from Deno.openKv)");
  }
  if (path !== undefined && typeof path !== "string") throw invalid("denoKvStorage({path}): path must be a string");
  if (kv === undefined && typeof globalThis.Deno?.openKv !== "function") {
    throw invalid("denoKvStorage: Deno.openKv is missing: run Deno with --unstable-kv, or pass an open `kv`");
  }
  const parts = Array.isArray(prefix) ? prefix : [prefix];
  if (!parts.every((p) => typeof p === "string" || (typeof p === "number" && Number.isFinite(p)))) {
    throw invalid("denoKvStorage({prefix}): prefix must be a string or an array of strings and numbers");
  }
  const lock = lockOptions(options, "denoKvStorage", { lease: ["lockTtlMs"], wait: ["lockTimeoutMs"] });
  return { kv, path, prefix: parts, lock, deadline: deadlineOf(options, "denoKvStorage") };
}

/**
 * @param {import("./deno-kv.d.ts").DenoKvStorageOptions} [options]
 * @returns {import("./deno-kv.d.ts").DenoKvStorage}
 */
export function denoKvStorage(options = {}) {
  const { kv: given, path, prefix, lock: lockTimes, deadline } = checkOptions(options);
  let opened;
  const kvReady = () =>
    given
      ? Promise.resolve(given)
      : backendCall("deno kv open", deadline, () =>
          (opened ??= Deno.openKv(path).catch((err) => {
            opened = undefined; // the next call tries again
            throw err;
          })),
        );
  /** One KV request: again while the file is busy, within `timeoutMs` and `signal`, its failure typed. */
  const unlessBusy = (call) => backendCall("deno kv request", deadline, () => retryBusy(call));

  const headKey = (p) => {
    const key = [...prefix, "file", ...segments(p)];
    if (keyBytes(key) > KEY_BYTES) throw toolctxError("TOO_LARGE", `path too long for a Deno KV key (over ${KEY_BYTES} bytes): ${String(p).slice(0, 80)}…`);
    return key;
  };
  const dataKey = (gen, i) => [...prefix, "data", gen, i];

  /**
   * The bytes [from, to) of a head's record (to ≤ its size), from the chunks that hold
   * them; undefined when one is gone (the record was replaced meanwhile).
   */
  async function readChunks(kv, head, from, to) {
    if (from >= to) return new Uint8Array(0);
    const first = Math.floor(from / PART);
    const end = Math.ceil(to / PART);
    const keys = Array.from({ length: end - first }, (_, i) => dataKey(head.gen, first + i));
    const groups = [];
    for (let i = 0; i < keys.length; i += GET_MANY) groups.push(unlessBusy(() => kv.getMany(keys.slice(i, i + GET_MANY))));
    const parts = (await Promise.all(groups)).flat().map((e) => e.value);
    if (parts.some((v) => !(v instanceof Uint8Array))) return undefined;
    const bytes = concat(parts);
    const start = first * PART;
    if (bytes.length !== Math.min(end * PART, head.size) - start) return undefined;
    return from === start && to === start + bytes.length ? bytes : bytes.slice(from - start, to - start);
  }

  /**
   * The head entry and the record's bytes, consistent with each other: all of them, or
   * with `range`, those of [offset, offset + length) only (fewer at the end).
   */
  async function readEntry(kv, key, range) {
    for (let attempt = 0; ; attempt++) {
      const head = await unlessBusy(() => kv.get(key));
      if (head.value === null) return { head, bytes: undefined };
      const { size, gen, chunks } = head.value;
      if (!(Number.isSafeInteger(size) && typeof gen === "string" && Number.isSafeInteger(chunks) && chunks >= 1)) {
        throw toolctxError("CORRUPT_RECORD", `${key.join("/")} is not a toolctx record head (another program's entry under the prefix?)`);
      }
      const from = range === undefined ? 0 : range.offset;
      const to = range === undefined ? size : Math.min(size, range.offset + range.length);
      const bytes = await readChunks(kv, head.value, from, to);
      if (bytes !== undefined) return { head, bytes };
      if (attempt >= 50) throw toolctxError("STORAGE", `${key.join("/")}: the record kept changing while it was read`);
      await sleep(Math.min(2 ** attempt, 20));
    }
  }

  async function deleteChunks(kv, head) {
    for (let i = 0; i < head.chunks; i += ATOMIC_MUTATIONS) {
      const op = kv.atomic();
      for (let j = i; j < Math.min(i + ATOMIC_MUTATIONS, head.chunks); j++) op.delete(dataKey(head.gen, j));
      await unlessBusy(() => op.commit());
    }
  }

  /**
   * Replaces the record at `key` by `bytes` if its head still has `versionstamp` (null:
   * if there is none). Resolves to false when another writer got there first.
   */
  async function commit(kv, key, bytes, versionstamp, old) {
    const gen = randomHex(12);
    const chunks = Math.max(1, Math.ceil(bytes.length / PART));
    const head = { size: bytes.length, gen, chunks };
    const part = (i) => bytes.subarray(i * PART, (i + 1) * PART);
    const oneCommit = bytes.length + 64 * (chunks + 1) + keyBytes(key) <= ATOMIC_BYTES && chunks + 2 <= ATOMIC_MUTATIONS;
    const op = kv.atomic().check({ key, versionstamp });
    if (oneCommit) {
      for (let i = 0; i < chunks; i++) op.set(dataKey(gen, i), part(i));
    } else {
      // chunks first, under a generation nobody can see yet
      const perCommit = Math.floor(ATOMIC_BYTES / (PART + 64));
      for (let i = 0; i < chunks; i += perCommit) {
        const batch = kv.atomic();
        for (let j = i; j < Math.min(i + perCommit, chunks); j++) batch.set(dataKey(gen, j), part(j));
        await unlessBusy(() => batch.commit());
      }
    }
    op.set(key, head);
    const folded = old !== undefined && oneCommit && old.chunks <= FOLDED_DELETES;
    if (folded) for (let i = 0; i < old.chunks; i++) op.delete(dataKey(old.gen, i));
    const result = await unlessBusy(() => op.commit());
    if (!result.ok) {
      if (!oneCommit) await deleteChunks(kv, head);
      return false;
    }
    if (old !== undefined && !folded) await deleteChunks(kv, old);
    return true;
  }

  /** Creates the record only where there is no head: the commit checks for none (versionstamp null). */
  async function create(path, bytes) {
    const key = headKey(path);
    return commit(await kvReady(), key, bytes, null, undefined);
  }

  async function put(path, bytes) {
    const key = headKey(path);
    const kv = await kvReady();
    for (;;) {
      const current = await unlessBusy(() => kv.get(key));
      if (await commit(kv, key, bytes, current.versionstamp, current.value ?? undefined)) return;
    }
  }

  async function append(path, tail) {
    const key = headKey(path);
    const kv = await kvReady();
    for (;;) {
      const { head, bytes = new Uint8Array(0) } = await readEntry(kv, key);
      const joined = concat([bytes, tail]);
      if (await commit(kv, key, joined, head.versionstamp, head.value ?? undefined)) return;
    }
  }

  async function read(path, range) {
    const key = [...prefix, "file", ...segments(path)];
    if (keyBytes(key) > KEY_BYTES) return undefined; // no such key can exist
    return (await readEntry(await kvReady(), key, range)).bytes;
  }

  async function remove(path) {
    const key = headKey(path);
    const kv = await kvReady();
    for (;;) {
      const current = await unlessBusy(() => kv.get(key));
      if (current.value === null) return;
      const old = current.value;
      const folded = old.chunks <= FOLDED_DELETES;
      const op = kv.atomic().check(current).delete(key);
      if (folded) for (let i = 0; i < old.chunks; i++) op.delete(dataKey(old.gen, i));
      const result = await unlessBusy(() => op.commit());
      if (result.ok) return folded ? undefined : deleteChunks(kv, old);
    }
  }

  /** The heads below `folder`, each reduced to its first segment (sub-folders ending in "/"). */
  async function keys(folder) {
    const base = [...prefix, "file", ...segments(folder)];
    if (keyBytes(base) > KEY_BYTES) return [];
    const kv = await kvReady();
    return unlessBusy(async () => {
      const found = [];
      for await (const entry of kv.list({ prefix: base }, { batchSize: LIST_BATCH })) {
        const child = entry.key[base.length];
        found.push(entry.key.length === base.length + 1 ? child : `${child}/`);
      }
      return found;
    });
  }

  /**
   * A lock entry {owner, expiresAt}, created only where there is none (or an expired one),
   * refreshed while `fn` runs and deleted afterwards only if it is still ours (checked by
   * versionstamp). A holder that dies stops refreshing, and the lock is taken over once its
   * expiry has passed.
   */
  const lock = leaseLock(
    {
      async acquire(name, owner, leaseMs) {
        const key = [...prefix, "lock", ...segments(name)];
        if (keyBytes(key) > KEY_BYTES) throw toolctxError("TOO_LARGE", `lock name too long for a Deno KV key: ${String(name).slice(0, 80)}…`);
        const kv = await kvReady();
        const current = await unlessBusy(() => kv.get(key));
        if (current.value !== null && current.value.expiresAt > Date.now()) return undefined;
        const taken = await unlessBusy(() => kv.atomic().check(current).set(key, { owner, expiresAt: Date.now() + leaseMs }, { expireIn: leaseMs }).commit());
        return taken.ok ? { kv, key, owner, versionstamp: taken.versionstamp } : undefined;
      },
      async refresh(hold, leaseMs) {
        const { kv, key, owner, versionstamp } = hold;
        const next = await unlessBusy(() => kv.atomic().check({ key, versionstamp }).set(key, { owner, expiresAt: Date.now() + leaseMs }, { expireIn: leaseMs }).commit());
        if (next.ok) hold.versionstamp = next.versionstamp;
        return next.ok;
      },
      release: async ({ kv, key, versionstamp }) => (await unlessBusy(() => kv.atomic().check({ key, versionstamp }).delete(key).commit())).ok,
    },
    { label: "deno kv lock", ...lockTimes },
  );

  /** `fn` whose failures are typed (a KV error outside a request, bad data). */
  const typed =
    (op, fn) =>
    async (path, ...rest) => {
      try {
        return await fn(path, ...rest);
      } catch (err) {
        throw backendFailure(`deno kv ${op} ${path}`, err);
      }
    };

  return {
    // Folders exist only while they hold records: the base's removeDir has nothing to do.
    ...keyValueStorage({
      description: `deno kv storage${path ? ` (${path})` : ""}`,
      get: typed("read", (path) => read(path)),
      getRange: typed("read range", (path, offset, length) => read(path, { offset, length })),
      put: typed("write", put),
      create: typed("write", create),
      append: typed("append", append),
      delete: typed("remove", remove),
      keys: typed("list", keys),
      lock,
    }),
    async close() {
      if (opened) (await opened).close();
      opened = undefined;
    },
  };
}
