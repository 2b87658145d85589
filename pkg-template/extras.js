// What wasm-bindgen cannot declare: symbol-named methods.
import { ContextManager } from "./toolctx_core.js";

if (typeof Symbol.asyncDispose === "symbol" && !ContextManager.prototype[Symbol.asyncDispose]) {
  Object.defineProperty(ContextManager.prototype, Symbol.asyncDispose, {
    value() {
      return this.close();
    },
    writable: true,
    configurable: true,
  });
}
