// The cargo runner of the wasm tests in headless Chromium (Makefile test-wasm):
//   node scripts/wasm-browser-test.mjs <test.wasm>   (cargo appends the module's path)
// wasm-bindgen-test-runner serves the tests' page (its interactive mode, on a free port;
// WASM_BINDGEN_USE_BROWSER or WASM_BINDGEN_USE_DEDICATED_WORKER choose the page, as for the
// runner itself), and playwright-core drives Debian's Chromium to it and reads the result.
// Driven through chromedriver instead, the runner's page load often never ended ("Loading
// scripts...", then chromedriver's "Timed out receiving message from renderer"), while
// the same page loaded and passed at once under playwright-core: measured four runs in
// four, see the Makefile. Test-name filters are not passed on: the page runs every test.

import { spawn } from "node:child_process";
import { createServer } from "node:net";
import { chromium } from "playwright-core";

const TIMEOUT_MS = 120_000;

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

const { runner, listening } = serve(`127.0.0.1:${await freePort()}`);
let passed = false;
try {
  const url = await listening;
  const browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: ["--no-sandbox", "--disable-gpu"] });
  try {
    const page = await browser.newPage();
    page.on("pageerror", (e) => console.error(`page error: ${e.message}`));
    await page.goto(url, { timeout: TIMEOUT_MS });
    const done = await page.waitForFunction(
      () => /test result: (ok|FAILED)/.test(document.getElementById("output")?.textContent ?? ""),
      undefined,
      { timeout: TIMEOUT_MS, polling: 200 },
    );
    await done.dispose();
    const output = await page.evaluate(() => document.getElementById("output").textContent);
    console.log(output);
    passed = /test result: ok/.test(output);
  } finally {
    await browser.close();
  }
} catch (e) {
  console.error(`wasm-browser-test: ${e.message}`);
} finally {
  runner.kill();
}
process.exit(passed ? 0 : 1);
