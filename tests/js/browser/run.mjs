#!/usr/bin/env node
// Runs the browser conformance suites in headless Chromium (Debian's, driven by
// playwright-core): on the main thread (opfs, indexeddb, memory) and inside a dedicated
// worker (opfs with sync access handles, memory). Pages are served from the repository
// root on 127.0.0.1, so they import the built package from /pkg.
//
//   node tests/js/browser/run.mjs        (after `make pkg`)

import { chromium } from "playwright-core";
import { serve, launchChromium } from "./serve.mjs";

const server = await serve();
const browser = await launchChromium(chromium);
let failed = 0;
let passed = 0;
try {
  for (const mode of ["page", "worker"]) {
    // A fresh context per mode: its own origin storage, so runs never see each other.
    const context = await browser.newContext();
    const page = await context.newPage();
    page.on("pageerror", (err) => console.error(`[${mode}] page error: ${err.message}`));
    await page.goto(`${server.url}/tests/js/browser/page.html?mode=${mode}`);
    await page.waitForFunction(() => window.__results !== undefined, null, { timeout: 240_000 });
    const results = await page.evaluate(() => window.__results);
    for (const r of results) {
      if (r.ok) {
        passed++;
        console.log(`ok - ${r.name}`);
      } else {
        failed++;
        console.log(`not ok - ${r.name}\n  ${r.error.replaceAll("\n", "\n  ")}`);
      }
    }
    await context.close();
  }
} finally {
  await browser.close();
  server.close();
}
console.log(`browser: ${passed} passed, ${failed} failed`);
process.exitCode = failed === 0 && passed > 0 ? 0 : 1;
