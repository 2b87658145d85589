// Which of the package's wasm modules a page fetches, and whether it fetches them side by
// side: for the browser tests (tests/js/browser/run.mjs) and the bundled pages of
// tests/pack/run.mjs. No timing is measured: a request for one of the modules in
// `together` is held until every one of them has been requested, so a page that fetches
// them one after the other (awaiting the first before asking for the second) would wait for
// ever; after `patienceMs` the held requests go on and `apart` says so.

const MODULES = ["core", "conversation", "window"];

/**
 * Watches the wasm requests of `page` (Playwright); await it before `page.goto`.
 * @param {import("playwright-core").Page} page
 * @param {{ together?: string[], patienceMs?: number }} options `together`: names of MODULES
 * @returns {Promise<{ requested: string[], apart: string[] }>} filled in as the page runs:
 *   `requested`, the modules asked for, in order; `apart`, those of `together` that waited
 *   `patienceMs` for the others and were let go.
 */
export async function watchWasm(page, { together = [], patienceMs = 15_000 } = {}) {
  const seen = { requested: [], apart: [] };
  const waiting = [];
  const release = () => {
    for (const go of waiting.splice(0)) go();
  };
  await page.route(/\.wasm(\?.*)?$/, async (route) => {
    const file = new URL(route.request().url()).pathname.split("/").pop();
    const name = MODULES.find((m) => file.startsWith(`toolctx_${m}_bg`)) ?? file;
    seen.requested.push(name);
    if (together.includes(name)) {
      if (together.every((m) => seen.requested.includes(m))) release();
      else {
        const held = new Promise((resolve) => waiting.push(resolve));
        const timer = setTimeout(() => {
          seen.apart.push(name);
          release();
        }, patienceMs);
        await held;
        clearTimeout(timer);
      }
    }
    await route.continue();
  });
  return seen;
}
