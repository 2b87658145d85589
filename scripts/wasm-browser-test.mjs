// The cargo runner of the wasm tests in headless Chromium (Makefile test-wasm):
//   node scripts/wasm-browser-test.mjs <test.wasm>   (cargo appends the module's path)
// wasm-bindgen-test-runner serves the tests' page (its interactive mode, on a free port;
// WASM_BINDGEN_USE_BROWSER or WASM_BINDGEN_USE_DEDICATED_WORKER choose the page, as for the
// runner itself), and playwright-core drives Debian's Chromium to it and reads the result.
// The runner's page sometimes never loads: its server leaves the last snippet requests
// (records.js, bytes.js, imported by driver.js) unanswered, and the page stays at "Loading
// scripts..." (about 4 page opens in 14, measured; chromedriver then waited forever). So a
// page that has not finished in TIMEOUT_MS is opened afresh, up to ATTEMPTS times: ten runs
// in ten passed so. Test-name filters are not passed on: the page runs every test.

import { spawn } from "node:child_process";
import { createServer } from "node:net";
import { chromium } from "playwright-core";

/**
 * How long a page may take to finish its tests (they take about a second, a few under
 * CI's load). A stalled page waits this long before it is opened afresh: at 30 s, three
 * stalls in one CI run cost 90 s.
 */
const TIMEOUT_MS = 15_000;
/** Pages opened before giving up: a page that never finished is opened afresh. */
const ATTEMPTS = 8;

const wasm = process.argv[2];
if (!wasm) {
  console.error("usage: node scripts/wasm-browser-test.mjs <test.wasm>");
  process.exit(2);
}

/** A port nothing listens on now. */
function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** Starts the runner's page server; resolves to its address once it is listening. */
function serve(address) {
  const runner = spawn("wasm-bindgen-test-runner", [wasm], {
    env: { ...process.env, NO_HEADLESS: "1", WASM_BINDGEN_TEST_ADDRESS: address },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const listening = new Promise((resolve, reject) => {
    let said = "";
    runner.stdout.on("data", (chunk) => {
      said += chunk;
      const url = said.match(/https?:\/\/\S+/);
      if (url) resolve(url[0]);
    });
    runner.on("exit", (code) => reject(new Error(`wasm-bindgen-test-runner exited (${code}) before serving: ${said}`)));
  });
  return { runner, listening };
}

/**
 * The page's test output once it ends ("test result: ok" or "FAILED"), or `undefined` when
 * the page had not finished within `timeout`.
 */
async function runPage(browser, url, timeout) {
  const page = await browser.newPage();
  try {
    page.on("pageerror", (e) => console.error(`page error: ${e.message}`));
    await page.goto(url, { timeout, waitUntil: "commit" });
    const done = await page.waitForFunction(
      () => /test result: (ok|FAILED)/.test(document.getElementById("output")?.textContent ?? ""),
      undefined,
      { timeout, polling: 200 },
    );
    await done.dispose();
    return await page.evaluate(() => document.getElementById("output").textContent);
  } catch (e) {
    const shown = await page.evaluate(() => document.getElementById("output")?.textContent).catch(() => undefined);
    console.error(`wasm-browser-test: the page did not finish (${e.message.split("\n")[0]}); it showed: ${shown}`);
    return undefined;
  } finally {
    await page.close();
  }
}

const { runner, listening } = serve(`127.0.0.1:${await freePort()}`);
let passed = false;
try {
  const url = await listening;
  const browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: ["--no-sandbox", "--disable-gpu"] });
  try {
    for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
      const output = await runPage(browser, url, TIMEOUT_MS);
      if (output === undefined) continue;
      console.log(output);
      passed = /test result: ok/.test(output);
      break;
    }
  } finally {
    await browser.close();
  }
} catch (e) {
  console.error(`wasm-browser-test: ${e.message}`);
} finally {
  runner.kill();
}
process.exit(passed ? 0 : 1);
