#!/usr/bin/env node
// Runs the browser conformance suites in headless Chromium (Debian's, driven by
// playwright-core): on the main thread (opfs, indexeddb, memory) and inside a dedicated
// worker (opfs with sync access handles, memory). Pages are served from the repository
// root on 127.0.0.1, so they import the built package from /pkg.
//
//   node tests/js/browser/run.mjs            (after `make pkg`)
//   node tests/js/browser/run.mjs "sessions"  only the suites' tests whose name holds it

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { chromium } from "playwright-core";
import { ContextManager } from "toolctx";
import { serve, launchChromium } from "./serve.mjs";
import { watchWasm } from "./wasm-fetches.mjs";

const only = process.argv[2] ?? "";
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
    await page.goto(`${server.url}/tests/js/browser/page.html?${new URLSearchParams({ mode, only })}`);
    await page.waitForFunction(() => window.__results !== undefined, null, { timeout: 240_000 });
    const results = await page.evaluate(() => window.__results);
    const slowest = [...results].sort((a, b) => b.ms - a.ms).slice(0, 5);
    console.log(`# [${mode}] slowest: ${slowest.map((r) => `${Math.round(r.ms)} ms ${r.name}`).join("\n#   ")}`);
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
  const others = only ? [] : [...(await unbundled(browser)), ...(await interchange(browser)), ...(await twoTabs(browser)), ...(await asyncTrap(browser))];
  for (const [name, ok, detail] of others) {
    if (ok) passed++;
    else failed++;
    console.log(`${ok ? "ok" : "not ok"} - [interchange] ${name}${ok ? "" : `\n  ${detail}`}`);
  }
} finally {
  await browser.close();
  server.close();
}
console.log(`browser: ${passed} passed, ${failed} failed`);
process.exitCode = failed === 0 && passed > 0 ? 0 : 1;

/**
 * The package imported as plain ES modules (no bundler): index.js fetches the core and the
 * window optimiser's module side by side (neither request is answered before both are
 * made: wasm-fetches.mjs), and the conversation store's module not until it is opened.
 */
async function unbundled(browser) {
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    const wasm = await watchWasm(page, { together: ["core", "window"] });
    await page.goto(`${server.url}/tests/js/browser/interchange.html`);
    await page.waitForFunction(() => window.__ready === true);
    const fetched = [...wasm.requested].sort().join();
    return [["unbundled, the import fetches the core and window modules side by side, not the conversation store's", fetched === "core,window" && wasm.apart.length === 0, JSON.stringify(wasm)]];
  } catch (err) {
    return [["unbundled", false, err.stack]];
  } finally {
    await context.close();
  }
}

/**
 * A browser store (OPFS) exported as JSON Lines and imported by Node, and the reverse:
 * records identical, byte for byte.
 */
async function interchange(browser) {
  const out = [];
  const dir = mkdtempSync(`${tmpdir()}/toolctx-interchange-`);
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    await page.goto(`${server.url}/tests/js/browser/interchange.html`);
    await page.waitForFunction(() => window.__ready === true);

    // Node → browser
    const fromNode = new ContextManager({ contextDir: `${dir}/node`, persistThreshold: 0 });
    await fromNode.saveContext("readFile", { path: "src/ünïcode/認証.ts" }, { text: "line\nbreak 🙂", n: 1e21 }, 1, "q");
    await fromNode.saveContext("grep", { pattern: "AuthError" }, [1, 2.5, null, true]);
    const { jsonl: nodeJsonl } = await ContextManager.exportRecords({ contextDir: `${dir}/node` });
    const back = await page.evaluate(async (jsonl) => {
      const { ContextManager, opfsStorage } = window.toolctx;
      const options = { contextDir: "interchange/from-node", fileSystem: opfsStorage() };
      const report = await ContextManager.importRecords(options, jsonl);
      return { report, again: (await ContextManager.exportRecords(options)).jsonl };
    }, nodeJsonl);
    out.push(["a Node store imports into OPFS and exports back identically", back.again === nodeJsonl && back.report.imported === 2, JSON.stringify(back)]);

    // browser → Node
    const fromBrowser = await page.evaluate(async () => {
      const { ContextManager, opfsStorage } = window.toolctx;
      const m = new ContextManager({ contextDir: "interchange/from-browser", fileSystem: opfsStorage(), persistThreshold: 0 });
      const a = await m.saveContext("fetch", { url: "https://example.test/ä" }, { status: 200, body: "ok\u2028" }, 2);
      const b = await m.saveContext("listDirectory", { path: "docs" }, ["a.md", "b.md"]);
      const { jsonl } = await ContextManager.exportRecords({ contextDir: "interchange/from-browser", fileSystem: opfsStorage() });
      return { jsonl, records: await m.loadContexts([a, b]), names: [a, b].map((p) => p.slice(p.lastIndexOf("/") + 1)) };
    });
    const report = await ContextManager.importRecords({ contextDir: `${dir}/browser` }, fromBrowser.jsonl);
    const inNode = new ContextManager({ contextDir: `${dir}/browser` });
    const records = await inNode.loadContexts(fromBrowser.names.map((n) => `${dir}/browser/${n}`));
    const { jsonl: again } = await ContextManager.exportRecords({ contextDir: `${dir}/browser` });
    out.push(["an OPFS store imports into Node with identical records", JSON.stringify(records) === JSON.stringify(fromBrowser.records) && report.imported === 2, JSON.stringify({ records, expected: fromBrowser.records })]);
    out.push(["the Node copy exports to the same JSON Lines", again === fromBrowser.jsonl, again]);
  } catch (err) {
    out.push(["interchange", false, err.stack]);
  } finally {
    await context.close();
    rmSync(dir, { recursive: true, force: true });
  }
  return out;
}

/** Two tabs of one origin write one OPFS session at once: no record or index entry is lost. */
async function twoTabs(browser) {
  const context = await browser.newContext();
  try {
    const open = async () => {
      const page = await context.newPage();
      await page.goto(`${server.url}/tests/js/browser/interchange.html`);
      await page.waitForFunction(() => window.__ready === true);
      return page;
    };
    const [a, b] = [await open(), await open()];
    const id = await a.evaluate(async () => {
      const { ContextManager, opfsStorage } = window.toolctx;
      window.m = await ContextManager.open({ contextDir: "tabs", fileSystem: opfsStorage(), session: true, persistThreshold: 0 });
      return window.m.sessionId;
    });
    await b.evaluate(async (id) => {
      const { ContextManager, opfsStorage } = window.toolctx;
      window.m = await ContextManager.open({ contextDir: "tabs", fileSystem: opfsStorage(), session: id, persistThreshold: 0 });
    }, id);
    const burst = (tab) =>
      tab.evaluate(async (tab) => {
        await Promise.all(Array.from({ length: 50 }, (_, i) => window.m.saveContext("fetch", { tab, i }, { i })));
        await window.m.flush();
      }, tab === a ? "a" : "b");
    await Promise.all([burst(a), burst(b)]);
    await a.evaluate(() => window.m.flush());
    const seen = await a.evaluate(async (id) => {
      const { ContextManager, opfsStorage } = window.toolctx;
      const c = await ContextManager.open({ contextDir: "tabs", fileSystem: opfsStorage(), session: id });
      const root = await navigator.storage.getDirectory();
      const dir = await (await root.getDirectoryHandle("tabs")).getDirectoryHandle("sessions");
      const file = await (await (await dir.getDirectoryHandle(id)).getFileHandle(".manifest.json")).getFile();
      return { size: c.size, indexed: Object.keys(JSON.parse(await file.text()).context_files).length };
    }, id);
    return [["two tabs writing one OPFS session lose nothing (100 records, 100 manifest entries)", seen.size === 100 && seen.indexed === 100, JSON.stringify(seen)]];
  } catch (err) {
    return [["two tabs", false, err.stack]];
  } finally {
    await context.close();
  }
}

/** SPEC §9 in a page: a panic inside an async operation rejects what was in flight as INTERNAL, and the module works again. */
async function asyncTrap(browser) {
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    await page.goto(`${server.url}/tests/js/browser/interchange.html`);
    await page.waitForFunction(() => window.__ready === true);
    const seen = await page.evaluate(async () => {
      const { ContextManager } = window.toolctx;
      const code = (p) => p.then(() => "resolved", (e) => e.code);
      const trap = code(ContextManager.__panicForTestsAsync("deliberate"));
      const result = await trap;
      const m = new ContextManager({ contextDir: "trap", persistThreshold: 0 });
      const fp = await m.saveContext("t", {}, 1);
      return { result, works: typeof fp === "string" && m.size === 1 };
    });
    return [["a panic in an async operation rejects it with INTERNAL and the module recovers", seen.result === "INTERNAL" && seen.works, JSON.stringify(seen)]];
  } catch (err) {
    return [["async trap", false, err.stack]];
  } finally {
    await context.close();
  }
}
