/**
 * `Symbol.asyncDispose`, which the classes below implement, for consumers whose `lib`
 * predates it (ES2022); the same declaration as TypeScript's `esnext.disposable` and
 * `@types/node`, with which it merges.
 */
declare global {
  interface SymbolConstructor {
    readonly asyncDispose: unique symbol;
  }
}

/** The storage host interface: one declaration, in a leaf beside the adapters. */
import type { StorageData, StorageHost } from "./adapters/host.js";
export type { StorageData, StorageHost };

/** The seed's injectable file system; accepted and wrapped. */
export interface IFileSystem {
  readFile(path: string, encoding?: string): Promise<string>;
  writeFile(path: string, data: string): Promise<void>;
  readdir(path: string): Promise<string[]>;
  unlink(path: string): Promise<void>;
  mkdir(path: string, options?: { recursive?: boolean }): Promise<unknown>;
  exists(path: string): Promise<boolean>;
  rename?(from: string, to: string): Promise<void>;
  /** The home folder of this file system: `~` and the default `contextDir` (`~/.agent/context`) are under it. */
  getHomeDir?(): string;
  /** Makes a path absolute (and expands `~`); the `contextDir` goes through it. */
  resolvePath?(path: string): string;
}

/** A record, as stored. */
export interface StoredContext {
  /** Format version (absent in records written by the seed implementation). */
  v?: 1;
  toolName: string;
  toolDescription: string;
  args: Record<string, unknown>;
  /** SHA-256 of the RFC 8785 canonical JSON of `args` (64 hex digits). */
  argsHash?: string;
  /** ISO 8601, UTC, millisecond precision. */
  timestamp: string;
  taskId?: number;
  queryId?: string;
  /** The model's tool-call id, when the save gave one (any length: never part of the file name). */
  toolCallId?: string;
  /** Absent when the tool returned `undefined`. */
  result?: unknown;
}

/** What stays in memory per record. */
export interface ContextPointer {
  filepath: string;
  filename: string;
  /** What a model sees and passes back: `ctx:` and lowercase base32, at most 16
   * characters, the same in every process and backend, unique in its store (SPEC §3). */
  handle: string;
  toolName: string;
  toolDescription: string;
  args: Record<string, unknown>;
  taskId?: number;
  queryId?: string;
  toolCallId?: string;
  argsHash?: string;
  timestamp?: string;
  /** Bytes of the record's JSON. */
  size?: number;
}

/** Per-save options, instead of the seed's trailing `taskId, queryId`. */
export interface SaveOptions {
  taskId?: number;
  queryId?: string;
  /** A description to store instead of the generated one. */
  description?: string;
  /** A category folder inside the session (`features`, `code`, `testing`...): 1-64 of [A-Za-z0-9_-]. */
  category?: string;
  /** The model's tool-call id, stored in the record and its pointer (never in the file name, so any length saves). */
  toolCallId?: string;
}

/**
 * Caps on the records a manager owns; past any of them the oldest (by save time, then
 * save order) are evicted: file (or in-memory record), pointer, index and manifest entry.
 * Each cap is a positive integer. Owned: in a session, the session's records (resumed,
 * reconciled, saved, held in memory); outside one, the records this manager saved.
 * Another manager's records and records only adopted (`rebuildIndex`) are never counted
 * nor evicted. Checked after every save, and at `open` of a session (so `maxAgeMs`
 * applies to what a resumed session holds) and after `reconcile`.
 */
export interface RetentionOptions {
  /** Most bytes of records kept (their JSON). A single record larger than this rejects `TOO_LARGE`. */
  maxBytes?: number;
  /** Most records kept. */
  maxRecords?: number;
  /** Records saved longer ago than this many milliseconds (by `clock`) go. */
  maxAgeMs?: number;
}

/** What `ContextManager.exportRecords` resolves to. */
export interface RecordExport {
  /** One line a record. */
  jsonl: string;
  /** Records exported (the lines of `jsonl`). */
  exported: number;
  /** Files named as records that are not in `jsonl` (torn, corrupt, removed meanwhile), with the reason. */
  skipped: { filename: string; reason: string }[];
}

/** One record found by `ContextManager.search`. */
export interface SessionSearchHit {
  sessionId: string;
  filepath: string;
  score: number;
  /** The query's words the record matched, as written. */
  matched: string[];
  pointer: ContextPointer;
}

/** One session, as `ContextManager.listSessions` reports it. */
export interface SessionInfo {
  id: string;
  createdAt: string;
  lastActivity: string;
  /** Records the manifest lists. */
  records: number;
  bytes: number;
}

export interface ContextManagerOptions {
  /** Default: `$TOOLCTX_DIR` when set, else `~/.agent/context`, on Node/Deno/Bun (the CLI and the MCP server follow the same rule); `agent/context` in browsers. */
  contextDir?: string;
  /**
   * Records whose compact JSON is smaller than this many bytes stay in memory instead of
   * being written. Default 0: every record is in storage when `saveContext` resolves. A
   * record held in memory is lost on exit or crash unless `flush()` or `close()` wrote it.
   */
  persistThreshold?: number;
  /** Bytes of in-memory records before the oldest are written out. Default 8 MiB. */
  memoryBudget?: number;
  /** Largest record accepted (`TOO_LARGE` beyond). Default 64 MiB. */
  maxRecordBytes?: number;
  /**
   * Selection indexes every word of the string values found in the first this many bytes
   * of each result's JSON text (keys and punctuation are not indexed). Default 8 MiB, a
   * safety bound far above what tools return, so every word of every record is found;
   * 0 indexes no content.
   */
  indexContentBytes?: number;
  /**
   * Bytes of index segments read by range (a storage with `readRange`) that rankings keep:
   * dictionary blocks and posting lists, least recently used first out. Default 32 MiB.
   */
  indexMemory?: number;
  /** The storage (the seed's name). */
  fileSystem?: StorageHost | IFileSystem;
  /** Alias of `fileSystem`. */
  storage?: StorageHost | IFileSystem;
  /** Receives warnings (skipped files) and traces. */
  onDebug?: (msg: string, data?: unknown) => void;
  /**
   * Runs before a record is serialised, on a copy: `{toolName, args, result, taskId?,
   * queryId?}`. Return the record to store (or change it in place) — e.g. strip tokens.
   */
  redact?: (record: { toolName: string; args: Record<string, unknown>; result?: unknown; taskId?: number; queryId?: string }) =>
    { args: Record<string, unknown>; result?: unknown } | void;
  /** Overrides the generated description. */
  describe?: (toolName: string, args: Record<string, unknown>) => string | undefined;
  /**
   * Your embedding model, for hybrid ranking: called once per save with the text the
   * record is indexed by (its description and the string values of the first
   * `indexContentBytes` of its result), and once per `selectRelevant` with the query.
   * One vector per text (all of one dimension). `selectRelevant` then fuses BM25F with
   * the nearest vectors by reciprocal rank (k = 60); `selectRelevantContexts` (synchronous)
   * stays BM25F. A failure loses no save: the record ranks by BM25F alone (onDebug).
   */
  embed?: (texts: string[]) => Promise<number[][] | Float32Array[]> | number[][] | Float32Array[];
  /** Milliseconds since the epoch (tests). Default `Date.now`. */
  clock?: () => number;
  /** Uniform numbers in [0, 1) for the random part of names (tests). Default: the CSPRNG. */
  random?: () => number;
  /**
   * `true`: a new session (`YYYYMMDD-HHMMSS-xxxx`) under `{contextDir}/sessions/{id}/`;
   * a session id: that session (`ContextManager.open` resumes its pointers).
   */
  session?: boolean | string;
  /**
   * Inspection only: nothing is written. `saveContext`, `clearContextDir`, `clear`,
   * `endSession` and `reconcile` reject with `READ_ONLY` (and so do `purge`, `cleanupStaleSessions` and
   * `importRecords` given it); `open` of a session and `rebuildIndex` restore the
   * pointers without writing the manifest or moving its `last_activity`; `flush` and
   * `close` have nothing to write. A new session (`session: true`) cannot be read-only.
   */
  readOnly?: boolean;
  /** Caps by bytes, record count and age over the records this manager owns. */
  retention?: RetentionOptions;
  /**
   * Called once per check that evicted, with the evicted pointers, oldest first (a save
   * never evicts the record it just made). A throwing callback is reported to `onDebug`.
   */
  onEvict?: (pointers: ContextPointer[]) => void;
}

/** The store a static method works on (`listSessions`, `cleanupStaleSessions`, `purge`, ...). */
export type StoreOptions = Pick<ContextManagerOptions, "contextDir" | "fileSystem" | "storage" | "clock" | "readOnly">;

export interface SelectOptions {
  strategy?: "bm25" | "overlap";
  limit?: number;
  /** `"all"` (default): every pointer, in order, when none matches. */
  fallback?: "all" | "none";
  /** `selectRelevant` only: the pointers to consider (default: all of this manager's). */
  pointers?: ContextPointer[];
  /**
   * Only the pointers saved with this query id. Without `pointers`, `selectRelevant` ranks
   * this manager's through the index, making no pointer object (the fast path for
   * `getPointersForQuery` then a selection); with them, the list is narrowed.
   */
  queryId?: string;
  /** Only the pointers saved with this task id (as `queryId`; both: both must match). */
  taskId?: number;
  /** The best set whose records fit in this many bytes (pointer `size`), in rank order. */
  maxBytes?: number;
  /** The same in estimated tokens (4 bytes a token). */
  maxTokens?: number;
  /** `selectRelevant` only: reorder or cut the candidates (a model call, say); on error or timeout the heuristic order stands. */
  rerank?: (query: string, candidates: ScoredContext[], signal: AbortSignal) => Promise<string[]>;
  /** Abort `rerank` after this many milliseconds. */
  rerankTimeoutMs?: number;
  /**
   * Records with the same tool, args hash and result count once (the latest copy is
   * kept), in the ranking and the budgets. Default `true` for `selectRelevant`, `false`
   * for `selectRelevantContexts` (the seed's contract).
   */
  dedupe?: boolean;
}

/** One result of `selectRelevant`. */
export interface ScoredContext {
  filepath: string;
  /** Higher is better; 0 for fallback results. */
  score: number;
  pointer: ContextPointer;
  /** The query's words the pointer matched (every word counts, whatever its length). */
  matched: string[];
  /**
   * The record's best-matching lines (1-based, inclusive) of its result as the model
   * reads it (a string's own lines; an object's fields and array elements one a line),
   * at most 3 lines and 300 characters. `selectRelevant` gives it to its first 20 results
   * that hold a word of the query.
   */
  passage?: Passage;
}

/** Lines of a record's result. */
export interface Passage {
  text: string;
  startLine: number;
  endLine: number;
}

/** Error codes of toolctx errors (`error.code`). */
export type ToolctxErrorCode =
  | "INVALID_ARGUMENT" | "NOT_SERIALIZABLE" | "STORAGE" | "QUOTA_EXCEEDED" | "OUTSIDE_STORE"
  | "CORRUPT_RECORD" | "NOT_FOUND" | "TOO_LARGE" | "READ_ONLY" | "CLOSED" | "INTERNAL";

/** Every toolctx failure is an `Error` with a stable `code` and the host error as `cause`. */
export interface ToolctxError extends Error {
  code: ToolctxErrorCode;
  path?: string;
  cause?: unknown;
}

/** The tool-context store. */
export class ContextManager {
  constructor(options?: ContextManagerOptions);
  /** A manager, ready once its storage is. */
  static open(options?: ContextManagerOptions): Promise<ContextManager>;
  /** Ends the session: removes the files its manifest tracks, the manifest, then the folder if empty. */
  endSession(): Promise<void>;
  /** Rebuilds the session manifest (or, without a session, the pointers of the context dir) from the record files. */
  rebuildIndex(): Promise<number>;
  /**
   * Adopts the records a crash left out of the session manifest: record files of the
   * session folder (and its category folders) that no manifest lists get an entry and a
   * pointer, so `endSession`, stale cleanup and retention count them. Resolves to their
   * filepaths. Outside a session there is nothing to reconcile: `[]`.
   */
  reconcile(): Promise<string[]>;
  /** The sessions of `contextDir`. */
  static listSessions(options?: StoreOptions): Promise<SessionInfo[]>;
  /**
   * The best `limit` (default 10) records of every session of the store for `query`,
   * ranked (BM25 over description, tool name and argument values) from the sessions'
   * manifests alone: no record is read.
   */
  static search(options: StoreOptions, query: string, searchOptions?: { limit?: number }): Promise<SessionSearchHit[]>;
  /**
   * Removes sessions idle longer than `olderThanMs` (default 24 h): the files their
   * manifests track and the record files of their own folders that the manifests never
   * listed (a crash); a session with such a record saved within `olderThanMs` is not
   * idle. Other files stay. Resolves to the ids.
   */
  static cleanupStaleSessions(options?: StoreOptions & { olderThanMs?: number }): Promise<string[]>;
  /** Removes every toolctx record of `contextDir` (whoever wrote it) and nothing else; resolves to the count. */
  static purge(options: Pick<ContextManagerOptions, "contextDir" | "fileSystem" | "storage" | "readOnly">): Promise<number>;
  /**
   * The persisted records of `contextDir` as JSON Lines, one record a line, every record's
   * bytes recoverable: `{"filename", "record"}` with the record embedded verbatim when it is
   * one line, else `{"filename", "recordText"}` with its exact text (the TypeScript
   * original's pretty-printed records). Lossless, for moving a store between runtimes (a
   * browser's OPFS and a server's disk, say). Files named as records that do not parse as
   * one are listed in `skipped` with the reason.
   */
  static exportRecords(options: Pick<ContextManagerOptions, "contextDir" | "fileSystem" | "storage">): Promise<RecordExport>;
  /** Writes an `exportRecords` result (or its `jsonl`) into `contextDir`, byte for byte; records already there with the same bytes are left alone. */
  static importRecords(options: Pick<ContextManagerOptions, "contextDir" | "fileSystem" | "storage" | "readOnly">, jsonl: string | RecordExport):
    Promise<{ imported: number; unchanged: number }>;
  /** Saves a tool output; resolves to its filepath. */
  saveContext(toolName: string, args: Record<string, unknown>, result: unknown,
              taskId?: number | SaveOptions, queryId?: string): Promise<string>;
  /** Copies of every pointer, in save order. */
  getAllPointers(): ContextPointer[];
  getPointersForQuery(queryId: string): ContextPointer[];
  getPointersForTask(taskId: number): ContextPointer[];
  /** The records, in the order asked; missing, corrupt and outside paths are skipped. */
  loadContexts(filepaths: string[]): Promise<StoredContext[]>;
  /** Relevant filepaths, best first; all of them (in order) when none matches. */
  selectRelevantContexts(query: string, pointers: ContextPointer[], options?: SelectOptions): string[];
  /** Scored selection, best first (hybrid with the `embed` option: scores are fused ranks). */
  selectRelevant(query: string, options?: SelectOptions): Promise<ScoredContext[]>;
  /** `q_` and 16 hex digits of SHA-256 over the normalised query. */
  static hashQuery(query: string): string;
  clearPointers(): void;
  /** Removes the records this manager wrote; never any other file, nor a record it only adopted (`rebuildIndex`, resume). */
  clearContextDir(): Promise<void>;
  clear(): Promise<void>;
  /** Writes out the records held in memory. */
  flush(): Promise<void>;
  /**
   * Waits for the operations in flight, writes out the records held in memory, and
   * releases what the manager holds. Afterwards every method that returns a Promise
   * rejects with `CLOSED`; pointers stay readable. A second call resolves.
   */
  close(): Promise<void>;
  /** `close()`. */
  [Symbol.asyncDispose](): Promise<void>;
  readonly size: number;
  getContextDir(): string;
  /** The handle (`ctx:…`, SPEC §3) of the record at `filepath` (as `saveContext` resolved to
   * it), or undefined when this manager has no pointer there. Throws `INVALID_ARGUMENT` when
   * `filepath` is not a string. */
  handleOf(filepath: string): string | undefined;
  /** The filepath of the record whose handle is `handle` (`ctx:…`, SPEC §3), or undefined
   * when no pointer has it. Throws `INVALID_ARGUMENT` when a short handle names two records. */
  resolveHandle(handle: string): string | undefined;
  readonly sessionId?: string;
  free(): void;
}
