#!/usr/bin/env node
// open() of a store after the previous process ended without closing it (SPEC §4 "Locks
// are never waited out", issue 33 item 5), against open() after a clean close(), in Node,
// Deno and Bun. The previous process (tests/js/exit-child.mjs) saves 300 records and
// ends while its background index work holds a lock (.index/merge.lock outside a
// session, sessions/<id>.lock in one): killed (SIGKILL), process.exit(0) once every save
// resolved, or an uncaught exception; the baseline closes. Then this process times
// ContextManager.open() of the same store with the runtime's adapter (a lock left behind
// used to be waited out: its 30 s lease). Reported: the median open() in ms, and its
// difference from the clean close's (the target: under 1000 ms).
//   node bench/open-after-exit.mjs [runs]          (each runtime found on PATH)
//   <runtime> bench/open-after-exit.mjs --one <node|deno|bun> [runs]
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { fileURLToPath } from "node:url";

const self = fileURLToPath(import.meta.url);
const child = fileURLToPath(new URL("../tests/js/exit-child.mjs", import.meta.url));
const args = globalThis.Deno?.args ?? process.argv.slice(2);
const MODES = ["close", "kill", "exit", "throw"];
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** The command line that runs `script` in runtime `rt` (this one's executable for its own). */
function command(rt, script, rest) {
  const exe = rt === "deno" || rt === "bun" ? rt : "node";
  const own = process.execPath;
  const bin = (rt === "deno" && globalThis.Deno) || (rt === "bun" && process.versions.bun) || (rt === "node" && !globalThis.Deno && !process.versions.bun) ? own : exe;
  return [bin, rt === "deno" ? ["run", "-A", script, ...rest] : [script, ...rest]];
}

async function one(rt, runs) {
  const { ContextManager } = await import("toolctx");
  const adapter = await import(`toolctx/${rt}`);
  const storage = () => (rt === "deno" ? adapter.denoStorage() : rt === "bun" ? adapter.bunStorage() : adapter.nodeStorage());
  const top = mkdtempSync(`${tmpdir()}/toolctx-exit-bench-`);
  const out = {};
  let n = 0;
  try {
    for (const session of ["none", "new"]) {
      for (const mode of MODES) {
        const times = [];
        for (let r = 0; r < runs; r++) {
          const dir = `${top}/s-${n++}`;
          const [bin, argv] = command(rt, child, [mode, rt, dir, session]);
          const proc = spawn(bin, argv, { stdio: ["ignore", "pipe", "ignore"] });
          let text = "";
          const held = new Promise((resolve, reject) => {
            proc.stdout.on("data", (chunk) => {
              text += chunk;
              const line = text.split("\n").find((l) => l.startsWith("held"));
              if (line !== undefined) resolve(line.slice(5).trim() || undefined);
            });
            proc.on("close", () => reject(new Error(`${mode} child ended without holding: ${text}`)));
          });
          const exited = new Promise((resolve) => proc.on("close", resolve));
          const id = await held;
          if (mode === "kill") proc.kill("SIGKILL");
          await exited;
          const t0 = performance.now();
          const m = await ContextManager.open({ contextDir: dir, fileSystem: storage(), session: id });
          times.push(performance.now() - t0);
          if (m.size !== 300) throw new Error(`${mode}: ${m.size} records`);
          await m.close();
        }
        out[`${session}/${mode}`] = median(times);
      }
    }
  } finally {
    rmSync(top, { recursive: true, force: true });
  }
  return out;
}

if (args[0] === "--one") {
  const result = await one(args[1], Number(args[2] ?? 3));
  console.log(JSON.stringify(result));
} else {
  const runs = Number(args[0] ?? 3);
  console.log(`open() after the previous process ended, median of ${runs} runs, ms (difference from after a clean close)`);
  console.log(["runtime", "where", ...MODES].join("\t"));
  for (const rt of ["node", "deno", "bun"]) {
    const [bin, argv] = command(rt, self, ["--one", rt, String(runs)]);
    const res = spawnSync(bin, argv, { encoding: "utf8" });
    if (res.status !== 0) {
      console.log(`${rt}\t(not run: ${(res.error?.message ?? res.stderr).trim().split("\n")[0]})`);
      continue;
    }
    const r = JSON.parse(res.stdout.trim().split("\n").pop());
    for (const session of ["none", "new"]) {
      const base = r[`${session}/close`];
      const cells = MODES.map((m) => (m === "close" ? base.toFixed(1) : `${r[`${session}/${m}`].toFixed(1)} (${(r[`${session}/${m}`] - base) >= 0 ? "+" : ""}${(r[`${session}/${m}`] - base).toFixed(1)})`));
      console.log([rt, session === "none" ? "contextDir" : "session", ...cells].join("\t"));
    }
  }
}
