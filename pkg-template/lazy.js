// The conversation store and the window optimiser are wasm modules of their own
// (toolctx_conversation_bg.wasm, toolctx_window_bg.wasm), instantiated on first use, so
// `import { ContextManager } from "toolctx"` instantiates the core module only.
//
// Each entry point says where a module comes from (`provide`): a function returning its
// bytes or its compiled WebAssembly.Module, instantiated synchronously by the first call
// (Node, Deno, Bun, edge runtimes); or its URL, fetched by the first async call such as
// `ConversationStore.open` (browsers). A module gets the host defaults that the entry
// registered with the core, and its exports go through the core's trap guard (extras.js).
import { driverFor, guard, guardClass, hostDefaults, onTrap } from "./extras.js";

export class LazyModule {
  #glue;
  #driver;
  #source;
  #loaded = false;
  /** A trap re-instantiated the module: its host defaults are registered again before the next call. */
  #lost = false;

  /** `glue`: the module's wasm-bindgen JS (its default export, initSync, __setHostDefaults). */
  constructor(name, glue) {
    this.name = name;
    this.#glue = glue;
    this.#driver = driverFor(glue);
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
      this.#instantiated();
    } else if (this.#lost) {
      this.#lost = false;
      this.#register();
    }
  }

  /** Instantiates the module, fetching it first where it comes from a URL. */
  async load() {
    if (!this.#loaded && typeof this.#source !== "function" && this.#source !== undefined) {
      await this.#glue.default({ module_or_path: this.#source });
      if (!this.#loaded) this.#instantiated();
    }
    this.ready();
  }

  /** `fn` through the trap guard, the module instantiated first. */
  guard(name, fn) {
    const module = this;
    return guard(name, function guarded(...args) {
      module.ready();
      return fn.apply(this, args);
    }, this.#driver);
  }

  /** Guards the methods and getters of a class and of its prototype (see extras.js). */
  guardClass(cls) {
    guardClass(cls, (name, fn) => this.guard(name, fn));
  }

  #instantiated() {
    this.#loaded = true;
    this.#register();
  }

  #register() {
    this.#glue.__setHostDefaults({
      ...hostDefaults(),
      onTrap: (message) => {
        this.#lost = true;
        onTrap(message);
      },
    });
  }
}
