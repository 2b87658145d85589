// What the type check of pkg-template/ (tsconfig.json) knows of the runtimes beyond Node,
// the DOM and workers: only the members the package uses. Not published.

/** Deno's global, where index.deno.js and toolctx/deno, toolctx/deno-kv run. */
declare var Deno: {
  readFile(path: string | URL): Promise<Uint8Array>;
  readFileSync(path: string | URL): Uint8Array;
  env: { get(name: string): string | undefined };
  cwd(): string;
  [member: string]: any;
};

/** Bun's global: index.node.js tells Bun from Node by it. */
declare var Bun: { [member: string]: any } | undefined;

/** A wasm module imported as a compiled WebAssembly.Module (workerd; `?module` for Vercel's edge-light). */
declare module "*.wasm" {
  const module: WebAssembly.Module;
  export default module;
}
declare module "*.wasm?module" {
  const module: WebAssembly.Module;
  export default module;
}
