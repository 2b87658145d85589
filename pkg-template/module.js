// A wasm module of the package (the core, the conversation store, the window optimiser):
// its wasm-bindgen glue, where its bytes come from, the driver of its operations
// (driver.js), and its generation, how many times it trapped.
//
// The public classes (context-manager.js, conversation.js, window.js) are written here in
// the package: each holds the handle the glue made (an instance of the module's class,
// never handed out) and the module's generation when it was made. Traps (SPEC §9): a
// panic calls the module's panic hook, which schedules a fresh instance for the next call
// and calls `onTrap` (host.js): that fails the module's operations in flight (`#trapped`
// below: the driver's `fail`), counts the trap here, and throws the INTERNAL error through
// the call that panicked, whatever it is (a constructor too). A handle from before the trap
// belongs to the instance that trapped: its object's calls fail with INTERNAL (`stale`),
// checked by generation before the handle is used, so it never reaches the fresh instance.
// (Its persisted records remain: open the session or store again.)
//
// The conversation and window modules are instantiated on first use, so that
// `import { ContextManager } from "toolctx"` instantiates the core module only. Each entry
// point says where a module comes from (`provide`): a function returning its bytes or its
// compiled WebAssembly.Module, instantiated synchronously by the first call (Node, Deno,
// Bun, edge runtimes); or its URL, fetched by the first async call such as
// `ConversationStore.open` (browsers). The core is instantiated by the entry point itself;
// in browsers, browser-core.js and browser-window.js fetch the core and window modules while
// the import resolves, where a page uses them (index.js).
import { createDriver } from "./driver.js";
import { internal, onFailInFlight } from "./host.js";

export class WasmModule {
  #glue;
  #source;
  #loaded;
  #generation = 0;

  /**
   * `name`: "core", "conversation" or "window" (what the panic hook tells `onTrap`);
   * `glue`: the module's wasm-bindgen JS; `loaded`: the entry point instantiates it.
   */
  constructor(name, glue, loaded = false) {
    this.name = name;
    this.#glue = glue;
    this.#loaded = loaded;
    /** The driver of the module's operations (driver.js): a trap fails those in flight. */
    this.driver = createDriver(glue, asInternal);
    onFailInFlight(name, (error) => {
      this.#generation++;
      return this.driver.fail(error);
    });
  }

  /** How many times the module trapped: a handle made at another generation is stale. */
  get generation() {
    return this.#generation;
  }

  /** Where the module comes from: `() => bytes | WebAssembly.Module`, or a URL. */
  provide(source) {
    this.#source = source;
  }

  /** Instantiates the module now, if it is not yet. */
  ready() {
    if (!this.#loaded) {
      if (typeof this.#source !== "function") {
        throw internal(undefined, `the ${this.name} module is not loaded yet`);
      }
      this.#glue.initSync({ module: this.#source() });
      this.#loaded = true;
    }
  }

  /** Instantiates the module, fetching it first where it comes from a URL. */
  async load() {
    if (!this.#loaded && typeof this.#source !== "function" && this.#source !== undefined) {
      await this.#glue.default({ module_or_path: this.#source });
      this.#loaded = true;
    }
    this.ready();
  }

  /**
   * The error a caller sees for `err`, thrown by a call into the module: the module's own
   * errors (coded where they are made) and a panic's INTERNAL as they are; a trap of
   * another kind (a stack overflow, say: the engine's RuntimeError) fails the operations
   * in flight and becomes INTERNAL.
   */
  error(err) {
    return err instanceof WebAssembly.RuntimeError ? this.driver.fail(err) : err;
  }

  /** The error of a call on an object made before the module's last trap. */
  stale(what) {
    return internal(undefined, `this ${what}'s state was lost when the ${this.name} module was re-instantiated after a trap`);
  }
}

/** A trap as the INTERNAL error every operation in flight rejects with. */
function asInternal(err) {
  return err?.code !== undefined ? err : internal(err, err?.message ?? String(err));
}

/** `await using`: `Symbol.asyncDispose` closes (where the runtime has the symbol). */
export function disposeWithClose(cls) {
  if (typeof Symbol.asyncDispose === "symbol" && !Object.hasOwn(cls.prototype, Symbol.asyncDispose)) {
    Object.defineProperty(cls.prototype, Symbol.asyncDispose, {
      value() {
        return this.close();
      },
      writable: true,
      configurable: true,
    });
  }
}
