// The conversation store and the window optimiser are wasm modules of their own
// (toolctx_conversation_bg.wasm, toolctx_window_bg.wasm), instantiated on first use, so
// `import { ContextManager } from "toolctx"` instantiates the core module only.
//
// Each entry point says where a module comes from (`provide`): a function returning its
// bytes or its compiled WebAssembly.Module, instantiated synchronously by the first call
// (Node, Deno, Bun, edge runtimes); or its URL, fetched by the first async call such as
// `ConversationStore.open` (browsers). A module's host defaults come from host.js, as the
// core's do, and its exports go through the core's trap guard (extras.js).
import { guard, guardClass, wasmModule } from "./extras.js";

export class LazyModule {
  #glue;
  #module;
  #source;
  #loaded = false;

  /** `glue`: the module's wasm-bindgen JS (its default export and initSync). */
  constructor(name, glue) {
    this.name = name;
    this.#glue = glue;
    this.#module = wasmModule(name, glue, () => this.ready());
  }

  /** Where the module comes from: `() => bytes | WebAssembly.Module`, or a URL. */
  provide(source) {
    this.#source = source;
  }

  /** Instantiates the module now, if it is not yet. */
  ready() {
    if (!this.#loaded) {
      if (typeof this.#source !== "function") {
        throw Object.assign(new Error(`toolctx: internal error: the ${this.name} module is not loaded yet`), {
          name: "ToolctxError", code: "INTERNAL",
        });
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

  /** The driver of the module's operations (driver.js): a trap fails those in flight. */
  get driver() {
    return this.#module.driver;
  }

  /** `fn` through the trap guard, the module instantiated first. */
  guard(name, fn) {
    return guard(name, fn, this.#module);
  }

  /** Guards the methods and getters of a class and of its prototype (see extras.js). */
  guardClass(cls) {
    guardClass(cls, (name, fn) => this.guard(name, fn));
  }

  /**
   * Makes `cls.open` (already guarded) wait for the module first: where it is fetched
   * (browsers), `open` is the async call that loads it.
   */
  loadBeforeOpen(cls) {
    const guardedOpen = cls.open;
    const module = this;
    Object.defineProperty(cls, "open", {
      value: async function open(options) {
        await module.load();
        return guardedOpen.call(this, options);
      },
      writable: true,
      configurable: true,
    });
  }
}
