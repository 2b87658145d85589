// Pointer arrays made on demand. Pointers live in wasm memory in a compact form;
// getAllPointers / getPointersForQuery / getPointersForTask return a real Array (a
// Proxy over one) whose elements are plain pointer objects, made the first time an
// element is read, a chunk at a time. Listing 100,000 pointers costs a list of slots.
//
// Passed back untouched to the same manager's selectRelevantContexts or
// selectRelevant, the array is ranked by slot through the index: no pointer object is
// made or read. Any write (sort, push, splice, assignment) first makes every element,
// then the array is an ordinary one.
//
// Elements are copies: before the manager forgets its pointers (clearPointers, clear,
// endSession, rebuildIndex), every array it handed out and that is still alive is
// filled in, so it keeps its contents.

/** Below this many pointers the array is made at once (cheap, and plain for debuggers). */
const LAZY_FROM = 1024;
const CHUNK = 256;

const states = new WeakMap(); // proxy → state
const byTarget = new WeakMap(); // the proxy's target → state
const handedOut = new WeakMap(); // manager → Set<WeakRef<state>>

function indexOf(key, length) {
  if (typeof key !== "string") return -1;
  const c = key.charCodeAt(0);
  if (c < 48 || c > 57) return -1;
  const i = Number(key);
  return Number.isInteger(i) && i < length && String(i) === key ? i : -1;
}

function fillChunk(state, chunk) {
  if (state.filled[chunk]) return;
  const { manager, slots, target } = state;
  if (manager.__epoch !== state.epoch) {
    throw Object.assign(new Error("toolctx: this pointer array outlived its manager's pointers"), {
      name: "ToolctxError",
      code: "INTERNAL",
    });
  }
  const start = chunk * CHUNK;
  const part = manager.__pointers(slots.subarray(start, Math.min(slots.length, start + CHUNK)));
  for (let j = 0; j < part.length; j++) target[start + j] = part[j];
  state.filled[chunk] = 1;
  state.left--;
}

function fillAll(state) {
  for (let c = 0; state.left > 0 && c < state.filled.length; c++) fillChunk(state, c);
}

function fillAt(state, key) {
  const i = indexOf(key, state.slots.length);
  if (i >= 0) fillChunk(state, (i / CHUNK) | 0);
}

function written(state) {
  fillAll(state);
  state.dirty = true;
}

const handler = {
  get(target, key, receiver) {
    fillAt(byTarget.get(target), key);
    return Reflect.get(target, key, receiver);
  },
  has(target, key) {
    fillAt(byTarget.get(target), key);
    return Reflect.has(target, key);
  },
  getOwnPropertyDescriptor(target, key) {
    fillAt(byTarget.get(target), key);
    return Reflect.getOwnPropertyDescriptor(target, key);
  },
  ownKeys(target) {
    fillAll(byTarget.get(target));
    return Reflect.ownKeys(target);
  },
  set(target, key, value) {
    written(byTarget.get(target));
    return Reflect.set(target, key, value);
  },
  defineProperty(target, key, descriptor) {
    written(byTarget.get(target));
    return Reflect.defineProperty(target, key, descriptor);
  },
  deleteProperty(target, key) {
    written(byTarget.get(target));
    return Reflect.deleteProperty(target, key);
  },
};

function pointerArray(manager, slots, all) {
  if (slots.length < LAZY_FROM) return manager.__pointers(slots);
  const target = new Array(slots.length).fill(undefined); // packed, not a dictionary of holes
  const chunks = Math.ceil(slots.length / CHUNK);
  const state = { manager, slots, all, epoch: manager.__epoch, target, filled: new Uint8Array(chunks), left: chunks, dirty: false };
  byTarget.set(target, state);
  const proxy = new Proxy(target, handler);
  states.set(proxy, state);
  let live = handedOut.get(manager);
  if (!live) handedOut.set(manager, (live = new Set()));
  live.add(new WeakRef(state));
  return proxy;
}

/** Fills in every array `manager` handed out that is still alive, before it forgets its pointers. */
function keepCopies(manager) {
  const live = handedOut.get(manager);
  if (!live) return;
  for (const ref of live) {
    const state = ref.deref();
    if (state && manager.__epoch === state.epoch) fillAll(state);
  }
  live.clear();
}

/**
 * The slots `pointers` stands for when it is an untouched array of `manager`'s
 * (`{all: true}` when it is every pointer the manager has), else undefined.
 */
export function slotsOf(manager, pointers) {
  const state = pointers != null && typeof pointers === "object" ? states.get(pointers) : undefined;
  if (!state || state.dirty || state.manager !== manager || state.epoch !== manager.__epoch) return undefined;
  return { slots: state.slots, all: state.all && state.slots.length === manager.size };
}

/** Installs the on-demand pointer lists on the core class's prototype. */
export function installPointerArrays(proto) {
  const slots = proto.__slots;
  proto.getAllPointers = function getAllPointers() {
    return pointerArray(this, slots.call(this, 0, undefined), true);
  };
  proto.getPointersForQuery = function getPointersForQuery(queryId) {
    return pointerArray(this, slots.call(this, 1, queryId), false);
  };
  proto.getPointersForTask = function getPointersForTask(taskId) {
    return pointerArray(this, slots.call(this, 2, taskId), false);
  };
  for (const name of ["clearPointers", "clear", "clearContextDir", "endSession", "rebuildIndex"]) {
    const original = proto[name];
    proto[name] = function forgetting(...args) {
      keepCopies(this);
      return original.apply(this, args);
    };
    Object.defineProperty(proto[name], "name", { value: name });
  }
  // Retention evicts pointers but keeps their slots, so lists handed out stay valid; once
  // evicted slots dominate, the table is compacted (slots move) at the start of the next
  // save or reconcile, right after the lists handed out are filled in.
  for (const name of ["saveContext", "reconcile"]) {
    const original = proto[name];
    proto[name] = function compacting(...args) {
      if (this.__compactionDue) {
        keepCopies(this);
        this.__compact();
      }
      return original.apply(this, args);
    };
    Object.defineProperty(proto[name], "name", { value: name });
  }
}
