// Saves in an agent's rhythm (issue 35): a save, then idle time (30 ms, untimed) while the
// model thinks, then the next. Each save of toolctx (saveContext to the Node fs adapter,
// persistThreshold 0: every record written) is timed against a raw write of the same
// result in the same run (JSON.stringify, then fs/promises writeFile of a record-like
// object), interleaved save by save. Sizes 1 KB, 64 KB and 1 MB; results of two shapes:
// `text` (a file's text, as read_file returns it) and `hits` (grep hits: an array of
// objects). Real text: this repository's Rust sources, cut to size.
//
//   node bench/save-rhythm.mjs [saves per case, default 20] [idle ms, default 30]
//
// Prints, per case, the median and 90th percentile ms per save of each and the ratios
// toolctx / raw; the work done in the idle periods (content indexing, segments) is not
// counted, unless it delays a save.
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ContextManager } from "toolctx";

const SAVES = Number(process.argv[2] ?? 20);
const IDLE_MS = Number(process.argv[3] ?? 30);
const SIZES = [1024, 64 * 1024, 1024 * 1024];

/** Every .rs file under `dir`, read, joined: the text the results are cut from. */
function corpus(dir) {
  const out = [];
  const walk = (d) => {
    for (const name of readdirSync(d)) {
      const path = join(d, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (name.endsWith(".rs")) out.push(readFileSync(path, "utf8"));
    }
  };
  walk(dir);
  return out.join("\n");
}

const TEXT = corpus(new URL("../crates/", import.meta.url).pathname);

/** A result of `shape` whose JSON is about `bytes` long, the `i`-th (each one differs). */
function result(shape, bytes, i) {
  const start = (i * 7919) % Math.max(1, TEXT.length - bytes);
  if (shape === "text") return TEXT.slice(start, start + bytes);
  const hits = [];
  let size = 2;
  const lines = TEXT.slice(start, start + bytes * 2).split("\n");
  for (let n = 0; size < bytes && n < lines.length; n++) {
    const hit = { file: `src/file${(n * 31) % 97}.rs`, line: n + 1, text: lines[n] };
    size += JSON.stringify(hit).length + 1;
    hits.push(hit);
  }
  return hits;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const p90 = (xs) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * 0.9))];
const idle = () => new Promise((resolve) => setTimeout(resolve, IDLE_MS));

const root = mkdtempSync(join(tmpdir(), "toolctx-rhythm-"));
const rows = [];
try {
  for (const shape of ["text", "hits"]) {
    for (const bytes of SIZES) {
      const dir = join(root, `${shape}-${bytes}`);
      const m = new ContextManager({ contextDir: join(dir, "ctx"), persistThreshold: 0 });
      const rawDir = join(dir, "raw");
      await writeFile(join(root, "warm"), "x");
      const ours = [];
      const raw = [];
      for (let i = 0; i < SAVES + 2; i++) {
        const value = result(shape, bytes, i);
        await idle();
        let t0 = performance.now();
        await m.saveContext("read_file", { path: `src/file${i}.rs` }, value);
        const a = performance.now() - t0;
        await idle();
        if (i === 0) (await import("node:fs")).mkdirSync(rawDir, { recursive: true });
        t0 = performance.now();
        await writeFile(join(rawDir, `r${i}.json`), JSON.stringify({ toolName: "read_file", args: { path: `src/file${i}.rs` }, result: value, timestamp: new Date().toISOString() }));
        const b = performance.now() - t0;
        if (i >= 2) {
          ours.push(a);
          raw.push(b);
        }
      }
      await m.close();
      rows.push({
        shape,
        size: bytes >= 1024 * 1024 ? `${bytes >> 20} MB` : `${bytes >> 10} KB`,
        "toolctx ms": median(ours).toFixed(3),
        "raw ms": median(raw).toFixed(3),
        ratio: (median(ours) / median(raw)).toFixed(2),
        "toolctx p90": p90(ours).toFixed(3),
        "raw p90": p90(raw).toFixed(3),
        "p90 ratio": (p90(ours) / p90(raw)).toFixed(2),
      });
    }
  }
} finally {
  rmSync(root, { recursive: true, force: true });
}
console.log(`Saves in an agent's rhythm: ${SAVES} a case, ${IDLE_MS} ms idle before each (untimed); medians, Node ${process.versions.node}`);
console.table(rows);
