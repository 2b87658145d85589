// The JavaScript half of the sans-IO core: the only code that awaits.
//
// The core's methods are synchronous. Where an operation needs I/O, its first call
// returns what to do: the record to write (`save`), the records to read (`load`), or
// the first step of a plan (src/plan.rs, src/wasm/plans.rs) whose steps this driver
// follows (`plan`): it calls the host, hands the outcomes back (`__planStep`) and gets
// the next step, until the plan is done. So every entry into the module is a
// synchronous call from here, and a panic (a trap) is caught where it happens: the
// operations in flight fail with INTERNAL and the next call gets a fresh instance (see
// extras.js). No Rust future runs in the module.
//
// saveContext and loadContexts: the core's synchronous steps, and the host's write
// (`save`) or reads (`load`) between them. The store-wide operations (purge, export,
// import, sessions), a save's follow-up, flush, endSession, open, close, rebuildIndex
// and reconcile: plans. A lock is taken in this module's turn at its name (`hold`), and
// `close()` waits for the manager's operations in flight that it tracks (`track`).

import { parseRecord } from "./records.js";

/** What `__loadBegin` says of a filepath (src/wasm/manager.rs): held in memory, to read, skipped. */
const HELD = 0, READ = 1;
/** Why a load skips a path it read (`__loadEnd`): no such file, the read failed, not a whole record. */
const MISSING = 0, UNREADABLE = 1, NOT_A_RECORD = 2;

/**
 * Where a host's `write` function may keep its gather write: `(path, parts, options)`,
 * writing the bytes of `parts` (Uint8Arrays) as `write` writes them joined. On the
 * function, not the host, so that a host made of an adapter with a write of its own
 * (`{...nodeStorage(), write}`) never has its write passed over.
 */
const WRITE_PARTS = Symbol.for("toolctx.writeParts");

/** The bytes of `parts` (Uint8Arrays) in one Uint8Array. */
function join(parts) {
  let length = 0;
  for (const part of parts) length += part.length;
  const out = new Uint8Array(length);
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/**
 * How `call()` ended, `[ok, value or error]`: at once when it returns a plain value or
 * throws, in a Promise when it returns a thenable (a host method may do either).
 */
function attempt(call) {
  let value;
  try {
    value = call();
  } catch (err) {
    return [false, err];
  }
  if (typeof value?.then !== "function") return [true, value];
  // Through Promise.resolve: a bare thenable's `then` need not return anything.
  return Promise.resolve(value).then((v) => [true, v], (err) => [false, err]);
}

/** host → name → the tail of the turns at that lock in this process (`hold`). */
const turns = new WeakMap();

/**
 * The lock `name` of `host`, for a plan, a conversation store or `JsStorage`: first this
 * process's turn at it (its operations take it one after the other, whatever the host
 * does), then `lock.call(host, name, callback)` (no `lock`: the turn alone). `held` resolves to `[]`
 * once the callback runs, or `[false, error]` if the lock fails (or returns) before;
 * `release()` ends the callback (and the turn); `settled` resolves to `[ok, value or
 * error]` of the host's lock.
 */
export function hold(host, lock, name) {
  let release;
  let taken;
  const gate = new Promise((resolve) => (release = resolve));
  const held = new Promise((resolve) => (taken = resolve));
  let names = turns.get(host);
  if (!names) turns.set(host, (names = new Map()));
  const previous = names.get(name) ?? Promise.resolve();
  const settled = previous.then(() => {
    if (typeof lock !== "function") {
      taken([]);
      return gate.then(() => [true, undefined]);
    }
    let result;
    try {
      result = Promise.resolve(lock.call(host, name, () => {
        taken([]);
        return gate;
      }));
    } catch (err) {
      result = Promise.reject(err);
    }
    return result.then((value) => [true, value], (err) => [false, err]);
  });
  names.set(name, settled);
  settled.then(([ok, err]) => {
    if (names.get(name) === settled) names.delete(name);
    taken([false, ok ? new Error("storage lock() returned without running its callback") : err]);
  });
  return { held, release, settled };
}

/**
 * A driver for one wasm module's operations.
 * @param {{ __planStep(id: number, outcomes: unknown[]): unknown[] }} core
 * @param {(err: unknown) => unknown} onTrap turns a trap into the error that every operation in flight rejects with
 */
export function createDriver(core, onTrap) {
  /** The `reject` of each save whose record is being written (`save`), and of each load
   * whose records are being read (`load`): a trap rejects them. */
  const pending = new Set();
  /** The `reject` of each plan in flight (`plan`) → the release of the lock it holds. */
  const runs = new Map();
  /** manager → key → the Promise of an operation of it in flight (`track`). */
  const inFlight = new WeakMap();
  /** manager → the Promise of its close() in flight (`close`). */
  const closes = new WeakMap();

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
    for (const reject of pending) reject(error);
    pending.clear();
    for (const [reject, release] of runs) {
      release?.();
      reject(error);
    }
    runs.clear();
    return error;
  }

  /**
   * The Promise of a save, from the core's first step (`__saveBegin`, src/wasm/manager.rs):
   * `[0, filepath]` saved (a record held in memory); `[6, step]` a plan finishes it (the
   * follow-up I/O: a spill, retention, the session manifest), `step` its first; else the
   * record to write (`writeRecord`), whose end is one of these. The save is tracked as an
   * operation of `manager` (`close` waits).
   */
  function save(manager, step) {
    if (step[0] === 0) return afterSave(manager, Promise.resolve(step[1]));
    if (step[0] === 6) return afterSave(manager, plan(step[1], manager));
    return afterSave(manager, track(manager, new Promise((resolve, reject) => {
      pending.add(reject);
      writeRecord(manager, step, reject).then(
        (filepath) => pending.delete(reject) && resolve(filepath),
        (err) => pending.delete(reject) && reject(err),
      );
    })));
  }

  /**
   * Once `saved` resolves: the background work the save made due, an index segment
   * written (`__persistIndex`, SPEC §4: once 256 records wait), run as a plan of `manager`
   * so `close()` waits for it; the save's Promise does not. It starts as soon as the save
   * resolves (a microtask, not a timer), so a loop of awaited saves never lets more than
   * a segment's worth wait. Its failures went to `onDebug`; a closed manager has none due.
   */
  function afterSave(manager, saved) {
    saved.then(() => {
      let step;
      try {
        step = manager.__persistIndex();
      } catch {
        return;
      }
      if (step !== undefined) plan(step, manager).catch(() => {});
    }, () => {});
    return saved;
  }

  /**
   * Writes a new record exclusively, while the core indexes the result (`__saveIndex`),
   * and hands the outcome to the core (`__saveWritten`), which adds the pointer, or
   * answers `[2, path]` (the name was taken: write again there) or `[3, path]` (the write
   * failed: remove what it left; `__saveEnd` then throws why). A host write that returns
   * a plain value completes the save without an await. `reject` leaves `pending` when
   * the module traps: then nothing of the save runs on.
   */
  async function writeRecord(manager, begun, reject) {
    // Indexed, not destructured: with host calls completing inside the loop, Node 20's V8
    // crashed (SIGTRAP) deoptimising the array iterator's builtin continuation.
    const id = begun[1], host = begun[2], write = begun[3], remove = begun[4];
    let path = begun[5];
    // A large result's record comes as parts (header, result, `}`). The host's write
    // takes them as they are when that very function has a gather write (the Node and
    // Bun adapters' writev); a write of another kind, a wrapper's too, gets them joined.
    const gather = Array.isArray(begun[6]) ? write[WRITE_PARTS] : undefined;
    const writeOnce = typeof gather === "function" ? gather : write;
    const record = Array.isArray(begun[6]) && writeOnce === write ? join(begun[6]) : begun[6];
    let indexed = false;
    for (;;) {
      let outcome = attempt(() => writeOnce.call(host, path, record, { exclusive: true }));
      if (!indexed) {
        indexed = true;
        manager.__saveIndex(id);
      }
      if (!Array.isArray(outcome)) {
        outcome = await outcome;
        if (!pending.has(reject)) return undefined;
      }
      const step = manager.__saveWritten(id, outcome[0], outcome[1]);
      if (step[0] === 0) return step[1];
      if (step[0] === 6) return plan(step[1]);
      path = step[1];
      if (step[0] === 3) {
        // Best effort: the save fails with the write's error, whatever the removal gives.
        const removed = attempt(() => remove.call(host, path));
        if (!Array.isArray(removed)) await removed;
        if (!pending.has(reject)) return undefined;
        manager.__saveEnd(id); // throws why the save failed
        return undefined;
      }
    }
  }

  /**
   * The Promise of a plan (src/plan.rs), from its first step (src/wasm/plans.rs):
   *   [0, value, json]         done: resolve with value (JSON.parse(value) when json)
   *   [4, error]               failed: reject with error
   *   [1, id, host, calls]     call the host (calls: fn, args, …, all at once)
   *   [2, id, host, lock, name] take host.lock(name, callback)
   *   [3, id]                  release that lock
   * then hand the outcomes to the core (`__planStep`), which answers the next step.
   */
  function plan(step, manager) {
    let key;
    const promise = new Promise((resolve, reject) => {
      key = reject;
      runs.set(reject, undefined);
      follow(step, reject).then(
        (value) => runs.delete(reject) && resolve(value),
        (err) => runs.delete(reject) && reject(err),
      );
    });
    return manager === undefined ? promise : track(manager, promise, key);
  }

  /**
   * `close()` of `manager` (src/wasm/manager.rs, `closing`): its first step is a plan's,
   * or the name of the method to call once the manager's other operations in flight have
   * settled (then again). The plan resolves to `[host, close]`, the host's own `close()`
   * to call last (a storage the manager made), or undefined.
   */
  function close(manager) {
    // A close() while another is in flight runs after it (and finds the manager closed):
    // two closes waiting for each other's operations in flight would wait for ever.
    const earlier = closes.get(manager);
    if (earlier !== undefined) return earlier.then(() => close(manager), () => close(manager));
    let key;
    const promise = new Promise((resolve, reject) => {
      key = reject;
      closing(manager, reject).then(resolve, reject);
    });
    closes.set(manager, promise);
    const done = () => closes.delete(manager);
    promise.then(done, done);
    return track(manager, promise, key);
  }

  async function closing(manager, key) {
    let step = manager.__close();
    while (typeof step === "string") {
      await othersSettled(manager, key);
      step = manager[step]();
    }
    const host = await plan(step);
    if (host === undefined) return undefined;
    try {
      await host[1].call(host[0]);
    } catch (err) {
      manager.__debug(`could not close the storage: ${err?.message ?? err}`);
    }
    return undefined;
  }

  async function follow(step, reject) {
    let lock;
    for (;;) {
      if (step[0] === 4) throw step[1];
      if (step[0] === 0) return step[2] ? JSON.parse(step[1]) : step[1];
      let outcomes;
      if (step[0] === 1) {
        outcomes = perform(step[2], step[3]);
        if (!Array.isArray(outcomes)) outcomes = await outcomes;
      } else if (step[0] === 2) {
        lock = hold(step[2], step[3], step[4]);
        runs.set(reject, lock.release);
        outcomes = await lock.held;
      } else {
        lock.release();
        outcomes = await lock.settled;
        runs.set(reject, undefined);
      }
      if (!runs.has(reject)) return undefined; // the module trapped: the plan failed with it
      try {
        step = core.__planStep(step[1], outcomes);
      } catch (err) {
        fail(err);
        return undefined;
      }
    }
  }

  /**
   * Runs a plan's host calls (`fn, args, …`; no fn: nothing to call) at once; their
   * outcomes `ok, value or error, …` in the same order, in a Promise if any is a thenable.
   */
  function perform(host, calls) {
    const out = new Array(calls.length);
    let waits;
    for (let i = 0; i < calls.length; i += 2) {
      const outcome = calls[i] === undefined ? [true, undefined] : attempt(() => calls[i].apply(host, calls[i + 1]));
      const settle = (o) => {
        out[i] = o[0];
        out[i + 1] = o[1];
      };
      if (Array.isArray(outcome)) settle(outcome);
      else (waits ??= []).push(outcome.then(settle));
    }
    return waits === undefined ? out : Promise.all(waits).then(() => out);
  }

  /**
   * The records of a load whose reads have ended (`ok[r]`, `values[r]`: how its r-th read
   * ended), parsed (records.js), in the order asked; the core gives the onDebug warning
   * of each path skipped and ends the load (`__loadEnd`).
   */
  function loaded(manager, asked, plan, ok, values) {
    const kinds = plan[4];
    const held = plan[5] === "" ? [] : plan[5].split("\0");
    const records = [];
    let skipped;
    for (let i = 0, h = 0, r = 0; i < kinds.length; i++) {
      let value, path, why;
      if (kinds[i] === HELD) value = held[h++];
      else if (kinds[i] === READ) {
        path = plan[6 + r];
        value = values[r];
        if (!ok[r++]) why = UNREADABLE;
        else if (value === undefined || value === null) why = MISSING;
      } else continue; // skipped: the core has warned
      if (why === undefined) {
        const record = parseRecord(value);
        if (typeof record !== "string") {
          records.push(record);
          continue;
        }
        value = record;
        why = NOT_A_RECORD;
      }
      (skipped ??= []).push(asked[i], path, why, value);
    }
    if (plan[0] !== 0 || skipped) manager.__loadEnd(plan[0], skipped);
    return records;
  }

  /**
   * The Promise of a load, from the core's first step (`__loadBegin`, src/wasm/manager.rs):
   * `[id, host, read, readOptions, kinds, held, path, …]`, per filepath asked a record
   * held in memory (its text in `held`), a path to read, or skipped. Every read starts at
   * once, and a host read that returns a plain value is not awaited: the load then
   * settles at once. `filepaths`: the paths asked.
   */
  function load(manager, filepaths, plan) {
    const host = plan[1], read = plan[2], options = plan[3];
    const count = plan.length - 6;
    const ok = new Array(count);
    const values = new Array(count);
    let reading = 0;
    let done;
    for (let r = 0; r < count; r++) {
      const outcome = attempt(() => read.call(host, plan[6 + r], options));
      const settle = (o) => {
        ok[r] = o[0];
        values[r] = o[1];
      };
      if (Array.isArray(outcome)) {
        settle(outcome);
        continue;
      }
      reading++;
      outcome.then((o) => {
        settle(o);
        if (--reading === 0) done();
      });
    }
    if (reading === 0) {
      try {
        return Promise.resolve(loaded(manager, filepaths, plan, ok, values));
      } catch (err) {
        return Promise.reject(err);
      }
    }
    const asked = filepaths.slice(); // the caller may change its array meanwhile
    return new Promise((resolve, reject) => {
      pending.add(reject);
      done = () => {
        if (!pending.delete(reject)) return; // the module trapped: rejected already
        try {
          resolve(loaded(manager, asked, plan, ok, values));
        } catch (err) {
          reject(err);
        }
      };
    });
  }

  return {
    save,
    load,
    plan,
    close,
    track,
    /** A trap seen outside the driver (a synchronous method): fail the operations in flight. */
    fail,
  };
}
