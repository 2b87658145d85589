import { RateLimitError } from "../auth/errors";

export interface RetryOptions {
  attempts?: number;
  baseDelayMs?: number;
}

const RETRYABLE = new Set([408, 429, 500, 502, 503, 504]);

/** Retries idempotent failures with exponential backoff and full jitter; honours Retry-After on 429. */
export async function withRetry(send: () => Promise<Response>, options: RetryOptions = {}): Promise<Response> {
  const attempts = options.attempts ?? 3;
  const base = options.baseDelayMs ?? 250;
  let last: Response | undefined;
  for (let attempt = 0; attempt < attempts; attempt++) {
    last = await send();
    if (!RETRYABLE.has(last.status)) return last;
    if (last.status === 429) {
      const retryAfter = Number(last.headers.get("retry-after") ?? "1") * 1000;
      if (attempt === attempts - 1) throw new RateLimitError(retryAfter);
      await sleep(retryAfter);
      continue;
    }
    await sleep(Math.random() * base * 2 ** attempt);
  }
  return last!;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
