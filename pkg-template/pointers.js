// Pointer lists: plain Arrays of plain objects, fresh copies on every call (SPEC §2), so a
// caller may mutate, sort, structuredClone, postMessage or print them.
//
// The pointers live in wasm memory in a compact form. Crossing the boundary is what
// costs, so each manager keeps a mirror here: its pointers as objects, by slot (a slot
// names one pointer until the manager's epoch changes: clearPointers, rebuild, resume,
// compaction). A list asks the core for the slots it holds (one Uint32Array), fetches
// the pointers the mirror lacks (one JSON crossing for all of them) and hands out copies.
// The mirror holds what was listed at least once, so a second call over 100,000
// pointers costs the copies, and a call after a save fetches one pointer.

const mirrors = new WeakMap(); // manager → { epoch, bySlot: Map<slot, pointer> }

/** A deep copy of a JSON value (what a pointer holds). */
function copy(value) {
  if (typeof value !== "object" || value === null) return value;
  if (Array.isArray(value)) return value.map(copy);
  const out = { ...value }; // own data properties, "__proto__" included
  for (const key in out) {
    if (typeof out[key] === "object" && out[key] !== null) out[key] = copy(out[key]);
  }
  return out;
}

/** The pointers in `slots` (a Uint32Array, in list order), copied. */
function listed(manager, slots) {
  let mirror = mirrors.get(manager);
  const epoch = manager.__epoch;
  if (mirror === undefined || mirror.epoch !== epoch) {
    mirror = { epoch, bySlot: new Map() };
    mirrors.set(manager, mirror);
  }
  const { bySlot } = mirror;
  const missing = slots.filter((slot) => !bySlot.has(slot));
  if (missing.length > 0) {
    const made = manager.__pointers(missing);
    for (let i = 0; i < missing.length; i++) bySlot.set(missing[i], made[i]);
  }
  const out = new Array(slots.length);
  for (let i = 0; i < slots.length; i++) out[i] = copy(bySlot.get(slots[i]));
  return out;
}

/** Installs getAllPointers, getPointersForQuery and getPointersForTask on the core class's prototype. */
export function installPointerLists(proto) {
  const slots = proto.__slots;
  proto.getAllPointers = function getAllPointers() {
    return listed(this, slots.call(this, 0, undefined));
  };
  proto.getPointersForQuery = function getPointersForQuery(queryId) {
    return listed(this, slots.call(this, 1, queryId));
  };
  proto.getPointersForTask = function getPointersForTask(taskId) {
    return listed(this, slots.call(this, 2, taskId));
  };
}
