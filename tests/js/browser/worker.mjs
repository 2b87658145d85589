import { runSuites } from "./suites.mjs";

runSuites("worker", new URLSearchParams(location.search).get("only") ?? "").then(
  (results) => postMessage(results),
  (err) => postMessage([{ name: "[worker] harness", ok: false, error: `${err?.stack ?? err}` }]),
);
