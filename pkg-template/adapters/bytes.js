// The bytes of what a storage adapter is asked to write (`data`: a string or bytes).

const encoder = new TextEncoder();

/** `data` as bytes: a string UTF-8 encoded, bytes as they are (not copied). */
export function bytesOf(data) {
  return typeof data === "string" ? encoder.encode(data) : data;
}

/** A copy of `data` as bytes (a string UTF-8 encoded), so the caller and the store never share them. */
export function copyOf(data) {
  if (typeof data === "string") return encoder.encode(data);
  if (data instanceof ArrayBuffer) return new Uint8Array(data.slice(0));
  return new Uint8Array(data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength));
}
