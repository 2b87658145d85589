// Seeded sampling, so that the corpus and the query sets are the same on every run and
// on every machine: nothing here may depend on Math.random, the clock or a ranking.

/** FNV-1a over a string: turns a label such as "click:tests" into a 32-bit seed. */
export function hashString(text) {
  let h = 2166136261;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619);
  return h >>> 0;
}

/** mulberry32: a small, well-mixed generator of floats in [0, 1). */
export function prng(seedText) {
  let a = hashString(seedText);
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A Fisher-Yates shuffle of a copy of `items`, driven by the generator of `seedText`. */
export function shuffle(items, seedText) {
  const random = prng(seedText);
  const out = items.slice();
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

/** `n` items drawn without replacement; the input is sorted first so its order never matters. */
export function sample(items, n, seedText, key = (x) => x) {
  const sorted = items.slice().sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
  return shuffle(sorted, seedText).slice(0, n);
}
