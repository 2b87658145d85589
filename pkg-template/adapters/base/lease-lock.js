// The one lock of the adapters that lock across processes: a lease. The holder takes it
// with an expiry, refreshes it every third of the lease while `fn` runs, and releases it
// if it is still its own; a holder that died stops refreshing, and its lease is taken
// over once expired. Waiting gives up after `lockWaitMs` with TIMEOUT; `lock(name, fn,
// {wait: false})` does not wait at all (TIMEOUT at once when the lock is held: the
// background index work, which yields to everyone else). `fn` cannot be
// stopped midway, so a holder that learns its lease was lost (a refresh or the release
// finds it taken over, or gone) rejects once `fn` has finished, with LOCK_LOST (the
// file-system adapters: ELOCKCOMPROMISED), `fn`'s own failure as the cause: what `fn` did
// may have overlapped with the next holder.
//
// Each backend gives three steps (toolctx/redis: SET NX PX, toolctx/deno-kv: versionstamp
// checks, R2: conditional puts, the file systems: lock files, base/lock-file.js):
//   acquire(name, token, leaseMs) → a hold, or undefined while another holder's lease runs
//                                    (an expired one is taken over here)
//   refresh(hold, leaseMs)        → false when the lease is not ours any more
//   release(hold)                 → false when it was not ours any more (nothing removed)
// A refresh that throws is tried again at the next beat; a release that throws is left to
// the lease, which runs out.

import { toolctxError } from "../../errors.js";
import { sleep } from "./backoff.js";
import { randomHex } from "./random.js";

function unref(timer) {
  if (typeof timer?.unref === "function") timer.unref();
  else if (typeof globalThis.Deno?.unrefTimer === "function") globalThis.Deno.unrefTimer(timer);
}

/**
 * `lockLeaseMs` and `lockWaitMs` of an adapter's options, or the first of their deprecated
 * names given in `aliases` (`{lease: ["lockTtlMs"], wait: ["lockTimeoutMs"]}`), checked.
 */
export function lockOptions(options, adapter, aliases = {}) {
  const pick = (name, old = []) => [name, ...old].find((n) => options[n] !== undefined) ?? name;
  const leaseName = pick("lockLeaseMs", aliases.lease);
  const waitName = pick("lockWaitMs", aliases.wait);
  const { [leaseName]: leaseMs = 30_000, [waitName]: waitMs = 60_000 } = options;
  if (!(Number.isFinite(leaseMs) && leaseMs > 0)) {
    throw toolctxError("INVALID_ARGUMENT", `${adapter}: ${leaseName} must be a positive number of milliseconds (got ${leaseMs})`);
  }
  if (!(Number.isFinite(waitMs) && waitMs >= 0)) {
    throw toolctxError("INVALID_ARGUMENT", `${adapter}: ${waitName} must be a number of milliseconds (got ${waitMs})`);
  }
  return { leaseMs, waitMs };
}

/**
 * `lock(name, fn, {wait})` over a backend's lease steps (`wait: false`: TIMEOUT at once when held). `fn` receives `{signal, fencingToken}`:
 * `signal` aborts when a refresh finds the lease lost; `fencingToken` is the hold's, where
 * the backend counts acquisitions (toolctx/redis).
 * @template Hold  what the backend's `acquire` gives for a lease it took, handed back to `refresh` and `release`
 * @param {{ acquire(name: string, token: string, leaseMs: number): Promise<Hold | undefined>,
 *   refresh(hold: Hold, leaseMs: number): Promise<boolean>, release(hold: Hold): Promise<boolean> }} lease
 * @param {{ label: string, leaseMs: number, waitMs: number, lostCode?: string, maxPauseMs?: number }} options
 */
export function leaseLock(lease, { label, leaseMs, waitMs, lostCode = "LOCK_LOST", maxPauseMs = 50 }) {
  const lostError = (name, cause) =>
    toolctxError(
      lostCode,
      `${label} ${name}: the lease ran out or was taken over before its holder finished; another holder may have held it at the same time (lease ${leaseMs} ms)`,
      { cause },
    );

  async function take(name, wait) {
    const token = randomHex(12);
    const giveUp = Date.now() + (wait ? waitMs : -1);
    for (let attempt = 0; ; attempt++) {
      const hold = await lease.acquire(name, token, leaseMs);
      if (hold !== undefined) return hold;
      if (Date.now() > giveUp) throw toolctxError("TIMEOUT", `${label} ${name} is held by another holder (${wait ? `waited ${waitMs} ms` : "not waited for"})`);
      await sleep(Math.min(2 ** attempt, maxPauseMs) * (0.5 + Math.random()));
    }
  }

  /** Refreshes the lease every third of it until stopped or lost; `lost` aborts when a refresh finds it gone. */
  function heartbeat(name, hold) {
    const lost = new AbortController();
    let timer;
    let beating = Promise.resolve();
    let stopped = false;
    const beat = async () => {
      const kept = await lease.refresh(hold, leaseMs).catch(() => true); // a failed request: again at the next beat
      if (!kept) lost.abort(lostError(name));
      else if (!stopped) schedule();
    };
    const schedule = () => {
      timer = setTimeout(() => (beating = beat()), leaseMs / 3);
      unref(timer);
    };
    schedule();
    return {
      signal: lost.signal,
      async stop() {
        stopped = true;
        clearTimeout(timer);
        await beating;
        clearTimeout(timer);
        return lost.signal.aborted;
      },
    };
  }

  return async function lock(name, fn, { wait = true } = {}) {
    const hold = await take(name, wait !== false);
    const beat = heartbeat(name, hold);
    let result;
    let failure;
    let failed = false;
    try {
      result = await fn({ signal: beat.signal, fencingToken: /** @type {{ fencingToken?: number }} */ (hold).fencingToken });
    } catch (err) {
      failed = true;
      failure = err;
    }
    const lostWhileHeld = await beat.stop();
    const released = await lease.release(hold).catch(() => true); // the lease runs out anyway
    if (lostWhileHeld || !released) throw lostError(name, failed ? failure : undefined);
    if (failed) throw failure;
    return result;
  };
}
