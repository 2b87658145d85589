// Mutual exclusion within one process (toolctx/memory, toolctx/s3's `lock: "process"`)
// or one Durable Object (toolctx/cloudflare): a queue per name, each `fn` starting once
// the one before it has settled.

import { toolctxError } from "../../errors.js";

/**
 * `lock(name, fn, {wait})`: one queue per name, each `fn` starting once the one before it
 * has settled. `{wait: false}` (background index work, which never makes anyone wait):
 * while an `fn` of that name is queued or running, TIMEOUT at once; once the last has
 * settled (its caller's Promise with it), the name is free.
 */
export function queueLock() {
  /** name → the tail of its queue and how many of its fns have not settled */
  const queues = new Map();
  return function lock(name, fn, { wait = true } = {}) {
    const queue = queues.get(name) ?? { tail: Promise.resolve(), unsettled: 0 };
    if (!wait && queue.unsettled > 0) {
      return Promise.reject(toolctxError("TIMEOUT", `lock ${name} is held in this process (not waited for)`));
    }
    queue.unsettled++;
    queues.set(name, queue);
    // A name's queue stays in the map while any of its fns is unsettled, so the last
    // to settle removes its own queue.
    const settled = () => {
      if (--queue.unsettled === 0) queues.delete(name);
    };
    const run = queue.tail.then(() => fn()).finally(settled);
    queue.tail = run.then(
      () => {},
      () => {},
    );
    return run;
  };
}
