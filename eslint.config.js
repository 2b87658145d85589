// ESLint over every hand-written JavaScript file of the repository (`make lint` runs it with
// --max-warnings 0): the package's sources (pkg-template/), the build scripts, benchmarks,
// tests, examples, the demo and the playground page. Not pkg/ (built from pkg-template/ and
// the wasm-bindgen glue), nor anything installed or generated.
//
// The globals follow where each file runs. The package is one source for every runtime, so
// its files see only the globals Node and browsers share (which Deno, Bun and workerd have
// too); the files written for one runtime get that runtime's as well.
import js from "@eslint/js";
import globals from "globals";

const node = globals.node;
const web = { ...globals.browser, ...globals.worker };
const deno = globals.denoBuiltin;
const bun = globals.bunBuiltin;

export default [
  { ignores: ["pkg/", "node_modules/", "target/", "www/dist/", "test-output/", "tests/js/.tmp/", "bench/.tmp/"] },
  js.configs.recommended,
  {
    linterOptions: { reportUnusedDisableDirectives: "error" },
    rules: {
      // `const { a: _a, ...rest } = o` leaves `a` out of a copy, and `for (const _ of it) n++`
      // counts: a name starting with `_` is unused on purpose.
      "no-unused-vars": ["error", { ignoreRestSiblings: true, varsIgnorePattern: "^_" }],
    },
  },
  { files: ["pkg-template/**"], languageOptions: { globals: globals["shared-node-browser"] } },
  {
    files: ["pkg-template/index.node.js", "pkg-template/adapters/node.js", "pkg-template/bin/**"],
    languageOptions: { globals: node },
  },
  {
    files: ["pkg-template/index.deno.js", "pkg-template/adapters/deno.js", "pkg-template/adapters/deno-kv.js"],
    languageOptions: { globals: deno },
  },
  { files: ["pkg-template/adapters/bun.js"], languageOptions: { globals: bun } },
  // IndexedDB and OPFS: a page's main thread or a worker.
  { files: ["pkg-template/adapters/indexeddb.js", "pkg-template/adapters/opfs.js"], languageOptions: { globals: web } },
  {
    files: ["scripts/**", "bench/**", "tests/**", "examples/**", "demo/**", "www/vite.config.mjs"],
    languageOptions: { globals: node },
  },
  // Tests and benchmarks drive every runtime from Node: callbacks that run in Chromium
  // (page.evaluate), workers, suites that Deno and Bun run (*.suite.mjs, *-deno.mjs, ...).
  {
    files: ["tests/**", "bench/**", "scripts/wasm-browser-test.mjs"],
    languageOptions: { globals: { ...web, ...deno, ...bun } },
  },
  { files: ["www/*.js"], languageOptions: { globals: globals.browser } },
];
