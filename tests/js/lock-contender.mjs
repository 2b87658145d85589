// One process contending for a lock file, for runLockTests (conformance.mjs). Runs under
// Node, Bun and Deno, with the adapter named on the command line:
//
//   <runtime> tests/js/lock-contender.mjs ROLE ADAPTER LOCK DIR STALE_MS [N]
//
// ROLE:
//   count N   N times, under the lock: read DIR/counter, wait a little, write it + 1
//   plant N   N times, when the lock is free: leave an abandoned lock file an hour old
//             (what a holder that crashed long ago leaves behind); a + in DIR/planted each
//   hold N    take the lock and keep it N ms (the adapter refreshes it meanwhile)
//   enter     take the lock once and write the time of entry to DIR/entered.<pid>
//   crash     take the lock, write the time to DIR/held, then wait to be killed
//   exit      take the lock, write DIR/held, then process.exit(0) (Deno.exit(0)) holding it
//   throw     take the lock, write DIR/held, then end by an uncaught exception holding it
//
// Every holder creates DIR/inside exclusively on entry and removes it on exit: a holder
// that finds it already there is a second holder at once, and says so in DIR/overlaps.
// Exit code 0: done; 3: the lock call rejected (its code is printed).

import { appendFile, open, readFile, unlink, utimes, writeFile } from "node:fs/promises";

const [role, adapter, lock, dir, staleText, countText] = (globalThis.Deno?.args ?? process.argv.slice(2));
const lockStaleMs = Number(staleText);
const n = Number(countText ?? 1);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const pid = globalThis.Deno?.pid ?? process.pid;

async function makeStorage() {
  if (adapter === "deno") return (await import("toolctx/deno")).denoStorage({ lockStaleMs });
  if (adapter === "bun") return (await import("toolctx/bun")).bunStorage({ lockStaleMs });
  return (await import("toolctx/node")).nodeStorage({ lockStaleMs });
}

async function enterCritical() {
  try {
    await (await open(`${dir}/inside`, "wx")).close();
  } catch (err) {
    if (err?.code !== "EEXIST") throw err;
    await appendFile(`${dir}/overlaps`, `${role} ${pid} entered while another holder was inside\n`);
  }
}

async function leaveCritical() {
  await unlink(`${dir}/inside`).catch(() => {});
}

async function main() {
  const storage = await makeStorage();
  const held = (fn) =>
    storage.lock(lock, async () => {
      await enterCritical();
      try {
        return await fn();
      } finally {
        await leaveCritical();
      }
    });
  if (role === "count") {
    for (let i = 0; i < n; i++) {
      await held(async () => {
        const value = Number(await readFile(`${dir}/counter`, "utf8"));
        await sleep(Math.random() * 4);
        await writeFile(`${dir}/counter`, String(value + 1));
      });
    }
  } else if (role === "plant") {
    const past = new Date(Date.now() - 3_600_000);
    for (let planted = 0; planted < n; ) {
      try {
        await writeFile(lock, `0 planted-${pid}-${planted}`, { flag: "wx" });
        await utimes(lock, past, past);
        await appendFile(`${dir}/planted`, "+");
        planted++;
        await sleep(2 + Math.random() * 4);
      } catch (err) {
        if (err?.code !== "EEXIST") throw err;
        await sleep(1);
      }
    }
  } else if (role === "hold") {
    await held(() => sleep(n));
  } else if (role === "enter") {
    await held(() => writeFile(`${dir}/entered.${pid}`, String(Date.now())));
  } else if (role === "crash") {
    await storage.lock(lock, async () => {
      await writeFile(`${dir}/held`, String(Date.now()));
      await new Promise(() => setInterval(() => {}, 1000)); // until killed
    });
  } else if (role === "exit" || role === "throw") {
    let thrown;
    const throws = new Promise((_, reject) => (thrown = reject));
    storage.lock(lock, async () => {
      await writeFile(`${dir}/held`, String(Date.now()));
      if (role === "throw") thrown(new Error("the holder throws"));
      else setTimeout(() => (globalThis.Deno ? Deno.exit(0) : process.exit(0)), 0);
      await new Promise(() => {}); // until it ends
    });
    await throws; // throw: out of the top level, uncaught (Bun goes on after an exception in a timer)
  } else {
    throw new Error(`unknown role ${role}`);
  }
}

try {
  await main();
} catch (err) {
  if (role === "throw") throw err; // uncaught: the process ends by it
  console.error(`lock-contender ${role} ${pid}: ${err?.code ?? ""} ${err?.message ?? err}`);
  if (globalThis.Deno) Deno.exit(3);
  process.exit(3);
}
