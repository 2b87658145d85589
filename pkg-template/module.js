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
// point says how its runtime gets a module: where it has the bytes or the compiled
// WebAssembly.Module at hand (Node, Deno, Bun, edge runtimes), a function returning them
// (`provide`), which the first call instantiates synchronously; in browsers and workers,
// `fetchWasm()`: the first async call (such as `ConversationStore.open`) fetches the .wasm
// beside the module's glue. The core is instantiated by the entry point itself (in browsers,
// through `atImport`); in browsers the core and window modules are fetched while the import
// resolves, where a program uses them (api-core.js, api-window.js, index.js).
import { createDriver } from "./driver.js";
import { internal, onFailInFlight } from "./host.js";

/**
 * The loads a program awaits while it imports toolctx where the runtime fetches the wasm:
 * api-core.js and api-window.js each add their module's as they are evaluated (a bundler
 * keeps each file only where its exports are used), and index.js starts them together and
 * awaits them, so the modules a program uses are fetched side by side.
 */
export const atImport = [];

let fetching = false;

/** The runtime fetches each module's .wasm from beside its glue, at the module's first load (browsers, workers). */
export function fetchWasm() {
  fetching = true;
}

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

  /** Where the module comes from: `() => bytes | WebAssembly.Module`. */
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

  /** Instantiates the module, fetching it first where the runtime fetches the wasm. */
  async load() {
    if (!this.#loaded && this.#source === undefined && fetching) {
      await this.#glue.default(); // the glue's own URL: its .wasm beside it
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
