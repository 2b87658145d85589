// What the wasm modules import from JavaScript (crates/wasm/src/interop/host.rs): the runtime's host
// defaults, and the notice of a trap. Every module's glue imports this file, so the
// three modules share one set of defaults; and the defaults live here, in JavaScript, so
// an instance made again after a trap has them at once (nothing is registered with wasm).
//
// Each entry point (index.node.js, index.deno.js, index.js, edge.js) states its runtime
// once, when it is imported, with `useRuntime`: a wasm import names one file, while the
// entries are chosen by the runtime's export condition. Until then (the wasm-bindgen
// tests), there is no default storage and context dirs are taken as given.

let runtime = {};

/**
 * The runtime's defaults, stated by its entry point.
 * @param {{ defaultContextDir(): string, resolveDir(dir: string): string, defaultStorage(): object,
 *   adaptFileSystem(fs: object): object }} defaults
 */
export function useRuntime(defaults) {
  runtime = defaults;
}

/** The context dir when the options name none. */
export const defaultContextDir = () => runtime.defaultContextDir?.();

let defaultDirNote;
let defaultDirTold = false;
/** Why the default context dir is not the documented one (a runtime's entry point says it). */
export function noteDefaultDir(why) {
  defaultDirNote ??= why;
}
/** That note, once: the first manager with `onDebug` that takes the default store hears it. */
export function takeDefaultDirNote() {
  if (defaultDirTold || defaultDirNote === undefined) return undefined;
  defaultDirTold = true;
  return defaultDirNote;
}

/** `dir` made absolute where the runtime has a working directory. */
export const resolveDir = (dir) => (runtime.resolveDir ? runtime.resolveDir(dir) : dir);

/** The storage when the options give none. */
export const defaultStorage = () => runtime.defaultStorage?.();

/** A seed `IFileSystem` wrapped as a storage host. */
export const adaptFileSystem = (fs) => runtime.adaptFileSystem?.(fs);

/** module name → fails that module's calls in flight (its driver) and counts the trap (module.js) */
const inFlight = new Map();

/**
 * The one constructor of toolctx's errors (SPEC §9; import it from errors.js, which holds
 * the table of codes): an `Error` named "ToolctxError" with a stable `code`, the host's or
 * backend's error as `cause`, and `fields` (`status`, `r2Code`, ...) as properties. The
 * message never quotes a secret (a password, a key, a URL that holds one). It lives here
 * because the wasm glue imports this file, which cannot import another: the wasm-bindgen
 * tests load it as a snippet, alone.
 * @param {string} code
 * @param {string} message
 * @param {{ cause?: unknown, [field: string]: unknown }} [details]
 */
export function toolctxError(code, message, { cause, ...fields } = {}) {
  const error = /** @type {Error & { code: string }} */ (new Error(message, cause === undefined ? undefined : { cause }));
  error.name = "ToolctxError";
  error.code = code;
  return Object.assign(error, fields);
}

/** An `INTERNAL` error (SPEC §9). */
export function internal(cause, message) {
  return toolctxError("INTERNAL", `toolctx: internal error: ${message}`, { cause });
}

/** `fail(error)` fails the calls in flight of `module` ("core", "conversation", "window") when it panics. */
export function onFailInFlight(module, fail) {
  inFlight.set(module, fail);
}

/**
 * Called by a module's panic hook (crates/wasm/src/lib.rs), which has abandoned the instance:
 * fails the module's calls in flight and throws the INTERNAL error. The throw unwinds the
 * wasm frames of the call that panicked, so whatever the entry (a method, a getter, a
 * constructor, the driver's poll), its caller gets this error. Its cause is the trap
 * the panic ends in, as a WebAssembly.RuntimeError made here (the stack holds the panic's
 * wasm frames); the throw ends the call before the engine's own `unreachable` trap.
 */
export function onTrap(module, message) {
  const error = internal(new WebAssembly.RuntimeError(message), `${message}; the module was re-instantiated`);
  inFlight.get(module)?.(error);
  throw error;
}

