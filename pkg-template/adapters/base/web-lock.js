// Web Locks: mutual exclusion across the tabs and workers of an origin, where the
// runtime has them (every current browser); elsewhere the function just runs.

import { toolctxError } from "../../errors.js";

/**
 * `fn` holding the Web Lock `name`. `{wait: false}` (background index work, which never
 * makes anyone wait): held by another, TIMEOUT at once (the lock's `ifAvailable`).
 * @template T
 * @param {string} name
 * @param {() => Promise<T>} fn
 * @param {{ wait?: boolean }} [options]
 * @returns {Promise<T>}
 */
export function webLock(name, fn, { wait = true } = {}) {
  const locks = globalThis.navigator?.locks;
  if (!locks) return Promise.resolve().then(fn);
  if (wait) return locks.request(`toolctx:${name}`, () => fn());
  return locks.request(`toolctx:${name}`, { ifAvailable: true }, (held) => {
    if (held === null) throw toolctxError("TIMEOUT", `lock ${name} is held by another tab or worker (not waited for)`);
    return fn();
  });
}
