// The JavaScript half of the sans-IO core: the only code that awaits.
//
// A wasm method that does I/O returns at once with a task number. The task runs in
// the core only when the driver polls it (`__poll`); where it needs the host (a
// storage call, a lock, the embed callback) the core hands the driver a call to make,
// and the driver gives each result back (`__complete`) and polls again. So every
// entry into the module is a synchronous call from here, and a panic (a trap) is
// caught where it happens: the calls in flight fail with INTERNAL and the next call
// gets a fresh instance (see extras.js).
//
// What `__poll` returns is one flat array of entries (src/wasm/tasks.rs):
//   [0, task, ok, value]          a task finished
//   [0, task, true, text, true]   a task finished with JSON text: resolve with JSON.parse(text),
//                                 here, after the wasm call (V8 20 crashed parsing inside one)
//   [1, call, this, fn, args]     await fn.apply(this, args)
//   [2, call, this, lockFn, name] this.lockFn(name, callback): complete once held
//   [3, call, lockCall]           release that lock; complete when the host's lock settles
//   [5]                           tasks yielded after queuing calls: start them, poll again
//
// A host function that returns a plain value (not a thenable) completes its call at
// once, and the same poll runs on. Calls that settle later are handed to the core as
// they settle, and one poll, queued as a microtask, runs the tasks they woke: a
// loadContexts of 100 records polls once after its reads, not 100 times.
//
// saveContext and flush are no tasks: the core's synchronous steps, and between them the
// host calls they ask for (`drive`).

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
 * A driver for one wasm module's tasks.
 * @param {{ __poll(): unknown[], __complete(call: number, ok: boolean, value: unknown): void }} core
 * @param {(err: unknown) => unknown} onTrap turns a trap into the error that every task in flight rejects with
 */
export function createDriver(core, onTrap) {
  /** task number → {resolve, reject} of the caller's Promise */
  const waiting = new Map();
  /** lock call number → {release, held}: the locks this module holds */
  const locks = new Map();
  let polling = false;
  let again = false;
  /** A poll is queued as a microtask (host calls settled since the last one). */
  let queued = false;
  /** The `reject` of each operation run in steps (`drive`) while it waits for the host. */
  const saves = new Set();
  /** job → release() of the lock it holds (`runOps`). */
  const jobLocks = new Map();
  /** host → name → the tail of the turns at that lock in this module (`hold`). */
  const turns = new WeakMap();
  /** manager → key → the Promise of an operation of it in flight (`track`). */
  const inFlight = new WeakMap();

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
    for (const { reject } of waiting.values()) reject(error);
    waiting.clear();
    for (const reject of saves) reject(error);
    saves.clear();
    for (const { release } of locks.values()) release();
    locks.clear();
    for (const release of jobLocks.values()) release();
    jobLocks.clear();
    return error;
  }

  /** Runs the core until no task can make progress, then starts the host calls it asked for. */
  function poll() {
    queued = false;
    if (polling) {
      again = true; // a host call settled synchronously while we were polling
      return;
    }
    polling = true;
    try {
      do {
        again = false;
        let out;
        try {
          out = core.__poll();
        } catch (err) {
          fail(err);
          return;
        }
        // An index loop, not for-of: with host calls completing inside dispatch, Node 20's
        // V8 crashed (SIGTRAP) deoptimising the array iterator's builtin continuation.
        for (let i = 0; i < out.length; i++) dispatch(out[i]);
      } while (again);
    } finally {
      polling = false;
    }
  }

  function dispatch(entry) {
    switch (entry[0]) {
      case 0: {
        const settle = waiting.get(entry[1]);
        if (!settle) return;
        waiting.delete(entry[1]);
        if (entry[2]) settle.resolve(entry[4] ? JSON.parse(entry[3]) : entry[3]);
        else settle.reject(entry[3]);
        return;
      }
      case 1:
        return run(entry[1], entry[2], entry[3], entry[4]);
      case 2:
        return lock(entry[1], entry[2], entry[3], entry[4]);
      case 3:
        return unlock(entry[1], entry[2]);
      case 5:
        again = true;
    }
  }

  /**
   * Hands a host call's result to the core. Inside a poll, the poll runs again; else one
   * poll is queued as a microtask, so the calls that settle in the same turn (a
   * loadContexts of many records) are all handed over before the tasks run.
   */
  function complete(call, ok, value) {
    try {
      core.__complete(call, ok, value);
    } catch (err) {
      fail(err);
      return;
    }
    if (polling) again = true;
    else if (!queued) {
      queued = true;
      queueMicrotask(poll);
    }
  }

  /** Calls the host; a result that is not a thenable completes at once, within this poll. */
  function run(call, self, fn, args) {
    let value;
    try {
      value = fn.apply(self, args);
    } catch (err) {
      return complete(call, false, err);
    }
    if (typeof value?.then !== "function") return complete(call, true, value);
    value.then(
      (result) => complete(call, true, result),
      (err) => complete(call, false, err),
    );
  }

  /**
   * Takes the lock `name` of `host`: first this module's turn at it (its operations, in
   * order, whatever the host does), then the host's `lockFn` when it has one. `held(ok,
   * err)` is called once: when the lock is held, or when the host's lock failed first.
   * Returns `release()`, which ends the turn and resolves to how the host's lock settled
   * (`[ok, err]`).
   */
  function hold(host, lockFn, name, held) {
    let release;
    const gate = new Promise((resolve) => {
      release = resolve;
    });
    let names = turns.get(host);
    if (!names) turns.set(host, (names = new Map()));
    const previous = names.get(name) ?? Promise.resolve();
    const settled = previous.then(() => {
      if (typeof lockFn !== "function") {
        held(true, undefined);
        return gate.then(() => [true, undefined]);
      }
      let acquired = false;
      let result;
      try {
        result = Promise.resolve(lockFn.call(host, name, () => {
          acquired = true;
          held(true, undefined);
          return gate;
        }));
      } catch (err) {
        result = Promise.reject(err);
      }
      return result.then(() => [true, undefined], (err) => [false, err]).then((outcome) => {
        // A host that fails (or returns) before running the callback must not leave the caller waiting.
        if (!acquired) held(false, outcome[0] ? new Error("storage lock() returned without running its callback") : outcome[1]);
        return outcome;
      });
    });
    names.set(name, settled);
    settled.then(() => {
      if (names.get(name) === settled) names.delete(name);
    });
    return () => {
      release();
      return settled;
    };
  }

  function lock(call, self, fn, name) {
    const release = hold(self, fn, name, (ok, err) => {
      if (!ok) locks.delete(call);
      complete(call, ok, err);
    });
    locks.set(call, { release });
  }

  function unlock(call, lockCall) {
    const held = locks.get(lockCall);
    locks.delete(lockCall);
    if (!held) return complete(call, true, undefined);
    held.release().then(([ok, err]) => complete(call, ok, err));
  }

  /** The Promise of task `task` (a number a wasm method returned). */
  function settle(task) {
    return new Promise((resolve, reject) => {
      waiting.set(task, { resolve, reject });
      poll();
    });
  }

  /**
   * The Promise of an operation run in steps, from the core's first step (`__saveBegin`,
   * `__flush`, …: src/wasm/manager.rs): `[0, value]` done; `[1, task]` a task finishes it;
   * `[2, …]` a record to write (`writeRecord`); `[4, job, ops]` host calls to run, whose
   * outcomes the core's next step takes (`runOps`); `[5, method]` wait until the
   * manager's other operations in flight have settled, then call `method` (`close`).
   */
  function drive(manager, step) {
    if (step[0] === 0) return Promise.resolve(step[1]);
    if (step[0] === 1) return track(manager, settle(step[1]));
    let key;
    const promise = new Promise((resolve, reject) => {
      key = reject;
      saves.add(reject);
      steps(manager, step, reject).then(
        (value) => saves.delete(reject) && resolve(value),
        (err) => saves.delete(reject) && reject(err),
      );
    });
    return track(manager, promise, key);
  }

  /** Runs the steps until the end; `undefined` once the module trapped (`reject` left `saves`). */
  async function steps(manager, step, reject) {
    for (;;) {
      if (step[0] === 0) return step[1];
      if (step[0] === 1) return settle(step[1]);
      if (step[0] === 5) {
        await othersSettled(manager, reject);
        if (!saves.has(reject)) return undefined;
        step = manager[step[1]]();
        continue;
      }
      step = step[0] === 2 ? await writeRecord(manager, step, reject) : await runOps(manager, step, reject);
      if (step === undefined) return undefined;
    }
  }

  /** `fn.apply(self, args)` as `[ok, value]`, or a Promise of it when the host answers later. */
  function call(self, fn, args) {
    let value;
    try {
      value = fn.apply(self, args);
    } catch (err) {
      return [false, err];
    }
    if (typeof value?.then !== "function") return [true, value];
    return new Promise((resolve) => value.then((v) => resolve([true, v]), (err) => resolve([false, err])));
  }

  /**
   * Runs the host calls of a job's step (`[4, job, ops]`), all at once, and hands their
   * outcomes to the core (`__jobStep`): its next step. An op is `[1, this, fn, args]` a
   * call; `[2, this, lockFn, name]` take the lock (`hold`); `[3]` release it; `[0]` nothing.
   */
  async function runOps(manager, step, reject) {
    const job = step[1], ops = step[2];
    const outcomes = new Array(2 * ops.length);
    const pending = [];
    for (let i = 0; i < ops.length; i++) {
      const op = ops[i];
      let out;
      if (op[0] === 1) out = call(op[1], op[2], op[3]);
      else if (op[0] === 2) {
        out = new Promise((resolve) => {
          jobLocks.set(job, hold(op[1], op[2], op[3], (ok, err) => {
            if (!ok) jobLocks.delete(job);
            resolve([ok, err]);
          }));
        });
      } else if (op[0] === 3) {
        const release = jobLocks.get(job);
        jobLocks.delete(job);
        out = release ? release() : [true, undefined];
      } else out = [true, undefined];
      if (Array.isArray(out)) {
        outcomes[2 * i] = out[0];
        outcomes[2 * i + 1] = out[1];
      } else {
        pending.push(out.then((o) => {
          outcomes[2 * i] = o[0];
          outcomes[2 * i + 1] = o[1];
        }));
      }
    }
    if (pending.length > 0) {
      await Promise.all(pending);
      if (!saves.has(reject)) return undefined;
    }
    return manager.__jobStep(job, outcomes);
  }

  /**
   * Writes a new record exclusively, while the core indexes the result (`__saveIndex`),
   * and hands the outcome to the core (`__saveWritten`), which adds the pointer, or
   * answers `[2, path]` (the name was taken: write again there) or `[3, path]` (the write
   * failed: remove what it left; `__saveEnd` then throws why); any other answer is the
   * save's next step (`drive`). A host write that returns a plain value completes the save
   * without an await. `reject` leaves `saves` when the module traps: then nothing of the
   * save runs on.
   */
  async function writeRecord(manager, plan, reject) {
    // Indexed, not destructured (no array iterator: see `poll`).
    const id = plan[1], host = plan[2], write = plan[3], remove = plan[4];
    let path = plan[5];
    const record = Array.isArray(plan[6]) ? join(plan[6]) : plan[6];
    let indexed = false;
    for (;;) {
      let outcome = call(host, write, [path, record, { exclusive: true }]);
      if (!indexed) {
        indexed = true;
        manager.__saveIndex(id);
      }
      if (!Array.isArray(outcome)) {
        outcome = await outcome;
        if (!saves.has(reject)) return undefined;
      }
      const step = manager.__saveWritten(id, outcome[0], outcome[1]);
      if (step[0] !== 2 && step[0] !== 3) return step;
      path = step[1];
      if (step[0] === 3) {
        try {
          const removed = remove.call(host, path);
          if (typeof removed?.then === "function") await removed;
        } catch {
          // Best effort: the save fails with the write's error.
        }
        if (!saves.has(reject)) return undefined;
        return manager.__saveEnd(id);
      }
    }
  }

  return {
    settle,
    /** The Promise of an operation run in steps (`drive`). */
    run: drive,
    track,
    /** A trap seen outside the driver (a synchronous method): fail the tasks in flight. */
    fail,
  };
}
