// `readRange(path, offset, length)` (SPEC §4): the bytes [offset, offset + length) of a
// file, fewer at its end, empty from its end on, undefined when it does not exist. What
// every adapter that has it does the same way is here: the check of its arguments and,
// where a medium holds a file as one value, the slice.

import { toolctxError } from "../../errors.js";

/**
 * The error of a range that is not two whole numbers ≥ 0 whose end is a safe integer
 * (`offset` -1, `length` 1.5, "3", NaN), or undefined when the range is good. Adapters
 * reject with it (a rejected Promise, never a synchronous throw).
 */
export function badRange(offset, length) {
  const whole = (n) => Number.isSafeInteger(n) && n >= 0;
  if (whole(offset) && whole(length) && Number.isSafeInteger(offset + length)) return undefined;
  const shown = (n) => (typeof n === "number" ? String(n) : typeof n === "string" ? JSON.stringify(n) : `a value of type ${typeof n}`);
  return toolctxError(
    "INVALID_ARGUMENT",
    `readRange: offset and length must be whole numbers ≥ 0 with a safe-integer end, got offset ${shown(offset)} and length ${shown(length)}`,
  );
}

/** `bytes[offset, offset + length)` as a copy of its own: fewer at the end, empty past it. */
export function sliceRange(bytes, offset, length) {
  return bytes.slice(offset, offset + length);
}

/** How many bytes of a file of `size` bytes the range [offset, offset + length) holds. */
export function rangeLength(size, offset, length) {
  return Math.max(0, Math.min(length, size - offset));
}
