// Deno.test for the suites that run under Deno, with the per-test timeout Deno's runner lacks
// (node --test has --test-timeout, bun test a timeout argument): a test still running after
// TEST_TIMEOUT_MS fails, naming itself, and the runner goes on to the next, so a test that
// never ends fails the run instead of holding it until CI's time is out.

/** What a test of these suites takes at most (the longest take about a minute on a busy machine). */
export const TEST_TIMEOUT_MS = 300_000;

/** `fn` as a Deno test named `name` that fails after `timeoutMs`; the suites share resources between tests, so no sanitizers. */
export function denoTest(name, fn, timeoutMs = TEST_TIMEOUT_MS) {
  globalThis.Deno.test({
    name,
    sanitizeOps: false,
    sanitizeResources: false,
    async fn(t) {
      let timer;
      const timedOut = new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${name}: still running after ${timeoutMs} ms (the test's timeout)`)), timeoutMs);
      });
      try {
        await Promise.race([fn(t), timedOut]);
      } finally {
        clearTimeout(timer);
      }
    },
  });
}
