// The playground page, bundled from the installed package (node_modules/toolctx → pkg/).
// The browser entry of toolctx uses top-level await, hence the ES2022 target.
export default {
  root: import.meta.dirname,
  base: "./",
  build: { target: "es2022", outDir: "dist", emptyOutDir: true },
  preview: { host: "127.0.0.1", port: 5180, strictPort: false },
};
