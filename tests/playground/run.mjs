#!/usr/bin/env node
// The playground (www/) in headless Chromium: builds the page with Vite, serves it on
// 127.0.0.1, clicks through the scripted agent run, a query, the record viewer, the
// backend switch (OPFS → IndexedDB → memory), a reload (the OPFS records are still
// there), the window optimiser and the session clean-up, and saves a full-page
// screenshot to test-output/playground.png.
//
// Every check compares what the page shows with what the library or the browser's
// storage says independently (record files listed from OPFS and IndexedDB directly,
// hashes recomputed, the corpus read from disk).
//
//   node tests/playground/run.mjs        (after `make pkg`)

import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { chromium } from "playwright-core";
import { launchChromium, repoRoot, serve } from "../js/browser/serve.mjs";

const www = join(repoRoot, "www");
const outDir = join(repoRoot, "test-output");
const CONTEXT_DIR = "toolctx-playground";
const PLAN_LENGTH = 12;


execFileSync("node", [join(repoRoot, "node_modules", "vite", "bin", "vite.js"), "build", "--logLevel", "error", www], {
  stdio: "inherit",
});
const dist = join(www, "dist");
// The window optimiser panel is tested where the package exports it.
const hasWindowOptimizer = typeof (await import("toolctx")).optimizeWindow === "function";

const results = [];
function check(name, ok, detail = "") {
  results.push(ok);
  console.log(`${ok ? "ok" : "not ok"} - ${name}${ok ? "" : `\n  ${String(detail).replaceAll("\n", "\n  ")}`}`);
}

const server = await serve(`${dist}/`);
const browser = await launchChromium(chromium);
try {
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  const page = await context.newPage();
  const errors = [];
  page.on("pageerror", (err) => errors.push(err.message));
  page.on("console", (msg) => msg.type() === "error" && errors.push(msg.text()));
  await page.goto(`${server.url}/index.html`);
  await page.waitForSelector("body[data-ready='1']");

  // 1. The scripted run: one pointer row per plan step, small records in memory, the rest in OPFS.
  await page.click("#run");
  await page.waitForSelector("#agent-status[data-state='done'], #agent-status[data-state='error']", { timeout: 60_000 });
  await settled(page);
  const rows = await pointerRows(page);
  const sessionId = rows[0]?.session;
  check(`the run saved ${PLAN_LENGTH} tool outputs, shown in the pointer table`, rows.length === PLAN_LENGTH, JSON.stringify(rows));
  check(
    "the table lists the plan's tools in order",
    rows.map((r) => r.tool).join(",") ===
      "listDirectory,readFile,listDirectory,grep,readFile,readFile,codeSearch,readFile,readFile,grep,readFile,readFile",
    rows.map((r) => r.tool).join(","),
  );
  const opfsNames = await listOpfs(page, `${CONTEXT_DIR}/sessions/${sessionId}`);
  const shownInOpfs = rows.filter((r) => r.where === "OPFS").map((r) => r.filename).sort();
  check(
    "rows marked OPFS are exactly the record files in the OPFS session folder; the others are held in memory",
    shownInOpfs.length > 0 && shownInOpfs.length < rows.length && JSON.stringify(shownInOpfs) === JSON.stringify(opfsNames.filter((n) => n.endsWith(".json") && !n.startsWith("."))),
    JSON.stringify({ shownInOpfs, opfsNames }),
  );
  check(
    "in-memory rows are the small records (below the 1024-byte persist threshold)",
    rows.every((r) => (r.where === "in memory") === r.bytes < 1024),
    JSON.stringify(rows.map((r) => [r.tool, r.bytes, r.where])),
  );

  // 2. A query: ranked by score, matched keywords, and a budget that admits only part of the set.
  await page.fill("#query", "login session");
  await page.fill("#max-tokens", "600");
  await page.click("#query-form button[type=submit]");
  await settled(page);
  const ranked = await page.$$eval("#ranked tbody tr", (trs) =>
    trs.map((tr) => ({
      score: Number(tr.dataset.score),
      tokens: Number(tr.dataset.tokens),
      fits: tr.dataset.fits === "1",
      description: tr.children[2].textContent,
      matched: [...tr.children[3].querySelectorAll(".kw")].map((k) => k.textContent),
      filepath: tr.dataset.filepath,
    })),
  );
  check("the query ranks records best first with positive scores", ranked.length > 1 && ranked.every((r, i) => r.score > 0 && (i === 0 || ranked[i - 1].score >= r.score)), JSON.stringify(ranked));
  check(
    "the login file comes first, and the records whose text (content included) holds both words come before those holding one",
    ranked[0].description === "read file: path=src/auth/login.ts" &&
      ranked[0].matched.join() === "login,session" &&
      ranked.findIndex((r) => r.matched.length < 2) > 0 &&
      ranked.slice(ranked.findIndex((r) => r.matched.length < 2)).every((r) => r.matched.length < 2) &&
      ranked.some((r) => r.description === "read file: path=src/auth/session.ts"),
    JSON.stringify(ranked.map((r) => [r.description, r.score.toFixed(2), r.matched.join("+")])),
  );
  const fitTokens = ranked.filter((r) => r.fits).reduce((s, r) => s + r.tokens, 0);
  check(
    "the budget keeps a set that fits in 600 tokens and leaves some relevant records out",
    fitTokens > 0 && fitTokens <= 600 && ranked.some((r) => !r.fits),
    JSON.stringify(ranked.map((r) => [r.description, r.tokens, r.fits])),
  );
  check("the ranked rows are records of the run", ranked.every((r) => rows.some((row) => row.filepath === r.filepath)), JSON.stringify(ranked));

  // 3. The record viewer loads a record: its result is the corpus file, as on disk.
  const refresh = rows.find((r) => r.description === "read file: path=src/auth/refresh.ts");
  await page.click(`#pointers tbody tr[data-filepath="${refresh.filepath}"]`);
  await page.waitForFunction((fp) => document.querySelector("#viewer").dataset.filepath === fp, refresh.filepath);
  const shownResult = await page.textContent("#record-result");
  check(
    "the record viewer shows the loaded record: the file's text, byte for byte",
    shownResult === readFileSync(join(www, "corpus", "src", "auth", "refresh.ts"), "utf8"),
    shownResult.slice(0, 200),
  );

  // 4. Backend switch: OPFS → IndexedDB → memory. The same filenames in the table, the same bytes in each store.
  const names = rows.map((r) => r.filename).sort();
  for (const backend of ["indexeddb", "memory"]) {
    await page.click(`#backends button[data-backend=${backend}]`);
    await settled(page);
    const after = await pointerRows(page);
    check(
      `${backend}: the reopened session shows the same ${names.length} records`,
      after.length === names.length && JSON.stringify(after.map((r) => r.filename).sort()) === JSON.stringify(names) && after.every((r) => r.session === sessionId),
      JSON.stringify(after.map((r) => r.filename)),
    );
    check(`${backend}: the switch button is on`, (await page.evaluate(() => document.body.dataset.backend)) === backend);
    const verdict = await page.$eval("#verdict", (v) => ({ ...v.dataset, text: v.textContent }));
    check(`${backend}: the proof panel finds the records byte-identical in every backend holding them`, verdict.identical === "true" && verdict.backends.split(",").includes(backend) && verdict.records === String(names.length), JSON.stringify(verdict));
  }
  const finalOpfs = await hashesInOpfs(page, `${CONTEXT_DIR}/sessions/${sessionId}`);
  const idb = await hashesInIndexedDb(page, `${CONTEXT_DIR}/sessions/${sessionId}/`);
  check(
    "OPFS and IndexedDB hold the same record files with the same SHA-256, all of the run's records",
    JSON.stringify(Object.keys(finalOpfs).sort()) === JSON.stringify(names) && JSON.stringify(finalOpfs) === JSON.stringify(sortKeys(idb)),
    JSON.stringify({ finalOpfs, idb }),
  );
  for (const backend of ["opfs", "indexeddb", "memory"]) {
    const shown = await page.$$eval(`#proof td.hash[data-backend=${backend}]`, (tds) =>
      Object.fromEntries(tds.map((td) => [td.parentElement.dataset.filename, td.dataset.sha256])),
    );
    check(`the proof panel's ${backend} hashes are the SHA-256 of the files read from OPFS directly`, JSON.stringify(sortKeys(shown)) === JSON.stringify(finalOpfs), JSON.stringify(shown));
  }

  // 5. Reload: the page reopens the latest OPFS session, every record back, now all in OPFS.
  await page.reload();
  await page.waitForSelector("body[data-ready='1']");
  const reloaded = await pointerRows(page);
  check(
    "after a reload the OPFS session is resumed with every record, all persisted",
    (await page.evaluate(() => document.body.dataset.backend)) === "opfs" &&
      JSON.stringify(reloaded.map((r) => r.filename).sort()) === JSON.stringify(names) &&
      reloaded.every((r) => r.where === "OPFS" && r.session === sessionId),
    JSON.stringify(reloaded),
  );
  const sessions = await page.$$eval("#sessions tbody tr[data-session]", (trs) => trs.map((tr) => ({ id: tr.dataset.session, records: Number(tr.dataset.records) })));
  check("the sessions list shows the session with its records", sessions.some((s) => s.id === sessionId && s.records === PLAN_LENGTH), JSON.stringify(sessions));

  // Round trip through memory storage and back: OPFS already holds every record, byte for byte.
  for (const backend of ["memory", "opfs"]) {
    await page.click(`#backends button[data-backend=${backend}]`);
    await settled(page);
  }
  const back = await page.$eval("#agent-status", (e) => ({ ...e.dataset, text: e.textContent }));
  const verdict = await page.$eval("#verdict", (v) => ({ ...v.dataset }));
  check(
    "memory → OPFS: every record is already there with the same bytes (none imported), and all three backends hold it",
    back.state === "switched" && back.imported === "0" && back.unchanged === String(PLAN_LENGTH) && verdict.identical === "true" && verdict.backends === "opfs,indexeddb,memory",
    JSON.stringify({ back, verdict }),
  );

  // 6. The window optimiser on the sample conversation.
  if (hasWindowOptimizer) {
    const optimise = async (strategy, minSavings) => {
      await page.selectOption("#window-strategy", strategy);
      await page.fill("#min-savings", String(minSavings));
      await page.click("#optimize");
      await settled(page);
      return {
        ...(await page.$eval("#window-metrics", (e) => ({ ...e.dataset, text: e.textContent }))),
        before: await page.$$eval("#window-before > li", (lis) => lis.length),
        shown: await page.$$eval("#window-after > li", (lis) => lis.length),
        changed: await page.$$eval("#window-after > li.changed", (lis) => lis.map((li) => li.textContent)),
      };
    };
    // A strict minimum: the duplicate pass is not enough, so the middle is truncated too.
    const cut = await optimise("half", 0.9);
    check(
      "with minSavings 0.9 the optimiser also truncates the middle: fewer messages, the range and a notice shown",
      cut.truncated !== "" && Number(cut.messagesAfter) < cut.before && cut.shown === Number(cut.messagesAfter) && Number(cut.tokensAfter) < Number(cut.tokensBefore),
      JSON.stringify(cut),
    );
    // The default 30%: replacing the repeated reads of the sample conversation is enough.
    // It reads login.ts twice, refresh.ts three times, and the sample's auth.md is pasted then read: 4 duplicates.
    const m = await optimise("half", 0.3);
    check(
      "with minSavings 0.3 the 4 repeated reads are replaced (all but the latest of each file), nothing truncated, tokens saved",
      m.truncated === "" && Number(m.messagesAfter) === m.before && Number(m.edits) === 4 && m.changed.length === 4 && Number(m.tokensAfter) < Number(m.tokensBefore),
      JSON.stringify(m),
    );
  } else {
    console.log("skip - window optimiser: optimizeWindow is not exported by this build of toolctx");
  }

  // The screenshot: the reloaded page with a selection and a record open.
  await page.click("#query-form button[type=submit]");
  await settled(page);
  await page.click(`#pointers tbody tr[data-filepath="${refresh.filepath}"]`);
  await page.waitForSelector("#record-result");
  mkdirSync(outDir, { recursive: true });
  await page.screenshot({ path: join(outDir, "playground.png"), fullPage: true });
  console.log(`screenshot: ${join(outDir, "playground.png")}`);

  // 7. Clean-up: every idle session removed, and its record files gone from OPFS.
  await page.selectOption("#older-than", "0");
  await page.click("#cleanup");
  await page.waitForFunction(() => document.querySelector("#cleanup-report").dataset.removed !== undefined);
  const removed = await page.$eval("#cleanup-report", (e) => Number(e.dataset.removed));
  const left = await listOpfs(page, `${CONTEXT_DIR}/sessions/${sessionId}`);
  const sessionRows = await page.$$eval("#sessions tbody tr[data-session]", (trs) => trs.length);
  check("clean-up removes the idle session: its records leave OPFS and the list", removed >= 1 && left.filter((n) => n.endsWith(".json")).length === 0 && sessionRows === 0, JSON.stringify({ removed, left, sessionRows }));

  check("no page errors", errors.length === 0, errors.join("\n"));
  await context.close();
} catch (err) {
  check("playground", false, err.stack);
} finally {
  await browser.close();
  server.close();
}

const failed = results.filter((ok) => !ok).length;
console.log(`playground: ${results.length - failed} passed, ${failed} failed`);
process.exitCode = failed === 0 && results.length > 0 ? 0 : 1;

/** Waits until the page's current action (run, select, switch...) has finished. */
function settled(page) {
  return page.waitForFunction(() => document.body.dataset.busy === undefined);
}

function sortKeys(obj) {
  return Object.fromEntries(Object.entries(obj).sort(([a], [b]) => a.localeCompare(b)));
}

function pointerRows(page) {
  return page.$$eval("#pointers tbody tr[data-filepath]", (trs) =>
    trs.map((tr) => ({
      filepath: tr.dataset.filepath,
      filename: tr.dataset.filename,
      where: tr.dataset.where,
      tool: tr.children[2].textContent,
      description: tr.children[3].textContent,
      bytes: Number(tr.children[4].textContent),
      session: tr.children[6].textContent,
    })),
  );
}

/** Names in an OPFS folder, read with the File System API directly (not through toolctx). */
function listOpfs(page, dir) {
  return page.evaluate(async (dir) => {
    let handle = await navigator.storage.getDirectory();
    try {
      for (const part of dir.split("/")) handle = await handle.getDirectoryHandle(part);
    } catch {
      return [];
    }
    const names = [];
    for await (const name of handle.keys()) names.push(name);
    return names.sort();
  }, dir);
}

async function hashesInOpfs(page, dir) {
  return page.evaluate(async (dir) => {
    let handle = await navigator.storage.getDirectory();
    for (const part of dir.split("/")) handle = await handle.getDirectoryHandle(part);
    const out = {};
    for await (const [name, entry] of handle.entries()) {
      if (entry.kind !== "file" || !name.endsWith(".json") || name.startsWith(".")) continue;
      const bytes = await (await entry.getFile()).arrayBuffer();
      const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
      out[name] = [...digest].map((b) => b.toString(16).padStart(2, "0")).join("");
    }
    return Object.fromEntries(Object.entries(out).sort(([a], [b]) => a.localeCompare(b)));
  }, dir);
}

/** Record files under a prefix of the playground's IndexedDB database, read with the IndexedDB API directly. */
async function hashesInIndexedDb(page, prefix) {
  return page.evaluate(async (prefix) => {
    const db = await new Promise((resolve, reject) => {
      const req = indexedDB.open("toolctx-playground");
      req.onsuccess = () => resolve(req.result);
      req.onerror = () => reject(req.error);
    });
    const store = db.transaction("files").objectStore("files");
    const range = IDBKeyRange.bound(prefix, `${prefix}\uffff`);
    const [keys, values] = await Promise.all(
      [store.getAllKeys(range), store.getAll(range)].map((req) => new Promise((resolve, reject) => {
        req.onsuccess = () => resolve(req.result);
        req.onerror = () => reject(req.error);
      })),
    );
    db.close();
    const out = {};
    for (const [i, key] of keys.entries()) {
      const name = key.slice(prefix.length);
      if (name.includes("/") || !name.endsWith(".json") || name.startsWith(".")) continue;
      const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", values[i]));
      out[name] = [...digest].map((b) => b.toString(16).padStart(2, "0")).join("");
    }
    return out;
  }, prefix);
}
