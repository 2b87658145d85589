// A tiny test runner for pages and workers: register with test(), run() them in order.

const registered = [];

export function test(name, fn) {
  registered.push({ name, fn });
}

/** Runs the tests registered so far whose name includes `only` (every one without it). */
export async function run({ timeoutMs = 30000, only = "" } = {}) {
  const results = [];
  for (const { name, fn } of registered.splice(0)) {
    if (!name.includes(only)) continue;
    const started = performance.now();
    let timer;
    try {
      await Promise.race([
        fn(),
        new Promise((_, reject) => {
          timer = setTimeout(() => reject(new Error(`timed out after ${timeoutMs} ms`)), timeoutMs);
        }),
      ]);
      results.push({ name, ok: true, ms: performance.now() - started });
    } catch (err) {
      results.push({ name, ok: false, ms: performance.now() - started, error: `${err?.stack ?? err}` });
    } finally {
      clearTimeout(timer);
    }
  }
  return results;
}
