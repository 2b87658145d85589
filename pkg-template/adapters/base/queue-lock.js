// Mutual exclusion within one process (toolctx/memory, toolctx/s3's `lock: "process"`)
// or one Durable Object (toolctx/cloudflare): a queue per name, each `fn` starting once
// the one before it has settled.

import { toolctxError } from "../../errors.js";

/**
 * `lock(name, fn, {wait})` over `queues` (name → the tail of its queue), which lockers
 * that must exclude each other share. `{wait: false}` (background index work, which never
 * makes anyone wait): with the queue not empty, TIMEOUT at once.
 * @param {Map<string, Promise<void>>} [queues]
 */
export function queueLock(queues = new Map()) {
  return function lock(name, fn, { wait = true } = {}) {
    if (!wait && queues.has(name)) {
      return Promise.reject(toolctxError("TIMEOUT", `lock ${name} is held in this process (not waited for)`));
    }
    const previous = queues.get(name) ?? Promise.resolve();
    const run = previous.then(() => fn());
    const tail = run.then(
      () => {},
      () => {},
    );
    queues.set(name, tail);
    tail.then(() => {
      if (queues.get(name) === tail) queues.delete(name);
    });
    return run;
  };
}
