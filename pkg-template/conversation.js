// The conversation store (SPEC §7) from its own wasm module (toolctx_conversation_bg.wasm),
// instantiated by the first `ConversationStore.open` (lazy.js).
//
// The module decides and this file does the I/O (src/conversation/ops.rs): each method is
// an operation that says what it needs to read (`needs`: reads and listings, answered
// with `fed`), then what to change in order (`plan`: writes, appends, removals; a failure
// told to `failed`, which throws the typed error or, for a taken name, plans again), then
// its answer (`finish`). A sync is a run of steps (`next`): reads, changes, a lock taken or
// released, on the local storage or the remote, each outcome told before the next step.
// Every call into the module is synchronous and goes through the trap guard (extras.js).
// A store's writing operations run one at a time, under the storage's lock on
// `conversations/.lock` (other processes and tabs); its syncs run one at a time.
//
// Answers cross as JSON text, parsed here once the wasm call has returned (a JSON.parse
// inside a wasm call can crash Node 20's V8; see __pointers in src/wasm/manager.rs).
import * as glue from "./toolctx_conversation.js";
import { hold as holdLock } from "./driver.js";
import { disposeWithClose } from "./extras.js";
import { LazyModule } from "./lazy.js";

export const conversationModule = new LazyModule("conversation", glue);
// The module's class (its state: storage, options, what it knows of each conversation)
// is wrapped by the exported one below, whose methods drive its operations.
const { ConversationStore: Core, ConversationOp: Op, ConversationSync: Sync } = glue;
for (const cls of [Core, Op, Sync]) conversationModule.guardClass(cls);
const [openCore, hostsOf, begin, beginSync, lockFailed] = ["__open", "__hosts", "__begin", "__sync", "__lockFailed"]
  .map((name) => conversationModule.guard(name, name === "__open" ? Core.__open : Core.prototype[name]));

const OPEN = Symbol("ConversationStore.open");

function invalid(message) {
  return Object.assign(new Error(`toolctx: ${message}`), { name: "ToolctxError", code: "INVALID_ARGUMENT" });
}

/** `[ok, value]` of a host call (a plain value or a Promise). */
async function settled(call) {
  try {
    return [true, await call()];
  } catch (err) {
    return [false, err];
  }
}

/** The host calls of one change (`plan`'s kinds: 0 write, 1 append, 2 remove, 3 removeDir). */
async function change(host, readOptions, kind, path, bytes, exclusive) {
  switch (kind) {
    case 0:
      return host.write(path, bytes, { exclusive });
    case 1: {
      if (typeof host.append === "function") return host.append(path, bytes);
      // No append: a read and a whole-file write stand in (not atomic across processes).
      const before = await host.read(path, readOptions);
      const old = before === undefined || before === null ? new Uint8Array(0)
        : typeof before === "string" ? new TextEncoder().encode(before) : new Uint8Array(before.buffer ?? before, before.byteOffset ?? 0, before.byteLength);
      const joined = new Uint8Array(old.length + bytes.length);
      joined.set(old);
      joined.set(bytes, old.length);
      return host.write(path, joined, { exclusive: false });
    }
    case 2:
      return host.remove(path);
    default:
      return typeof host.removeDir === "function" ? host.removeDir(path) : undefined;
  }
}

/** `[ok, value, …]` of the reads (0) and listings (1) of `needs` (`[kind, path, …]`), made together. */
async function readAll(host, readOptions, needs) {
  const outcomes = [];
  for (let i = 0; i < needs.length; i += 2) {
    const path = needs[i + 1];
    outcomes.push(settled(() => (needs[i] === 0 ? host.read(path, readOptions) : host.list(path))));
  }
  return (await Promise.all(outcomes)).flat();
}

/** Makes the changes of `plan` in order; the index of the one that failed and why, or undefined. */
async function changeAll(host, readOptions, plan) {
  for (let i = 0; i < plan.length; i += 4) {
    const [ok, err] = await settled(() => change(host, readOptions, plan[i], plan[i + 1], plan[i + 2], plan[i + 3]));
    if (!ok) return [i / 4, err];
  }
  return undefined;
}

/** Runs one operation: its reads, its changes, its answer. */
async function drive(host, readOptions, op) {
  for (let needs = op.needs(); needs.length > 0; needs = op.needs()) {
    op.fed(await readAll(host, readOptions, needs));
  }
  for (;;) {
    const failed = await changeAll(host, readOptions, op.plan());
    if (failed === undefined) {
      const answer = op.finish();
      return answer === undefined ? undefined : JSON.parse(answer);
    }
    op.failed(failed[0], failed[1]); // throws, unless a taken name was drawn again
  }
}

/**
 * Takes `host.lock(name)` (where the host has one) and holds it (driver.js `hold`):
 * resolves to the release, which resolves once the host's lock has settled. Rejects with
 * the host's error when it cannot be taken.
 */
async function hold(host, name) {
  if (typeof host.lock !== "function") return async () => {};
  const lock = holdLock(host, host.lock, name);
  const taken = await lock.held;
  if (!taken.ok) throw taken.error;
  return async () => {
    lock.release();
    const settled = await lock.settled;
    if (!settled.ok) throw settled.error;
  };
}

export class ConversationStore {
  #core;
  /** The store's writing operations (and a sync's locked steps), one after another. */
  #writes = Promise.resolve();
  /** The store's syncs, one after another. */
  #syncs = Promise.resolve();

  /** Not a way to a store: `await ConversationStore.open(options)` is. */
  constructor(token, core) {
    if (token !== OPEN) {
      throw invalid("use `await ConversationStore.open(options)` to open a conversation store; `new ConversationStore()` makes none");
    }
    this.#core = core;
  }

  /** A store over `options.storage` (or the runtime's default), syncing to `options.remote`. */
  static async open(options) {
    await conversationModule.load(); // where the module is fetched (browsers)
    return new ConversationStore(OPEN, openCore(options));
  }

  /** Panics inside the module on purpose (tests of the trap guard). Not part of the API. */
  static __panicForTests(message) {
    return Core.__panicForTests(message);
  }

  /** Waits for the store's earlier writers, then takes the storage's lock `name`: resolves to the release. */
  async #writer(host, name) {
    const before = this.#writes;
    let done;
    this.#writes = new Promise((resolve) => {
      done = resolve;
    });
    await before;
    try {
      const release = await hold(host, name);
      return () => release().finally(done);
    } catch (err) {
      done();
      throw err;
    }
  }

  /** Runs `method` of the store as an operation. */
  async #perform(method, a, b, c) {
    const core = this.#core;
    const op = begin.call(core, method, a, b, c);
    const [host, readOptions, lockName] = hostsOf.call(core);
    if (!op.exclusive()) return drive(host, readOptions, op);
    let release;
    try {
      release = await this.#writer(host, lockName);
    } catch (err) {
      throw lockFailed.call(core, lockName, err);
    }
    let answer;
    try {
      answer = await drive(host, readOptions, op);
    } catch (err) {
      await release().catch(() => {});
      throw err;
    }
    try {
      await release();
    } catch (err) {
      throw lockFailed.call(core, lockName, err);
    }
    return answer;
  }

  /** Pushes the queued changes to the remote and pulls what it has (one sync at a time). */
  async sync() {
    const run = beginSync.call(this.#core);
    const turn = this.#syncs.then(() => this.#sync(run));
    this.#syncs = turn.catch(() => {});
    return turn;
  }

  async #sync(run) {
    const hosts = hostsOf.call(this.#core);
    const releases = [undefined, undefined];
    try {
      for (;;) {
        const step = run.next();
        const side = step[1];
        const host = hosts[3 * side], readOptions = hosts[3 * side + 1], lockName = hosts[3 * side + 2];
        switch (step[0]) {
          case 0:
            run.fed(await readAll(host, readOptions, step[2]));
            break;
          case 1: {
            const failed = await changeAll(host, readOptions, step[2]);
            run.changed(failed === undefined ? -1 : failed[0], failed?.[1]);
            break;
          }
          case 2: {
            const [ok, value] = await settled(() => (side === 0 ? this.#writer(host, lockName) : hold(host, lockName)));
            if (ok) releases[side] = value;
            run.locked(ok, lockName, ok ? undefined : value);
            break;
          }
          case 3: {
            const release = releases[side];
            releases[side] = undefined;
            const [ok, err] = await settled(() => release?.());
            run.locked(ok, lockName, err);
            break;
          }
          default:
            return JSON.parse(step[1]);
        }
      }
    } finally {
      for (const release of releases) release?.().catch(() => {});
    }
  }

  createConversation(init) { return this.#perform("createConversation", init); }
  listConversations() { return this.#perform("listConversations"); }
  getConversation(id) { return this.#perform("getConversation", id); }
  deleteConversation(id) { return this.#perform("deleteConversation", id); }
  appendMessage(id, message) { return this.#perform("appendMessage", id, message); }
  getMessages(id, filter) { return this.#perform("getMessages", id, filter); }
  storeArtifact(id, artifact) { return this.#perform("storeArtifact", id, artifact); }
  appendWithArtifact(id, message, artifact) { return this.#perform("appendWithArtifact", id, message, artifact); }
  getArtifact(id, artifactId) { return this.#perform("getArtifact", id, artifactId); }
  listArtifacts(id) { return this.#perform("listArtifacts", id); }
  resolveArtifacts(id, text) { return this.#perform("resolveArtifacts", id, text); }
  stats(id, options) { return this.#perform("stats", id, options); }
  prune(id, options) { return this.#perform("prune", id, options); }
  export(id, format) { return this.#perform("export", id, format); }
  import(text, options) { return this.#perform("import", text, options); }
  syncStatus() { return this.#perform("syncStatus"); }

  /** Nothing is held open between calls; resolves once earlier writes and syncs are done. */
  async close() {
    await this.#syncs;
    await this.#writes;
  }
}

disposeWithClose(ConversationStore);
