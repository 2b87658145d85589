// Pointer lists: plain Arrays of plain objects, fresh copies on every call (SPEC §2), so a
// caller may mutate, sort, structuredClone, postMessage or print them.
//
// The pointers live in wasm memory in a compact form. Crossing the boundary is what
// costs, so each manager keeps a mirror (a PointerMirror, a private field of the
// ContextManager: context-manager.js): its pointers as objects, by slot (a slot
// names one pointer until the manager's epoch changes: clearPointers, rebuild, resume,
// compaction). A list asks the core for the slots it holds (one Uint32Array), fetches
// the pointers the mirror lacks (JSON text, one crossing per 1,024, parsed here once the
// call has returned) and hands out copies.
// The mirror holds what was listed at least once, so a second call over 100,000
// pointers costs the copies, and a call after a save fetches one pointer. It is what a
// listing leaves behind, so it is kept lean: an Array by slot (slots are dense), each
// `filename` a slice of its `filepath` (V8 shares the characters) rather than a string of
// its own, and the args, description and args hash of a pointer whose tool, args hash,
// description and args (key order included) are an earlier one's are that one's values
// (an agent calls a tool with the same args again and again), so the mirror holds them
// once. Nothing the mirror holds is handed out: each list gets copies.

import { QUERY } from "./protocol.js";

/**
 * Pointers fetched per crossing: the JSON of 100,000 at once would grow wasm memory by
 * tens of megabytes for good (wasm memory never shrinks); 1,024 take about 0.5 MB (4,096,
 * about 2 MB, grew it by 23 B a pointer listed at 100,000 more; fewer than 1,024 save nothing).
 */
const FETCH = 1024;
// A list handed out → { mirror, epoch, slots }: the slots of its pointers, so a
// selection over it (the seed's flow: getPointersForQuery, then selectRelevantContexts)
// gives the core slots rather than filepaths it would look up one by one.
const lists = new WeakMap();

/** A deep copy of a JSON value (what a pointer holds). */
function copy(value) {
  if (typeof value !== "object" || value === null) return value;
  if (Array.isArray(value)) {
    const out = new Array(value.length);
    for (let i = 0; i < value.length; i++) out[i] = copy(value[i]);
    return out;
  }
  const out = { ...value }; // own data properties, "__proto__" included
  for (const key in out) {
    if (typeof out[key] === "object" && out[key] !== null) out[key] = copy(out[key]);
  }
  return out;
}

/**
 * A copy of a pointer: the fields of the core's pointer JSON (store.rs, `pointer_json`),
 * in its order, `args` deep. Written out field by field: V8 makes such a literal several
 * times faster than a spread or a generic copy.
 */
function copyPointer(p) {
  const out = { filepath: p.filepath, filename: p.filename, handle: p.handle, toolName: p.toolName, toolDescription: p.toolDescription, args: copy(p.args) };
  if (p.taskId !== undefined) out.taskId = p.taskId;
  if (p.queryId !== undefined) out.queryId = p.queryId;
  if (p.toolCallId !== undefined) out.toolCallId = p.toolCallId;
  out.argsHash = p.argsHash;
  out.timestamp = p.timestamp;
  out.size = p.size;
  return out;
}

/** Whether two JSON values are the same, key order included (`-0` is not `0`). */
function sameJson(a, b) {
  if (Object.is(a, b)) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null || Array.isArray(a) !== Array.isArray(b)) return false;
  const keys = Object.keys(a);
  const others = Object.keys(b);
  if (keys.length !== others.length) return false;
  for (let i = 0; i < keys.length; i++) {
    if (keys[i] !== others[i] || !sameJson(a[keys[i]], b[keys[i]])) return false;
  }
  return true;
}

/**
 * Makes `p` (a pointer the core sent, parsed) hold the args, description and args hash of
 * the first pointer listed with the same tool, args hash, description and args, if any:
 * the mirror then holds them once. The object itself stays the one JSON.parse made (its
 * fields replaced, none added), which keeps copying it as fast as before.
 */
function share(p, byArgsHash) {
  const first = byArgsHash.get(p.argsHash);
  if (first === undefined) byArgsHash.set(p.argsHash, p);
  else if (first.toolName === p.toolName && first.toolDescription === p.toolDescription && sameJson(first.args, p.args)) {
    p.args = first.args;
    p.toolDescription = first.toolDescription;
    p.argsHash = first.argsHash;
  }
}

/**
 * A manager's pointers as objects, by slot (the slots of its epoch), over its core handle:
 * the manager hands each call `ask`, its handle's `query` (crates/wasm/src/manager/; the
 * `epoch` and `pointers` queries of protocol.js QUERY), checked to be of the module's
 * current instance.
 */
export class PointerMirror {
  /** The epoch the slots are of. */
  #epoch = -1;
  /** Array<pointer | undefined> by slot */
  #bySlot = [];
  /** argsHash → the first pointer listed with it */
  #byArgsHash = new Map();

  /** The pointers in `slots` (a Uint32Array, in list order, from the `slots` query), copied. */
  list(ask, slots) {
    const epoch = ask({ kind: QUERY.EPOCH });
    if (this.#epoch !== epoch) {
      this.#epoch = epoch;
      this.#bySlot = [];
      this.#byArgsHash = new Map();
    }
    const bySlot = this.#bySlot, byArgsHash = this.#byArgsHash;
    const missing = [];
    for (let i = 0; i < slots.length; i++) {
      const slot = slots[i];
      // Grown by push, never by a store past the end, so V8 keeps the elements a flat array.
      while (bySlot.length <= slot) bySlot.push(undefined);
      if (bySlot[slot] === undefined) missing.push(slot);
    }
    for (let start = 0; start < missing.length; start += FETCH) {
      const some = new Uint32Array(missing.slice(start, start + FETCH));
      const made = JSON.parse(ask({ kind: QUERY.POINTERS, slots: some }));
      for (let i = 0; i < some.length; i++) {
        const p = made[i];
        if (p !== null) {
          p.filename = p.filepath.slice(p.filepath.lastIndexOf("/") + 1);
          share(p, byArgsHash);
        }
        bySlot[some[i]] = p;
      }
    }
    const out = new Array(slots.length);
    for (let i = 0; i < slots.length; i++) out[i] = copyPointer(bySlot[slots[i]]);
    lists.set(out, { mirror: this, epoch, slots });
    return out;
  }

  /**
   * How a selection gives the core `pointers` (crates/wasm/src/interop/selection.rs,
   * `ListedSlots`): `listed`, the slot of each pointer whose filepath is the one this
   * mirror listed at that place of the list, in this epoch; and `paths`, the filepaths
   * read (the selection returns them). The caller may have changed the list or its
   * objects since: only the filepath of a manager's pointer counts for its ranking, so an
   * element with the filepath listed at its place names that slot's pointer, whatever
   * object it is. The core reads the others from their objects, and checks the slots
   * are still current (the epoch, and that the pointer was not evicted since).
   * @returns {{ listed: { epoch: number, positions: Uint32Array, slots: Uint32Array } | undefined, paths: string[] }}
   */
  given(ask, pointers) {
    const epoch = ask({ kind: QUERY.EPOCH });
    const list = lists.get(pointers);
    const current = list !== undefined && list.mirror === this && list.epoch === epoch && this.#epoch === epoch;
    const n = pointers.length;
    const paths = new Array(n);
    for (let i = 0; i < n; i++) {
      const p = pointers[i];
      paths[i] = typeof p?.filepath === "string" ? p.filepath : "";
    }
    if (!current) return { listed: undefined, paths };
    const known = list.slots, bySlot = this.#bySlot;
    const most = Math.min(n, known.length);
    const positions = new Uint32Array(most), slots = new Uint32Array(most);
    let count = 0;
    for (let i = 0; i < most; i++) {
      if (paths[i] !== "" && bySlot[known[i]]?.filepath === paths[i]) {
        positions[count] = i;
        slots[count++] = known[i];
      }
    }
    return { listed: { epoch, positions: positions.subarray(0, count), slots: slots.subarray(0, count) }, paths };
  }
}
