// Which file API should toolctx/bun use? Bun.write / Bun.file against node:fs under Bun,
// for the operations the adapter performs: create a new file, read a whole file.
//   bun bench/bun-io.mjs
import { mkdtempSync, rmSync } from "node:fs";
import { open, readFile, writeFile } from "node:fs/promises";
import { closeSync, openSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";

const dir = mkdtempSync(`${tmpdir()}/toolctx-bun-io-`);
const N = 2000;

async function time(label, fn) {
  for (let i = 0; i < 50; i++) await fn(`warm-${label}-${i}`, i); // warm up
  const t0 = performance.now();
  for (let i = 0; i < N; i++) await fn(`${label}-${i}`, i);
  return (N / (performance.now() - t0)) * 1000;
}

const median = (xs) => xs.sort((a, b) => a - b)[xs.length >> 1];
const rows = [];
for (let round = 0; round < 3; round++)
for (const size of [1024, 64 * 1024]) {
  const data = new Uint8Array(size).fill(97);
  const tag = `${round}-${size}`;
  const nodeCreate = await time(`nc${tag}`, async (name) => {
    const h = await open(`${dir}/${name}`, "wx", 0o600);
    await h.writeFile(data);
    await h.close();
  });
  const nodeFlagWx = await time(`nf${tag}`, (name) => writeFile(`${dir}/${name}`, data, { flag: "wx", mode: 0o600 }));
  const nodeSyncWx = await time(`ns${tag}`, (name) => {
    const fd = openSync(`${dir}/${name}`, "wx", 0o600);
    try {
      writeSync(fd, data);
    } finally {
      closeSync(fd);
    }
  });
  const bunWrite = await time(`bw${tag}`, (name) => Bun.write(`${dir}/${name}`, data));
  const nodeRead = await time(`nr${tag}`, (_, i) => readFile(`${dir}/nc${tag}-${i % N}`));
  const bunRead = await time(`br${tag}`, (_, i) => Bun.file(`${dir}/nc${tag}-${i % N}`).bytes());
  rows.push({ size, nodeCreate, nodeFlagWx, nodeSyncWx, bunWrite, nodeRead, bunRead });
}
rmSync(dir, { recursive: true, force: true });

const bySize = [1024, 64 * 1024].map((size) => {
  const of = rows.filter((r) => r.size === size);
  const pick = (k) => median(of.map((r) => r[k]));
  return Object.fromEntries(Object.keys(of[0]).map((k) => [k, k === "size" ? size : pick(k)]));
});
console.log(`median of 3 rounds, ${N} operations each`);
console.table(
  Object.fromEntries(
    bySize.map((r) => [
      `${r.size / 1024} KB (ops/s)`,
      {
        "create: open(wx)+write+close": Math.round(r.nodeCreate),
        "create: writeFile flag wx": Math.round(r.nodeFlagWx),
        "create: openSync(wx)+writeSync": Math.round(r.nodeSyncWx),
        "Bun.write (no O_EXCL)": Math.round(r.bunWrite),
        "read: fs.readFile": Math.round(r.nodeRead),
        "read: Bun.file().bytes()": Math.round(r.bunRead),
      },
    ]),
  ),
);
