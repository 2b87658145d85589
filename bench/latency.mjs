// Latency per operation through the whole library, runtime-agnostic: ms per save (a
// ContextManager.saveContext that persists: one exclusive create) and per load
// (loadContexts of one record, read back from storage) for 1 KB and 100 KB results
// (100 KB is chunked on Deno KV). Stores run interleaved, round by round, against the
// baseline store measured in the same run; each figure is the median of the rounds.

const SIZES = [1024, 100 * 1024];
const ROUNDS = 5;

/**
 * @param {Record<string, () => object>} stores name → a StorageHost (the first is the baseline)
 * @param {(tag: string) => string} dirFor a fresh context folder
 * @param {{ ContextManager: Function, n?: number }} options saves and loads per round and size
 * @returns {Promise<Record<string, Record<string, number>>>} name → "save 1KB ms" … → ms per operation
 */
export async function benchLatency(stores, dirFor, { ContextManager, n = 200 }) {
  const names = Object.keys(stores);
  const samples = Object.fromEntries(names.map((name) => [name, {}]));
  const storages = Object.fromEntries(names.map((name) => [name, stores[name]()]));
  async function round(name, tag, size) {
    const m = new ContextManager({ contextDir: dirFor(tag), fileSystem: storages[name], persistThreshold: 0 });
    const result = "x".repeat(size);
    let t0 = performance.now();
    const paths = [];
    for (let i = 0; i < n; i++) paths.push(await m.saveContext("bench", { i }, result));
    const save = (performance.now() - t0) / n;
    t0 = performance.now();
    for (const p of paths) await m.loadContexts([p]);
    return [save, (performance.now() - t0) / n];
  }
  for (const name of names) await round(name, `warm-${name}`, SIZES[0]);
  for (let r = 0; r < ROUNDS; r++) {
    for (const size of SIZES) {
      for (const [i, name] of names.entries()) {
        const [save, load] = await round(name, `${i}-${size}-${r}`, size);
        (samples[name][`save ${size / 1024}KB ms`] ??= []).push(save);
        (samples[name][`load ${size / 1024}KB ms`] ??= []).push(load);
      }
    }
  }
  const median = (xs) => +xs.sort((a, b) => a - b)[xs.length >> 1].toFixed(3);
  const rows = Object.fromEntries(
    names.map((name) => [name, Object.fromEntries(Object.entries(samples[name]).map(([k, xs]) => [k, median(xs)]))]),
  );
  const base = rows[names[0]];
  for (const name of names.slice(1)) {
    for (const size of SIZES) {
      const k = `save ${size / 1024}KB ms`;
      rows[name][`save ${size / 1024}KB ÷ baseline`] = +(rows[name][k] / base[k]).toFixed(2);
    }
  }
  return rows;
}
