import { runSuites } from "./suites.mjs";

runSuites("worker").then(
  (results) => postMessage(results),
  (err) => postMessage([{ name: "[worker] harness", ok: false, error: `${err?.stack ?? err}` }]),
);
