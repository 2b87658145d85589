// Hostile names and paths (SPEC §3, §4, §5): hundreds of escape attempts through every
// entry point that takes a name or a path, on the real file system. Nothing may be
// written outside the store, and nothing outside it may be read.

import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { ContextManager } from "toolctx";

const BASE = [
  "..", "../", "../..", "../../etc/passwd", "/etc/passwd", "/", "//", "///x", ".", "", " ", "\n",
  "a/../../b", "x/..", "./../x", "~/.ssh/id_rsa", "C:\\Windows\\win.ini", "C:/Windows/win.ini", "c:x",
  "\\\\server\\share\\x", "..\\..\\x", "a\\..\\..\\b", "a\0b", "\0", "%2e%2e%2f", "..%2F..%2F", "%00",
  "\uFF0E\uFF0E\uFF0F", "\u2024\u2024/", "\u2215etc\u2215passwd", "\u2044..\u2044", "\uFE52\uFE52/",
  "\u202e..", "file:///etc/passwd", "CON", "NUL", "com1", "a".repeat(300), "sessions/../..", "\ud800",
];
const VARIANTS = (s) => [s, `${s}/x.json`, `x/${s}`];

function filesUnder(dir) {
  const out = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...filesUnder(full));
    else out.push(full);
  }
  return out;
}

test("no escape from the store through any name or path (hundreds of attempts)", async () => {
  const top = mkdtempSync(join(tmpdir(), "toolctx-escape-"));
  const store = join(top, "store");
  const secretText = JSON.stringify({ v: 1, toolName: "secret", toolDescription: "SECRET", args: {}, timestamp: "2025-01-01T00:00:00.000Z", result: "SECRET" });
  writeFileSync(join(top, "secret.json"), secretText);
  mkdirSync(join(top, "outside"));
  writeFileSync(join(top, "outside", "t_000000000000_1700000000000_0_aaaa.json"), secretText);
  const before = new Set(filesUnder(top));
  let attempts = 0;
  const reads = [];
  const debug = [];
  try {
    const m = await ContextManager.open({ contextDir: store, session: true, persistThreshold: 0, onDebug: (msg) => debug.push(msg) });
    const flat = new ContextManager({ contextDir: store, persistThreshold: 0 });
    // A folder link planted inside the store.
    mkdirSync(store, { recursive: true });
    symlinkSync(join(top, "outside"), join(store, "linked"));
    for (const base of BASE) {
      for (const s of VARIANTS(base)) {
        // tool names: sanitised into the file name
        attempts++;
        await flat.saveContext(s, { s }, "r").catch(() => {});
        // categories: refused unless plain
        attempts++;
        await m.saveContext("t", {}, "r", { category: s }).catch(() => {});
        // session ids: refused unless YYYYMMDD-HHMMSS-xxxx
        attempts++;
        await ContextManager.open({ contextDir: store, session: s }).catch(() => {});
        // load paths: absolute, relative, and hanging off the store
        for (const p of [s, `${store}/${s}`, `${store}/sessions/${s}`, `${store}/linked/${s}`]) {
          attempts++;
          reads.push(...(await flat.loadContexts([p])));
        }
        // import: file names in JSON Lines
        attempts++;
        const line = JSON.stringify({ filename: s, record: JSON.parse(secretText) });
        await ContextManager.importRecords({ contextDir: store }, line).catch(() => {});
      }
    }
    // A manifest that lists paths outside its session is not trusted.
    const evil = { session_id: m.sessionId, created_at: "x", last_activity: "2000-01-01T00:00:00Z", context_files: { "../../../secret.json": {}, "../../outside/t_000000000000_1700000000000_0_aaaa.json": {} } };
    writeFileSync(join(store, "sessions", m.sessionId, ".manifest.json"), JSON.stringify(evil));
    attempts++;
    const resumed = await ContextManager.open({ contextDir: store, session: m.sessionId });
    reads.push(...(await resumed.loadContexts(resumed.getAllPointers().map((p) => p.filepath))));
    attempts++;
    await resumed.endSession();
    attempts++;
    await ContextManager.cleanupStaleSessions({ contextDir: store, olderThanMs: 0 });
    attempts++;
    await ContextManager.purge({ contextDir: store });
    attempts++;
    reads.push(...(await flat.loadContexts([`${store}/linked/t_000000000000_1700000000000_0_aaaa.json`])));

    const created = filesUnder(top).filter((f) => !before.has(f));
    const escapes = created.filter((f) => !f.startsWith(`${store}/`));
    const leaked = reads.filter((r) => JSON.stringify(r).includes("SECRET"));
    console.log(`escape: ${attempts} attempts, ${escapes.length + leaked.length} escapes`);
    assert.ok(attempts >= 200, `${attempts} attempts`);
    assert.deepEqual(escapes, [], "files written outside the store");
    assert.equal(leaked.length, 0, "a file outside the store was read");
    assert.ok(statSync(join(top, "secret.json")).isFile(), "the file outside is untouched");
    assert.ok(statSync(join(top, "outside", "t_000000000000_1700000000000_0_aaaa.json")).isFile(), "the linked folder's file is untouched");
  } finally {
    rmSync(top, { recursive: true, force: true });
  }
});
