// Random tokens for lock owners, temporary names and claims.

/** `bytes` random bytes from the platform's CSPRNG (the global Web Crypto: in Node,
 * importing node:crypto costs ~3 ms), as lowercase hex. */
export function randomHex(bytes) {
  return Array.from(crypto.getRandomValues(new Uint8Array(bytes)), (b) => b.toString(16).padStart(2, "0")).join("");
}
