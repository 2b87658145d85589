import type { StorageHost } from "./host.js";

export interface S3StorageOptions {
  /** The S3 endpoint, for example "https://s3.us-east-1.amazonaws.com", "https://<account>.r2.cloudflarestorage.com", "http://127.0.0.1:9000". Path-style URLs: `${endpoint}/${bucket}/${key}`. */
  endpoint: string;
  bucket: string;
  /** Signing region (default "us-east-1"; R2: "auto"). */
  region?: string;
  accessKeyId?: string;
  secretAccessKey?: string;
  sessionToken?: string;
  /** An `AwsClient` of npm `aws4fetch` to sign with, instead of the keys above. */
  client?: { sign(input: string, init?: RequestInit): Promise<Request> };
  /** Prepended to every key (default ""). Paths lose their leading "/". */
  prefix?: string;
  /** Milliseconds one request may take before it rejects with code "TIMEOUT" (default 30 000; 0: none). */
  timeoutMs?: number;
  /** @deprecated The old name of `timeoutMs`, still read when `timeoutMs` is not given. */
  timeout?: number;
  /** Aborting it makes every pending and later operation reject with code "ABORTED". */
  signal?: AbortSignal;
  /** Retries of an idempotent request (GET, whole PUT, DELETE, LIST, part upload) answered 500 or 503 or lost on the network (default 3, with backoff). */
  retries?: number;
  /** First backoff in ms (default 100; doubles, with jitter, at most 2 s). */
  retryBaseMs?: number;
  /** ListObjectsV2 page size (default 1000); listing follows continuation tokens. */
  pageSize?: number;
  /** Records larger than this go up as a multipart upload (default 16 MiB). */
  multipartThreshold?: number;
  /** Part size of a multipart upload (default 8 MiB; at least 5 MiB, S3's smallest part). */
  partSize?: number;
  /** Largest object written (default 5 TiB); a larger write rejects with code "TOO_LARGE" and writes nothing. */
  maxObjectBytes?: number;
  /**
   * Reading back an exclusive create and comparing the bytes. "auto" (default): one probe finds whether the
   * server honours `If-None-Match: *`; if it ignores it, every exclusive create is verified. "always", "never".
   */
  verifyExclusive?: "auto" | "always" | "never";
  /**
   * S3 has no locks. "process" (default): mutual exclusion among the managers of this process;
   * a function `(name, fn) => Promise` (for example `redisStorage(...).lock`): yours, across processes;
   * false: none. Any other value throws code "UNSUPPORTED".
   */
  lock?: "process" | false | (<T>(name: string, fn: () => Promise<T>) => Promise<T>);
  /** The `fetch` used for the signed requests (default: the global one). */
  fetch?: (request: Request) => Promise<Response>;
}

/**
 * A StorageHost over an S3-compatible object store, over `fetch`; `readRange` is a GET with a
 * `Range` header (of one byte for a length of 0, which tells a missing object apart). Its errors carry a `code`:
 * "EEXIST" (an exclusive create lost), "UNAUTHORIZED" (403: wrong keys or no permission; no
 * secret in any message), "NOT_FOUND" (no such bucket), "TOO_LARGE", "TIMEOUT", "ABORTED",
 * "STORAGE" (no answer: refused, reset, the network error as `cause`; or any other status,
 * `status` and `s3Code` say which), "INVALID_ARGUMENT" and "UNSUPPORTED" (options).
 */
export function s3Storage(options: S3StorageOptions): StorageHost;
