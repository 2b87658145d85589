// What the wasm modules import from JavaScript (src/wasm/host.rs): the runtime's host
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

/** `dir` made absolute where the runtime has a working directory. */
export const resolveDir = (dir) => (runtime.resolveDir ? runtime.resolveDir(dir) : dir);

/** The storage when the options give none. */
export const defaultStorage = () => runtime.defaultStorage?.();

/** A seed `IFileSystem` wrapped as a storage host. */
export const adaptFileSystem = (fs) => runtime.adaptFileSystem?.(fs);

let traps = 0;
let lastPanic;

/** Called by a module's panic hook, just before its trap (src/wasm/mod.rs). */
export function onTrap(message) {
  traps++;
  lastPanic = message;
}

/** How many traps there were, and the last panic's message (extras.js makes INTERNAL errors of them). */
export const trapped = () => ({ traps, lastPanic });
