// Storage-adapter throughput, runtime-agnostic: exclusive creates (what a save does)
// and whole-file reads (what a load does) of 1 KB and 64 KB records, through the
// StorageHost interface. Each figure is operations per second, the median of 5 rounds
// after a warm-up. The adapters of one runtime (and its raw-I/O floor) run round-robin,
// round by round, so drift (JIT tiers, disk writeback stalls that can slow a round 20×
// here) falls on all of them alike.

const SIZES = [1024, 64 * 1024];
const ROUNDS = 5;

function payload(size) {
  const bytes = new Uint8Array(size);
  for (let i = 0; i < size; i++) bytes[i] = 97 + (i % 26);
  return bytes;
}

async function round(storage, dir, data, n) {
  const paths = Array.from({ length: n }, (_, i) => `${dir}/r${i}.json`);
  await storage.write(`${dir}/first.json`, data, { exclusive: true });
  let t0 = performance.now();
  for (const p of paths) await storage.write(p, data, { exclusive: true });
  const write = (n / (performance.now() - t0)) * 1000;
  t0 = performance.now();
  for (const p of paths) await storage.read(p);
  return [write, (n / (performance.now() - t0)) * 1000];
}

/**
 * @param {Record<string, () => object>} adapters name → a fresh StorageHost
 * @param {(tag: string) => string} dirFor a fresh folder per round
 * @param {{ n?: number }} [options] operations per round and size
 * @returns {Promise<Record<string, Record<string, number>>>} name → `"write 1KB"`… → ops/s
 */
export async function benchAdapters(adapters, dirFor, { n = 1000 } = {}) {
  const names = Object.keys(adapters);
  const samples = Object.fromEntries(names.map((name) => [name, {}]));
  for (const name of names) await round(adapters[name](), dirFor(`warm-${name}`), payload(SIZES[0]), n);
  for (let r = 0; r < ROUNDS; r++) {
    for (const size of SIZES) {
      for (const [i, name] of names.entries()) {
        const [w, rd] = await round(adapters[name](), dirFor(`${i}-${size}-${r}`), payload(size), n);
        (samples[name][`write ${size / 1024}KB`] ??= []).push(w);
        (samples[name][`read ${size / 1024}KB`] ??= []).push(rd);
      }
    }
  }
  const median = (xs) => Math.round(xs.sort((a, b) => a - b)[xs.length >> 1]);
  return Object.fromEntries(
    names.map((name) => [name, Object.fromEntries(Object.entries(samples[name]).map(([k, xs]) => [k, median(xs)]))]),
  );
}
