// The figures of a ranking against a labelled relevant set, and their summaries.

export const CUTOFF = 10;
export const K = 5;

/**
 * One query's figures: rr (1 / rank of the first relevant record within the first ten,
 * else 0), p5 (relevant records among the first five ÷ 5), s1 (is the first relevant),
 * rank (of the first relevant within ten, or null).
 */
export function scoreRanking(ranked, relevant) {
  const top = ranked.slice(0, CUTOFF);
  const first = top.findIndex((id) => relevant.has(id));
  return {
    rr: first < 0 ? 0 : 1 / (first + 1),
    p5: top.slice(0, K).filter((id) => relevant.has(id)).length / K,
    s1: first === 0 ? 1 : 0,
    rank: first < 0 ? null : first + 1,
  };
}

/** The best P@5 any ranking could reach: queries with fewer than five relevant records cap it. */
export const p5Ceiling = (relevant) => Math.min(K, relevant.size) / K;

export const mean = (xs) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);

/** The p-th percentile (0-100) of numbers, nearest rank. */
export function percentile(xs, p) {
  if (!xs.length) return 0;
  const sorted = xs.slice().sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}
