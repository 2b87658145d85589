// The JavaScript half of the sans-IO core: the only code that awaits.
//
// The wasm modules' methods are synchronous. Where an operation needs I/O, its first call
// returns a step (docs/protocol.md; its kinds are named in protocol.js): what to do, as a
// plain object whose `kind` says what. This driver does it and hands the outcomes back
// for the next step, until the operation is done. Plans (crates/core/src/plan.rs: saveContext,
// loadContexts, the store-wide operations, flush, endSession, open, close, rebuildIndex,
// reconcile), the conversation store's operations and syncs, and the window history's
// file all follow one loop (`run`). So every entry into a module is a synchronous call
// from here, and a panic (a trap) is caught where it happens: the operations in flight
// fail with INTERNAL and the next call gets a fresh instance (see module.js). No Rust
// future runs in the modules.
//
// A lock is taken in this module's turn at its name (`hold`), and `close()` waits for
// the manager's operations in flight that it tracks (`track`). A `manager` here is the
// object the operations are of (a ContextManager of context-manager.js, a store of
// conversation.js): the driver keys its bookkeeping by it and never calls it; what it
// must begin (a close, the segment due after a save) it is given as a function.

import { byteLength, concat } from "./adapters/base/bytes.js";
import { internal, toolctxError } from "./host.js"; // not errors.js: the wasm tests load this file as a snippet, beside host.js
import { parseRecord } from "./records.js";
import { OP, STEP, failure, ok } from "./protocol.js";

/** @typedef {import("./protocol.js").Outcome} Outcome */

/**
 * Where a host's `write` function may keep its gather write: `(path, parts, options)`,
 * writing the bytes of `parts` (Uint8Arrays) as `write` writes them joined. On the
 * function, not the host, so that a host made of an adapter with a write of its own
 * (`{...nodeStorage(), write}`) never has its write passed over.
 */
const WRITE_PARTS = Symbol.for("toolctx.writeParts");

/**
 * How `call()` ended, an outcome (`{ok: true, value}` or `{ok: false, error}`): at once
 * when it returns a plain value or throws, in a Promise when it returns a thenable (a
 * host method may do either).
 * @returns {Outcome | Promise<Outcome>}
 */
function attempt(call) {
  let value;
  try {
    value = call();
  } catch (err) {
    return failure(err);
  }
  if (typeof value?.then !== "function") return ok(value);
  // Through Promise.resolve: a bare thenable's `then` need not return anything.
  return Promise.resolve(value).then(ok, failure);
}

/**
 * Whether `outcome` (from `attempt`) is still to come.
 * @type {(outcome: Outcome | Promise<Outcome>) => outcome is Promise<Outcome>}
 */
const later = (outcome) => outcome instanceof Promise;

/** The bytes of what a host's `read` gave (bytes or a string; nothing: none). */
function bytesOf(value) {
  if (value === undefined || value === null) return new Uint8Array(0);
  if (typeof value === "string") return new TextEncoder().encode(value);
  return new Uint8Array(value.buffer ?? value, value.byteOffset ?? 0, value.byteLength);
}

/** An append where the host has none: a read and a whole-file write (not atomic across processes). */
async function appendByRewrite(storage, path, bytes) {
  const before = bytesOf(await storage.read.call(storage.host, path, storage.readOptions));
  return storage.write.call(storage.host, path, concat([before, bytes]), { exclusive: false });
}

/**
 * What a run makes of a record it read or was given (`readRecord`, `keepRecord`):
 * `{kept, size}`, the number `kept` keeps it under, parsed (records.js), and its length in
 * bytes (the core compares it with the pointer's: crates/core/src/store/load.rs);
 * undefined for no file; a string saying why it is not a whole record.
 */
function keep(kept, value) {
  if (value === undefined || value === null) return undefined;
  const record = parseRecord(value);
  if (typeof record === "string") return record;
  return { kept: kept.push(record) - 1, size: byteLength(value) };
}

/**
 * A `write` op's call: its `bytes`, or its `parts` (a save's record: the header, the
 * result's bytes, `}`). The host's write takes the parts as they are when that very
 * function has a gather write (the Node and Bun adapters' writev); a write of another
 * kind, a wrapper's too, gets them joined.
 */
function write(storage, op) {
  const options = { exclusive: op.exclusive };
  if (op.parts === undefined) return storage.write.call(storage.host, op.path, op.bytes, options);
  const gather = storage.write[WRITE_PARTS];
  if (typeof gather === "function") return gather.call(storage.host, op.path, op.parts, options);
  return storage.write.call(storage.host, op.path, concat(op.parts), options);
}

/**
 * The host call of `op` (protocol.js `OP`) on a step's `storage`: its value or its
 * Promise. `kept`: the records the run keeps (`keep`).
 */
function call(storage, op, kept) {
  const host = storage.host;
  switch (op.op) {
    case OP.READ:
      return storage.read.call(host, op.path, storage.readOptions);
    case OP.READ_RANGE:
      if (typeof storage.readRange === "function") return storage.readRange.call(host, op.path, op.offset, op.length);
      // A host without range reads: the whole file, cut.
      return Promise.resolve(storage.read.call(host, op.path, storage.readOptions)).then((value) =>
        value === undefined || value === null ? undefined : bytesOf(value).slice(op.offset, op.offset + op.length));
    case OP.READ_RECORD: {
      const read = storage.read.call(host, op.path, storage.readOptions);
      // A host read that returns a plain value is not awaited.
      if (typeof read?.then !== "function") return keep(kept, read);
      return Promise.resolve(read).then((value) => keep(kept, value));
    }
    case OP.KEEP_RECORD:
      return keep(kept, op.text);
    case OP.LIST:
      return storage.list.call(host, op.path);
    case OP.WRITE:
      return write(storage, op);
    case OP.APPEND:
      if (typeof storage.append === "function") return storage.append.call(host, op.path, op.bytes);
      return appendByRewrite(storage, op.path, op.bytes);
    case OP.REMOVE:
      return storage.remove.call(host, op.path);
    case OP.REMOVE_DIR:
      // Folders that hold nothing need no removal where the host has no folders.
      return typeof storage.removeDir === "function" ? storage.removeDir.call(host, op.path) : undefined;
    default:
      throw internal(undefined, `no host op ${op.op}`);
  }
}

/** The outcomes of `ops` run all at once, in order; in a Promise if any is still to come. */
function perform(storage, ops, kept) {
  const out = new Array(ops.length);
  let waits;
  for (let i = 0; i < ops.length; i++) {
    const outcome = attempt(() => call(storage, ops[i], kept));
    if (!later(outcome)) out[i] = outcome;
    else (waits ??= []).push(outcome.then((o) => (out[i] = o)));
  }
  return waits === undefined ? out : Promise.all(waits).then(() => out);
}

/** The outcomes of `ops` run one after the other, up to the first that fails. */
async function change(storage, ops, kept) {
  const out = [];
  for (const op of ops) {
    let outcome = attempt(() => call(storage, op, kept));
    if (later(outcome)) outcome = await outcome;
    out.push(outcome);
    if (!outcome.ok) break;
  }
  return out;
}

/** host → name → the tail of the turns at that lock in this process (`hold`). */
const turns = new WeakMap();

/**
 * The lock `name` of `host`, for a step or `JsStorage`: first this process's turn at it
 * (its operations take it one after the other, whatever the host does), then
 * `lock.call(host, name, callback)` (no `lock`: the turn alone). `held` resolves to an
 * outcome once the callback runs, or a failure if the lock fails (or returns) before;
 * `release()` ends the callback (and the turn); `settled` resolves to the outcome of the
 * host's lock. `wait: false`: a lock held (in this process's turns or by the host's lock,
 * `lock.call(host, name, callback, {wait: false})`) fails at once instead of being waited
 * for; a host lock without that option waits.
 */
export function hold(host, lock, name, wait = true) {
  let release;
  let taken;
  const gate = new Promise((resolve) => (release = resolve));
  const held = new Promise((resolve) => (taken = resolve));
  let names = turns.get(host);
  if (!names) turns.set(host, (names = new Map()));
  const previous = names.get(name);
  if (!wait && previous !== undefined) {
    const busy = failure(toolctxError("TIMEOUT", `lock ${name} is held in this process (not waited for)`));
    taken(busy);
    return { held, release, settled: Promise.resolve(busy) };
  }
  const settled = (previous ?? Promise.resolve()).then(() => {
    if (typeof lock !== "function") {
      taken(ok(undefined));
      return gate.then(() => ok(undefined));
    }
    let result;
    try {
      const callback = () => {
        taken(ok(undefined));
        return gate;
      };
      result = Promise.resolve(wait ? lock.call(host, name, callback) : lock.call(host, name, callback, { wait: false }));
    } catch (err) {
      result = Promise.reject(err);
    }
    return result.then(ok, failure);
  });
  names.set(name, settled);
  settled.then((outcome) => {
    if (names.get(name) === settled) names.delete(name);
    taken(failure(outcome.ok ? toolctxError("STORAGE", "storage lock() returned without running its callback") : outcome.error));
  });
  return { held, release, settled };
}

/**
 * Runs `fn` once the event loop is free: after the I/O callbacks due (`setImmediate`, in
 * Node and Bun), else as a timer of 0 ms (browsers, Deno, workers).
 */
const whenFree = typeof globalThis.setImmediate === "function" ? (fn) => globalThis.setImmediate(fn) : (fn) => setTimeout(fn, 0);

/**
 * A driver for one wasm module's operations.
 * @param {{ __planStep?(id: number, outcomes: unknown[]): unknown }} core the module's glue
 * @param {(err: unknown) => unknown} onTrap turns a trap into the error that every operation in flight rejects with
 */
export function createDriver(core, onTrap) {
  /** The `reject` of each run in flight (`run`) → the release of the locks it holds. */
  const runs = new Map();
  /** manager → key → the Promise of an operation of it in flight (`track`). */
  const inFlight = new WeakMap();
  /** manager → the Promise of its close() in flight (`close`). */
  const closes = new WeakMap();
  /** The managers whose index segment is due to start or being written (`writeSegment`). */
  const segments = new WeakSet();
  /** The managers whose idle-time index work is scheduled (`indexInIdleTime`). */
  const indexing = new WeakSet();

  /** Notes `promise` as an operation of `manager` in flight, under `key`, until it settles. */
  function track(manager, promise, key = {}) {
    if (manager === null || typeof manager !== "object") return promise;
    let ops = inFlight.get(manager);
    if (!ops) inFlight.set(manager, (ops = new Map()));
    ops.set(key, promise);
    const done = () => ops.delete(key);
    promise.then(done, done);
    return promise;
  }

  /** Resolves once the operations of `manager` in flight but `key` have settled. */
  function othersSettled(manager, key) {
    const others = [...(inFlight.get(manager)?.entries() ?? [])].filter(([k]) => k !== key).map(([, p]) => p);
    if (others.length === 0) return new Promise((resolve) => setTimeout(resolve, 1));
    return Promise.allSettled(others);
  }

  function fail(err) {
    const error = onTrap(err);
    for (const [reject, release] of runs) {
      release?.();
      reject(error);
    }
    runs.clear();
    return error;
  }

  /**
   * The Promise of the operation whose first step is `step`: each step done, its
   * outcomes handed to `next(step, outcomes)` for the next step, until one is `done` or
   * `failed`. `next` throwing fails the operation (its locks released). Tracked as an
   * operation of `owner` when given (`close` waits); a trap rejects it. A `wait` step
   * awaits `others()` (close()'s: the manager's other operations in flight settled).
   */
  function run(step, next, owner, others) {
    let key;
    const promise = new Promise((resolve, reject) => {
      key = reject;
      runs.set(reject, undefined);
      follow(step, next, reject, others).then(
        (value) => runs.delete(reject) && resolve(value),
        (err) => runs.delete(reject) && reject(err),
      );
    });
    return owner === undefined ? promise : track(owner, promise, key);
  }

  async function follow(step, next, key, others) {
    /** The locks held: `{storage, name, lock}` (`hold`). */
    const locks = [];
    /** The records this run keeps (`readRecord`, `keepRecord`), for a `done` with `kept`. */
    const kept = [];
    const releaseAll = () => {
      for (const held of locks.splice(0)) held.lock.release();
    };
    try {
      for (;;) {
        let outcomes;
        switch (step.kind) {
          case STEP.DONE:
            if (step.kept !== undefined) return Array.from(step.kept, (at) => kept[at]);
            return step.json === undefined ? step.value : JSON.parse(step.json);
          case STEP.FAILED:
            throw step.error;
          case STEP.RUN:
            outcomes = perform(step.storage, step.ops, kept);
            if (!Array.isArray(outcomes)) outcomes = await outcomes;
            break;
          case STEP.CHANGE:
            outcomes = await change(step.storage, step.ops, kept);
            break;
          case STEP.LOCK: {
            const lock = hold(step.storage.host, step.storage.lock, step.name, step.wait);
            const held = { storage: step.storage, name: step.name, lock };
            locks.push(held);
            runs.set(key, releaseAll);
            const outcome = await lock.held;
            if (!outcome.ok) locks.splice(locks.indexOf(held), 1);
            outcomes = [outcome];
            break;
          }
          case STEP.UNLOCK: {
            const at = locks.findIndex((held) => held.storage === step.storage && held.name === step.name);
            if (at < 0) {
              outcomes = [failure(internal(undefined, `the lock ${step.name} is not held`))];
              break;
            }
            const [held] = locks.splice(at, 1);
            held.lock.release();
            outcomes = [await held.lock.settled];
            break;
          }
          case STEP.WAIT:
            if (others === undefined) throw internal(undefined, "a plan waited with nothing to wait for");
            await others();
            outcomes = [];
            break;
          default:
            throw internal(undefined, `no step of kind ${step.kind}`);
        }
        if (!runs.has(key)) return undefined; // the module trapped: the run failed with it
        step = next(step, outcomes);
      }
    } finally {
      releaseAll();
    }
  }

  /** The next step of a plan (crates/wasm/src/plans.rs); a trap fails every operation in flight. */
  function planStep(step, outcomes) {
    try {
      return core.__planStep(step.id, outcomes);
    } catch (err) {
      throw fail(err);
    }
  }

  /** The Promise of a plan (crates/core/src/plan.rs), from its first step, tracked as `manager`'s when given. */
  function plan(step, manager) {
    return run(step, planStep, manager);
  }

  /**
   * The Promise of a save, from its first step (the core's `save` work,
   * crates/wasm/src/manager/save.rs): `done` (a record held in memory), or the first step of
   * its plan (the record's write, then the follow-up I/O: a spill, retention, the session
   * manifest), tracked as an operation of `manager` (`close` waits).
   *
   * Once the save's plan is done, the index work it made due runs off its path, once the
   * event loop is free: its result's content indexed a slice at a time (`indexInIdleTime`),
   * and an index segment written when one is due (`writeSegment`). Back-pressure: past a
   * bound of records in no segment (`index.backlogged()`, crates/core/src/segments.rs
   * `SEGMENT_BACKLOG`) the save yields one turn of the event loop before it resolves, so a
   * loop of awaited saves that never yields (synchronous writes) lets that work start and
   * its I/O run. It never waits for a lock or a write.
   * @param {object} manager
   * @param {any} step
   * @param {{ persistIndex(): any, backlogged(): boolean, indexSome(): boolean }} index
   */
  function save(manager, step, index) {
    const saved = step.kind === STEP.DONE ? Promise.resolve(step.value) : plan(step, manager);
    return saved.then((value) => {
      indexInIdleTime(manager, index.indexSome);
      writeSegment(manager, index.persistIndex);
      let wait;
      try {
        wait = index.backlogged();
      } catch {
        return value;
      }
      return wait ? new Promise((resolve) => whenFree(() => resolve(value))) : value;
    });
  }

  /**
   * Writes the index segment due for `manager`, if one is, once the event loop is free:
   * `persistIndex()` gives the first step of its plan (or undefined: none due, one under
   * way, the manager closed), run as a plan of `manager` so `close()` waits for it. Its
   * failures went to `onDebug`. Its lock is asked without waiting (`wait: false`,
   * crates/core/src/store/persist.rs): held by another, the segment waits for the next time.
   * @param {object} manager
   * @param {() => any} persistIndex
   */
  function writeSegment(manager, persistIndex) {
    if (segments.has(manager)) return;
    segments.add(manager);
    whenFree(() => {
      let next;
      try {
        next = persistIndex();
      } catch {
        next = undefined; // a trap fails the calls in flight
      }
      if (next === undefined) {
        segments.delete(manager);
        return;
      }
      plan(next, manager).catch(() => {}).then(() => segments.delete(manager));
    });
  }

  /**
   * Indexes the content of `manager`'s saved results in idle time: `indexSome()` (a slice
   * of about 64 KB of results, crates/core/src/store/pointers.rs `index_some`) once the
   * event loop is free, again while it says records still wait. One chain of slices per
   * manager at a time; a ranking indexes whatever still waits first, so nothing is missed.
   * @param {object} manager
   * @param {() => boolean} indexSome
   */
  function indexInIdleTime(manager, indexSome) {
    if (indexing.has(manager)) return;
    indexing.add(manager);
    const slice = () => {
      let more;
      try {
        more = indexSome();
      } catch {
        more = false; // a closed or freed manager, or a trap (which fails the calls in flight)
      }
      if (more) whenFree(slice);
      else indexing.delete(manager);
    };
    whenFree(slice);
  }

  /**
   * `close()` of `manager`: the plan `begin()` gives the first step of
   * (crates/core/src/store/close.rs, `ClosePlan`), whose `wait` steps wait for the manager's
   * other operations in flight to settle. That plan resolves to `{host, close}`, the host's
   * own `close()` to call last (a storage the manager made), or undefined; `debug` hears
   * when that fails.
   * @param {object} manager
   * @param {() => any} begin
   * @param {(message: string) => void} debug
   */
  function close(manager, begin, debug) {
    // A close() while another is in flight runs after it (and finds the manager closed):
    // two closes waiting for each other's operations in flight would wait for ever.
    const earlier = closes.get(manager);
    const again = () => close(manager, begin, debug);
    if (earlier !== undefined) return earlier.then(again, again);
    let key;
    const promise = new Promise((resolve, reject) => {
      key = reject;
      closing(manager, key, begin, debug).then(resolve, reject);
    });
    closes.set(manager, promise);
    const done = () => closes.delete(manager);
    promise.then(done, done);
    return track(manager, promise, key);
  }

  async function closing(manager, key, begin, debug) {
    const closer = await run(begin(), planStep, undefined, () => othersSettled(manager, key));
    if (closer === undefined) return undefined;
    try {
      await closer.close.call(closer.host);
    } catch (err) {
      debug(`could not close the storage: ${err?.message ?? err}`);
    }
    return undefined;
  }

  return {
    save,
    plan,
    run,
    close,
    track,
    /** A trap seen outside the driver (a synchronous method): fail the operations in flight. */
    fail,
  };
}
