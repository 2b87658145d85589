// Web Locks: mutual exclusion across the tabs and workers of an origin, where the
// runtime has them (every current browser); elsewhere the function just runs.

/**
 * @template T
 * @param {string} name
 * @param {() => Promise<T>} fn
 * @returns {Promise<T>}
 */
export function webLock(name, fn) {
  const locks = globalThis.navigator?.locks;
  return locks ? locks.request(`toolctx:${name}`, () => fn()) : Promise.resolve().then(fn);
}
