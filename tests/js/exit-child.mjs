// A process that ends while the store's background index work holds a lock, for
// runOpenAfterExitTests (exit.mjs). Runs under Node, Bun and Deno:
//
//   <runtime> tests/js/exit-child.mjs MODE ADAPTER DIR SESSION
//
// It opens DIR (SESSION "none": outside a session; "new": a new session), saves 300
// records (past the 256 that make a background index segment due), and stalls the
// segment's write for ever, so the background work keeps its lock (.index/merge.lock, or
// the session's lock). Once the lock is held it prints "held <session id>" and ends, by
// MODE:
//   kill   waits to be killed (the parent sends SIGKILL)
//   exit   process.exit(0) / Deno.exit(0), every save having resolved
//   throw  an uncaught exception
//   close  nothing stalls: closes the manager and prints "held" once closed (the baseline)

import { ContextManager } from "toolctx";

const [mode, adapter, dir, session] = globalThis.Deno?.args ?? process.argv.slice(2);

async function makeStorage() {
  if (adapter === "deno") return (await import("toolctx/deno")).denoStorage();
  if (adapter === "bun") return (await import("toolctx/bun")).bunStorage();
  return (await import("toolctx/node")).nodeStorage();
}

const say = (line) => (globalThis.Deno ? Deno.stdout.writeSync(new TextEncoder().encode(`${line}\n`)) : process.stdout.write(`${line}\n`));
const exit = (code) => (globalThis.Deno ? Deno.exit(code) : process.exit(code));

const storage = await makeStorage();
let manager;
let stalled = false;
const host = {
  ...storage,
  write(path, data, options) {
    if (mode === "close" || !path.includes("/.index/")) return storage.write(path, data, options);
    // The background segment write, under its lock: it never finishes.
    if (!stalled) {
      stalled = true;
      setTimeout(end, 0);
    }
    return new Promise(() => {});
  },
};

function end() {
  say(`held ${manager?.sessionId ?? ""}`);
  if (mode === "exit") exit(0);
  if (mode === "throw") throw new Error("the child throws while its background index work holds a lock");
  setInterval(() => {}, 1000); // kill: until killed
}

manager = await ContextManager.open({ contextDir: dir, fileSystem: host, persistThreshold: 0, session: session === "new" ? true : undefined });
for (let i = 0; i < 300; i++) await manager.saveContext("grep", { pattern: `p${i}` }, `line ${i}\n`.repeat(3));
if (mode === "close") {
  await manager.close();
  say(`held ${manager.sessionId ?? ""}`);
}
