// The subset of node:assert/strict the conformance suite uses, for browsers.

class AssertionError extends Error {
  constructor(message) {
    super(message);
    this.name = "AssertionError";
  }
}

const show = (v) => {
  try {
    return typeof v === "string" ? JSON.stringify(v) : JSON.stringify(v, (_, x) => (typeof x === "bigint" ? `${x}n` : x));
  } catch {
    return String(v);
  }
};

function deepEqual(a, b) {
  if (Object.is(a, b)) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Object.getPrototypeOf(a) !== Object.getPrototypeOf(b)) return false;
  if (a instanceof Date) return a.getTime() === b.getTime();
  if (ArrayBuffer.isView(a)) return a.length === b.length && a.every((x, i) => Object.is(x, b[i]));
  if (a instanceof Map || a instanceof Set) return deepEqual([...a], [...b]);
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  return ka.length === kb.length && ka.every((k) => Object.hasOwn(b, k) && deepEqual(a[k], b[k]));
}

function fail(message) {
  throw message instanceof Error ? message : new AssertionError(message ?? "Failed");
}

const assert = {
  AssertionError,
  ok(value, message) {
    if (!value) fail(message ?? `expected a truthy value, got ${show(value)}`);
  },
  equal(actual, expected, message) {
    if (!Object.is(actual, expected)) fail(message ?? `${show(actual)} !== ${show(expected)}`);
  },
  notEqual(actual, expected, message) {
    if (Object.is(actual, expected)) fail(message ?? `${show(actual)} === ${show(expected)}`);
  },
  deepEqual(actual, expected, message) {
    if (!deepEqual(actual, expected)) fail(message ?? `${show(actual)} is not deep-equal to ${show(expected)}`);
  },
  notDeepEqual(actual, expected, message) {
    if (deepEqual(actual, expected)) fail(message ?? `${show(actual)} is deep-equal to ${show(expected)}`);
  },
  match(string, re, message) {
    if (!re.test(string)) fail(message ?? `${show(string)} does not match ${re}`);
  },
  fail,
  async rejects(fn, expected, message) {
    try {
      await (typeof fn === "function" ? fn() : fn);
    } catch (err) {
      check(err, expected, message);
      return;
    }
    fail(message ?? "expected a rejection");
  },
  throws(fn, expected, message) {
    try {
      fn();
    } catch (err) {
      check(err, expected, message);
      return;
    }
    fail(message ?? "expected a throw");
  },
};

/** As node:assert: a class is checked with instanceof, another function validates (and must return true). */
function check(err, expected, message) {
  if (typeof expected !== "function") return;
  const ok = expected.prototype !== undefined ? err instanceof expected : expected(err) === true;
  if (!ok) fail(message ?? `wrong error: ${err}`);
}
assert.strictEqual = assert.equal;
assert.deepStrictEqual = assert.deepEqual;

export default assert;
