// The conversation store (SPEC §7) from its own wasm module (toolctx_conversation_bg.wasm),
// instantiated by the first `ConversationStore.open` (module.js).
//
// The module decides and the driver does the I/O (crates/wasm/src/conversation.rs): each method
// is a plan of the module (crates/core/src/conversation/ops.rs) whose steps (docs/protocol.md) take
// the local writers' lock when it writes, read what it needs, make its changes one after
// the other and end with its answer; a sync is a plan too (crates/core/src/conversation/sync/plan.rs),
// whose steps run on the local storage or the remote. The module's driver runs them
// (driver.js `plan`, which calls the module's `__planStep`). Every call into the module is
// synchronous; a trap is INTERNAL (module.js). A store's writing operations run one at a
// time, under the storage's lock on `conversations/.lock` (other processes and tabs) taken
// in this process's turn at it; its syncs run one at a time.
//
// Answers cross as JSON text, which the driver parses once the wasm call has returned (a
// JSON.parse inside a wasm call can crash Node 20's V8; see `pointers` in crates/wasm/src/manager/select.rs).
import * as glue from "./toolctx_conversation.js";
import { toolctxError } from "./errors.js";
import { OPERATION } from "./protocol.js";
import { WasmModule, disposeWithClose } from "./module.js";

export const conversationModule = new WasmModule("conversation", glue);
// The module's class (its state: storage, options, what it knows of each conversation) is
// held by the exported one below, whose methods run its operations: `perform({kind, ...})`
// gives an operation's first step (its kind and named arguments: protocol.js OPERATION),
// `__sync` a sync's.
const { ConversationStore: Core } = glue;

const OPEN = Symbol("ConversationStore.open");

function invalid(message) {
  return toolctxError("INVALID_ARGUMENT", `toolctx: ${message}`);
}

export class ConversationStore {
  /** The module's store (the generated class's instance): never handed out. */
  #core;
  /** The module's generation when the store was made (module.js). */
  #generation;
  /** The store's operations in flight (close() waits for them). */
  #inFlight = new Set();
  /** The store's syncs, one after another. */
  #syncs = Promise.resolve();

  /** Not a way to a store: `await ConversationStore.open(options)` is. */
  constructor(token, core) {
    if (token !== OPEN) {
      throw invalid("use `await ConversationStore.open(options)` to open a conversation store; `new ConversationStore()` makes none");
    }
    this.#core = core;
    this.#generation = conversationModule.generation;
  }

  /** The module's store, if it is of the current instance; INTERNAL if a trap lost it. */
  #live() {
    if (this.#generation !== conversationModule.generation) throw conversationModule.stale("conversation store");
    return this.#core;
  }

  /** A store over `options.storage` (or the runtime's default), syncing to `options.remote`. */
  static async open(options) {
    await conversationModule.load(); // where the module is fetched (browsers)
    let core;
    try {
      core = Core.__open(options);
    } catch (err) {
      throw conversationModule.error(err);
    }
    return new ConversationStore(OPEN, core);
  }

  /** Panics inside the module on purpose (tests of the trap handling). Not part of the API. */
  static __panicForTests(message) {
    conversationModule.ready();
    try {
      return Core.__panicForTests(message);
    } catch (err) {
      throw conversationModule.error(err);
    }
  }

  /** `promise`, noted as in flight until it settles. */
  #track(promise) {
    this.#inFlight.add(promise);
    const done = () => this.#inFlight.delete(promise);
    promise.then(done, done);
    return promise;
  }

  /** Runs the operation `op` (`{kind, ...}`, protocol.js OPERATION): its plan, from its first step. */
  #perform(op) {
    let step;
    try {
      step = this.#live().perform(op);
    } catch (err) {
      return Promise.reject(conversationModule.error(err));
    }
    return this.#track(conversationModule.driver.plan(step));
  }

  /** Pushes the queued changes to the remote and pulls what it has (one sync at a time). */
  async sync() {
    let step;
    try {
      step = this.#live().__sync();
    } catch (err) {
      throw conversationModule.error(err);
    }
    const turn = this.#syncs.then(() => conversationModule.driver.plan(step));
    this.#syncs = turn.catch(() => {});
    return turn;
  }

  createConversation(init) { return this.#perform({ kind: OPERATION.CREATE_CONVERSATION, init }); }
  listConversations() { return this.#perform({ kind: OPERATION.LIST_CONVERSATIONS }); }
  getConversation(id) { return this.#perform({ kind: OPERATION.GET_CONVERSATION, id }); }
  deleteConversation(id) { return this.#perform({ kind: OPERATION.DELETE_CONVERSATION, id }); }
  appendMessage(id, message) { return this.#perform({ kind: OPERATION.APPEND_MESSAGE, id, message }); }
  getMessages(id, filter) { return this.#perform({ kind: OPERATION.GET_MESSAGES, id, filter }); }
  storeArtifact(id, artifact) { return this.#perform({ kind: OPERATION.STORE_ARTIFACT, id, artifact }); }
  appendWithArtifact(id, message, artifact) { return this.#perform({ kind: OPERATION.APPEND_WITH_ARTIFACT, id, message, artifact }); }
  getArtifact(id, artifactId) { return this.#perform({ kind: OPERATION.GET_ARTIFACT, id, artifactId }); }
  listArtifacts(id) { return this.#perform({ kind: OPERATION.LIST_ARTIFACTS, id }); }
  resolveArtifacts(id, text) { return this.#perform({ kind: OPERATION.RESOLVE_ARTIFACTS, id, text }); }
  stats(id, options) { return this.#perform({ kind: OPERATION.STATS, id, options }); }
  prune(id, options) { return this.#perform({ kind: OPERATION.PRUNE, id, options }); }
  export(id, format) { return this.#perform({ kind: OPERATION.EXPORT, id, format }); }
  import(text, options) { return this.#perform({ kind: OPERATION.IMPORT, text, options }); }
  syncStatus() { return this.#perform({ kind: OPERATION.SYNC_STATUS }); }

  /** Nothing is held open between calls; resolves once earlier operations and syncs are done. */
  async close() {
    await this.#syncs;
    await Promise.allSettled([...this.#inFlight]);
  }
}

disposeWithClose(ConversationStore);
