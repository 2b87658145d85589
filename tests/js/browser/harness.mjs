// A tiny test runner for pages and workers: register with test(), run() them in order.

const registered = [];

export function test(name, fn) {
  registered.push({ name, fn });
}

export async function run({ timeoutMs = 30000 } = {}) {
  const results = [];
  for (const { name, fn } of registered.splice(0)) {
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
