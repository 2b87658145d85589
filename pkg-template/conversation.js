// The conversation store (SPEC §7) from its own wasm module (toolctx_conversation_bg.wasm),
// instantiated by the first `ConversationStore.open` (lazy.js).
//
// The module decides and this file does the I/O (src/conversation/ops.rs): each method is
// an operation that says what it needs to read (`needs`: reads and listings, answered
// with `fed`), then what to change in order (`plan`: writes, appends, removals; a failure
// told to `failed`, which throws the typed error or, for a taken name, plans again), then
// its answer (`finish`). Every call into the module is synchronous and goes through the
// trap guard (extras.js). A store's writing operations run one at a time, under the
// storage's lock on `conversations/.lock` (other processes and tabs).
//
// Answers cross as JSON text, parsed here once the wasm call has returned (a JSON.parse
// inside a wasm call can crash Node 20's V8; see __pointers in src/wasm/manager.rs).
import * as glue from "./toolctx_conversation.js";
import { disposeWithClose } from "./extras.js";
import { LazyModule } from "./lazy.js";

export const conversationModule = new LazyModule("conversation", glue);
// The module's class (its state: storage, options, what it knows of each conversation)
// is wrapped by the exported one below, whose methods drive its operations.
const { ConversationStore: Core, ConversationOp: Op } = glue;
conversationModule.guardClass(Core);
conversationModule.guardClass(Op);
const [openCore, local, begin, lockFailed] = ["__open", "__local", "__begin", "__lockFailed"].map((name) =>
  conversationModule.guard(name, name === "__open" ? Core.__open : Core.prototype[name]));

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

/** Runs one operation: its reads, its changes, its answer. */
async function drive(host, readOptions, op) {
  for (let needs = op.needs(); needs.length > 0; needs = op.needs()) {
    const outcomes = await Promise.all(
      needs.map((value, i) => (i % 2 === 0 ? undefined
        : settled(() => (needs[i - 1] === 0 ? host.read(value, readOptions) : host.list(value))))),
    );
    op.fed(outcomes.flatMap((outcome) => outcome ?? []));
  }
  for (;;) {
    const plan = op.plan();
    let failed;
    for (let i = 0; i < plan.length && failed === undefined; i += 4) {
      const [ok, err] = await settled(() => change(host, readOptions, plan[i], plan[i + 1], plan[i + 2], plan[i + 3]));
      if (!ok) failed = [i / 4, err];
    }
    if (failed === undefined) {
      const answer = op.finish();
      return answer === undefined ? undefined : JSON.parse(answer);
    }
    op.failed(failed[0], failed[1]); // throws, unless a taken name was drawn again
  }
}

export class ConversationStore {
  #core;
  /** The store's writing operations, one after another. */
  #writes = Promise.resolve();

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

  /** Runs `method` of the store as an operation. */
  async #perform(method, a, b, c) {
    const core = this.#core;
    const op = begin.call(core, method, a, b, c);
    const [host, readOptions, lockName] = local.call(core);
    if (!op.exclusive()) return drive(host, readOptions, op);
    const turn = this.#writes.then(() => locked(core, host, lockName, () => drive(host, readOptions, op)));
    this.#writes = turn.catch(() => {});
    return turn;
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

  /** Pushes the queued changes to the remote and pulls what it has. */
  async sync() {
    return JSON.parse(await this.#core.sync());
  }

  /** Nothing is held open between calls; resolves once earlier calls are done. */
  async close() {
    await this.#writes;
    await this.#core.close();
  }
}

/** `work()` holding the storage's lock `name` (a host without `lock()` runs it as it is). */
async function locked(core, host, name, work) {
  if (typeof host.lock !== "function") return work();
  let outcome;
  try {
    await host.lock(name, async () => {
      outcome = await settled(work);
    });
  } catch (err) {
    throw lockFailed.call(core, name, err);
  }
  if (outcome === undefined) {
    throw lockFailed.call(core, name, new Error("storage lock() returned without running its callback"));
  }
  if (!outcome[0]) throw outcome[1];
  return outcome[1];
}

disposeWithClose(ConversationStore);
