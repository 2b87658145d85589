// base/holder.js: when a lock file's holder is certainly gone (taken over at once) and when
// the lease must decide. A fake `os` plays each platform; a live holder is never judged gone.
import { test } from "node:test";
import assert from "node:assert/strict";

const { holders } = await import(new URL("../../pkg-template/adapters/base/holder.js", import.meta.url));

const error = (code) => Object.assign(new Error(code), { code });
const BOOT = "6f1c1e9a-0000-4000-8000-000000000001";
const NS = "pid:[4026531836]";
const stat = (pid, start) => `${pid} (node) S 1 ${pid} ${pid} 0 -1 4194560 ${Array.from({ length: 12 }, () => "0").join(" ")} ${start} 0`;

/** An os whose /proc holds `processes` (pid → start), `files` beside them, and the given kill probe. */
function fakeOs({ processes = { 100: "500" }, files = {}, refused = false, signalZero, host = "box", linux = true } = {}) {
  const all = linux ? { "/proc/sys/kernel/random/boot_id": `${BOOT}\n`, "/proc/self/mounts": "proc /proc proc rw,nosuid 0 0\n", ...files } : files;
  return {
    hostname: () => host,
    pid: 100,
    readText(path) {
      const m = /^\/proc\/(\d+)\/stat$/.exec(path);
      if (m) {
        if (!linux) throw error("ENOENT");
        if (refused && m[1] !== "100") throw error("EACCES");
        if (processes[m[1]] === undefined) throw error("ENOENT");
        return stat(m[1], processes[m[1]]);
      }
      if (all[path] === undefined) throw error("ENOENT");
      return all[path];
    },
    readLink: (path) => {
      if (linux && path === "/proc/self/ns/pid") return NS;
      throw error("ENOENT");
    },
    signalZero,
  };
}
const holder = (over = {}) => ({ host: "box", pid: 200, start: "900", boot: BOOT, ns: NS, ...over });

test("holder: a process of this machine that ended is gone; one that runs, or runs since another time, is told apart", () => {
  assert.equal(holders(fakeOs()).gone(holder()), true, "no /proc entry, /proc shows every process");
  assert.equal(holders(fakeOs({ processes: { 100: "500", 200: "900" } })).gone(holder()), false, "it runs");
  assert.equal(holders(fakeOs({ processes: { 100: "500", 200: "901" } })).gone(holder()), true, "its pid was used again");
  assert.equal(holders(fakeOs({ signalZero: () => false })).gone(holder()), true, "kill(pid, 0): ESRCH");
});

test("holder: anything uncertain is left to the lease, never taken from a live holder", () => {
  // Another machine, boot or pid namespace.
  assert.equal(holders(fakeOs()).gone(holder({ host: "other" })), false);
  assert.equal(holders(fakeOs()).gone(holder({ boot: "another boot" })), false);
  assert.equal(holders(fakeOs()).gone(holder({ ns: "pid:[1]" })), false);
  // No boot id (macOS): two machines may share a host name on one network volume.
  assert.equal(holders(fakeOs({ linux: false, signalZero: () => false })).gone(holder({ boot: undefined, ns: undefined })), false);
  // /proc refuses the read, and no kill probe (Deno without --allow-run).
  assert.equal(holders(fakeOs({ refused: true })).gone(holder()), false);
  // /proc hides other users' processes (hidepid): a missing entry says nothing.
  const hidden = fakeOs({ files: { "/proc/self/mounts": "proc /proc proc rw,hidepid=2 0 0\n" } });
  assert.equal(holders(hidden).gone(holder()), false);
  assert.equal(holders(fakeOs({ files: { "/proc/self/mounts": "proc /proc proc rw,hidepid=invisible 0 0\n" } })).gone(holder()), false);
  // kill(pid, 0) says it exists (EPERM: another user's).
  assert.equal(holders({ ...hidden, signalZero: () => true }).gone(holder()), false);
  // A holder record that is not one.
  for (const bad of [null, "x", { pid: -1 }, { pid: 1.5 }, {}]) assert.equal(holders(fakeOs()).gone(bad), false);
});
