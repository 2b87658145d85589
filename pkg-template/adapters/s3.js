// toolctx/s3: a StorageHost over any S3-compatible object store (AWS S3, R2's S3 API, MinIO,
// RustFS, s3s-fs, ...). It uses `fetch` only, so it runs in Node, Deno, Bun, workers and
// browsers; requests are signed (SigV4) by npm `aws4fetch` (an optional peer dependency),
// or by the `AwsClient` handed in as `client`.
//
// - a record is one object, key = `prefix` + path (leading "/" dropped), path-style URLs;
// - write replaces the whole object (S3 PUTs are atomic: a reader gets the old or the new
//   bytes); a record over `multipartThreshold` goes up in parts and appears only when the
//   upload completes (a failed upload is aborted: never a partial record);
// - exclusive write sends `If-None-Match: *` (412 → EEXIST). Servers that ignore it are
//   found by one probe, after which every exclusive write checks first and is read back
//   and compared after (verify-after-write); the random part of record names keeps them
//   unique either way;
// - list is ListObjectsV2 with delimiter "/", following continuation tokens;
// - readRange is a GET with a `Range` header (206: the bytes; 416, the offset at or past
//   the end: none; 404: no object); a range of length 0 is a GET of one byte (the base's),
//   so a missing object is still told apart;
// - GET (ranges too), whole-object PUT, DELETE, LIST and part uploads retry 500/503 (and network
//   errors) with backoff; every request has a deadline (`timeoutMs`) and honours `signal`;
// - S3 has no locks. `lock` is mutual exclusion within this process (the default), a
//   function you pass (for instance a Redis storage's `lock`), or none; see s3.d.ts.

import { toolctxError } from "../errors.js";
import { exponential, retry } from "./base/backoff.js";
import { answerFailure } from "./base/backend.js";
import { deadlineOf, withDeadline } from "./base/deadline.js";
import { keyValueStorage } from "./base/key-value.js";
import { queueLock } from "./base/queue-lock.js";
import { sliceRange } from "./base/range.js";

const MiB = 1024 * 1024;
const MIN_PART = 5 * MiB; // S3's smallest part (all but the last)
const MAX_PARTS = 10_000;
const MAX_BACKOFF_MS = 2000; // the longest wait between two attempts of a request
const PARTIAL_CONTENT = 206; // the answer to a GET with a Range: the bytes of the range
const RANGE_NOT_SATISFIABLE = 416; // ... whose first byte is at or past the object's end

/** The lock of every s3Storage of this process, by store and name (see `lock: "process"`). */
const processLock = queueLock();

/** The errors of requests that got no answer (refused, reset): retried as 500 and 503 are. */
const unanswered = new WeakSet();

const ENTITIES = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" };
function unescapeXml(text) {
  return text.replace(/&(#x[0-9a-f]+|#\d+|\w+);/gi, (whole, name) => {
    if (name[0] !== "#") return ENTITIES[name] ?? whole;
    return String.fromCodePoint(name[1] === "x" || name[1] === "X" ? parseInt(name.slice(2), 16) : Number(name.slice(1)));
  });
}

/** The texts of every `<tag>…</tag>` in `xml` (S3's answers are flat enough for this). */
function tags(xml, tag) {
  const out = [];
  const re = new RegExp(`<${tag}>([\\s\\S]*?)</${tag}>`, "g");
  for (let m = re.exec(xml); m !== null; m = re.exec(xml)) out.push(unescapeXml(m[1]));
  return out;
}

function escapeXml(text) {
  return text.replace(/[&<>"']/g, (c) => `&${{ "&": "amp", "<": "lt", ">": "gt", '"': "quot", "'": "apos" }[c]};`);
}

/** A key as a URL path: each segment percent-encoded (RFC 3986). */
function encodeKey(key) {
  return key
    .split("/")
    .map((s) => encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`))
    .join("/");
}

function sameBytes(a, b) {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * @param {import("./s3.d.ts").S3StorageOptions} options
 * @returns {import("./host.js").StorageHost & { description: string }}
 */
export function s3Storage(options = {}) {
  const { bucket } = options;
  if (typeof bucket !== "string" || bucket === "") throw toolctxError("INVALID_ARGUMENT", "s3Storage needs a `bucket`");
  if (typeof options.endpoint !== "string") throw toolctxError("INVALID_ARGUMENT", "s3Storage needs an `endpoint` (for example https://s3.us-east-1.amazonaws.com)");
  const endpoint = options.endpoint.replace(/\/+$/, "");
  const prefix = options.prefix ?? "";
  const region = options.region ?? "us-east-1";
  const deadline = deadlineOf(options, "s3Storage", 30_000, ["timeout"]);
  const retries = options.retries ?? 3;
  const retryBase = options.retryBaseMs ?? 100;
  const pageSize = options.pageSize ?? 1000;
  const threshold = options.multipartThreshold ?? 16 * MiB;
  const partSize = options.partSize ?? 8 * MiB;
  const maxObject = options.maxObjectBytes ?? 5 * 1024 * 1024 * MiB;
  const fetchImpl = options.fetch ?? ((request) => fetch(request));
  if (partSize < MIN_PART) throw toolctxError("INVALID_ARGUMENT", `partSize must be at least 5 MiB (S3's smallest part), got ${partSize}`);
  let verify = options.verifyExclusive ?? "auto"; // "auto" | "always" | "never"; "auto" becomes one of the others after the probe
  const lockOption = options.lock ?? "process";
  if (lockOption !== "process" && lockOption !== false && typeof lockOption !== "function") {
    throw toolctxError(
      "UNSUPPORTED",
      `s3Storage: lock ${JSON.stringify(lockOption)} is not available: S3 has no locks, and a lock object made by a conditional PUT is unsafe on servers that check then write. ` +
        'Use lock: "process" (one process), a lock function (for example redisStorage(...).lock), or false',
    );
  }

  let signer = options.client;
  async function getSigner() {
    if (signer !== undefined) return signer;
    let AwsClient;
    try {
      ({ AwsClient } = await import("aws4fetch"));
    } catch (err) {
      throw toolctxError("INVALID_ARGUMENT", "toolctx/s3 needs the npm package `aws4fetch` (npm install aws4fetch), or a `client`", { cause: err });
    }
    if (!options.accessKeyId || !options.secretAccessKey) {
      throw toolctxError("INVALID_ARGUMENT", "s3Storage needs `accessKeyId` and `secretAccessKey`, or a `client`");
    }
    signer = new AwsClient({
      accessKeyId: options.accessKeyId,
      secretAccessKey: options.secretAccessKey,
      sessionToken: options.sessionToken,
      service: "s3",
      region,
      retries: 0,
    });
    return signer;
  }

  const keyOf = (path) => prefix + path.replace(/^\/+/, "");
  const urlOf = (key, query = "") => `${endpoint}/${encodeURIComponent(bucket)}${key === "" ? "" : `/${encodeKey(key)}`}${query}`;

  /**
   * An S3 error answer as a typed error, its code by base/backend.js (never the secret:
   * the message has only the status, S3's code and the key).
   */
  async function failure(op, key, response) {
    const body = await response.text().catch(() => "");
    const s3Code = tags(body, "Code")[0] ?? "";
    const { status } = response;
    return answerFailure(`s3 ${op} ${key}: ${status}${s3Code ? ` ${s3Code}` : ""}`, { status, backendCode: s3Code }, { status, s3Code });
  }

  /** Retries of 500, 503 and unanswered requests, with exponential backoff (base/backoff.js). */
  const policy = {
    retries,
    retryable: (err) => err?.status === 500 || err?.status === 503 || unanswered.has(err),
    delayMs: exponential({ baseMs: retryBase, maxMs: MAX_BACKOFF_MS }),
  };

  /** One signed request under the deadline; resolves to the Response when `ok(status)`. */
  async function request(op, key, { method = "GET", query = "", headers, body, ok = (s) => s >= 200 && s < 300 } = {}) {
    return withDeadline(`s3 ${op} ${key}`, deadline, async (abortSignal) => {
      const client = await getSigner();
      const signed = await client.sign(urlOf(key, query), { method, headers, body, signal: abortSignal });
      let response;
      try {
        response = await fetchImpl(signed);
      } catch (err) {
        if (abortSignal?.aborted) throw abortSignal.reason;
        const failed = toolctxError("STORAGE", `s3 ${op} ${key}: no answer: ${err?.message ?? err}`, { cause: err });
        unanswered.add(failed);
        throw failed;
      }
      if (!ok(response.status)) throw await failure(op, key, response);
      return response;
    });
  }

  /** `request`, retried with backoff on 500, 503 and network errors: for idempotent operations. */
  const idempotent = (op, key, init) => retry(() => request(op, key, init), policy);

  async function getObject(key) {
    const response = await idempotent("read", key, { ok: (s) => s === 200 || s === 404 });
    if (response.status === 404) {
      await response.body?.cancel();
      return undefined;
    }
    return new Uint8Array(await response.arrayBuffer());
  }

  /**
   * The bytes [offset, offset + length) of an object (length ≥ 1), by a GET with a Range:
   * fewer at its end, none from its end on (416), undefined when it does not exist (404).
   * A server that ignores Range answers 200 with the whole object, which is cut here.
   */
  async function getRange(key, offset, length) {
    const response = await idempotent("read range", key, {
      headers: { Range: `bytes=${offset}-${offset + length - 1}` },
      ok: (s) => s === PARTIAL_CONTENT || s === 200 || s === 404 || s === RANGE_NOT_SATISFIABLE,
    });
    if (response.status === 404 || response.status === RANGE_NOT_SATISFIABLE) {
      await response.body?.cancel();
      return response.status === 404 ? undefined : new Uint8Array(0);
    }
    const bytes = new Uint8Array(await response.arrayBuffer());
    return response.status === PARTIAL_CONTENT ? bytes : sliceRange(bytes, offset, length);
  }

  async function exists(key) {
    const head = await idempotent("exists", key, { method: "HEAD", ok: (s) => s === 200 || s === 404 });
    return head.status === 200;
  }

  /** A multipart upload; `complete` holds the headers of its last step (If-None-Match for a create). */
  async function putMultipart(key, bytes, complete = {}) {
    const created = await idempotent("write", key, { method: "POST", query: "?uploads" });
    const uploadId = tags(await created.text(), "UploadId")[0];
    if (!uploadId) throw toolctxError("STORAGE", `s3 write ${key}: the server gave no UploadId`);
    const id = encodeURIComponent(uploadId);
    try {
      const etags = [];
      for (let part = 1, at = 0; at < bytes.length; part++, at += partSize) {
        const chunk = bytes.subarray(at, Math.min(bytes.length, at + partSize));
        const response = await idempotent("write part", key, { method: "PUT", query: `?partNumber=${part}&uploadId=${id}`, body: chunk });
        etags.push(response.headers.get("ETag"));
        await response.body?.cancel();
      }
      const parts = etags.map((etag, i) => `<Part><PartNumber>${i + 1}</PartNumber><ETag>${escapeXml(etag ?? "")}</ETag></Part>`);
      const done = await idempotent("write", key, {
        method: "POST",
        query: `?uploadId=${id}`,
        headers: complete,
        body: `<CompleteMultipartUpload>${parts.join("")}</CompleteMultipartUpload>`,
      });
      // CompleteMultipartUpload may answer 200 with an <Error> body
      const answer = await done.text();
      if (answer.includes("<Error>")) throw toolctxError("STORAGE", `s3 write ${key}: completing the upload failed: ${tags(answer, "Code")[0] ?? "?"}`);
    } catch (err) {
      await request("abort upload", key, { method: "DELETE", query: `?uploadId=${id}`, ok: () => true }).catch(() => {});
      throw err;
    }
  }

  /** PUT with If-None-Match: *; resolves to whether this writer created the object. */
  async function putExclusive(key, bytes) {
    // the server ignores If-None-Match: check first (a narrow window remains; see verify below)
    if (verify === "always" && (await exists(key))) return false;
    const created = await retry(
      async (attempt) => {
        try {
          await (await request("write", key, { method: "PUT", headers: { "If-None-Match": "*" }, body: bytes })).body?.cancel();
          return true;
        } catch (err) {
          if (err?.status === 409) err.status = 503; // ConditionalRequestConflict: another write in flight; ask again
          if (err?.code !== "EEXIST") throw err;
          // a retried create may find its own earlier attempt, whose answer was lost
          return attempt > 0 && sameBytes((await getObject(key)) ?? new Uint8Array(0), bytes);
        }
      },
      policy,
    );
    if (!created) return false;
    if (verify === "auto") {
      // Probe once: a server that honours If-None-Match refuses the same create again.
      const again = await request("probe", key, { method: "PUT", headers: { "If-None-Match": "*" }, body: bytes, ok: (s) => s === 412 || (s >= 200 && s < 300) });
      await again.body?.cancel();
      verify = again.status === 412 ? "never" : "always";
    }
    if (verify === "always") {
      const stored = await getObject(key);
      return stored !== undefined && sameBytes(stored, bytes);
    }
    return true;
  }

  /** The key of `path`, once its bytes are known to fit in one object. */
  function fitting(path, bytes) {
    const key = keyOf(path);
    if (bytes.length > maxObject || bytes.length > partSize * MAX_PARTS) {
      throw toolctxError("TOO_LARGE", `s3 write ${key}: ${bytes.length} bytes is over the object limit; nothing was written`);
    }
    return key;
  }

  async function put(path, bytes) {
    const key = fitting(path, bytes);
    if (bytes.length > threshold) return putMultipart(key, bytes);
    await (await idempotent("write", key, { method: "PUT", body: bytes })).body?.cancel();
  }

  /** Whether this writer created the object at `path` (false: it was taken). */
  async function create(path, bytes) {
    const key = fitting(path, bytes);
    if (bytes.length <= threshold) return putExclusive(key, bytes);
    // If-None-Match on CompleteMultipartUpload is recent (AWS 2024) and not everywhere:
    // check, upload with the condition, then read back whose object it is
    if (await exists(key)) return false;
    await putMultipart(key, bytes, { "If-None-Match": "*" }).catch((err) => {
      if (err?.code !== "EEXIST") throw err;
    });
    const stored = await getObject(key);
    return stored !== undefined && sameBytes(stored, bytes);
  }

  /** The objects and sub-folders right below `folder`: ListObjectsV2 with delimiter "/", page by page. */
  async function keys(folder) {
    const base = keyOf(folder).replace(/\/*$/, "/");
    const listPrefix = base === "/" ? "" : base;
    const names = [];
    let token;
    do {
      const query = new URLSearchParams({ "list-type": "2", delimiter: "/", prefix: listPrefix, "max-keys": String(pageSize) });
      if (token !== undefined) query.set("continuation-token", token);
      const xml = await (await idempotent("list", "", { query: `?${query}` })).text();
      for (const key of tags(xml, "Key")) if (key.length > listPrefix.length) names.push(key.slice(listPrefix.length));
      for (const sub of tags(xml, "Prefix").filter((p) => p.length > listPrefix.length && p.startsWith(listPrefix))) {
        names.push(sub.slice(listPrefix.length));
      }
      token = tags(xml, "IsTruncated")[0] === "true" ? tags(xml, "NextContinuationToken")[0] : undefined;
    } while (token);
    return names;
  }

  const store = `${endpoint}/${bucket}/${prefix}`;
  /** S3 has no locks: within this process, the caller's, or none (see s3.d.ts). */
  const lock =
    lockOption === "process"
      ? (name, fn, options) => processLock(`${store}\u0000${name}`, fn, options)
      : typeof lockOption === "function"
        ? (name, fn, options) => lockOption(name, fn, options)
        : undefined;

  return keyValueStorage({
    description: `s3 storage (${store})`,
    get: (path) => getObject(keyOf(path)),
    getRange: (path, offset, length) => getRange(keyOf(path), offset, length),
    put,
    create,
    async delete(path) {
      const key = keyOf(path);
      await (await idempotent("remove", key, { method: "DELETE", ok: (s) => (s >= 200 && s < 300) || s === 404 })).body?.cancel();
    },
    keys,
    lock,
  });
}

