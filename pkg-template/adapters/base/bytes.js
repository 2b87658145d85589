// The bytes the storage adapters are asked to write (`data`: a string or bytes), and joined.

const encoder = new TextEncoder();

/** `data` as bytes: a string UTF-8 encoded, bytes as they are (not copied). */
export function bytesOf(data) {
  return typeof data === "string" ? encoder.encode(data) : data;
}

/** How many bytes `data` takes (a string: as TextEncoder encodes it, without encoding it). */
export function byteLength(data) {
  if (typeof data !== "string") return data.byteLength;
  let size = 0;
  for (let i = 0; i < data.length; i++) {
    const unit = data.charCodeAt(i);
    const pair = unit >= 0xd800 && unit <= 0xdbff && (data.charCodeAt(i + 1) & 0xfc00) === 0xdc00;
    if (pair) i++; // a surrogate pair: one code point of 4 bytes
    // A lone surrogate is encoded as U+FFFD: 3 bytes, as any unit from U+0800.
    size += unit < 0x80 ? 1 : unit < 0x800 ? 2 : pair ? 4 : 3;
  }
  return size;
}

/** A copy of `data` as bytes (a string UTF-8 encoded), so the caller and the store never share them. */
export function copyOf(data) {
  if (typeof data === "string") return encoder.encode(data);
  if (data instanceof ArrayBuffer) return new Uint8Array(data.slice(0));
  return new Uint8Array(data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength));
}

/** `parts` (bytes) joined into one new array. */
export function concat(parts) {
  let size = 0;
  for (const part of parts) size += part.length;
  const out = new Uint8Array(size);
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}
