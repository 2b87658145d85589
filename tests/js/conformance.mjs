// Runtime-agnostic conformance suites for toolctx (SPEC §1-4, §6 seed part, §9).
//
// In the style of automerge-repo's runStorageAdapterTests: the caller passes the test
// runner's `test(name, async fn)` and a node:assert/strict-compatible `assert`, so the
// same module runs under node:test, Deno.test, bun:test or a browser harness.
// This module must not import node:test or any `node:` module.
//
//   runStorageHostTests({ name, makeStorage, test, assert, tmpDir })
//   runFileRangeTests({ name, makeStorage, test, assert, tmpDir, sparse })
//   runVectorTests({ name, test, assert, ContextManager, memoryStorage, vectors })
//   runSeedApiTests({ name, makeStorage, ContextManager, test, assert, contextDir, expectedContextDir? })
//
// makeStorage(): a fresh StorageHost. tmpDir() / contextDir(): a fresh folder path per
// call (an absolute temp dir for file-system adapters, e.g. "/ctx/<n>" for memory).
// expectedContextDir(dir) (optional): what getContextDir() reports for `dir` on this
// runtime (default: `dir` itself).

const encoder = new TextEncoder();
/** Where an adapter's write function keeps its gather write (pkg-template/adapters/node.js). */
const WRITE_PARTS = Symbol.for("toolctx.writeParts");
const decoder = new TextDecoder();

const NAME_RE = /^[A-Za-z0-9_-]{1,64}_[0-9a-f]{12}_[0-9]{13}_[0-9]+_[a-z0-9]{4}\.json$/;
const NAME_PARTS_RE = /^(.*)_([0-9a-f]{12})_([0-9]{13})_([0-9]+)_([a-z0-9]{4})\.json$/;
const ISO_MS_RE = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const HEX64_RE = /^[0-9a-f]{64}$/;
/** A persistThreshold that holds small records in memory (an opt-in: the default writes every record). */
const HOLD = 32 * 1024;

// ---------------------------------------------------------------------------
// helpers (exported for runtime-specific test files)

export function toBytes(data) {
  if (typeof data === "string") return encoder.encode(data);
  if (data instanceof Uint8Array) return data;
  if (ArrayBuffer.isView(data)) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  if (data instanceof ArrayBuffer) return new Uint8Array(data);
  throw new TypeError(`not bytes or text: ${Object.prototype.toString.call(data)}`);
}

export function toText(data) {
  return typeof data === "string" ? data : decoder.decode(toBytes(data));
}

export function sameBytes(a, b) {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

export function joinPath(dir, name) {
  return dir.endsWith("/") ? `${dir}${name}` : `${dir}/${name}`;
}

export function basename(path) {
  const i = path.lastIndexOf("/");
  return i === -1 ? path : path.slice(i + 1);
}

export function parentDir(path) {
  const i = path.lastIndexOf("/");
  return i <= 0 ? "/" : path.slice(0, i);
}

/** Expected sanitised filename prefix (SPEC §3). */
export function sanitizeToolName(name) {
  const out = [...name].map((c) => (/^[A-Za-z0-9_-]$/.test(c) ? c : "-")).join("").slice(0, 64);
  return out === "" ? "tool" : out;
}

/** Parses a record filename into its parts, or null. */
export function nameParts(filename) {
  const m = NAME_PARTS_RE.exec(filename);
  return m && { tool: m[1], hash: m[2], timestamp: m[3], counter: m[4], random: m[5] };
}

/** Every file path under `dir` (recursive), sorted. */
/** The files under `dir`, sorted: records and any other file, not the index segments
 * (derived data in `.index/` folders, SPEC §4; `listSegments` lists them). */
export async function listFiles(storage, dir) {
  const out = [];
  const walk = async (d) => {
    const names = await storage.list(d);
    for (const n of names) {
      if (n === ".index/") continue;
      if (n.endsWith("/")) await walk(joinPath(d, n.slice(0, -1)));
      else out.push(joinPath(d, n));
    }
  };
  await walk(dir);
  return out.sort();
}

/** The index segments of the record folder `dir` (SPEC §4). */
export async function listSegments(storage, dir) {
  return (await storage.list(joinPath(dir, ".index"))).filter((n) => n.endsWith(".seg")).map((n) => joinPath(dir, `.index/${n}`));
}

export async function readText(storage, path) {
  const data = await storage.read(path);
  return data === undefined ? undefined : toText(data);
}

export async function readRecord(storage, path) {
  const text = await readText(storage, path);
  return text === undefined ? undefined : JSON.parse(text);
}

/**
 * Calls `fn`, asserts it returned a Promise (no synchronous throw) that rejects with an
 * Error carrying a string `code` (=== `code` when given). Resolves to the error.
 */
export async function expectRejection(assert, fn, code, label = "call") {
  let p;
  try {
    p = fn();
  } catch (err) {
    assert.fail(`${label} threw synchronously instead of returning a rejected Promise: ${err?.code ?? ""} ${err}`);
  }
  assert.ok(p !== null && typeof p === "object" && typeof p.then === "function", `${label} returns a Promise`);
  let resolved = false;
  let value;
  const err = await p.then(
    (v) => {
      resolved = true;
      value = v;
    },
    (e) => e,
  );
  if (resolved) assert.fail(`${label} resolved (${JSON.stringify(value)}) but should reject with ${code ?? "an error"}`);
  assert.ok(err instanceof Error, `${label} rejects with an Error (got ${Object.prototype.toString.call(err)}: ${err})`);
  assert.equal(typeof err.code, "string", `${label}: error has a string code (message: ${err.message})`);
  if (code !== undefined) assert.equal(err.code, code, `${label}: error code (message: ${err.message})`);
  return err;
}

/** A deterministic [0,1) source: `first` for the first `n` calls, then a varying sequence. */
export function randomAfter(first, n) {
  let calls = 0;
  return () => {
    calls++;
    if (calls <= n) return first;
    return ((calls * 0.6180339887498949) % 1 + 0.05) % 1;
  };
}

/** A storage wrapping `base` whose write is replaced by `write`. */
export function withWrite(base, write) {
  const host = {
    read: (p) => base.read(p),
    write,
    remove: (p) => base.remove(p),
    list: (d) => base.list(d),
  };
  if (base.removeDir) host.removeDir = (p) => base.removeDir(p);
  return host;
}

/** A seed-style IFileSystem over a Map (files) and a Set (folders). */
export function mapFileSystem() {
  const files = new Map();
  const dirs = new Set();
  const enoent = (p) => Object.assign(new Error(`ENOENT: no such file or directory, '${p}'`), { code: "ENOENT" });
  const trim = (p) => (p.length > 1 && p.endsWith("/") ? p.slice(0, -1) : p);
  return {
    files,
    async readFile(path) {
      if (!files.has(path)) throw enoent(path);
      return files.get(path);
    },
    async writeFile(path, data) {
      files.set(path, typeof data === "string" ? data : decoder.decode(data));
    },
    async readdir(path) {
      const dir = trim(path);
      const prefix = `${dir}/`;
      const names = new Set();
      for (const p of [...files.keys(), ...dirs]) {
        if (!p.startsWith(prefix)) continue;
        const rest = p.slice(prefix.length);
        if (rest === "") continue;
        names.add(rest.split("/")[0]);
      }
      if (names.size === 0 && !dirs.has(dir)) throw enoent(path);
      return [...names].sort();
    },
    async unlink(path) {
      if (!files.delete(path)) throw enoent(path);
    },
    async mkdir(path, options = {}) {
      const parts = trim(path).split("/");
      if (options.recursive) {
        for (let i = 1; i <= parts.length; i++) dirs.add(parts.slice(0, i).join("/") || "/");
      } else {
        dirs.add(trim(path));
      }
    },
    async exists(path) {
      return files.has(path) || dirs.has(trim(path));
    },
    async rename(from, to) {
      if (!files.has(from)) throw enoent(from);
      files.set(to, files.get(from));
      files.delete(from);
    },
  };
}

// ---------------------------------------------------------------------------
// StorageHost contract (SPEC §4)

export function runStorageHostTests({ name, makeStorage, test, assert, tmpDir }) {
  const t = (title, fn) => test(`[${name}] storage host: ${title}`, fn);

  t("read of a missing path is undefined (also in a missing folder)", async () => {
    const s = makeStorage();
    const dir = tmpDir();
    assert.equal(await s.read(joinPath(dir, "missing.json")), undefined);
    assert.equal(await s.read(joinPath(dir, "no/such/folder/missing.json")), undefined);
  });

  t("write then read returns the same text (string input)", async () => {
    const s = makeStorage();
    const p = joinPath(tmpDir(), "a.json");
    const text = '{"hello":"world","n":[1,2,3]}\n';
    await s.write(p, text);
    const got = await s.read(p);
    assert.notEqual(got, undefined);
    assert.equal(toText(got), text);
  });

  t("write then read returns the same bytes (Uint8Array input)", async () => {
    const s = makeStorage();
    const p = joinPath(tmpDir(), "b.bin");
    const bytes = encoder.encode("bytes \u00e9\u20ac\u{1F642} end");
    await s.write(p, bytes);
    const got = await s.read(p);
    assert.notEqual(got, undefined);
    assert.ok(sameBytes(toBytes(got), bytes), "bytes round-trip");
  });

  t("an adapter's gather write (on its write function), where it has one, writes the parts' bytes in order, exclusively when asked", async () => {
    const s = makeStorage();
    const gather = s.write[WRITE_PARTS];
    if (typeof gather !== "function") return; // adapters without one get records joined
    const dir = tmpDir();
    const big = encoder.encode(`"${"é".repeat(40_000)}"`);
    const parts = [encoder.encode('{"v":1,"result":'), big, encoder.encode("}")];
    const whole = new Uint8Array([...parts[0], ...big, ...parts[2]]);
    const p = joinPath(dir, "parts.json");
    await gather.call(s, p, parts, { exclusive: true });
    assert.ok(sameBytes(toBytes(await s.read(p)), whole), "the parts, joined");
    await assert.rejects(Promise.resolve().then(() => gather.call(s, p, [encoder.encode("x")], { exclusive: true })), (e) => e.code === "EEXIST");
    assert.ok(sameBytes(toBytes(await s.read(p)), whole), "a refused exclusive write leaves the file as it was");
    await gather.call(s, p, [encoder.encode("a"), encoder.encode(""), encoder.encode("b")]);
    assert.equal(await readText(s, p), "ab", "a replacing write");
  });

  t("the host keeps its own copy of written bytes", async () => {
    const s = makeStorage();
    const p = joinPath(tmpDir(), "copy.txt");
    const bytes = encoder.encode("original");
    await s.write(p, bytes);
    bytes.fill(0x41);
    assert.equal(await readText(s, p), "original");
  });

  t("write replaces the whole file (long then short)", async () => {
    const s = makeStorage();
    const p = joinPath(tmpDir(), "replace.txt");
    await s.write(p, "a much longer first version of the file content");
    await s.write(p, "short");
    assert.equal(await readText(s, p), "short");
    await s.write(p, encoder.encode("xy"));
    assert.equal(await readText(s, p), "xy");
  });

  t("write creates parent folders", async () => {
    const s = makeStorage();
    const dir = tmpDir();
    const p = joinPath(dir, "a/b/c/deep.txt");
    await s.write(p, "deep");
    assert.equal(await readText(s, p), "deep");
    assert.deepEqual(await s.list(dir), ["a/"]);
    assert.deepEqual(await s.list(joinPath(dir, "a/b/c")), ["deep.txt"]);
    const q = joinPath(dir, "x/y/excl.txt");
    await s.write(q, "exclusive in new folder", { exclusive: true });
    assert.equal(await readText(s, q), "exclusive in new folder");
  });

  t("exclusive write on an existing path fails with EEXIST and keeps the old content", async () => {
    const s = makeStorage();
    const p = joinPath(tmpDir(), "excl.json");
    await s.write(p, "first", { exclusive: true });
    assert.equal(await readText(s, p), "first");
    let err;
    try {
      await s.write(p, "second", { exclusive: true });
    } catch (e) {
      err = e;
    }
    assert.ok(err, "second exclusive write must fail");
    assert.equal(err.code, "EEXIST");
    assert.equal(await readText(s, p), "first");
    // a non-exclusive write still replaces it
    await s.write(p, "third", { exclusive: false });
    assert.equal(await readText(s, p), "third");
  });

  t("remove deletes and is idempotent", async () => {
    const s = makeStorage();
    const dir = tmpDir();
    const p = joinPath(dir, "gone.txt");
    const keep = joinPath(dir, "keep.txt");
    await s.write(p, "x");
    await s.write(keep, "k");
    await s.remove(p);
    assert.equal(await s.read(p), undefined);
    await s.remove(p); // twice
    await s.remove(joinPath(dir, "never-existed.txt"));
    await s.remove(joinPath(dir, "no/such/folder/file.txt"));
    assert.equal(await readText(s, keep), "k", "removing one file leaves its sibling");
    assert.deepEqual(await s.list(dir), ["keep.txt"]);
  });

  t("list gives direct children, folders end in '/', [] for a missing folder", async () => {
    const s = makeStorage();
    const dir = tmpDir();
    assert.deepEqual(await s.list(dir), []);
    assert.deepEqual(await s.list(joinPath(dir, "nope/never")), []);
    await s.write(joinPath(dir, "one.json"), "1");
    await s.write(joinPath(dir, "two.txt"), "2");
    await s.write(joinPath(dir, "sub/three.json"), "3");
    await s.write(joinPath(dir, "sub/deeper/four.json"), "4");
    assert.deepEqual([...(await s.list(dir))].sort(), ["one.json", "sub/", "two.txt"]);
    assert.deepEqual([...(await s.list(joinPath(dir, "sub")))].sort(), ["deeper/", "three.json"]);
    assert.deepEqual([...(await s.list(joinPath(dir, "sub/deeper")))], ["four.json"]);
  });

  t("unicode file names and content round-trip", async () => {
    const s = makeStorage();
    const dir = tmpDir();
    const names = ["über.json", "認証.json", "emoji-\u{1F642}.json", "Ελληνικά.txt"];
    for (const [i, n] of names.entries()) {
      await s.write(joinPath(dir, n), `内容 ${i} \u{1F600} ñ`);
    }
    for (const [i, n] of names.entries()) {
      assert.equal(await readText(s, joinPath(dir, n)), `内容 ${i} \u{1F600} ñ`, n);
    }
    const listed = [...(await s.list(dir))].map((n) => n.normalize("NFC")).sort();
    assert.deepEqual(listed, names.map((n) => n.normalize("NFC")).sort());
  });

  t("a file of 8 MiB round-trips", async () => {
    const s = makeStorage();
    const p = joinPath(tmpDir(), "big.json");
    const size = 8 * 1024 * 1024 + 17;
    const bytes = new Uint8Array(size);
    for (let i = 0; i < size; i++) bytes[i] = 0x21 + ((i * 7 + (i >>> 10)) % 90); // printable ASCII, position-dependent
    await s.write(p, bytes);
    const got = toBytes(await s.read(p));
    assert.equal(got.length, size);
    assert.ok(sameBytes(got, bytes), "8 MiB content identical");
  });

  t("append (when the host has it) creates the file and parents, then adds at the end", async () => {
    const s = makeStorage();
    if (typeof s.append !== "function") return;
    const dir = tmpDir();
    const p = joinPath(dir, "logs/a.jsonl");
    await s.append(p, "one\n");
    await s.append(p, encoder.encode("two \u00e9\n"));
    await s.append(p, "");
    assert.equal(await readText(s, p), "one\ntwo \u00e9\n");
    assert.deepEqual(await s.list(dir), ["logs/"]);
    await Promise.all(Array.from({ length: 20 }, (_, i) => Promise.resolve(s.append(p, `${i}\n`))));
    const lines = (await readText(s, p)).split("\n").filter(Boolean);
    assert.equal(lines.length, 22, "20 concurrent appends all land");
    assert.deepEqual(lines.slice(2).map(Number).sort((a, b) => a - b), Array.from({ length: 20 }, (_, i) => i));
  });

  // readRange (SPEC §4), where the host has it: the bytes [offset, offset + length).
  /** A file of `size` bytes whose neighbouring bytes differ: a misplaced range shows. */
  const patterned = (size) => {
    const bytes = new Uint8Array(size);
    for (let i = 0; i < size; i++) bytes[i] = (i * 7 + (i >>> 8)) & 0xff;
    return bytes;
  };
  /** What `s.readRange(...)` answered, asserted to be bytes (a Uint8Array, never a string) or undefined. */
  const rangeOf = async (s, path, offset, length) => {
    const got = await s.readRange(path, offset, length);
    if (got !== undefined) assert.ok(got instanceof Uint8Array, `readRange(${offset}, ${length}) gives a Uint8Array, got ${Object.prototype.toString.call(got)}`);
    return got;
  };
  /** Asserts `got` is an empty Uint8Array (not undefined: the file is there). */
  const none = (got, what) => assert.ok(got instanceof Uint8Array && got.length === 0, `${what}: an empty Uint8Array, got ${got === undefined ? "undefined" : `${got.length} bytes`}`);

  t("readRange (when the host has it) gives the exact bytes of a range, also of a file written as a string", async () => {
    const s = makeStorage();
    if (typeof s.readRange !== "function") return;
    const dir = tmpDir();
    const bin = joinPath(dir, "seg/a.bin");
    const bytes = patterned(5000);
    await s.write(bin, bytes);
    assert.ok(sameBytes(await rangeOf(s, bin, 1234, 2000), bytes.subarray(1234, 3234)), "a middle range");
    assert.ok(sameBytes(await rangeOf(s, bin, 0, 1), bytes.subarray(0, 1)), "the first byte");
    assert.ok(sameBytes(await rangeOf(s, bin, 4999, 1), bytes.subarray(4999)), "the last byte");
    assert.ok(sameBytes(await rangeOf(s, bin, 0, 5000), bytes), "the whole file");
    const text = joinPath(dir, "text.json");
    const written = `{"k":"\u00e9\u20ac\u{1F642} \u8a8d\u8a3c ${"x".repeat(3000)}"}`;
    await s.write(text, written);
    const utf8 = encoder.encode(written);
    assert.ok(sameBytes(await rangeOf(s, text, 7, 9), utf8.subarray(7, 16)), "a range of UTF-8 bytes, cut inside characters");
    assert.ok(sameBytes(await rangeOf(s, text, 100, 2500), utf8.subarray(100, 2600)));
  });

  t("readRange (when the host has it and append) of a file of appended pieces of uneven sizes", async () => {
    const s = makeStorage();
    if (typeof s.readRange !== "function" || typeof s.append !== "function") return;
    // Where a medium keeps each piece apart (a Durable Object's cells), a range spans several.
    const log = joinPath(tmpDir(), "log.bin");
    const pieces = [patterned(10), patterned(70_000), patterned(3), patterned(5000)];
    const joined = new Uint8Array(10 + 70_000 + 3 + 5000);
    let at = 0;
    for (const piece of pieces) {
      await s.append(log, piece);
      joined.set(piece, at);
      at += piece.length;
    }
    assert.ok(sameBytes(await rangeOf(s, log, 5, 70_004), joined.subarray(5, 70_009)), "a range across appended pieces");
    assert.ok(sameBytes(await rangeOf(s, log, 70_011, 10), joined.subarray(70_011, 70_021)), "a range across the short piece");
  });

  t("readRange (when the host has it): fewer bytes at the end, none from the end on, undefined for no file", async () => {
    const s = makeStorage();
    if (typeof s.readRange !== "function") return;
    const dir = tmpDir();
    const p = joinPath(dir, "short.bin");
    const bytes = patterned(3000);
    await s.write(p, bytes);
    assert.ok(sameBytes(await rangeOf(s, p, 2500, 1000), bytes.subarray(2500)), "a range running past the end: the bytes up to it");
    assert.ok(sameBytes(await rangeOf(s, p, 0, 1 << 20), bytes), "a range far longer than the file");
    none(await rangeOf(s, p, 3000, 10), "offset at the end: empty");
    none(await rangeOf(s, p, 3001, 10), "offset past the end: empty");
    none(await rangeOf(s, p, 2 ** 40, 10), "offset far past the end (1 TiB): empty");
    none(await rangeOf(s, p, 10, 0), "length 0 of a file: empty");
    none(await rangeOf(s, p, 5000, 0), "length 0 past the end of a file: empty");
    const empty = joinPath(dir, "empty.bin");
    await s.write(empty, new Uint8Array(0));
    none(await rangeOf(s, empty, 0, 10), "a range of an empty file: empty");
    none(await rangeOf(s, empty, 0, 0), "length 0 of an empty file: empty, not undefined");
    assert.equal(await rangeOf(s, joinPath(dir, "missing.bin"), 0, 10), undefined, "no file");
    assert.equal(await rangeOf(s, joinPath(dir, "missing.bin"), 0, 0), undefined, "no file, length 0");
    assert.equal(await rangeOf(s, joinPath(dir, "no/such/folder/missing.bin"), 5, 10), undefined, "no folder");
    await s.remove(p);
    assert.equal(await rangeOf(s, p, 0, 10), undefined, "a removed file");
  });

  t("readRange (when the host has it) of a file of 8 MiB: past 1 MiB, across 4 MiB, across its end", async () => {
    const s = makeStorage();
    if (typeof s.readRange !== "function") return;
    const p = joinPath(tmpDir(), "big.seg");
    const size = 8 * 1024 * 1024 + 17;
    const bytes = patterned(size);
    await s.write(p, bytes);
    const at = 1024 * 1024 + 12_345;
    assert.ok(sameBytes(await rangeOf(s, p, at, 300_000), bytes.subarray(at, at + 300_000)), "300,000 bytes past 1 MiB");
    const mid = 4 * 1024 * 1024;
    assert.ok(sameBytes(await rangeOf(s, p, mid - 5, 10), bytes.subarray(mid - 5, mid + 5)), "across 4 MiB");
    assert.ok(sameBytes(await rangeOf(s, p, size - 100, 1000), bytes.subarray(size - 100)), "the last 100 bytes");
  });

  t("readRange (when the host has it) rejects an offset or length that is not a whole number ≥ 0: INVALID_ARGUMENT", async () => {
    const s = makeStorage();
    if (typeof s.readRange !== "function") return;
    const p = joinPath(tmpDir(), "args.bin");
    await s.write(p, "0123456789");
    const bad = [
      [-1, 1],
      [0, -1],
      [0, 1.5],
      [1.5, 1],
      ["3", 1],
      [0, "3"],
      [Number.NaN, 1],
      [0, Number.POSITIVE_INFINITY],
      [undefined, 1],
      [Number.MAX_SAFE_INTEGER, 2],
    ];
    for (const [offset, length] of bad) {
      await expectRejection(assert, () => s.readRange(p, offset, length), "INVALID_ARGUMENT", `readRange(${String(offset)}, ${String(length)})`);
    }
    assert.ok(sameBytes(await rangeOf(s, p, 3, 4), encoder.encode("3456")), "a good range afterwards");
  });

  t("50 concurrent writes to different files all land", async () => {
    const s = makeStorage();
    const dir = tmpDir();
    await Promise.all(
      Array.from({ length: 50 }, (_, i) => Promise.resolve(s.write(joinPath(dir, `f${i}.json`), `{"i":${i}}`))),
    );
    const listed = [...(await s.list(dir))].sort();
    assert.equal(listed.length, 50);
    for (let i = 0; i < 50; i++) {
      assert.equal(await readText(s, joinPath(dir, `f${i}.json`)), `{"i":${i}}`);
    }
  });
}

/**
 * readRange over a real file system (node, bun, deno) reads only the range, at offsets
 * past 4 GiB: a sparse file of 5 GiB (Node's readFile refuses a file over 2 GiB) with a
 * few bytes past 4 GiB. `sparse(path, size, at, bytes)` makes that file, its folder
 * too (the runtime's truncate and positional write). The range reads check `root`.
 */
export function runFileRangeTests({ name, makeStorage, test, assert, tmpDir, sparse }) {
  test(`[${name}] readRange reads only the range: bytes past 4 GiB of a sparse file of 5 GiB`, async () => {
    const s = makeStorage();
    const dir = tmpDir();
    const path = joinPath(dir, "sparse.seg");
    const size = 5 * 2 ** 30;
    const at = 4 * 2 ** 30 + 12_345;
    const marker = encoder.encode("range");
    await sparse(path, size, at, marker);
    const got = await s.readRange(path, at - 2, marker.length + 4, { root: dir });
    assert.ok(got instanceof Uint8Array, "bytes");
    assert.deepEqual([...got], [0, 0, ...marker, 0, 0], "the bytes around the marker");
    assert.deepEqual([...(await s.readRange(path, size - 3, 10, { root: dir }))], [0, 0, 0], "the last 3 bytes");
    assert.equal((await s.readRange(path, size, 10, { root: dir })).length, 0, "none from the end on");
  });
}

// ---------------------------------------------------------------------------
// Seed API (SPEC §2, §3, §4, §6 seed part, §9)

export function runSeedApiTests({
  name,
  makeStorage,
  ContextManager,
  test,
  assert,
  contextDir,
  expectedContextDir = (d) => d,
}) {
  const t = (title, fn) => test(`[${name}] seed api: ${title}`, fn);

  /** A fresh storage, dir and manager (persistThreshold 0 unless overridden). */
  function setup(extra = {}) {
    const storage = extra.fileSystem ?? makeStorage();
    const dir = extra.contextDir ?? contextDir();
    const debug = [];
    const m = new ContextManager({
      contextDir: dir,
      fileSystem: storage,
      persistThreshold: 0,
      onDebug: (msg, data) => debug.push({ msg, data }),
      ...extra,
    });
    return { m, storage, dir, base: m.getContextDir(), debug };
  }

  function assertInside(base, filepath, label = filepath) {
    assert.equal(typeof filepath, "string", "filepath is a string");
    assert.ok(filepath.startsWith(`${base}/`), `${label} is inside ${base}`);
    assert.equal(parentDir(filepath), base, `${label} is directly in the context dir`);
    assert.ok(!filepath.split("/").includes(".."), `${label} has no '..' segment`);
    assert.match(basename(filepath), NAME_RE, `${label}: filename pattern`);
  }

  // -- saveContext: names, records, pointers

  t("a host whose write has a gather write gets a large record as its parts, written as one write of them would be", async () => {
    const inner = makeStorage();
    const calls = [];
    const host = {};
    for (const name of ["read", "remove", "list", "removeDir", "lock"]) {
      if (typeof inner[name] === "function") host[name] = (...args) => inner[name](...args);
    }
    host.write = (path, data, options) => {
      calls.push(["write", data.length]);
      return inner.write(path, data, options);
    };
    host.write[WRITE_PARTS] = (path, parts, options) => {
      calls.push(["parts", parts.length]);
      const whole = new Uint8Array(parts.reduce((n, part) => n + part.length, 0));
      parts.reduce((at, part) => (whole.set(part, at), at + part.length), 0);
      return inner.write(path, whole, options);
    };
    const { m } = setup({ fileSystem: host, persistThreshold: 0 });
    const large = { content: "x".repeat(70_000), n: 1 };
    const paths = [await m.saveContext("readFile", { path: "a.ts" }, "small"), await m.saveContext("readFile", { path: "b.ts" }, large)];
    assert.deepEqual(calls.map((c) => c[0]), ["write", "parts"], "the small record in one buffer, the large one in parts");
    assert.equal(calls[1][1], 3, "header, result, closing brace");
    assert.deepEqual((await m.loadContexts(paths)).map((r) => r.result), ["small", large]);
    const record = JSON.parse(toText(await inner.read(paths[1])));
    assert.deepEqual(record.result, large);
    assert.equal(record.toolName, "readFile");
    await m.close();
  });

  t("a host made of an adapter with its own write ({...storage, write}) gets every record through that write", async () => {
    const inner = makeStorage();
    const seen = [];
    const host = { ...inner, write: (path, data, options) => (seen.push(path), inner.write(path, data, options)) };
    for (const name of ["read", "remove", "list", "removeDir", "lock", "append"]) {
      if (typeof inner[name] === "function") host[name] = (...args) => inner[name](...args);
    }
    const { m } = setup({ fileSystem: host, persistThreshold: 0 });
    const large = { content: "x".repeat(70_000) };
    const paths = [await m.saveContext("t", { a: 1 }, "small"), await m.saveContext("t", { a: 2 }, large)];
    assert.deepEqual(seen, paths, "the large record too went through the host's write");
    assert.deepEqual((await m.loadContexts(paths)).map((r) => r.result), ["small", large]);
    await m.close();
  });

  t("a host whose methods return bare thenables (not Promises) works as one returning Promises", async () => {
    const inner = makeStorage();
    // `then` alone, returning nothing: what a minimal thenable does. It runs `call` later.
    const bare = (call) => ({ then(resolve, reject) { setTimeout(() => Promise.resolve().then(call).then(resolve, reject), 0); } });
    const host = {};
    for (const name of ["read", "write", "remove", "list", "removeDir"]) {
      if (typeof inner[name] === "function") host[name] = (...args) => bare(() => inner[name](...args));
    }
    const { m } = setup({ fileSystem: host, session: true });
    const large = { content: "x".repeat(70_000) };
    const paths = [await m.saveContext("readFile", { path: "a.ts" }, "small"), await m.saveContext("readFile", { path: "b.ts" }, large)];
    assert.deepEqual((await m.loadContexts(paths)).map((r) => r.result), ["small", large]);
    await m.flush();
    assert.equal(await m.rebuildIndex(), 2);
    const taken = bare(() => {
      throw Object.assign(new Error("exists"), { code: "EEXIST" });
    });
    let writes = 0;
    const once = { ...host, write: (...args) => (writes++ === 0 ? taken : host.write(...args)) };
    const n = new ContextManager({ contextDir: contextDir(), fileSystem: once, persistThreshold: 0 });
    await n.saveContext("grep", { pattern: "x" }, "y");
    assert.equal(writes, 2, "a taken name, given as a bare thenable that rejects, is drawn again");
    await m.close();
    await n.close();
  });

  t("a save with no session, no retention and nothing over the memory budget runs no task (held, written whole, written in parts)", async () => {
    const held = setup({ persistThreshold: 1 << 20 });
    const written = setup();
    const large = { content: "x".repeat(70_000) };
    const paths = [
      await held.m.saveContext("readFile", { path: "a.ts" }, "held in memory"),
      await written.m.saveContext("readFile", { path: "b.ts" }, "written whole"),
      await written.m.saveContext("readFile", { path: "c.ts" }, large),
    ];
    assert.deepEqual((await held.m.loadContexts(paths.slice(0, 1))).map((r) => r.result), ["held in memory"]);
    assert.deepEqual((await written.m.loadContexts(paths.slice(1))).map((r) => r.result), ["written whole", large]);
    assert.equal((await readRecord(written.storage, paths[2])).result.content.length, 70_000, "the large record is on storage");
  });

  t("clearContextDir() and clear() of a manager without a session run no task, and a close waiting for them ends", async () => {
    const { m, storage } = setup();
    const kept = joinPath(m.getContextDir(), "notes.txt");
    await storage.write(kept, "mine");
    const first = await m.saveContext("readFile", { path: "a.ts" }, "a");
    await m.clearContextDir();
    assert.equal(await storage.read(first), undefined, "the record is removed");
    assert.equal(m.size, 1, "clearContextDir keeps the pointers");
    const second = await m.saveContext("readFile", { path: "b.ts" }, "b");
    await m.clear();
    assert.equal(await storage.read(second), undefined);
    assert.equal(m.size, 0, "clear forgets the pointers");
    assert.equal(toText(await storage.read(kept)), "mine", "a file it did not write stays");
    // A removal that settles later: close() waits for the clear in flight, then ends.
    const slow = { ...storage, remove: (p) => new Promise((resolve) => setTimeout(resolve, 5)).then(() => storage.remove(p)) };
    for (const name of ["read", "write", "list", "removeDir", "lock"]) if (typeof storage[name] === "function") slow[name] = storage[name].bind(storage);
    const late = new ContextManager({ contextDir: m.getContextDir(), fileSystem: slow, persistThreshold: 0 });
    const third = await late.saveContext("readFile", { path: "c.ts" }, "c");
    const clearing = late.clear();
    await late.close();
    await clearing;
    assert.equal(await storage.read(third), undefined, "the clear begun before close ran to its end");
  });

  t("saveContext returns a filepath in contextDir named by the pattern; the record is stored", async () => {
    const { m, storage, base } = setup();
    const args = { path: "src/auth/login.ts", limit: 10 };
    const result = { content: "export function login() {}", lines: 1 };
    const p = m.saveContext("readFile", args, result, 3, "q_abc");
    assert.ok(p instanceof Promise || typeof p?.then === "function", "saveContext returns a Promise");
    const fp = await p;
    assertInside(base, fp);
    const parts = nameParts(basename(fp));
    assert.equal(parts.tool, "readFile");

    const rec = await readRecord(storage, fp);
    assert.ok(rec, "record file exists in storage");
    assert.equal(rec.v, 1);
    assert.equal(rec.toolName, "readFile");
    assert.equal(typeof rec.toolDescription, "string");
    assert.ok(rec.toolDescription.length > 0, "description not empty");
    assert.deepEqual(rec.args, args);
    assert.match(rec.argsHash, HEX64_RE);
    assert.equal(parts.hash, rec.argsHash.slice(0, 12), "filename hash = first 12 hex of argsHash");
    assert.match(rec.timestamp, ISO_MS_RE);
    assert.equal(Date.parse(rec.timestamp), Number(parts.timestamp), "filename ms = record timestamp");
    assert.ok(Math.abs(Date.parse(rec.timestamp) - Date.now()) < 60_000, "timestamp is now");
    assert.equal(rec.taskId, 3);
    assert.equal(rec.queryId, "q_abc");
    assert.deepEqual(rec.result, result);
  });

  t("pointer mirrors the record (filepath, filename, toolName, description, args, ids, argsHash, size)", async () => {
    const { m, storage, base } = setup();
    const fp = await m.saveContext("searchCode", { query: "auth error", dir: "src" }, ["a.ts:1", "b.ts:2"], 5, "q_1");
    const [ptr, ...rest] = m.getAllPointers();
    assert.equal(rest.length, 0);
    const rec = await readRecord(storage, fp);
    assert.equal(ptr.filepath, fp);
    assert.equal(ptr.filename, basename(fp));
    assert.equal(ptr.toolName, "searchCode");
    assert.equal(ptr.toolDescription, rec.toolDescription);
    assert.deepEqual(ptr.args, { query: "auth error", dir: "src" });
    assert.equal(ptr.taskId, 5);
    assert.equal(ptr.queryId, "q_1");
    assert.equal(ptr.argsHash, rec.argsHash);
    assert.equal(ptr.timestamp, rec.timestamp);
    const bytes = toBytes(await storage.read(fp));
    assert.equal(ptr.size, bytes.length, "pointer.size = byte length of the stored record");
    assert.ok(!("result" in ptr), "the pointer does not carry the result");
    assert.equal(m.getContextDir(), base);
  });

  t("pointers saved with the same args are each their own: key order, description, copies", async () => {
    // The mirror (pointers.js) holds the args of pointers saved with the same tool and
    // args once: what each list hands out stays each pointer's own.
    const { m } = setup();
    const calls = [
      ["readFile", { path: "a.ts", opts: { n: 1 } }],
      ["readFile", { opts: { n: 1 }, path: "a.ts" }], // the same args hash, another key order
      ["readFile", { path: "a.ts", opts: { n: 1 } }],
      ["readFile", { path: "a.ts", opts: { n: 1 } }, { description: "mine" }],
      ["grepFile", { path: "a.ts", opts: { n: 1 } }], // another tool, the same args
      ["readFile", { path: "a.ts", opts: { n: 1 } }],
    ];
    for (const [tool, args, options] of calls) await m.saveContext(tool, args, "x", options ?? 1);
    const first = m.getAllPointers();
    assert.equal(first[0].argsHash, first[1].argsHash);
    assert.deepEqual(first.map((p) => JSON.stringify(p.args)), calls.map(([, args]) => JSON.stringify(args)));
    assert.equal(first[3].toolDescription, "mine");
    assert.equal(first[4].toolName, "grepFile");
    assert.notEqual(first[4].toolDescription, first[0].toolDescription);
    assert.equal(first[5].toolDescription, first[0].toolDescription);
    assert.notEqual(first[0].args, first[2].args, "two objects, not one");
    first[0].args.opts.n = 2;
    first[2].args.path = "b.ts";
    const again = m.getAllPointers();
    assert.deepEqual(again.map((p) => JSON.stringify(p.args)), calls.map(([, args]) => JSON.stringify(args)));
    assert.deepEqual(again.map((p) => p.toolDescription), first.map((p) => p.toolDescription));
    assert.deepEqual(again.map((p) => p.filename), again.map((p) => basename(p.filepath)));
  });

  t("description is built from the tool name words and the args", async () => {
    const { m, storage } = setup();
    const fp = await m.saveContext("readFile", { path: "src/auth/login.ts" }, "x");
    const rec = await readRecord(storage, fp);
    assert.match(rec.toolDescription, /read/i);
    assert.match(rec.toolDescription, /file/i);
    assert.ok(rec.toolDescription.includes("src/auth/login.ts"), `description names the arg value: ${rec.toolDescription}`);
  });

  t("clock option drives the filename timestamp and the record timestamp; counter runs from 0", async () => {
    const { m, storage } = setup({ clock: () => 1700000000123 });
    const fps = [];
    for (let i = 0; i < 3; i++) fps.push(await m.saveContext("t", { i }, i));
    const parts = fps.map((fp) => nameParts(basename(fp)));
    assert.deepEqual(parts.map((p) => p.timestamp), ["1700000000123", "1700000000123", "1700000000123"]);
    assert.deepEqual(parts.map((p) => p.counter), ["0", "1", "2"]);
    const rec = await readRecord(storage, fps[0]);
    assert.equal(rec.timestamp, "2023-11-14T22:13:20.123Z");
  });

  t("taskId/queryId not given are absent (not null) in record and pointer", async () => {
    const { m, storage } = setup();
    const fp = await m.saveContext("t", { a: 1 }, "r");
    const rec = await readRecord(storage, fp);
    assert.equal("taskId" in rec, false, "record has no taskId key");
    assert.equal("queryId" in rec, false, "record has no queryId key");
    const [ptr] = m.getAllPointers();
    assert.equal("taskId" in ptr, false, "pointer has no taskId key");
    assert.equal("queryId" in ptr, false, "pointer has no queryId key");
    const [loaded] = await m.loadContexts([fp]);
    assert.equal("taskId" in loaded, false);
    assert.equal("queryId" in loaded, false);

    // only taskId given
    const fp2 = await m.saveContext("t", { a: 2 }, "r", 4);
    const rec2 = await readRecord(storage, fp2);
    assert.equal(rec2.taskId, 4);
    assert.equal("queryId" in rec2, false);
    // explicit undefined
    const fp3 = await m.saveContext("t", { a: 3 }, "r", undefined, undefined);
    const rec3 = await readRecord(storage, fp3);
    assert.equal("taskId" in rec3, false);
    assert.equal("queryId" in rec3, false);
  });

  t("taskId 0 and queryId '' are kept (falsy is not absent)", async () => {
    const { m, storage } = setup();
    const fp = await m.saveContext("t", {}, "r", 0, "");
    const rec = await readRecord(storage, fp);
    assert.equal(rec.taskId, 0);
    assert.equal(rec.queryId, "");
    assert.deepEqual(m.getPointersForTask(0).map((p) => p.filepath), [fp]);
    assert.deepEqual(m.getPointersForQuery("").map((p) => p.filepath), [fp]);
  });

  t("per-call options object: saveContext(tool, args, result, {taskId, queryId, description})", async () => {
    const { m, storage } = setup();
    const fp = await m.saveContext("grep", { pattern: "TODO" }, ["x"], {
      taskId: 7,
      queryId: "q_opts",
      description: "custom description of the grep",
    });
    const rec = await readRecord(storage, fp);
    assert.equal(rec.taskId, 7);
    assert.equal(rec.queryId, "q_opts");
    assert.equal(rec.toolDescription, "custom description of the grep");
    const [ptr] = m.getAllPointers();
    assert.equal(ptr.taskId, 7);
    assert.equal(ptr.queryId, "q_opts");
    assert.equal(ptr.toolDescription, "custom description of the grep");
    assert.deepEqual(m.getPointersForTask(7).map((p) => p.filepath), [fp]);

    const fp2 = await m.saveContext("grep", { pattern: "FIXME" }, [], {});
    const rec2 = await readRecord(storage, fp2);
    assert.equal("taskId" in rec2, false);
    assert.equal("queryId" in rec2, false);
  });

  t("the `storage` option is an alias of `fileSystem`", async () => {
    const storage = makeStorage();
    const m = new ContextManager({ contextDir: contextDir(), storage, persistThreshold: 0 });
    const fp = await m.saveContext("t", { a: 1 }, "via alias");
    const rec = await readRecord(storage, fp);
    assert.equal(rec?.result, "via alias");
  });

  // -- serialisation

  t("args and result are serialised exactly as JSON.stringify would", async () => {
    const { m, storage } = setup();
    const make = () => ({
      keep: "k",
      undef: undefined,
      fn() {},
      sym: Symbol("s"),
      arr: [1, undefined, () => 1, Symbol("x"), NaN, Infinity, -Infinity, null],
      nan: NaN,
      inf: -Infinity,
      date: new Date(Date.UTC(2020, 0, 2, 3, 4, 5, 6)),
      custom: { toJSON: () => ({ replaced: true }) },
      nested: { toJSON: (key) => `key:${key}`, ignored: 1 },
      zero: -0,
    });
    const args = make();
    const result = make();
    const expected = JSON.parse(JSON.stringify(make()));
    const fp = await m.saveContext("t", args, result);
    const rec = await readRecord(storage, fp);
    assert.deepEqual(rec.args, expected);
    assert.deepEqual(rec.result, expected);
    assert.equal(rec.result.date, "2020-01-02T03:04:05.006Z");
    assert.deepEqual(rec.result.arr, [1, null, null, null, null, null, null, null]);
    assert.equal("undef" in rec.result, false);
    assert.equal("fn" in rec.result, false);
    assert.equal("sym" in rec.result, false);
    assert.deepEqual(m.getAllPointers()[0].args, expected);
    const [loaded] = await m.loadContexts([fp]);
    assert.deepEqual(loaded.result, expected);
  });

  t("top-level undefined result is omitted; null, a Date and primitives are kept as JSON", async () => {
    const { m, storage } = setup();
    const fpU = await m.saveContext("t", {}, undefined);
    const recU = await readRecord(storage, fpU);
    assert.equal("result" in recU, false, "no result key for undefined");
    const fpN = await m.saveContext("t", {}, null);
    assert.equal((await readRecord(storage, fpN)).result, null);
    assert.equal("result" in (await readRecord(storage, fpN)), true);
    const fpD = await m.saveContext("t", {}, new Date(Date.UTC(2024, 4, 6, 7, 8, 9, 10)));
    assert.equal((await readRecord(storage, fpD)).result, "2024-05-06T07:08:09.010Z");
    const fpS = await m.saveContext("t", {}, "plain string");
    assert.equal((await readRecord(storage, fpS)).result, "plain string");
    const fpNaN = await m.saveContext("t", {}, NaN);
    assert.equal((await readRecord(storage, fpNaN)).result, null);
    const fpArgs = await m.saveContext("t", { when: new Date(0) }, 1);
    assert.deepEqual((await readRecord(storage, fpArgs)).args, { when: "1970-01-01T00:00:00.000Z" });
  });

  t("__proto__ and constructor keys round-trip as plain keys", async () => {
    const { m, storage } = setup({ persistThreshold: 32768 });
    const args = JSON.parse('{"__proto__":{"x":1},"constructor":"c"}');
    const result = JSON.parse('{"__proto__":{"polluted":true},"constructor":{"prototype":1}}');
    const fp = await m.saveContext("t", args, result);
    const [loaded] = await m.loadContexts([fp]);
    assert.ok(Object.prototype.hasOwnProperty.call(loaded.args, "__proto__"), "own __proto__ key in args");
    assert.deepEqual(JSON.stringify(loaded.args), JSON.stringify(args));
    assert.deepEqual(JSON.stringify(loaded.result), JSON.stringify(result));
    assert.equal({}.polluted, undefined, "Object.prototype not polluted");
    await m.flush();
    const text = await readText(storage, fp);
    assert.ok(text.includes('"__proto__":{"x":1}'), "stored as a plain key");
  });

  const notSerializable = [
    ["BigInt result", () => [{ a: 1 }, { n: 10n }]],
    ["BigInt top-level result", () => [{ a: 1 }, 10n]],
    ["BigInt in args", () => [{ n: 1n }, "r"]],
    [
      "cyclic result",
      () => {
        const r = { a: 1 };
        r.self = r;
        return [{ a: 1 }, r];
      },
    ],
    [
      "cyclic args",
      () => {
        const a = { list: [] };
        a.list.push(a);
        return [a, "r"];
      },
    ],
    ["lone surrogate in args", () => [{ s: "\ud800" }, "r"]],
    ["lone surrogate in result", () => [{ a: 1 }, { text: "abc\udc00def" }]],
    ["lone surrogate in a large result", () => [{ a: 1 }, { text: `${"x".repeat(70000)}\udc00` }]],
    // Its escape (`{"text":"` then the x's: its backslash at byte 65,534 or 65,535) across
    // the 64 KiB chunks the core reads a large result in when it does not copy the whole
    // text for the index (`indexContentBytes` under the result's size).
    ["lone surrogate across a chunk of a large result", () => [{ a: 1 }, { text: `${"x".repeat(65525)}\udc00` }], { indexContentBytes: 1024 }],
    ["lone surrogate across a chunk of a large result, later", () => [{ a: 1 }, { text: `${"x".repeat(65526)}\udc00` }], { indexContentBytes: 1024 }],
    ["lone surrogate far into a large result read in chunks", () => [{ a: 1 }, { text: `${"x".repeat(200000)}\udc00` }], { indexContentBytes: 1024 }],
    ["lone surrogate in an args key", () => [{ ["k\ud800"]: 1 }, "r"]],
  ];
  for (const [label, make, options] of notSerializable) {
    t(`${label} rejects with NOT_SERIALIZABLE, writes nothing, adds no pointer`, async () => {
      const { m, storage, base } = setup(options);
      await m.saveContext("before", { x: 1 }, "ok");
      const filesBefore = await listFiles(storage, base);
      const sizeBefore = m.size;
      const [args, result] = make();
      await expectRejection(assert, () => m.saveContext("t", args, result), "NOT_SERIALIZABLE", "saveContext");
      assert.deepEqual(await listFiles(storage, base), filesBefore, "storage unchanged");
      assert.equal(m.size, sizeBefore, "no pointer added");
      assert.equal(m.getAllPointers().length, sizeBefore);
      // the manager still works afterwards
      await m.saveContext("after", { x: 2 }, "ok");
      assert.equal(m.size, sizeBefore + 1);
    });
  }

  t("a large result that merely holds the text \\ud800 (a backslash, not a surrogate) saves and loads byte for byte", async () => {
    const { m } = setup();
    const result = { text: `${"y".repeat(70000)} \\ud800 \\\\udc00`, pair: "\ud83d\ude00" };
    const fp = await m.saveContext("t", { a: 1 }, result);
    assert.deepEqual((await m.loadContexts([fp]))[0].result, result);
  });

  t("JSON.stringify never emits a lone surrogate (ES2019): it escapes it, so a result's text is well-formed UTF-8", () => {
    assert.equal(JSON.stringify("a\ud800b"), '"a\\ud800b"');
    assert.equal(JSON.stringify({ k: "\udc00" }), '{"k":"\\udc00"}');
    assert.equal(JSON.stringify("\ud83d\ude00"), '"\ud83d\ude00"', "a pair stays the character");
    const text = JSON.stringify({ s: "x\ud800".repeat(3000), pair: "\ud83d\ude00" });
    assert.equal(new TextDecoder("utf-8", { fatal: true }).decode(new TextEncoder().encode(text)), text);
  });

  t("NOT_SERIALIZABLE also with records kept in memory (default threshold): no pointer", async () => {
    const { m } = setup({ persistThreshold: 32768 });
    const cyc = [];
    cyc.push(cyc);
    await expectRejection(assert, () => m.saveContext("t", {}, cyc), "NOT_SERIALIZABLE", "saveContext");
    await expectRejection(assert, () => m.saveContext("t", {}, { big: 2n ** 70n }), "NOT_SERIALIZABLE", "saveContext");
    assert.equal(m.size, 0);
  });

  for (const [label, args] of [
    ["null", null],
    ["an array", [1, 2]],
    ["a string", "path=x"],
    ["a number", 42],
  ]) {
    t(`args that is ${label} rejects with INVALID_ARGUMENT`, async () => {
      const { m, storage, base } = setup();
      await expectRejection(assert, () => m.saveContext("t", args, "r"), "INVALID_ARGUMENT", "saveContext");
      assert.equal(m.size, 0);
      assert.deepEqual(await listFiles(storage, base), []);
    });
  }

  // -- naming

  t("hostile tool names stay inside contextDir with a sanitised prefix", async () => {
    const { m, storage, base } = setup();
    const names = ["../../etc/passwd", "a/b", "C:\\x", "a\u0000b", "", "🙂", "x".repeat(100), "..", "./.", "a b.c/d", "名前"];
    const fps = [];
    for (const n of names) {
      const fp = await m.saveContext(n, { n }, "r");
      fps.push(fp);
      assertInside(base, fp, JSON.stringify(n));
      const filename = basename(fp);
      assert.ok(filename.startsWith(`${sanitizeToolName(n)}_`), `${JSON.stringify(n)} -> ${filename}`);
      assert.equal(nameParts(filename).tool, sanitizeToolName(n));
      const rec = await readRecord(storage, fp);
      assert.equal(rec.toolName, n, "record keeps the original tool name");
    }
    assert.equal(new Set(fps).size, names.length);
    const listed = await listFiles(storage, base);
    assert.deepEqual(listed, [...fps].sort(), "every file directly in contextDir, nothing else");
    if (typeof storage.paths === "function") {
      for (const p of storage.paths()) assert.ok(p.startsWith(`${base}/`), `${p} inside ${base}`);
    }
  });

  t("canonical args hash: key order independent, nested values distinguish", async () => {
    const { m, storage } = setup();
    const fp1 = await m.saveContext("t", { a: 1, b: { c: 2, d: 3 } }, 1);
    const fp2 = await m.saveContext("t", { b: { d: 3, c: 2 }, a: 1 }, 2);
    const fp3 = await m.saveContext("t", { a: 1, b: { c: 2, d: 4 } }, 3);
    const [r1, r2, r3] = await Promise.all([fp1, fp2, fp3].map((fp) => readRecord(storage, fp)));
    assert.match(r1.argsHash, HEX64_RE);
    assert.equal(r1.argsHash, r2.argsHash);
    assert.equal(nameParts(basename(fp1)).hash, nameParts(basename(fp2)).hash);
    assert.notEqual(r1.argsHash, r3.argsHash);
    assert.notEqual(nameParts(basename(fp1)).hash, nameParts(basename(fp3)).hash);
    assert.equal(r1.argsHash, "932875ab5b23eb47bb2711f951d85ba23eef4b50c3e2eb6b5f3f9b9ac1217c6b");
    const ptrs = m.getAllPointers();
    assert.equal(ptrs[0].argsHash, ptrs[1].argsHash);
  });

  t("hashQuery: q_ + 16 hex, normalises whitespace and case, synchronous", () => {
    const h = ContextManager.hashQuery("  Authentication   ERROR\t");
    assert.equal(typeof h, "string");
    assert.match(h, /^q_[0-9a-f]{16}$/);
    assert.equal(h, ContextManager.hashQuery("authentication error"));
    assert.equal(h, "q_14264995dd854fa8");
    assert.notEqual(h, ContextManager.hashQuery("authentication errors"));
  });

  // -- copies, not aliases

  for (const threshold of [0, 32768]) {
    const where = threshold === 0 ? "persisted" : "kept in memory";
    t(`copies not aliases (${where} records)`, async () => {
      const { m, storage } = setup({ persistThreshold: threshold });
      const args = { path: "a.ts", nested: { x: 1 }, list: [1, 2] };
      const result = { data: [1, 2], deep: { y: "z" } };
      const p = m.saveContext("readFile", args, result, 1, "q");
      // mutate right after the call, before awaiting
      args.path = "MUTATED";
      args.nested.x = 999;
      args.list.push(3);
      args.added = true;
      result.data.push(3);
      result.deep.y = "MUTATED";
      const fp = await p;

      const origArgs = { path: "a.ts", nested: { x: 1 }, list: [1, 2] };
      const origResult = { data: [1, 2], deep: { y: "z" } };
      const [rec] = await m.loadContexts([fp]);
      assert.deepEqual(rec.args, origArgs);
      assert.deepEqual(rec.result, origResult);
      if (threshold === 0) assert.deepEqual((await readRecord(storage, fp)).result, origResult);

      const ptr = m.getAllPointers()[0];
      assert.deepEqual(ptr.args, origArgs);
      // mutate a returned pointer
      ptr.args.path = "x";
      ptr.args.nested.x = 1;
      ptr.args.nested.y = 2;
      ptr.toolName = "x";
      ptr.filepath = "/elsewhere.json";
      ptr.taskId = 99;
      const again = m.getAllPointers()[0];
      assert.equal(again.toolName, "readFile");
      assert.equal(again.filepath, fp);
      assert.equal(again.taskId, 1);
      assert.deepEqual(again.args, origArgs);
      assert.deepEqual(m.getPointersForTask(1)[0].args, origArgs);

      // mutate a loaded record
      rec.result.deep.y = "changed";
      rec.result.data.length = 0;
      rec.args.path = "changed";
      rec.toolName = "changed";
      const [rec2] = await m.loadContexts([fp]);
      assert.deepEqual(rec2.result, origResult);
      assert.deepEqual(rec2.args, origArgs);
      assert.equal(rec2.toolName, "readFile");
      // two loads give distinct objects
      const [a, b] = await m.loadContexts([fp, fp]);
      assert.notEqual(a, b);
      assert.notEqual(a.result, b.result);
    });
  }

  // -- pointers: order, filters, size

  t("getAllPointers in save order; size counts pointers", async () => {
    const { m } = setup();
    assert.equal(m.size, 0);
    assert.deepEqual(m.getAllPointers(), []);
    const fps = [];
    for (const tool of ["zeta", "alpha", "mid", "alpha", "beta"]) fps.push(await m.saveContext(tool, { tool }, tool));
    assert.equal(m.size, 5);
    assert.deepEqual(m.getAllPointers().map((p) => p.filepath), fps);
    assert.deepEqual(m.getAllPointers().map((p) => p.toolName), ["zeta", "alpha", "mid", "alpha", "beta"]);
  });

  t("20 concurrent saves: pointers in call order", async () => {
    const { m } = setup();
    const fps = await Promise.all(Array.from({ length: 20 }, (_, i) => m.saveContext(`tool${i % 3}`, { i }, { i })));
    assert.equal(new Set(fps).size, 20);
    const ptrs = m.getAllPointers();
    assert.deepEqual(ptrs.map((p) => p.args.i), Array.from({ length: 20 }, (_, i) => i));
    assert.deepEqual(ptrs.map((p) => p.filepath), fps);
    assert.equal(m.size, 20);
  });

  t("getPointersForQuery / getPointersForTask filter in save order; [] for unknown ids", async () => {
    const { m } = setup();
    const a = await m.saveContext("t", { k: "a" }, 1, 1, "q_one");
    const b = await m.saveContext("t", { k: "b" }, 1, 2, "q_two");
    const c = await m.saveContext("t", { k: "c" }, 1, 1, "q_two");
    const d = await m.saveContext("t", { k: "d" }, 1);
    const e = await m.saveContext("t", { k: "e" }, 1, 1, "q_one");
    assert.deepEqual(m.getPointersForQuery("q_one").map((p) => p.filepath), [a, e]);
    assert.deepEqual(m.getPointersForQuery("q_two").map((p) => p.filepath), [b, c]);
    assert.deepEqual(m.getPointersForTask(1).map((p) => p.filepath), [a, c, e]);
    assert.deepEqual(m.getPointersForTask(2).map((p) => p.filepath), [b]);
    assert.deepEqual(m.getPointersForQuery("q_unknown"), []);
    assert.deepEqual(m.getPointersForTask(42), []);
    assert.equal(m.size, 5);
    assert.ok(m.getAllPointers().some((p) => p.filepath === d));
    // filters hand out copies too
    m.getPointersForTask(2)[0].args.k = "mutated";
    assert.equal(m.getPointersForTask(2)[0].args.k, "b");
  });

  t("onDebug hears at construction, and from open(), the folder and the storage chosen", async () => {
    const storage = makeStorage();
    const dir = contextDir();
    for (const make of [(o) => new ContextManager(o), (o) => ContextManager.open(o)]) {
      const debug = [];
      const m = await make({ contextDir: dir, fileSystem: storage, onDebug: (msg, data) => debug.push({ msg, data }) });
      const init = debug.filter(({ msg }) => msg.startsWith("ContextManager initialized"));
      assert.equal(init.length, 1, JSON.stringify(debug));
      const [{ msg, data }] = init;
      assert.equal(data.contextDir, m.getContextDir());
      assert.equal(typeof data.storage, "string");
      assert.ok(data.storage.length > 0);
      if (typeof storage.description === "string") assert.equal(data.storage, storage.description);
      assert.equal(data.persistThreshold, 0);
      assert.ok(msg.includes(m.getContextDir()) && msg.includes(data.storage), msg);
    }
    // A storage that does not describe itself is named as such.
    const debug = [];
    const plain = { read: (p) => storage.read(p), write: (p, d, o) => storage.write(p, d, o), remove: (p) => storage.remove(p), list: (d) => storage.list(d) };
    new ContextManager({ contextDir: dir, fileSystem: plain, persistThreshold: 0, onDebug: (msg, data) => debug.push({ msg, data }) });
    assert.equal(debug.find(({ msg }) => msg.startsWith("ContextManager initialized"))?.data?.storage, "custom storage", JSON.stringify(debug));
  });

  t("getContextDir returns the dir", () => {
    const dir = contextDir();
    const m = new ContextManager({ contextDir: dir, fileSystem: makeStorage() });
    assert.equal(m.getContextDir(), expectedContextDir(dir));
  });

  // -- uniqueness

  t("two managers on one storage and dir: 1,000 concurrent identical saves, all distinct and loadable", async () => {
    const storage = makeStorage();
    const dir = contextDir();
    const m1 = new ContextManager({ contextDir: dir, fileSystem: storage, persistThreshold: 0 });
    const m2 = new ContextManager({ contextDir: dir, fileSystem: storage, persistThreshold: 0 });
    const args = { path: "same.ts" };
    const saves = [];
    for (let i = 0; i < 500; i++) {
      saves.push(m1.saveContext("readFile", args, { n: `m1-${i}` }));
      saves.push(m2.saveContext("readFile", args, { n: `m2-${i}` }));
    }
    const fps = await Promise.all(saves);
    assert.equal(new Set(fps).size, 1000, "1,000 distinct filepaths");
    const base = m1.getContextDir();
    const listed = await listFiles(storage, base);
    assert.equal(listed.length, 1000, "1,000 files in storage");
    assert.deepEqual(listed, [...fps].sort());
    assert.equal(m1.size, 500);
    assert.equal(m2.size, 500);
    const recs1 = await m1.loadContexts(fps.filter((_, i) => i % 2 === 0));
    const recs2 = await m2.loadContexts(fps.filter((_, i) => i % 2 === 1));
    assert.equal(recs1.length, 500);
    assert.equal(recs2.length, 500);
    assert.deepEqual(recs1.map((r) => r.result.n), Array.from({ length: 500 }, (_, i) => `m1-${i}`));
    assert.deepEqual(recs2.map((r) => r.result.n), Array.from({ length: 500 }, (_, i) => `m2-${i}`));
  });

  t("forced name collision: the second save draws a new random part; the first record is kept", async () => {
    const storage = makeStorage();
    const dir = contextDir();
    const clock = () => 1700000000000;
    const m1 = new ContextManager({ contextDir: dir, fileSystem: storage, persistThreshold: 0, clock, random: () => 0.5 });
    const m2 = new ContextManager({
      contextDir: dir,
      fileSystem: storage,
      persistThreshold: 0,
      clock,
      random: randomAfter(0.5, 4),
    });
    const fp1 = await m1.saveContext("readFile", { path: "x" }, "first");
    const fp2 = await m2.saveContext("readFile", { path: "x" }, "second");
    assert.notEqual(fp1, fp2);
    const p1 = nameParts(basename(fp1));
    const p2 = nameParts(basename(fp2));
    assert.equal(p1.timestamp, "1700000000000");
    assert.equal(p2.timestamp, "1700000000000");
    assert.equal(p1.counter, p2.counter, "same counter, so only the random part tells them apart");
    assert.notEqual(p1.random, p2.random);
    assert.equal((await readRecord(storage, fp1)).result, "first", "first record not replaced");
    assert.equal((await readRecord(storage, fp2)).result, "second");
    assert.equal((await listFiles(storage, m1.getContextDir())).length, 2);
    // the deterministic random source gives the same name for the same inputs
    const m3 = new ContextManager({ contextDir: contextDir(), fileSystem: storage, persistThreshold: 0, clock, random: () => 0.5 });
    const fp3 = await m3.saveContext("readFile", { path: "x" }, "third");
    assert.equal(basename(fp3), basename(fp1));
  });

  // -- loadContexts

  t("loadContexts returns records in the order asked", async () => {
    const { m } = setup();
    const fps = [];
    for (let i = 0; i < 4; i++) fps.push(await m.saveContext("t", { i }, `r${i}`));
    const recs = await m.loadContexts([fps[2], fps[0], fps[3], fps[1], fps[2]]);
    assert.deepEqual(recs.map((r) => r.result), ["r2", "r0", "r3", "r1", "r2"]);
    assert.deepEqual(await m.loadContexts([]), []);
  });

  t("loadContexts skips missing, corrupt, non-record and outside paths with an onDebug warning", async () => {
    const { m, storage, base, debug } = setup();
    const fpA = await m.saveContext("readFile", { path: "a.ts" }, { text: "A".repeat(200) });
    const fpB = await m.saveContext("readFile", { path: "b.ts" }, "B");
    const bytesA = toBytes(await storage.read(fpA));

    const missing = joinPath(base, "readFile_0123456789ab_1700000000000_0_miss.json");
    const corrupt = joinPath(base, "readFile_0123456789ab_1700000000000_1_torn.json");
    await storage.write(corrupt, bytesA.slice(0, Math.floor(bytesA.length / 2)));
    const nonRecord = joinPath(base, "other_0123456789ab_1700000000000_2_nrec.json");
    await storage.write(nonRecord, '{"hello":"world"}');
    const arrayJson = joinPath(base, "other_0123456789ab_1700000000000_3_arry.json");
    await storage.write(arrayJson, "[1,2,3]");
    // a valid record outside the context dir: must never be read
    const outsideReal = joinPath(parentDir(base), "x.json");
    await storage.write(outsideReal, bytesA);
    const outside = `${base}/../x.json`;
    const etc = "/etc/passwd";
    const relative = basename(fpA);

    const skipped = [missing, corrupt, nonRecord, arrayJson, outside, etc, relative];
    debug.length = 0;
    const recs = await m.loadContexts([fpB, missing, corrupt, nonRecord, outside, fpA, etc, arrayJson, relative]);
    assert.equal(recs.length, 2, "only the two valid records");
    assert.equal(recs[0].result, "B");
    assert.deepEqual(recs[1].result, { text: "A".repeat(200) });

    for (const p of skipped) {
      // The original's wording: "Failed to load <path as asked>", then the reason.
      const hit = debug.find(({ msg, data }) => typeof msg === "string" && msg.startsWith(`Failed to load ${p}`) && data?.path === p);
      assert.ok(hit, `onDebug "Failed to load ${p}..." with data.path; got ${JSON.stringify(debug)}`);
      assert.ok(hit.msg.length > `Failed to load ${p}`.length, `the message says why: ${hit.msg}`);
    }
    // nothing changed in storage by a load
    assert.equal(await readText(storage, corrupt), toText(bytesA.slice(0, Math.floor(bytesA.length / 2))));
  });

  t("loadContexts skips a record whose bytes are not UTF-8, and loads one holding U+FFFD", async () => {
    const { m, storage, base, debug } = setup();
    const fp = await m.saveContext("readFile", { path: "a.ts" }, "AB \uFFFD replacement");
    const bytes = toBytes(await storage.read(fp));
    // The same record with the "A" replaced by a byte that is never UTF-8.
    const broken = bytes.slice();
    broken[new TextDecoder().decode(bytes).indexOf("AB")] = 0xff;
    const bad = joinPath(base, "readFile_0123456789ab_1700000000000_1_utf8.json");
    await storage.write(bad, broken);
    debug.length = 0;
    const recs = await m.loadContexts([bad, fp]);
    assert.deepEqual(recs.map((r) => r.result), ["AB \uFFFD replacement"]);
    assert.ok(debug.some(({ data }) => data?.path === bad), `onDebug names ${bad}: ${JSON.stringify(debug)}`);
  });

  t("loadContexts reports a host read failure and a non-string filepath as 'Failed to load <path>'", async () => {
    const base0 = makeStorage();
    let broken;
    const failing = withWrite(base0, (p, d, o) => base0.write(p, d, o));
    failing.read = (p, o) => (p === broken ? Promise.reject(Object.assign(new Error("EIO: disk on fire"), { code: "EIO" })) : base0.read(p, o));
    const { m, debug } = setup({ fileSystem: failing });
    const fp = await m.saveContext("t", {}, "kept");
    broken = await m.saveContext("t", { b: 1 }, "unreadable");
    debug.length = 0;
    const recs = await m.loadContexts([broken, 42, fp]);
    assert.deepEqual(recs.map((r) => r.result), ["kept"]);
    assert.equal(debug.filter(({ msg }) => msg.startsWith("Failed to load ")).length, 2, JSON.stringify(debug));
    const unreadable = debug.find(({ msg }) => msg.startsWith(`Failed to load ${broken}`));
    assert.ok(unreadable?.msg.includes("disk on fire"), JSON.stringify(debug));
    assert.equal(unreadable.data?.path, broken);
    assert.ok(debug.some(({ msg }) => msg.startsWith("Failed to load 42")), JSON.stringify(debug));
  });

  t("loadContexts reads a seed-format record (no v, no argsHash) as version 1", async () => {
    const { m, storage, base } = setup();
    const seed = {
      toolName: "readFile",
      toolDescription: "read file: path=legacy.ts",
      args: { path: "legacy.ts" },
      timestamp: "2024-01-02T03:04:05.678Z",
      taskId: 1,
      result: { content: "legacy" },
    };
    const fp = joinPath(base, "readFile_0123456789ab_1704164645678_0_seed.json");
    await storage.write(fp, JSON.stringify(seed, null, 2));
    const [rec] = await m.loadContexts([fp]);
    assert.ok(rec, "seed record loaded");
    assert.equal(rec.toolName, "readFile");
    assert.deepEqual(rec.args, seed.args);
    assert.deepEqual(rec.result, seed.result);
    assert.equal(rec.timestamp, seed.timestamp);
    assert.equal(rec.taskId, 1);
    if ("v" in rec) assert.equal(rec.v, 1);
  });

  // -- persistThreshold, flush

  t("durable by default: every record, however small, is in storage when saveContext resolves", async () => {
    const storage = makeStorage();
    const m = new ContextManager({ contextDir: contextDir(), fileSystem: storage });
    const fps = [await m.saveContext("t", { a: 1 }, "x"), await m.saveContext("t", { a: 2 }, undefined)];
    for (const fp of fps) assert.ok(await readRecord(storage, fp), `${fp} written`);
    assert.equal((await listFiles(storage, m.getContextDir())).length, 2);
  });

  t("persistThreshold (an opt-in) keeps a small record in memory; loadContexts serves it", async () => {
    const storage = makeStorage();
    const m = new ContextManager({ contextDir: contextDir(), fileSystem: storage, persistThreshold: HOLD });
    const fp = await m.saveContext("t", { a: 1 }, "x");
    const base = m.getContextDir();
    assertInside(base, fp);
    assert.equal(await storage.read(fp), undefined, "small record not written");
    assert.deepEqual(await listFiles(storage, base), []);
    const [ptr] = m.getAllPointers();
    assert.equal(ptr.filepath, fp);
    const [rec] = await m.loadContexts([fp]);
    assert.equal(rec.result, "x");
    assert.equal(rec.toolName, "t");
    assert.equal(rec.v, 1);
  });

  t("persistThreshold: 32768: a larger record is written", async () => {
    const storage = makeStorage();
    const m = new ContextManager({ contextDir: contextDir(), fileSystem: storage, persistThreshold: HOLD });
    const fp = await m.saveContext("t", { a: 1 }, "y".repeat(40000));
    const rec = await readRecord(storage, fp);
    assert.ok(rec, "large record written");
    assert.equal(rec.result.length, 40000);
    const fpSmall = await m.saveContext("t", { a: 2 }, "y".repeat(30000));
    assert.equal(await storage.read(fpSmall), undefined, "30 kB record (< 32768) stays in memory");
  });

  t("persistThreshold boundary: exactly threshold bytes is written, one byte over threshold is not", async () => {
    const clock = () => 1700000000000;
    const random = () => 0.25;
    const args = { path: "src/boundary.ts" };
    const result = { text: "é".repeat(50) + "boundary" };
    const calib = setup({ clock, random });
    const fp0 = await calib.m.saveContext("readFile", args, result);
    const size = calib.m.getAllPointers()[0].size;
    assert.equal(typeof size, "number");
    assert.equal(size, toBytes(await calib.storage.read(fp0)).length, "size is the UTF-8 byte length");

    const atThreshold = setup({ clock, random, persistThreshold: size });
    const fpA = await atThreshold.m.saveContext("readFile", args, result);
    assert.equal(atThreshold.m.getAllPointers()[0].size, size);
    assert.ok((await atThreshold.storage.read(fpA)) !== undefined, "size == threshold: written");

    const below = setup({ clock, random, persistThreshold: size + 1 });
    const fpB = await below.m.saveContext("readFile", args, result);
    assert.equal(below.m.getAllPointers()[0].size, size);
    assert.equal(await below.storage.read(fpB), undefined, "size < threshold: kept in memory");
    const [rec] = await below.m.loadContexts([fpB]);
    assert.deepEqual(rec.result, result);
  });

  t("persistThreshold 0 writes every record, even tiny ones", async () => {
    const { m, storage } = setup();
    const fp = await m.saveContext("t", {}, undefined);
    assert.ok(await storage.read(fp), "written");
  });

  t("flush() writes in-memory records out", async () => {
    const storage = makeStorage();
    const m = new ContextManager({ contextDir: contextDir(), fileSystem: storage, persistThreshold: HOLD });
    const fps = [await m.saveContext("t", { a: 1 }, "one"), await m.saveContext("t", { a: 2 }, "two", 3, "q")];
    for (const fp of fps) assert.equal(await storage.read(fp), undefined);
    const p = m.flush();
    assert.ok(typeof p?.then === "function", "flush returns a Promise");
    await p;
    const recs = await Promise.all(fps.map((fp) => readRecord(storage, fp)));
    assert.deepEqual(recs.map((r) => r?.result), ["one", "two"]);
    assert.equal(recs[1].taskId, 3);
    assert.equal(recs[1].v, 1);
    assert.deepEqual((await m.loadContexts(fps)).map((r) => r.result), ["one", "two"]);
    assert.equal(m.size, 2);
    await m.flush(); // again: nothing to do, no error
    assert.equal((await listFiles(storage, m.getContextDir())).length, 2);
  });

  // -- hybrid ranking: the embed option

  // A small deterministic embedding: a hashed bag of words in 64 dimensions, where a few
  // words stand for the same concept (so a vector can find what no keyword does).
  const CONCEPTS = { automobile: "car", vehicle: "car", cars: "car", refund: "money", billing: "money" };
  const testEmbed = (texts) =>
    texts.map((text) => {
      const v = new Array(64).fill(0);
      for (const word of text.toLowerCase().split(/[^a-z0-9]+/).filter(Boolean)) {
        const w = CONCEPTS[word] ?? word;
        let h = 2166136261;
        for (let i = 0; i < w.length; i++) h = Math.imul(h ^ w.charCodeAt(i), 16777619);
        v[(h >>> 0) % 64] += 1;
      }
      return v;
    });

  t("embed: selectRelevant fuses BM25 with the vectors of the indexed text; selectRelevantContexts stays BM25", async () => {
    const seen = [];
    const embed = async (texts) => {
      seen.push(...texts);
      return testEmbed(texts);
    };
    const { m } = setup({ embed });
    const car = await m.saveContext("readFile", { path: "src/a.ts" }, { text: "the car engine roared" });
    const money = await m.saveContext("readFile", { path: "src/b.ts" }, { text: "a refund was issued" });
    assert.ok(seen[0].includes("src/a.ts") && seen[0].includes("the car engine roared"), JSON.stringify(seen));
    assert.equal(seen.length, 2, "one call per save");
    const hits = await m.selectRelevant("automobile", { fallback: "none" });
    assert.deepEqual(hits.map((h) => h.filepath), [car], "found by its vector alone");
    assert.deepEqual(hits[0].matched, []);
    assert.ok(Math.abs(hits[0].score - 1 / 61) < 1e-9, `RRF score, k = 60: ${hits[0].score}`);
    assert.equal(seen.at(-1), "automobile", "the query is embedded");
    const both = await m.selectRelevant("engine billing", { fallback: "none" });
    assert.deepEqual(both.map((h) => h.filepath), [car, money], "keyword and vector lists fused");
    assert.deepEqual(m.selectRelevantContexts("automobile", m.getAllPointers(), { fallback: "none" }), [], "synchronous: BM25 only");
    const plain = setup().m;
    await plain.saveContext("readFile", { path: "src/a.ts" }, { text: "the car engine roared" });
    assert.deepEqual(await plain.selectRelevant("automobile", { fallback: "none" }), [], "without embed: BM25");
  });

  t("embed: a failing embed loses no save and ranking falls back to BM25 (onDebug says why)", async () => {
    let calls = 0;
    const { m, debug } = setup({
      embed: () => {
        calls++;
        if (calls === 1) throw new Error("model offline");
        if (calls === 2) return Promise.reject(new Error("timeout"));
        return [[0, 0]]; // a zero vector: refused
      },
    });
    const a = await m.saveContext("readFile", { path: "src/auth/login.ts" }, { text: "session token" });
    const b = await m.saveContext("readFile", { path: "src/b.ts" }, { text: "token refresh" });
    const c = await m.saveContext("grep", { pattern: "x" }, "y");
    assert.equal(m.size, 3);
    const said = debug.map((d) => d.msg).join("\n");
    assert.match(said, /embed failed.*model offline/);
    assert.match(said, /embed failed.*timeout/);
    assert.match(said, /refused/);
    assert.deepEqual((await m.selectRelevant("session", { fallback: "none" })).map((h) => h.filepath), [a]);
    assert.ok(![b, c].includes(a));
  });

  t("embed: a result of the wrong shape is reported and the save and the query go on without a vector", async () => {
    const { m, debug } = setup({ embed: (texts) => (texts[0].includes("src/a.ts") ? "not vectors" : [[1, 2], [3, 4]]) });
    const a = await m.saveContext("readFile", { path: "src/a.ts" }, { text: "session token" });
    assert.match(a, /readFile_/);
    const hits = await m.selectRelevant("session", { fallback: "none" });
    assert.deepEqual(hits.map((h) => h.filepath), [a], "ranked by BM25 alone");
    const said = debug.map((d) => d.msg).join("\n");
    assert.match(said, /embed failed, the record is ranked by BM25 alone: embed must return one array/);
    assert.match(said, /embed failed for the query, ranking by BM25 alone: embed must return one array/);
  });

  // -- selectRelevantContexts

  async function relevanceFixture() {
    const { m } = setup();
    const login = await m.saveContext("readFile", { path: "src/auth/login.ts" }, "x");
    const db = await m.saveContext("searchCode", { query: "database migration" }, "x");
    const grep = await m.saveContext("grep", { pattern: "TODO", dir: "src/db" }, "x");
    const ptrs = m.getAllPointers();
    return { m, login, db, grep, ptrs };
  }

  t("selectRelevantContexts is synchronous and finds by path parts and tool-name words", async () => {
    const { m, login, ptrs } = await relevanceFixture();
    const r = m.selectRelevantContexts("login", ptrs);
    assert.ok(Array.isArray(r), "returns an array, not a Promise");
    assert.deepEqual(r, [login]);
    assert.deepEqual(m.selectRelevantContexts("auth", ptrs), [login]);
    assert.deepEqual(m.selectRelevantContexts("read file", ptrs), [login]);
    assert.deepEqual(m.selectRelevantContexts("readFile", ptrs), [login]);
    assert.deepEqual(m.selectRelevantContexts("LOGIN please", ptrs), [login]);
    assert.deepEqual(m.selectRelevantContexts("what about login.ts?", ptrs), [login]);
  });

  t("selection is case-insensitive for every query: READFILE, ReadFile and readfile give the same list", async () => {
    const { m } = setup();
    const read = await m.saveContext("readFile", { path: "src/auth/login.ts" }, "x");
    await m.saveContext("writeFile", { path: "src/auth/login.ts" }, "x");
    await m.saveContext("grep", { pattern: "AuthError" }, "x");
    await m.saveContext("read_config", { name: "auth error" }, "x");
    const upper = await m.saveContext("fetch", { url: "READFILE.md" }, "x");
    const ptrs = m.getAllPointers();
    const families = [
      ["readFile", "ReadFile", "READFILE", "readfile", "rEaDfIlE"],
      ["AuthError", "authError", "AUTHERROR", "autherror"],
      ["read file", "READ FILE", "Read File"],
    ];
    for (const family of families) {
      const lists = family.map((q) => m.selectRelevantContexts(q, ptrs, { fallback: "none" }));
      assert.ok(lists[0].length > 0, `${family[0]} finds something`);
      for (const [i, q] of family.entries()) assert.deepEqual(lists[i], lists[0], `${q} ranks as ${family[0]} does`);
      const scored = await Promise.all(family.map((q) => m.selectRelevant(q, { fallback: "none" })));
      for (const [i, q] of family.entries()) {
        assert.deepEqual(scored[i].map((s) => [s.filepath, s.score]), scored[0].map((s) => [s.filepath, s.score]), `${q}: same scores`);
      }
    }
    assert.deepEqual(m.selectRelevantContexts("READFILE", ptrs, { fallback: "none" }).sort(), [read, upper].sort());
  });

  t("selectRelevantContexts: more matched keywords first", async () => {
    const { m, login, db, ptrs } = await relevanceFixture();
    assert.deepEqual(m.selectRelevantContexts("auth database migration", ptrs), [db, login]);
    assert.deepEqual(m.selectRelevantContexts("auth database migration", ptrs, { strategy: "overlap" }), [db, login]);
    assert.deepEqual(m.selectRelevantContexts("auth login migration", ptrs, { strategy: "overlap" }), [login, db]);
  });

  t("selectRelevantContexts: ties keep the given order", async () => {
    const { m } = setup();
    const a = await m.saveContext("readFile", { path: "src/auth/aaa.ts" }, "x");
    const b = await m.saveContext("readFile", { path: "src/auth/bbb.ts" }, "x");
    const other = await m.saveContext("grep", { pattern: "zzz" }, "x");
    const [pa, pb, po] = m.getAllPointers();
    assert.deepEqual(m.selectRelevantContexts("auth", [pa, po, pb]), [a, b]);
    assert.deepEqual(m.selectRelevantContexts("auth", [pb, po, pa]), [b, a]);
    assert.deepEqual(m.selectRelevantContexts("auth", [pb, po, pa], { strategy: "overlap" }), [b, a]);
    assert.ok(other);
  });

  t("selectRelevantContexts: no match (or only short words) returns all filepaths in the given order", async () => {
    const { m, login, db, grep, ptrs } = await relevanceFixture();
    const reordered = [ptrs[2], ptrs[0], ptrs[1]];
    assert.deepEqual(m.selectRelevantContexts("kubernetes", reordered), [grep, login, db]);
    assert.deepEqual(m.selectRelevantContexts("is a of", reordered), [grep, login, db]);
    assert.deepEqual(m.selectRelevantContexts("", ptrs), [login, db, grep]);
    assert.deepEqual(m.selectRelevantContexts("kubernetes", []), []);
  });

  t("selectRelevantContexts: short query words (<= 2 chars) are not keywords", async () => {
    const { m } = setup();
    const ab = await m.saveContext("ab", { x: "db" }, "x");
    const other = await m.saveContext("readFile", { path: "db/schema.sql" }, "x");
    const ptrs = m.getAllPointers();
    // "db" is 2 chars: not a keyword, so "db schema" matches only through "schema"
    assert.deepEqual(m.selectRelevantContexts("db schema", ptrs), [other]);
    assert.deepEqual(m.selectRelevantContexts("db", ptrs), [ab, other], "only short words: fall back to all");
  });

  t("selectRelevantContexts: only the pointers passed in are considered", async () => {
    const { m, login, db, grep, ptrs } = await relevanceFixture();
    assert.deepEqual(m.selectRelevantContexts("login", [ptrs[1], ptrs[2]]), [db, grep], "fallback over the subset");
    assert.deepEqual(m.selectRelevantContexts("migration", [ptrs[0], ptrs[2]]), [login, grep]);
    assert.deepEqual(m.selectRelevantContexts("login migration", [ptrs[0]]), [login]);
    assert.deepEqual(m.selectRelevantContexts("todo", [ptrs[2], ptrs[1]]), [grep]);
  });

  // A list this manager handed out goes to the core by slot (pointers.js: listedSlots):
  // whatever happened since, the list is ranked by what it holds, as a copy of it is.
  const selectsAsACopy = (m, query, list, options) => {
    const out = m.selectRelevantContexts(query, list, options);
    assert.deepEqual(out, m.selectRelevantContexts(query, structuredClone(list), options), `${query}: as over a copy`);
    return out;
  };

  t("selectRelevantContexts over a list taken before clearPointers ranks its own pointers, not those saved since", async () => {
    const { m } = setup();
    const alpha = await m.saveContext("readFile", { path: "alpha.ts" }, "a");
    const list = m.getAllPointers();
    m.clearPointers();
    const beta = await m.saveContext("readFile", { path: "beta.ts" }, "b");
    assert.deepEqual(selectsAsACopy(m, "beta", list, { fallback: "none" }), [], "beta.ts took alpha.ts's slot");
    assert.deepEqual(selectsAsACopy(m, "alpha", list, { fallback: "none" }), [alpha]);
    assert.deepEqual((await m.selectRelevant("beta", { pointers: list, fallback: "none" })).map((h) => h.filepath), []);
    assert.deepEqual(selectsAsACopy(m, "beta", m.getAllPointers(), { fallback: "none" }), [beta]);
  });

  t("selectRelevantContexts: a pointer evicted after it was listed is ranked from the list, as one of no manager", async () => {
    const { m } = setup({ retention: { maxRecords: 2 } });
    const alpha = await m.saveContext("readFile", { path: "alpha.ts" }, "zulu yankee");
    const bravo = await m.saveContext("readFile", { path: "bravo.ts" }, "b");
    const list = m.getAllPointers();
    assert.deepEqual(m.selectRelevantContexts("zulu", list, { fallback: "none" }), [alpha], "found by its content");
    const charlie = await m.saveContext("readFile", { path: "alpha/charlie.ts" }, "c"); // evicts alpha.ts
    assert.deepEqual(m.getAllPointers().map((p) => p.filepath), [bravo, charlie]);
    assert.deepEqual(selectsAsACopy(m, "alpha", list, { fallback: "none" }), [alpha]);
    assert.deepEqual(selectsAsACopy(m, "bravo alpha", list, { fallback: "none" }).sort(), [alpha, bravo].sort());
    assert.deepEqual(selectsAsACopy(m, "charlie", list), [alpha, bravo], "charlie is not in the list: all, in order");
    assert.deepEqual(selectsAsACopy(m, "zulu", list, { fallback: "none" }), [], "its content went with its record");
    const hits = await m.selectRelevant("alpha", { pointers: list, fallback: "none" });
    assert.deepEqual(hits.map((h) => [h.filepath, h.pointer.filepath]), [[alpha, alpha]]);
  });

  t("selectRelevantContexts over a listed array the caller changed ranks what the array holds now", async () => {
    const { m } = setup();
    const saved = [];
    for (const word of ["alpha", "bravo", "charlie"]) saved.push(await m.saveContext("readFile", { path: `${word}.ts` }, word));
    const list = m.getAllPointers();
    list.reverse();
    assert.deepEqual(selectsAsACopy(m, "alpha", list, { fallback: "none" }), [saved[0]]);
    assert.deepEqual(selectsAsACopy(m, "zebra", list), [saved[2], saved[1], saved[0]]);
    list[0].filepath = saved[0]; // charlie's place now names alpha's pointer
    assert.deepEqual(selectsAsACopy(m, "alpha", list, { fallback: "none" }), [saved[0], saved[0]]);
    assert.deepEqual(selectsAsACopy(m, "charlie", list, { fallback: "none" }), []);
    list[1] = { ...list[1], filepath: "/elsewhere/bravo.json" }; // no pointer of this manager
    assert.deepEqual(selectsAsACopy(m, "bravo", list, { fallback: "none" }), ["/elsewhere/bravo.json"]);
    list.splice(0, 1);
    assert.deepEqual(selectsAsACopy(m, "alpha", list, { fallback: "none" }), [saved[0]]);
  });

  t("selectRelevantContexts: {fallback:'none'} and {limit}", async () => {
    const { m, login, db, ptrs } = await relevanceFixture();
    assert.deepEqual(m.selectRelevantContexts("kubernetes", ptrs, { fallback: "none" }), []);
    assert.deepEqual(m.selectRelevantContexts("login", ptrs, { fallback: "none" }), [login]);
    assert.deepEqual(m.selectRelevantContexts("auth database migration", ptrs, { limit: 1 }), [db]);
    assert.deepEqual(m.selectRelevantContexts("src", ptrs, { limit: 2 }).length, 2);
    assert.equal(m.selectRelevantContexts("kubernetes", ptrs, { limit: 2 }).length, 2);
    assert.deepEqual(m.selectRelevantContexts("auth database migration", ptrs, { limit: 5 }), [db, login]);
  });

  // -- clearing

  t("clearContextDir removes only this manager's files", async () => {
    const storage = makeStorage();
    const dir = contextDir();
    const m1 = new ContextManager({ contextDir: dir, fileSystem: storage, persistThreshold: 0 });
    const m2 = new ContextManager({ contextDir: dir, fileSystem: storage, persistThreshold: 0 });
    const base = m1.getContextDir();
    const notes = joinPath(base, "notes.txt");
    await storage.write(notes, "my notes");
    const foreign = await m2.saveContext("readFile", { path: "other.ts" }, "m2's record");
    const own = [await m1.saveContext("readFile", { path: "a.ts" }, "a"), await m1.saveContext("grep", { q: "b" }, "b")];
    const p = m1.clearContextDir();
    assert.ok(typeof p?.then === "function", "clearContextDir returns a Promise");
    await p;
    for (const fp of own) assert.equal(await storage.read(fp), undefined, `${fp} removed`);
    assert.equal(await readText(storage, notes), "my notes");
    assert.equal((await readRecord(storage, foreign))?.result, "m2's record");
    assert.deepEqual(await listFiles(storage, base), [foreign, notes].sort());
    assert.equal(m2.size, 1);
  });

  t("records adopted by rebuildIndex are not this manager's: clear() after it removes only its own", async () => {
    const storage = makeStorage();
    const dir = contextDir();
    const a = new ContextManager({ contextDir: dir, fileSystem: storage, persistThreshold: 0 });
    const theirs = [];
    for (let i = 0; i < 5; i++) theirs.push(await a.saveContext("readFile", { path: `f${i}.ts` }, `body ${i}`));
    const b = new ContextManager({ contextDir: dir, fileSystem: storage, persistThreshold: 0 });
    const own = await b.saveContext("grep", { q: "mine" }, "b's record");
    assert.equal(await b.rebuildIndex(), 6, "b adopts a's five records beside its own");
    await b.clear();
    assert.equal(b.size, 0);
    assert.equal((await a.loadContexts(theirs)).length, 5, "a loads 5 of 5");
    assert.equal(await storage.read(own), undefined, "b's own record is removed");
    assert.equal(await b.rebuildIndex(), 5);
    await b.clearContextDir();
    assert.deepEqual(await listFiles(storage, a.getContextDir()), [...theirs].sort());
  });

  t("clearContextDir drops records held in memory", async () => {
    const storage = makeStorage();
    const m = new ContextManager({ contextDir: contextDir(), fileSystem: storage });
    const fp = await m.saveContext("t", {}, "in memory");
    assert.equal((await m.loadContexts([fp])).length, 1);
    await m.clearContextDir();
    assert.deepEqual(await m.loadContexts([fp]), []);
    await m.flush();
    assert.equal(await storage.read(fp), undefined, "a dropped record is not written by a later flush");
  });

  t("clear() removes the files and empties pointers", async () => {
    const { m, storage, base } = setup();
    const notes = joinPath(base, "notes.txt");
    await storage.write(notes, "keep");
    const fps = [await m.saveContext("t", { a: 1 }, 1), await m.saveContext("t", { a: 2 }, 2)];
    assert.equal(m.size, 2);
    await m.clear();
    assert.equal(m.size, 0);
    assert.deepEqual(m.getAllPointers(), []);
    for (const fp of fps) assert.equal(await storage.read(fp), undefined);
    assert.equal(await readText(storage, notes), "keep");
    // the manager is usable afterwards
    const fp = await m.saveContext("t", { a: 3 }, 3);
    assert.equal(m.size, 1);
    assert.equal((await readRecord(storage, fp)).result, 3);
  });

  t("clearPointers() empties pointers but keeps files", async () => {
    const { m, storage } = setup();
    const fps = [await m.saveContext("t", { a: 1 }, 1), await m.saveContext("t", { a: 2 }, 2, 1, "q")];
    const r = m.clearPointers();
    assert.equal(r, undefined, "synchronous, returns nothing");
    assert.equal(m.size, 0);
    assert.deepEqual(m.getAllPointers(), []);
    assert.deepEqual(m.getPointersForTask(1), []);
    assert.deepEqual(m.getPointersForQuery("q"), []);
    for (const fp of fps) assert.ok(await storage.read(fp), "file kept");
    assert.deepEqual((await m.loadContexts(fps)).map((x) => x.result), [1, 2]);
  });

  // -- errors

  function hostError(message, props) {
    return Object.assign(new Error(message), props);
  }

  for (const mode of ["sync throw", "async reject"]) {
    t(`storage write failure (${mode}) rejects with STORAGE and the host error as cause`, async () => {
      const base0 = makeStorage();
      const err0 = hostError("EIO: i/o error", { code: "EIO" });
      const storage = withWrite(base0, () => {
        if (mode === "sync throw") throw err0;
        return Promise.reject(err0);
      });
      const { m, base } = setup({ fileSystem: storage });
      const err = await expectRejection(assert, () => m.saveContext("t", { a: 1 }, "r"), "STORAGE", "saveContext");
      assert.equal(err.cause, err0, "cause is the host's error object");
      assert.equal(m.size, 0);
      assert.deepEqual(await listFiles(base0, base), []);
    });
  }

  t("a host write error with code ENOSPC rejects with QUOTA_EXCEEDED", async () => {
    const base0 = makeStorage();
    const err0 = hostError("ENOSPC: no space left on device", { code: "ENOSPC" });
    const { m } = setup({ fileSystem: withWrite(base0, async () => Promise.reject(err0)) });
    const err = await expectRejection(assert, () => m.saveContext("t", {}, "r"), "QUOTA_EXCEEDED", "saveContext");
    assert.equal(err.cause, err0);
    assert.equal(m.size, 0);
  });

  t("a host write error named QuotaExceededError rejects with QUOTA_EXCEEDED", async () => {
    const base0 = makeStorage();
    const err0 =
      typeof DOMException === "function"
        ? new DOMException("The quota has been exceeded.", "QuotaExceededError")
        : hostError("quota", { name: "QuotaExceededError" });
    const { m } = setup({
      fileSystem: withWrite(base0, () => {
        throw err0;
      }),
    });
    const err = await expectRejection(assert, () => m.saveContext("t", {}, "r"), "QUOTA_EXCEEDED", "saveContext");
    assert.equal(err.cause, err0);
    assert.equal(m.size, 0);
  });

  t("a failed save leaves earlier pointers and records intact", async () => {
    const base0 = makeStorage();
    let fail = false;
    const storage = withWrite(base0, (p, d, o) => {
      if (fail) throw hostError("EIO", { code: "EIO" });
      return base0.write(p, d, o);
    });
    const { m, base } = setup({ fileSystem: storage });
    const fp = await m.saveContext("t", { a: 1 }, "ok");
    fail = true;
    await expectRejection(assert, () => m.saveContext("t", { a: 2 }, "no"), "STORAGE", "saveContext");
    assert.equal(m.size, 1);
    assert.deepEqual(m.getAllPointers().map((p) => p.filepath), [fp]);
    assert.deepEqual(await listFiles(base0, base), [fp]);
    fail = false;
    await m.saveContext("t", { a: 3 }, "ok again");
    assert.equal(m.size, 2);
  });

  t("flush() with a failing storage rejects with a coded Error", async () => {
    const base0 = makeStorage();
    const err0 = hostError("EIO", { code: "EIO" });
    const storage = withWrite(base0, () => Promise.reject(err0));
    const m = new ContextManager({ contextDir: contextDir(), fileSystem: storage, persistThreshold: HOLD });
    await m.saveContext("t", {}, "small");
    const err = await expectRejection(assert, () => m.flush(), "STORAGE", "flush");
    assert.equal(err.cause, err0);
  });

  t("maxRecordBytes: a larger record rejects with TOO_LARGE and writes nothing", async () => {
    const { m, storage, base } = setup({ maxRecordBytes: 1000 });
    await expectRejection(assert, () => m.saveContext("t", {}, "z".repeat(2000)), "TOO_LARGE", "saveContext");
    assert.equal(m.size, 0);
    assert.deepEqual(await listFiles(storage, base), []);
    const mem = setup({ maxRecordBytes: 1000, persistThreshold: 32768 });
    await expectRejection(assert, () => mem.m.saveContext("t", {}, "z".repeat(2000)), "TOO_LARGE", "saveContext");
    assert.equal(mem.m.size, 0);
    // a small record still fits
    await m.saveContext("t", {}, "small");
    assert.equal(m.size, 1);
  });

  // -- seed IFileSystem

  t("a seed-style IFileSystem works for save, load and clear", async () => {
    const fs = mapFileSystem();
    const dir = contextDir();
    const m = new ContextManager({ contextDir: dir, fileSystem: fs, persistThreshold: 0 });
    const base = m.getContextDir();
    await fs.mkdir(base, { recursive: true });
    await fs.writeFile(joinPath(base, "notes.txt"), "keep me");
    const fp1 = await m.saveContext("readFile", { path: "a.ts" }, { text: "A" }, 1, "q");
    const fp2 = await m.saveContext("grep", { pattern: "b" }, ["B"]);
    assertInside(base, fp1);
    assert.ok(fs.files.has(fp1), "record written through the IFileSystem");
    const stored = JSON.parse(fs.files.get(fp1));
    assert.equal(stored.toolName, "readFile");
    assert.deepEqual(stored.result, { text: "A" });
    const recs = await m.loadContexts([fp2, fp1]);
    assert.deepEqual(recs.map((r) => r.toolName), ["grep", "readFile"]);
    await m.clearContextDir();
    assert.equal(fs.files.has(fp1), false);
    assert.equal(fs.files.has(fp2), false);
    assert.equal(fs.files.get(joinPath(base, "notes.txt")), "keep me");
    assert.deepEqual(
      [...fs.files.keys()].filter((k) => !k.endsWith("notes.txt")),
      [],
      "no temporary files left behind",
    );
  });

  t("a seed IFileSystem's getHomeDir/resolvePath place `~` and the default contextDir, not the host's home", async () => {
    const home = "/seed-home/user";
    const fs = Object.assign(mapFileSystem(), {
      getHomeDir: () => home,
      resolvePath(path) {
        if (path === "~" || path.startsWith("~/")) return `${home}${path.slice(1)}`;
        return path.startsWith("/") ? path : `/seed-cwd/${path}`;
      },
    });
    const m = new ContextManager({ fileSystem: fs, persistThreshold: 0 });
    assert.equal(m.getContextDir(), `${home}/.agent/context`, "the default contextDir is under the IFileSystem's home");
    const fp = await m.saveContext("readFile", { path: "a.ts" }, "A");
    assert.ok(fp.startsWith(`${home}/.agent/context/`) && fs.files.has(fp), fp);
    assert.equal(new ContextManager({ contextDir: "~/ctx", fileSystem: fs }).getContextDir(), `${home}/ctx`);
    assert.equal(new ContextManager({ contextDir: "~", fileSystem: fs }).getContextDir(), home);
    assert.equal(new ContextManager({ contextDir: "rel/ctx", fileSystem: fs }).getContextDir(), "/seed-cwd/rel/ctx", "resolvePath makes it absolute");
    // getHomeDir alone: `~` is its home, then the runtime resolves the path as any other
    const homeOnly = Object.assign(mapFileSystem(), { getHomeDir: () => "/h2" });
    const asGiven = (dir) => new ContextManager({ contextDir: dir, fileSystem: mapFileSystem() }).getContextDir();
    assert.equal(new ContextManager({ fileSystem: homeOnly }).getContextDir(), asGiven("/h2/.agent/context"));
    assert.equal(new ContextManager({ contextDir: "~/x", fileSystem: homeOnly }).getContextDir(), asGiven("/h2/x"));
    // resolvePath alone: it is given `~/.agent/context`, as the seed's default
    const resolveOnly = Object.assign(mapFileSystem(), { resolvePath: fs.resolvePath });
    assert.equal(new ContextManager({ fileSystem: resolveOnly }).getContextDir(), `${home}/.agent/context`);
    for (const bad of [() => 42, () => { throw new Error("no home"); }]) {
      let err;
      try {
        new ContextManager({ fileSystem: Object.assign(mapFileSystem(), { getHomeDir: bad }) });
      } catch (e) {
        err = e;
      }
      assert.equal(err?.code, "INVALID_ARGUMENT", `getHomeDir ${bad}: ${err?.message}`);
    }
  });

  // -- input validation (SPEC §9: coded Errors; I/O methods reject, never throw)

  t("invalid inputs: async methods reject with INVALID_ARGUMENT, sync ones throw a coded Error", async () => {
    const { m, storage } = setup();
    await expectRejection(assert, () => m.loadContexts(null), "INVALID_ARGUMENT", "loadContexts(null)");
    await expectRejection(assert, () => m.loadContexts("a.json"), "INVALID_ARGUMENT", "loadContexts(string)");
    await expectRejection(assert, () => m.saveContext(123, {}, 1), "INVALID_ARGUMENT", "saveContext(non-string tool)");
    await expectRejection(assert, () => m.saveContext("t", {}, 1, "seven"), "INVALID_ARGUMENT", "saveContext(taskId string)");
    assert.equal(m.size, 0);
    const throwsCoded = (fn, label) => {
      let err;
      try {
        fn();
      } catch (e) {
        err = e;
      }
      assert.ok(err instanceof Error, `${label} throws an Error`);
      assert.equal(err.code, "INVALID_ARGUMENT", `${label}: code (message: ${err.message})`);
    };
    throwsCoded(() => m.selectRelevantContexts("q", null), "selectRelevantContexts(q, null)");
    throwsCoded(() => new ContextManager({ fileSystem: storage, persistThreshold: -1 }), "persistThreshold -1");
    throwsCoded(() => new ContextManager({ fileSystem: storage, persistThreshold: "big" }), "persistThreshold string");
    throwsCoded(() => new ContextManager({ fileSystem: {} }), "fileSystem without methods");
    throwsCoded(() => ContextManager.hashQuery(5), "hashQuery(number)");
  });

  t("sessionId is undefined without a session", () => {
    const { m } = setup();
    assert.equal(m.sessionId, undefined);
  });

  // -- paths

  t("loadContexts normalises '.' and '..' that stay inside contextDir", async () => {
    const { m, base } = setup();
    const fp = await m.saveContext("t", { a: 1 }, "inside");
    const fn = basename(fp);
    const recs = await m.loadContexts([`${base}/./${fn}`, `${base}/sub/../${fn}`]);
    assert.deepEqual(recs.map((r) => r.result), ["inside", "inside"]);
  });

  // -- description options, redaction, memory budget

  t("describe option overrides the generated description; undefined keeps the default", async () => {
    const { m, storage } = setup({
      describe: (toolName, args) => (args.custom ? `custom ${toolName} ${args.custom}` : undefined),
    });
    const fp1 = await m.saveContext("readFile", { custom: "yes" }, 1);
    const fp2 = await m.saveContext("readFile", { path: "src/x.ts" }, 1);
    assert.equal((await readRecord(storage, fp1)).toolDescription, "custom readFile yes");
    const d2 = (await readRecord(storage, fp2)).toolDescription;
    assert.ok(d2.includes("src/x.ts") && /read/i.test(d2), `default description: ${d2}`);
    assert.deepEqual(m.selectRelevantContexts("custom", m.getAllPointers(), { fallback: "none" }), [fp1]);
  });

  t("description shortens long argument values", async () => {
    const { m, storage } = setup();
    const fp = await m.saveContext("writeFile", { path: "a.txt", content: "long ".repeat(4000) }, 1);
    const d = (await readRecord(storage, fp)).toolDescription;
    assert.ok(d.length < 1000, `description is ${d.length} chars`);
    assert.ok(d.includes("a.txt"), d);
  });

  t("redact(record) runs before the record is serialised", async () => {
    const seen = [];
    const { m, storage } = setup({
      redact: (record) => {
        seen.push(record.toolName);
        record.result = JSON.parse(JSON.stringify(record.result).replaceAll("s3cr3t-token", "[REDACTED]"));
        return record;
      },
    });
    const fp = await m.saveContext("fetch", { url: "https://example.test" }, { headers: { auth: "Bearer s3cr3t-token" } });
    assert.deepEqual(seen, ["fetch"], "redact called once with the record");
    const text = await readText(storage, fp);
    assert.ok(!text.includes("s3cr3t-token"), `stored record still holds the secret: ${text}`);
    assert.ok(text.includes("[REDACTED]"));
    const [rec] = await m.loadContexts([fp]);
    assert.equal(rec.result.headers.auth, "Bearer [REDACTED]");
  });

  t("describe, redact and onEvict get the JSON values of the args, result and pointers (nested, unicode, big numbers, a __proto__ key)", async () => {
    const args = JSON.parse('{"path":"src/ü/😀.ts","n":12345678901234567890,"f":0.1,"deep":{"list":[1,null,true,"x",{"a":[]}]},"__proto__":{"polluted":1},"7":"seven"}');
    const result = { rows: [{ id: 1, name: "Zoë" }, { id: 2, name: null }], ok: false, big: -1.5e300 };
    const seen = {};
    const evicted = [];
    const { m } = setup({
      describe: (toolName, a) => {
        seen.describe ??= a;
        return undefined;
      },
      redact: (record) => {
        seen.redact ??= record;
        return record;
      },
      retention: { maxRecords: 1 },
      onEvict: (pointers) => evicted.push(...pointers),
    });
    await m.saveContext("readFile", args, result, { taskId: 3, queryId: "q1" });
    await m.saveContext("other", {}, "later");
    const asJson = (v) => JSON.parse(JSON.stringify(v));
    for (const [what, value] of [["describe", seen.describe], ["redact args", seen.redact.args], ["onEvict args", evicted[0].args]]) {
      assert.deepEqual(value, asJson(args), what);
      assert.deepEqual(Object.keys(value), Object.keys(asJson(args)), `${what}: key order`);
      assert.equal(Object.getPrototypeOf(value), Object.prototype, `${what}: __proto__ is an own key`);
      assert.ok(Object.hasOwn(value, "__proto__") && value.__proto__.polluted === 1, what);
    }
    assert.deepEqual(seen.redact.result, result);
    assert.deepEqual([seen.redact.toolName, seen.redact.taskId, seen.redact.queryId], ["readFile", 3, "q1"]);
    assert.equal(evicted.length, 1);
    assert.deepEqual([evicted[0].toolName, evicted[0].taskId, evicted[0].queryId], ["readFile", 3, "q1"]);
  });

  t("memoryBudget: past it the oldest in-memory records are written out; all stay loadable", async () => {
    const { m, storage, base } = setup({ persistThreshold: 32768, memoryBudget: 1000 });
    const fps = [];
    for (let i = 0; i < 6; i++) fps.push(await m.saveContext("t", { i }, `${i}`.repeat(300)));
    const sizes = m.getAllPointers().map((p) => p.size);
    assert.ok(sizes.every((s) => s > 300 && s < 1000), `record sizes ${sizes}`);
    const written = await Promise.all(fps.map(async (fp) => (await storage.read(fp)) !== undefined));
    assert.equal(written[0], true, "the oldest record was written out");
    assert.equal(written[5], false, "the newest record stays in memory");
    const firstKept = written.indexOf(false);
    assert.ok(written.slice(firstKept).every((w) => !w), `oldest first: ${written}`);
    let inMemory = 0;
    for (let i = firstKept; i < 6; i++) inMemory += sizes[i];
    assert.ok(inMemory <= 1000, `in-memory bytes ${inMemory} within the budget`);
    assert.equal((await listFiles(storage, base)).length, firstKept);
    const recs = await m.loadContexts(fps);
    assert.deepEqual(recs.map((r) => r.result), fps.map((_, i) => `${i}`.repeat(300)));
  });

  // -- purge

  t("ContextManager.purge removes every toolctx record of the directory, nothing else", async () => {
    const storage = makeStorage();
    const dir = contextDir();
    const m1 = new ContextManager({ contextDir: dir, fileSystem: storage, persistThreshold: 0 });
    const m2 = new ContextManager({ contextDir: dir, fileSystem: storage, persistThreshold: 0 });
    const base = m1.getContextDir();
    await m1.saveContext("a", {}, 1);
    await m2.saveContext("b", {}, 2);
    const notes = joinPath(base, "notes.txt");
    await storage.write(notes, "keep");
    assert.equal(typeof ContextManager.purge, "function", "ContextManager.purge exists");
    await ContextManager.purge({ contextDir: dir, fileSystem: storage });
    assert.deepEqual(await listFiles(storage, base), [notes]);
  });

  t("exportRecords keeps every record byte for byte, the seed's pretty-printed ones too; importRecords writes them back", async () => {
    const storage = makeStorage();
    const dir = contextDir();
    const m = new ContextManager({ contextDir: dir, fileSystem: storage, persistThreshold: 0 });
    const base = m.getContextDir();
    const own = await m.saveContext("grep", { pattern: "auth" }, { hits: 1 });
    // What the TypeScript original writes: JSON.stringify(record, null, 2).
    const seedText = JSON.stringify(
      { toolName: "readFile", toolDescription: "Read a.ts", args: { path: "a.ts" }, timestamp: "2024-01-02T03:04:05.678Z", result: "x\ny" },
      null,
      2,
    );
    const seed = joinPath(base, "readFile_0123456789ab_1704164645678_0_seed.json");
    await storage.write(seed, seedText);
    const torn = joinPath(base, "t_0123456789ab_1704164645678_1_torn.json");
    await storage.write(torn, '{"toolName":"t",');
    const out = await ContextManager.exportRecords({ contextDir: dir, fileSystem: storage });
    assert.equal(out.exported, 2, "both records exported");
    assert.deepEqual(out.skipped.map((s) => s.filename), [basename(torn)]);
    assert.match(out.skipped[0].reason, /not a toolctx record/);
    const lines = out.jsonl.trimEnd().split("\n").map((l) => JSON.parse(l));
    assert.deepEqual(lines.map((l) => l.filename).sort(), [basename(own), basename(seed)].sort());
    assert.equal(lines.find((l) => l.filename === basename(seed)).recordText, seedText, "the seed record as its exact text");
    assert.ok(lines.find((l) => l.filename === basename(own)).record, "a one-line record stays embedded verbatim");
    const target = contextDir();
    const report = await ContextManager.importRecords({ contextDir: target, fileSystem: storage }, out.jsonl);
    assert.deepEqual(report, { imported: 2, unchanged: 0 });
    const targetBase = new ContextManager({ contextDir: target, fileSystem: storage }).getContextDir();
    for (const fp of [own, seed]) {
      assert.ok(sameBytes(await storage.read(joinPath(targetBase, basename(fp))), await storage.read(fp)), `${basename(fp)} byte for byte`);
    }
    // The export object itself is accepted too, and importing again changes nothing.
    assert.deepEqual(await ContextManager.importRecords({ contextDir: target, fileSystem: storage }, out), { imported: 0, unchanged: 2 });
  });

  // -- open / dispose

  t("ContextManager.open resolves to a working ContextManager", async () => {
    const storage = makeStorage();
    const p = ContextManager.open({ contextDir: contextDir(), fileSystem: storage, persistThreshold: 0 });
    assert.ok(typeof p?.then === "function", "open returns a Promise");
    const m = await p;
    assert.ok(m instanceof ContextManager);
    assert.equal(m.size, 0);
    const fp = await m.saveContext("t", { a: 1 }, "opened");
    assert.equal((await readRecord(storage, fp)).result, "opened");
  });

  t("close() and Symbol.asyncDispose flush in-memory records", async () => {
    const storage = makeStorage();
    const m = new ContextManager({ contextDir: contextDir(), fileSystem: storage, persistThreshold: HOLD });
    const fp = await m.saveContext("t", {}, "flushed on close");
    assert.equal(await storage.read(fp), undefined);
    if (typeof Symbol.asyncDispose === "symbol") {
      assert.equal(typeof m[Symbol.asyncDispose], "function");
      const r = m[Symbol.asyncDispose]();
      assert.ok(typeof r?.then === "function", "asyncDispose returns a Promise");
      await r;
    } else {
      await m.close();
    }
    assert.equal((await readRecord(storage, fp))?.result, "flushed on close");

    const m2 = new ContextManager({ contextDir: contextDir(), fileSystem: storage });
    const fp2 = await m2.saveContext("t", {}, "closed");
    await m2.close();
    assert.equal((await readRecord(storage, fp2))?.result, "closed");
  });

  t("after close(), every method that returns a Promise rejects CLOSED; sync views keep working; close() again resolves", async () => {
    const storage = makeStorage();
    const dir = contextDir();
    const m = new ContextManager({ contextDir: dir, fileSystem: storage });
    const small = await m.saveContext("readFile", { path: "a.ts" }, "kept in memory until close");
    await m.close();
    assert.equal((await readRecord(storage, small))?.result, "kept in memory until close", "close() wrote it out");
    const files = await listFiles(storage, m.getContextDir());
    const calls = {
      saveContext: () => m.saveContext("t", {}, "too late"),
      "saveContext with a bad argument": () => m.saveContext("t", null, 1n),
      loadContexts: () => m.loadContexts([small]),
      "loadContexts with a bad argument": () => m.loadContexts([42]),
      selectRelevant: () => m.selectRelevant("file"),
      flush: () => m.flush(),
      clearContextDir: () => m.clearContextDir(),
      clear: () => m.clear(),
      rebuildIndex: () => m.rebuildIndex(),
      reconcile: () => m.reconcile(),
      endSession: () => m.endSession(),
    };
    for (const [label, call] of Object.entries(calls)) {
      const err = await expectRejection(assert, call, "CLOSED", label);
      assert.match(err.message, /closed/i);
    }
    assert.deepEqual(await listFiles(storage, m.getContextDir()), files, "nothing written or removed after close");
    // The pointers stay readable: they are plain data in memory.
    assert.equal(m.size, 1);
    assert.deepEqual(m.getAllPointers().map((p) => p.filepath), [small]);
    assert.deepEqual(m.selectRelevantContexts("file", m.getAllPointers()), [small]);
    assert.equal(m.getContextDir().length > 0, true);
    // A second close, and dispose after close, resolve and do nothing.
    assert.equal(await m.close(), undefined);
    if (typeof Symbol.asyncDispose === "symbol") assert.equal(await m[Symbol.asyncDispose](), undefined);
    // A fresh manager reads what the closed one persisted.
    const again = new ContextManager({ contextDir: dir, fileSystem: storage });
    assert.equal((await again.loadContexts([small]))[0]?.result, "kept in memory until close");
  });

  t("close() waits for the operations in flight (their writes and locks) and releases the lock", async () => {
    const base0 = makeStorage();
    let release;
    const gate = new Promise((resolve) => (release = resolve));
    let held = 0;
    let maxHeld = 0;
    const log = [];
    const host = {
      read: (p, o) => base0.read(p, o),
      async write(p, d, o) {
        log.push(`write ${basename(p)}`);
        if (NAME_RE.test(basename(p))) await gate;
        return base0.write(p, d, o);
      },
      remove: (p) => base0.remove(p),
      list: (d) => base0.list(d),
      async lock(name, fn) {
        held++;
        maxHeld = Math.max(maxHeld, held);
        try {
          return await fn();
        } finally {
          held--;
        }
      },
    };
    const m = new ContextManager({ contextDir: contextDir(), fileSystem: host, persistThreshold: 0, session: true });
    const saving = m.saveContext("t", { slow: true }, "in flight at close");
    await new Promise((resolve) => setTimeout(resolve, 0));
    let closed = false;
    const closing = m.close().then(() => (closed = true));
    // A save that starts once close() was called is refused.
    const late = m.saveContext("t", {}, "late").then((fp) => ({ fp }), (err) => ({ err }));
    for (let i = 0; i < 5; i++) await new Promise((resolve) => setTimeout(resolve, 0));
    assert.equal(closed, false, "close() waits for the save in flight");
    release();
    const { fp: lateFp, err } = await late;
    assert.equal(lateFp, undefined, "a save after close() began is refused");
    assert.equal(err?.code, "CLOSED");
    const fp = await saving;
    await closing;
    assert.equal(held, 0, "no lock held after close()");
    assert.ok(maxHeld >= 1, "the session manifest was written under the lock");
    assert.equal((await readRecord(base0, fp))?.result, "in flight at close");
    const manifest = JSON.parse(await readText(base0, joinPath(parentDir(fp), ".manifest.json")));
    assert.ok(Object.keys(manifest.context_files).some((rel) => fp.endsWith(rel)), "the manifest lists the record");
    const writes = log.length;
    for (let i = 0; i < 5; i++) await new Promise((resolve) => setTimeout(resolve, 0));
    assert.equal(log.length, writes, "nothing is written after close() resolved");
  });

  t("two close() calls while a save is in flight both resolve once it has been written", async () => {
    const base0 = makeStorage();
    let release;
    const gate = new Promise((resolve) => (release = resolve));
    const host = withWrite(base0, async (p, d, o) => {
      if (NAME_RE.test(basename(p))) await gate;
      return base0.write(p, d, o);
    });
    // The session manifest is written under the lock after the record: a second
    // operation in flight once the save's write has landed.
    host.lock = async (name, fn) => {
      await new Promise((resolve) => setTimeout(resolve, 20));
      return fn();
    };
    const m = new ContextManager({ contextDir: contextDir(), fileSystem: host, persistThreshold: 0, session: true });
    const saving = m.saveContext("t", { slow: true }, "in flight at close");
    await new Promise((resolve) => setTimeout(resolve, 0));
    const closed = [false, false];
    const closing = [m.close(), m.close()].map((p, i) => p.then(() => (closed[i] = true)));
    for (let i = 0; i < 5; i++) await new Promise((resolve) => setTimeout(resolve, 0));
    assert.deepEqual(closed, [false, false], "both wait for the save in flight");
    release();
    const fp = await saving;
    const timeout = new Promise((resolve) => setTimeout(() => resolve("timed out"), 2000));
    assert.notEqual(await Promise.race([Promise.all(closing), timeout]), "timed out", "both close() calls resolve");
    assert.equal((await readRecord(base0, fp))?.result, "in flight at close");
  });

  t("close() waits for a loadContexts whose reads are in flight; the load resolves with its records, a later one is refused", async () => {
    const base0 = makeStorage();
    let release;
    const gate = new Promise((resolve) => (release = resolve));
    let reads = 0;
    const host = withWrite(base0, (p, d, o) => base0.write(p, d, o));
    host.read = async (p, o) => {
      reads++;
      await gate;
      return base0.read(p, o);
    };
    const m = new ContextManager({ contextDir: contextDir(), fileSystem: host, persistThreshold: 0 });
    const fps = [await m.saveContext("t", { i: 1 }, "one"), await m.saveContext("t", { i: 2 }, "two")];
    const loading = m.loadContexts([fps[1], fps[0], fps[1]]);
    assert.equal(reads, 3, "every read started at once");
    let closed = false;
    const closing = m.close().then(() => (closed = true));
    for (let i = 0; i < 5; i++) await new Promise((resolve) => setTimeout(resolve, 0));
    assert.equal(closed, false, "close() waits for the load in flight");
    await expectRejection(assert, () => m.loadContexts([fps[0]]), "CLOSED", "a load after close() began");
    release();
    assert.deepEqual((await loading).map((r) => r.result), ["two", "one", "two"]);
    await closing;
  });

  t("loadContexts over a host whose read returns plain values (no Promise) loads, skips and warns as over an async one", async () => {
    const files = new Map();
    const host = {
      read(p) {
        if (p.endsWith("_boom.json")) throw Object.assign(new Error("EIO: a synchronous failure"), { code: "EIO" });
        return files.get(p);
      },
      write: (p, d) => void files.set(p, d),
      remove: (p) => void files.delete(p),
      list: () => [],
    };
    const { m, base, debug } = setup({ fileSystem: host });
    const fp = await m.saveContext("t", {}, "written");
    const missing = joinPath(base, "t_0123456789ab_1700000000000_0_miss.json");
    const boom = joinPath(base, "t_0123456789ab_1700000000000_1_boom.json");
    debug.length = 0;
    const recs = await m.loadContexts([fp, missing, boom, fp]);
    assert.deepEqual(recs.map((r) => r.result), ["written", "written"]);
    const warning = (p) => debug.find(({ msg, data }) => msg.startsWith(`Failed to load ${p}: `) && data?.path === p)?.msg ?? "";
    assert.match(warning(missing), /missing/, JSON.stringify(debug));
    assert.match(warning(boom), /could not read it.*a synchronous failure/, JSON.stringify(debug));
    assert.equal(debug.length, 2, JSON.stringify(debug));
  });

  t("close() that cannot write out in-memory records rejects, keeps them, and can be retried", async () => {
    const base0 = makeStorage();
    let failing = false;
    const host = withWrite(base0, (p, d, o) => (failing ? Promise.reject(Object.assign(new Error("no space"), { code: "ENOSPC" })) : base0.write(p, d, o)));
    const m = new ContextManager({ contextDir: contextDir(), fileSystem: host, persistThreshold: HOLD });
    const fp = await m.saveContext("t", {}, "must survive");
    failing = true;
    await expectRejection(assert, () => m.close(), "QUOTA_EXCEEDED", "close with a full disk");
    assert.equal((await m.loadContexts([fp]))[0]?.result, "must survive", "still open, the record still in memory");
    failing = false;
    await m.close();
    assert.equal((await readRecord(base0, fp))?.result, "must survive");
    await expectRejection(assert, () => m.saveContext("t", {}, "x"), "CLOSED", "save after the retried close");
  });

  t("retention maxRecords: the oldest go first, file, pointer and ranking, and onEvict hears them", async () => {
    const evicted = [];
    let now = 1_700_000_000_000;
    const { m, storage } = setup({ retention: { maxRecords: 2 }, onEvict: (pointers) => evicted.push(pointers), clock: () => now++ });
    const saved = [];
    for (const tool of ["alpha", "bravo", "charlie", "delta"]) saved.push(await m.saveContext(tool, { q: tool }, `${tool} body`));
    assert.deepEqual(m.getAllPointers().map((p) => p.filepath), saved.slice(2));
    assert.equal(m.size, 2);
    assert.deepEqual(evicted.map((batch) => batch.map((p) => p.filepath)), [[saved[0]], [saved[1]]], "one call per save that evicted");
    assert.equal(evicted[0][0].toolName, "alpha");
    for (const p of saved.slice(0, 2)) assert.equal(await storage.read(p), undefined, `${p} removed`);
    assert.equal((await readRecord(storage, saved[3])).result, "delta body");
    assert.deepEqual(await m.selectRelevant("alpha", { fallback: "none" }), [], "an evicted record is not ranked");
    assert.deepEqual(await m.loadContexts(saved.slice(0, 2)), []);
  });

  t("retention maxBytes counts records held in memory; one larger than the cap rejects TOO_LARGE and evicts nothing", async () => {
    const evicted = [];
    const { m, storage } = setup({ persistThreshold: 1 << 20, retention: { maxBytes: 900 }, onEvict: (p) => evicted.push(...p) });
    const body = "x".repeat(200);
    const a = await m.saveContext("alpha", {}, body);
    const b = await m.saveContext("bravo", {}, body);
    assert.deepEqual(evicted, [], "two records of ~400 bytes fit in 900");
    const c = await m.saveContext("charlie", {}, body);
    assert.deepEqual(evicted.map((p) => p.filepath), [a]);
    assert.deepEqual(m.getAllPointers().map((p) => p.filepath), [b, c]);
    assert.deepEqual(await m.loadContexts([a]), []);
    await expectRejection(assert, () => m.saveContext("huge", {}, "x".repeat(1000)), "TOO_LARGE", "over maxBytes alone");
    assert.equal(m.size, 2);
    await m.flush();
    assert.deepEqual(await listFiles(storage, m.getContextDir()), [b, c].sort());
  });

  t("retention counts only this manager's records: another manager's and adopted ones are never evicted", async () => {
    const storage = makeStorage();
    const dir = contextDir();
    const other = new ContextManager({ contextDir: dir, fileSystem: storage, persistThreshold: 0 });
    const theirs = await other.saveContext("theirs", {}, 1);
    const evicted = [];
    const { m } = setup({ fileSystem: storage, contextDir: dir, retention: { maxRecords: 1 }, onEvict: (p) => evicted.push(...p) });
    assert.equal(await m.rebuildIndex(), 1);
    const a = await m.saveContext("alpha", {}, 1);
    const b = await m.saveContext("bravo", {}, 2);
    assert.deepEqual(evicted.map((p) => p.filepath), [a]);
    assert.equal((await readRecord(storage, theirs)).result, 1);
    assert.deepEqual(m.getAllPointers().map((p) => p.filepath), [theirs, b]);
  });

  t("retention and onEvict are checked: bad caps reject INVALID_ARGUMENT", () => {
    const codeOf = (options) => {
      try {
        new ContextManager({ contextDir: contextDir(), fileSystem: makeStorage(), ...options });
      } catch (err) {
        return err.code;
      }
      return "constructed";
    };
    for (const retention of [{ maxRecords: 0 }, { maxBytes: -1 }, { maxAgeMs: "1h" }, { maxRecords: 1.5 }, 7, { maxRecrods: 3 }]) {
      assert.equal(codeOf({ retention }), "INVALID_ARGUMENT", JSON.stringify(retention));
    }
    assert.equal(codeOf({ onEvict: "log" }), "INVALID_ARGUMENT", "onEvict");
    assert.equal(codeOf({ retention: { maxBytes: 1, maxRecords: 1, maxAgeMs: 1 } }), "constructed");
  });

  t("toolCallId is stored in the record and the pointer, never in the name: 1,000-character ids and tool names save", async () => {
    const { m, storage, base } = setup();
    const id = `call_${"a".repeat(995)}`;
    const tool = "t".repeat(1000);
    const fp = await m.saveContext(tool, { q: 1 }, "out", { toolCallId: id, taskId: 1 });
    assertInside(base, fp);
    assert.ok(encoder.encode(basename(fp)).length <= 255, `${basename(fp).length} bytes`);
    const [pointer] = m.getAllPointers();
    assert.equal(pointer.toolCallId, id);
    assert.equal(pointer.toolName, tool);
    const record = await readRecord(storage, fp);
    assert.equal(record.toolCallId, id);
    assert.equal(record.toolName, tool);
    const [loaded] = await m.loadContexts([fp]);
    assert.equal(loaded.toolCallId, id);
    const plain = await m.saveContext("t", {}, 1);
    assert.ok(!("toolCallId" in (await readRecord(storage, plain))), "omitted when not given");
    await expectRejection(assert, () => m.saveContext("t", {}, 1, { toolCallId: 42 }), "INVALID_ARGUMENT", "toolCallId must be a string");
  });
}

// ---------------------------------------------------------------------------
// cross-runtime vectors (tests/vectors/*.json, computed outside this code base)

/** Reads the four vector files with `readText(fileName)` (fetch, fs, Deno...). */
export async function loadVectors(readText) {
  const load = async (file) => JSON.parse(await readText(file));
  return {
    canonical: (await load("canonical.json")).vectors,
    hashQuery: (await load("hash_query.json")).vectors,
    sanitize: (await load("sanitize.json")).vectors,
    record: await load("record.json"),
  };
}

/**
 * The vectors through the package: canonical args hash, hashQuery, tool-name
 * sanitising and one record file byte for byte. `vectors` holds the parsed files:
 * `{ canonical, hashQuery, sanitize, record }` (the first three: their `vectors` arrays).
 */
export function runVectorTests({ name = "vectors", test: t0, assert, ContextManager, memoryStorage, vectors }) {
  const test = (title, fn) => t0(`[${name}] ${title}`, fn);
  const { canonical, hashQuery, sanitize, record } = vectors;
  const base = basename;


  function manager() {
    const storage = memoryStorage();
    const m = new ContextManager({ contextDir: "/vectors/ctx", fileSystem: storage, persistThreshold: 0 });
    return { m, storage };
  }

  test("vector files are present and non-empty", () => {
    assert.ok(canonical.length > 0);
    assert.ok(hashQuery.length > 0);
    assert.ok(sanitize.length > 0);
  });

  for (const v of canonical) {
    test(`canonical args hash: ${v.name}`, async () => {
      const { m, storage } = manager();
      const args = JSON.parse(v.json);
      const fp = await m.saveContext("vec", args, null);
      const [ptr] = m.getAllPointers();
      assert.equal(ptr.argsHash, v.sha256, "pointer.argsHash");
      const filename = base(fp);
      assert.match(filename, NAME_RE);
      assert.equal(filename.split("_")[1], v.sha256.slice(0, 12), "filename hash part");
      const rec = JSON.parse(new TextDecoder().decode(await storage.read(fp)));
      assert.equal(rec.argsHash, v.sha256, "record.argsHash");
      assert.deepEqual(rec.args, JSON.parse(JSON.stringify(args)), "args stored as JSON.stringify would");
    });
  }

  for (const v of hashQuery) {
    test(`hashQuery(${JSON.stringify(v.query)}) === ${v.id}`, () => {
      assert.equal(ContextManager.hashQuery(v.query), v.id);
    });
  }

  for (const v of sanitize) {
    const toolName = v.toolName ?? v.name;
    test(`sanitised tool name: ${JSON.stringify(toolName)} -> ${v.sanitized}`, async () => {
      const { m, storage } = manager();
      const fp = await m.saveContext(toolName, { t: toolName }, "r");
      const filename = base(fp);
      assert.ok(filename.startsWith(`${v.sanitized}_`), `${filename} starts with ${v.sanitized}_`);
      assert.match(filename, NAME_RE);
      assert.equal(fp, `${m.getContextDir()}/${filename}`, "directly inside contextDir");
      assert.deepEqual(storage.paths(), [fp]);
      const rec = JSON.parse(new TextDecoder().decode(await storage.read(fp)));
      assert.equal(rec.toolName, toolName, "the record keeps the original name");
    });
  }

  // One record file, byte for byte, from fixed inputs (tests/vectors/record.json).
  test("record vector: filename and file bytes from fixed clock/random inputs", async () => {
    const { input, filename, file } = record;
    const storage = memoryStorage();
    let i = 0;
    const m = new ContextManager({
      contextDir: "/vectors/record",
      fileSystem: storage,
      persistThreshold: 0,
      clock: () => input.epochMs,
      random: () => input.random[i++ % input.random.length],
    });
    assert.equal(ContextManager.hashQuery(input.query), input.queryId);
    const fp = await m.saveContext(input.toolName, input.args, input.result, input.taskId, input.queryId);
    assert.equal(base(fp), filename);
    assert.equal(new TextDecoder().decode(await storage.read(fp)), file);
    assert.equal(i, input.random.length, "one random number per character of the random part");
  });
}

// ---------------------------------------------------------------------------
// sessions (SPEC §5)

/**
 * Sessions over one adapter: folders and manifest, resume, end, listing, stale cleanup,
 * rebuildIndex. Same arguments as runSeedApiTests, and `manySaves`: false leaves out the
 * two tests of more than a thousand saves in a loop (the core's back-pressure, which is
 * the same over any storage). Over OPFS, at about 10 ms a write, they take 40 s a browser
 * context; the memory suite of the same context runs them.
 */
export function runSessionTests({ name, makeStorage, ContextManager, test: t0, assert, contextDir, manySaves = true }) {
  const test = (title, fn) => t0(`[${name}] sessions: ${title}`, fn);
  const testManySaves = manySaves ? test : () => {};
  const ID_RE = /^\d{8}-\d{6}-[a-z0-9]{4}$/;
  const readManifest = async (storage, m) =>
    JSON.parse(toText(await storage.read(`${m.getContextDir()}/sessions/${m.sessionId}/.manifest.json`)));

  test("session: true gives an id, a folder with categories and a manifest", async () => {
    const storage = makeStorage();
    const dir = contextDir();
    const m = await ContextManager.open({ contextDir: dir, fileSystem: storage, session: true, persistThreshold: 0 });
    assert.match(m.sessionId, ID_RE);
    const base = `${m.getContextDir()}/sessions/${m.sessionId}`;
    const a = await m.saveContext("readFile", { path: "src/auth/login.ts" }, "x", { category: "code", taskId: 1 });
    const b = await m.saveContext("grep", { pattern: "auth" }, ["y"]);
    assert.ok(a.startsWith(`${base}/code/readFile_`), a);
    assert.ok(b.startsWith(`${base}/grep_`), b);
    await m.flush();
    const manifest = await readManifest(storage, m);
    assert.equal(manifest.session_id, m.sessionId);
    assert.match(manifest.created_at, ISO_MS_RE);
    assert.match(manifest.last_activity, ISO_MS_RE);
    assert.deepEqual(Object.keys(manifest.context_files).sort(), [a, b].map((p) => p.slice(base.length + 1)).sort());
    const entry = manifest.context_files[a.slice(base.length + 1)];
    assert.equal(entry.for, "readFile");
    assert.ok(entry.keywords.includes("login"), JSON.stringify(entry));
    assert.ok(manifest.context_index.auth.length === 2, JSON.stringify(manifest.context_index));
    await expectRejection(assert, () => m.saveContext("t", {}, 1, { category: "../up" }), "INVALID_ARGUMENT", "category");
  });

  test("a save with a session and with retention runs no task: the spill, the eviction and the manifest write included", async () => {
    const storage = makeStorage();
    let now = 1_700_000_000_000;
    // Every reading of the clock is 2 s later: each save's manifest write is due.
    const clock = () => (now += 2000);
    const evicted = [];
    const m = await ContextManager.open({
      contextDir: contextDir(), fileSystem: storage, session: true, clock,
      persistThreshold: 300, memoryBudget: 400, retention: { maxRecords: 2 }, onEvict: (p) => evicted.push(...p),
    });
    const large = await m.saveContext("readFile", { path: "a.ts" }, "x".repeat(400));
    const small = await m.saveContext("grep", { pattern: "b" }, "y");
    const over = await m.saveContext("grep", { pattern: "c" }, "z".repeat(40)); // past the memory budget: `small` is written out
    const last = await m.saveContext("readFile", { path: "d.ts" }, "w".repeat(400)); // past maxRecords: `large` is evicted
    assert.deepEqual(evicted.map((p) => p.filepath), [large, small]);
    assert.deepEqual(m.getAllPointers().map((p) => p.filepath), [over, last]);
    assert.equal(await storage.read(large), undefined, "the evicted record is removed");
    const manifest = await readManifest(storage, m);
    const base = `${m.getContextDir()}/sessions/${m.sessionId}/`;
    assert.deepEqual(Object.keys(manifest.context_files).sort(), [last.slice(base.length)], "the manifest was written by the last save");
    assert.equal(Date.parse(manifest.last_activity), now, "at the time the last save read the clock");
  });

  test("flush, endSession and close of a session run no task", async () => {
    const storage = makeStorage();
    const dir = contextDir();
    const a = await ContextManager.open({ contextDir: dir, fileSystem: storage, session: true });
    const b = await ContextManager.open({ contextDir: dir, fileSystem: storage, session: true });
    const held = await a.saveContext("readFile", { path: "a.ts" }, "held in memory");
    await a.flush();
    const listed = Object.keys((await readManifest(storage, a)).context_files);
    await a.endSession();
    const kept = await b.saveContext("readFile", { path: "b.ts" }, "written out by close");
    await b.close();
    assert.deepEqual(listed.map((rel) => held.endsWith(`/${rel}`)), [true], "flush wrote the record and the manifest");
    assert.ok(!(await storage.list(`${a.getContextDir()}/sessions`)).includes(`${a.sessionId}/`), "endSession removed the folder");
    assert.equal(a.size, 0);
    assert.equal((await readRecord(storage, kept))?.result, "written out by close");
  });

  test("open() of a new and of a named session runs no task; the records the manifest does not list yet are read", async () => {
    const storage = makeStorage();
    const dir = contextDir();
    const a = await ContextManager.open({ contextDir: dir, fileSystem: storage, session: true, persistThreshold: 0 });
    const saved = [
      await a.saveContext("readFile", { path: "a.ts" }, "one", { category: "code" }),
      await a.saveContext("grep", { pattern: "b" }, "two"),
    ];
    assert.deepEqual(Object.keys((await readManifest(storage, a)).context_files), [], "the manifest lags (writes are coalesced)");
    const b = await ContextManager.open({ contextDir: dir, fileSystem: storage, session: a.sessionId });
    assert.deepEqual(b.getAllPointers().map((p) => p.filepath), saved);
    assert.equal(Object.keys((await readManifest(storage, b)).context_files).length, 2, "the resume wrote the manifest");
  });

  test("ContextManager.search ranks the records of every session from their manifests", async () => {
    const storage = makeStorage();
    const dir = contextDir();
    let now = Date.UTC(2025, 0, 18, 14, 30, 22);
    const clock = () => now;
    const a = await ContextManager.open({ contextDir: dir, fileSystem: storage, session: true, persistThreshold: 0, clock });
    const refunds = await a.saveContext("readFile", { path: "src/billing/refunds.ts" }, "x", 4);
    await a.saveContext("grep", { pattern: "TODO" }, "y");
    await a.close();
    now += 60_000;
    const b = await ContextManager.open({ contextDir: dir, fileSystem: storage, session: true, persistThreshold: 0, clock });
    const webhook = await b.saveContext("searchCode", { query: "refund webhook" }, "z");
    await b.close();
    const hits = await ContextManager.search({ contextDir: dir, fileSystem: storage }, "refund webhooks");
    assert.deepEqual(hits.map((h) => [h.sessionId, h.filepath]), [[b.sessionId, webhook], [a.sessionId, refunds]]);
    assert.deepEqual(hits[0].matched, ["refund", "webhooks"]);
    assert.ok(hits[0].score > hits[1].score && hits[1].score > 0);
    assert.equal(hits[1].pointer.filepath, refunds);
    assert.equal(hits[1].pointer.toolName, "readFile");
    assert.deepEqual(hits[1].pointer.args, { path: "src/billing/refunds.ts" });
    assert.equal(hits[1].pointer.taskId, 4);
    assert.equal((await ContextManager.search({ contextDir: dir, fileSystem: storage }, "refund", { limit: 1 })).length, 1);
    assert.deepEqual(await ContextManager.search({ contextDir: dir, fileSystem: storage }, "kubernetes"), []);
    await expectRejection(assert, () => ContextManager.search({ contextDir: dir, fileSystem: storage }, 42), "INVALID_ARGUMENT", "search");
  });

  test("resume and ContextManager.search find a record by a word of its content, from the manifest", async () => {
    const storage = makeStorage();
    const dir = contextDir();
    // persistThreshold 64: the short result waits in memory and is written out at close.
    const m = await ContextManager.open({ contextDir: dir, fileSystem: storage, session: true, persistThreshold: 64 });
    const big = await m.saveContext("readFile", { path: "src/a.ts" }, { text: `kubernetes deployment rollout ${"x".repeat(80)}` });
    const small = await m.saveContext("readFile", { path: "src/b.ts" }, "billing refunds");
    await m.close();
    const entries = Object.values((await readManifest(storage, m)).context_files);
    assert.ok(entries.every((e) => !e.keywords.some((k) => k.startsWith("kubernet") || k.startsWith("refund"))), "keywords: the metadata's");
    assert.ok(entries.some((e) => e.contentTerms?.kubernet === 1), JSON.stringify(entries));
    const resumed = await ContextManager.open({ contextDir: dir, fileSystem: storage, session: m.sessionId });
    assert.deepEqual((await resumed.selectRelevant("kubernetes", { fallback: "none" })).map((p) => p.filepath), [big]);
    assert.deepEqual(resumed.selectRelevantContexts("refund", resumed.getAllPointers(), { fallback: "none" }), [small]);
    const hits = await ContextManager.search({ contextDir: dir, fileSystem: storage }, "deployments");
    assert.deepEqual(hits.map((h) => h.filepath), [big]);
    assert.deepEqual(hits[0].matched, ["deployments"]);
  });

  test("open({session}) restores identical pointers in save order, small records excepted", async () => {
    const storage = makeStorage();
    const dir = contextDir();
    const m = await ContextManager.open({ contextDir: dir, fileSystem: storage, session: true, persistThreshold: 0 });
    for (let i = 0; i < 12; i++) await m.saveContext("grep", { i }, { hits: [i] }, { taskId: i % 3, category: i % 2 ? "code" : undefined });
    const before = m.getAllPointers();
    // no flush, no close: as after a crash
    const resumed = await ContextManager.open({ contextDir: dir, fileSystem: storage, session: m.sessionId });
    assert.equal(resumed.sessionId, m.sessionId);
    assert.deepEqual(resumed.getAllPointers(), before);
    assert.deepEqual(resumed.getPointersForTask(1), m.getPointersForTask(1));
    const records = await resumed.loadContexts(resumed.getAllPointers().map((p) => p.filepath));
    assert.equal(records.length, 12);
    const inMemory = await ContextManager.open({ contextDir: dir, fileSystem: storage, session: true, persistThreshold: HOLD });
    await inMemory.saveContext("t", {}, "small"); // under persistThreshold: ephemeral
    const again = await ContextManager.open({ contextDir: dir, fileSystem: storage, session: inMemory.sessionId });
    assert.equal(again.size, 0, "in-memory records are not in a session after a restart");
  });

  test("open() of a session that does not exist rejects with NOT_FOUND; a bad id with INVALID_ARGUMENT", async () => {
    const storage = makeStorage();
    const dir = contextDir();
    await expectRejection(assert, () => ContextManager.open({ contextDir: dir, fileSystem: storage, session: "20200101-000000-none" }), "NOT_FOUND", "missing");
    await expectRejection(assert, () => ContextManager.open({ contextDir: dir, fileSystem: storage, session: "../../etc" }), "INVALID_ARGUMENT", "bad id");
  });

  // The core makes the manager inside open()'s plan and hands it out only when the plan
  // resolves (crates/wasm/src/manager/mod.rs, `open`): a failed open drops it with the plan,
  // so there is no handle for JavaScript to free, nor for the garbage collector to find.
  test("an open() whose plan fails hands out no manager (the core drops the one it made), and one that succeeds frees nothing", async () => {
    const free = ContextManager.prototype.free;
    let freed = 0;
    ContextManager.prototype.free = function () {
      freed++;
      return free.call(this);
    };
    try {
      const storage = makeStorage();
      const dir = contextDir();
      await expectRejection(assert, () => ContextManager.open({ contextDir: dir, fileSystem: storage, session: "20200101-000000-none" }), "NOT_FOUND", "missing");
      assert.equal(freed, 0, "the failed open made no manager to free");
      const m = await ContextManager.open({ contextDir: dir, fileSystem: storage, session: true });
      assert.equal(freed, 0, "an open that succeeds frees nothing");
      assert.match(await m.saveContext("t", {}, "ok"), /t_/);
    } finally {
      ContextManager.prototype.free = free;
    }
  });

  test("endSession removes its records, manifest and folder, and nothing else", async () => {
    const storage = makeStorage();
    const dir = contextDir();
    const a = await ContextManager.open({ contextDir: dir, fileSystem: storage, session: true, persistThreshold: 0 });
    const b = await ContextManager.open({ contextDir: dir, fileSystem: storage, session: true, persistThreshold: 0 });
    await a.saveContext("t", {}, 1, { category: "testing" });
    await a.saveContext("t", {}, 2);
    const kept = await b.saveContext("t", {}, 3);
    const flat = new ContextManager({ contextDir: dir, fileSystem: storage, persistThreshold: 0 });
    const flatRecord = await flat.saveContext("t", {}, 4);
    await a.endSession();
    const root = a.getContextDir();
    const left = await listFiles(storage, root);
    assert.ok(!left.some((p) => p.includes(a.sessionId)), JSON.stringify(left));
    assert.ok(left.includes(kept) && left.includes(flatRecord));
    assert.equal(a.size, 0);
    assert.ok(!(await storage.list(`${root}/sessions`)).includes(`${a.sessionId}/`), "the empty folder is gone");
  });

  test("listSessions and cleanupStaleSessions: only idle sessions, only tracked files", async () => {
    const storage = makeStorage();
    const dir = contextDir();
    let now = Date.UTC(2025, 0, 18, 14, 30, 22);
    const clock = () => now;
    const old = await ContextManager.open({ contextDir: dir, fileSystem: storage, session: true, persistThreshold: 0, clock });
    await old.saveContext("t", {}, 1);
    await old.close();
    const root = old.getContextDir();
    const foreign = `${root}/sessions/${old.sessionId}/notes.md`;
    await storage.write(foreign, "user file");
    now += 2 * 86_400_000;
    const active = await ContextManager.open({ contextDir: dir, fileSystem: storage, session: true, persistThreshold: 0, clock });
    await active.saveContext("t", {}, 2);
    await active.close();
    const listed = await ContextManager.listSessions({ contextDir: dir, fileSystem: storage });
    assert.deepEqual(listed.map((s) => s.id).sort(), [old.sessionId, active.sessionId].sort());
    const info = listed.find((s) => s.id === active.sessionId);
    assert.equal(info.records, 1);
    assert.ok(info.bytes > 0);
    assert.equal(Date.parse(info.lastActivity), now);
    const removed = await ContextManager.cleanupStaleSessions({ contextDir: dir, fileSystem: storage, clock, olderThanMs: 86_400_000 });
    assert.deepEqual(removed, [old.sessionId]);
    const left = await listFiles(storage, root);
    assert.ok(left.includes(foreign), "a file the session did not write stays");
    assert.ok(left.some((p) => p.includes(active.sessionId)), "the active session stays");
    assert.deepEqual(await ContextManager.cleanupStaleSessions({ contextDir: dir, fileSystem: storage, clock }), []);
  });

  test("two managers writing one session at once lose no manifest entry", async () => {
    const storage = makeStorage();
    const dir = contextDir();
    const a = await ContextManager.open({ contextDir: dir, fileSystem: storage, session: true, persistThreshold: 0 });
    const b = await ContextManager.open({ contextDir: dir, fileSystem: storage, session: a.sessionId, persistThreshold: 0 });
    const saves = [];
    for (let i = 0; i < 40; i++) saves.push((i % 2 ? a : b).saveContext("t", { i }, i));
    await Promise.all(saves);
    await Promise.all([a.flush(), b.flush()]);
    await a.flush();
    const manifest = await readManifest(storage, a);
    assert.equal(Object.keys(manifest.context_files).length, 40);
    const c = await ContextManager.open({ contextDir: dir, fileSystem: storage, session: a.sessionId });
    assert.equal(c.size, 40);
  });

  test("a failing manifest write loses no record: the save resolves, flush rejects typed, resume recovers", async () => {
    const base = makeStorage();
    const dir = contextDir();
    let full = false;
    const quota = () => Object.assign(new Error("disk full"), { name: "QuotaExceededError" });
    const storage = withWrite(base, (path, data, options) => {
      if (full && path.endsWith(".manifest.json")) throw quota();
      return base.write(path, data, options);
    });
    const m = await ContextManager.open({ contextDir: dir, fileSystem: storage, session: true, persistThreshold: 0 });
    full = true;
    const fp = await m.saveContext("t", { a: 1 }, "kept");
    assert.equal(m.size, 1);
    await expectRejection(assert, () => m.flush(), "QUOTA_EXCEEDED", "flush");
    full = false;
    const resumed = await ContextManager.open({ contextDir: dir, fileSystem: base, session: m.sessionId });
    assert.deepEqual(resumed.getAllPointers().map((p) => p.filepath), [fp]);
    const denied = withWrite(base, () => {
      throw Object.assign(new Error("EACCES: permission denied"), { code: "EACCES" });
    });
    const ro = await ContextManager.open({ contextDir: dir, fileSystem: base, session: m.sessionId, persistThreshold: 0 });
    const blocked = new ContextManager({ contextDir: dir, fileSystem: denied, session: m.sessionId, persistThreshold: 0 });
    const err = await expectRejection(assert, () => blocked.saveContext("t", {}, 1), "STORAGE", "permission");
    assert.equal(err.cause?.code, "EACCES", "the host error is the cause");
    assert.equal(blocked.size, 0);
    assert.equal(ro.size, 1, "the store is as it was");
  });

  /** A session that crashed 10 ms after its last flush: 3 records in the manifest, 2 not yet. */
  async function crashedSession(storage, dir, t0) {
    let now = t0;
    const m = await ContextManager.open({ contextDir: dir, fileSystem: storage, session: true, persistThreshold: 0, clock: () => now });
    for (let i = 0; i < 3; i++) await m.saveContext("grep", { pattern: `auth ${i}` }, { hits: [i] });
    await m.flush();
    now += 10;
    for (let i = 3; i < 5; i++) await m.saveContext("grep", { pattern: `auth ${i}` }, { hits: [i] }, { category: "code" });
    const manifestPath = `${m.getContextDir()}/sessions/${m.sessionId}/.manifest.json`;
    assert.equal(Object.keys(JSON.parse(toText(await storage.read(manifestPath))).context_files).length, 3, "the manifest lags");
    return { id: m.sessionId, manifestPath, paths: m.getAllPointers().map((p) => p.filepath) };
  }

  /** A host over `storage` (each method called as it is, `lock` with its options), with `methods` in place of its own. */
  function over(storage, methods) {
    const host = {
      read: (p) => storage.read(p),
      write: (p, d, o) => storage.write(p, d, o),
      remove: (p) => storage.remove(p),
      list: (d) => storage.list(d),
    };
    if (storage.removeDir) host.removeDir = (p) => storage.removeDir(p);
    if (storage.lock) host.lock = (n, fn, o) => storage.lock(n, fn, o);
    return Object.assign(host, methods);
  }

  /** `base` with every mutating call (write, remove, append, removeDir, lock) logged. */
  function spying(base) {
    const calls = [];
    const storage = { read: (p) => base.read(p), list: (d) => base.list(d) };
    for (const op of ["write", "remove", "append", "removeDir", "lock"]) {
      if (typeof base[op] !== "function") continue;
      storage[op] = (...args) => {
        calls.push(`${op} ${args[0]}`);
        return base[op](...args);
      };
    }
    return { storage, calls };
  }

  const DAY = 86_400_000;
  const T0 = Date.UTC(2025, 0, 18, 14, 30, 22);

  test("readOnly: a crashed session is read whole, nothing is written, writes reject READ_ONLY, gc still collects it", async () => {
    const base = makeStorage();
    const dir = contextDir();
    const { id, manifestPath, paths } = await crashedSession(base, dir, T0);
    const before = toText(await base.read(manifestPath));
    const { storage, calls } = spying(base);
    const clock = () => T0 + 2 * DAY;
    const ro = await ContextManager.open({ contextDir: dir, fileSystem: storage, session: id, readOnly: true, clock });
    assert.deepEqual(ro.getAllPointers().map((p) => p.filepath), paths, "every record, the unlisted ones too");
    assert.equal((await ro.loadContexts(paths)).length, 5);
    assert.equal((await ro.selectRelevant("auth")).length, 5);
    assert.equal(await ro.rebuildIndex(), 5, "rebuildIndex re-reads the records, in memory only");
    await expectRejection(assert, () => ro.saveContext("t", {}, 1), "READ_ONLY", "saveContext");
    for (const op of ["clearContextDir", "clear", "endSession", "reconcile"]) await expectRejection(assert, () => ro[op](), "READ_ONLY", op);
    assert.equal(ro.size, 5, "a refused clear() keeps the pointers");
    await ro.flush();
    await ro.close();
    const flat = new ContextManager({ contextDir: dir, fileSystem: storage, readOnly: true, persistThreshold: 0 });
    await flat.rebuildIndex();
    await expectRejection(assert, () => flat.saveContext("t", {}, 1), "READ_ONLY", "flat saveContext");
    for (const op of ["purge", "cleanupStaleSessions"]) {
      await expectRejection(assert, () => ContextManager[op]({ contextDir: dir, fileSystem: storage, readOnly: true }), "READ_ONLY", op);
    }
    await expectRejection(assert, () => ContextManager.importRecords({ contextDir: dir, fileSystem: storage, readOnly: true }, ""), "READ_ONLY", "importRecords");
    await expectRejection(assert, () => ContextManager.open({ contextDir: dir, fileSystem: storage, session: true, readOnly: true }), "INVALID_ARGUMENT", "a new read-only session");
    assert.deepEqual(calls, [], "nothing written, removed or locked");
    assert.equal(toText(await base.read(manifestPath)), before, "the manifest is byte for byte as it was");
    const [info] = await ContextManager.listSessions({ contextDir: dir, fileSystem: base });
    assert.equal(Date.parse(info.lastActivity), T0, "last_activity did not move");
    assert.deepEqual(await ContextManager.cleanupStaleSessions({ contextDir: dir, fileSystem: base, clock, olderThanMs: DAY }), [id]);
    for (const p of paths.slice(0, 3)) assert.equal(await base.read(p), undefined, `${p} (tracked) collected`);
    assert.equal(await base.read(manifestPath), undefined);
  });

  test("resuming a crashed session on a full disk: open() restores every record though the manifest and segment cannot be written; a later flush writes them", async () => {
    const storage = makeStorage();
    const dir = contextDir();
    const { id, manifestPath, paths } = await crashedSession(storage, dir, T0);
    // A disk with room for nothing new: every write fails as a full disk's does (reads,
    // lists, removes and locks work).
    let full = true;
    const host = over(storage, {
      write: (p, d, o) => (full ? Promise.reject(Object.assign(new Error(`no space left on device, write '${p}'`), { code: "ENOSPC" })) : storage.write(p, d, o)),
    });
    const messages = [];
    const m = await ContextManager.open({ contextDir: dir, fileSystem: host, session: id, onDebug: (msg) => messages.push(String(msg)) });
    assert.deepEqual(m.getAllPointers().map((p) => p.filepath).sort(), [...paths].sort(), "every record, the unlisted ones too");
    assert.equal((await m.selectRelevant("auth")).length, 5);
    assert.ok(messages.some((msg) => msg.includes("could not write the session manifest")), messages.join(" | "));
    assert.equal(Object.keys(JSON.parse(toText(await storage.read(manifestPath))).context_files).length, 3, "the manifest is as it was");
    full = false;
    await m.flush();
    assert.equal(Object.keys(JSON.parse(toText(await storage.read(manifestPath))).context_files).length, 5, "the flush wrote it");
    await m.close();
  });

  test("resuming a crashed session indexes it but is not activity: last_activity stays, gc still collects it", async () => {
    const storage = makeStorage();
    const dir = contextDir();
    const { id, manifestPath } = await crashedSession(storage, dir, T0);
    const clock = () => T0 + 2 * DAY;
    const m = await ContextManager.open({ contextDir: dir, fileSystem: storage, session: id, clock });
    assert.equal(m.size, 5);
    await m.close();
    const manifest = JSON.parse(toText(await storage.read(manifestPath)));
    assert.equal(Object.keys(manifest.context_files).length, 5, "the index caught up");
    assert.equal(Date.parse(manifest.last_activity), T0 + 10, "the last write in the session, not the resume");
    assert.deepEqual(await ContextManager.cleanupStaleSessions({ contextDir: dir, fileSystem: storage, clock, olderThanMs: DAY }), [id]);
    const again = await crashedSession(storage, dir, T0);
    const writer = await ContextManager.open({ contextDir: dir, fileSystem: storage, session: again.id, clock, persistThreshold: 0 });
    await writer.saveContext("t", {}, "a write is activity");
    await writer.close();
    assert.equal(Date.parse(JSON.parse(toText(await storage.read(again.manifestPath))).last_activity), clock());
    assert.deepEqual(await ContextManager.cleanupStaleSessions({ contextDir: dir, fileSystem: storage, clock, olderThanMs: DAY }), []);
  });

  test("rebuildIndex adopts the records of a flat store, with the pointers their writer had", async () => {
    const storage = makeStorage();
    const dir = contextDir();
    const writer = new ContextManager({ contextDir: dir, fileSystem: storage, persistThreshold: 0 });
    for (let i = 0; i < 5; i++) await writer.saveContext("readFile", { path: `f${i}.ts` }, i, i, "q");
    const reader = new ContextManager({ contextDir: dir, fileSystem: storage });
    assert.equal(await reader.rebuildIndex(), 5);
    assert.deepEqual(reader.getAllPointers(), writer.getAllPointers());
  });

  test("cleanupStaleSessions also removes the records a crash left out of the manifest; a user's file stays", async () => {
    const storage = makeStorage();
    const dir = contextDir();
    const { id, paths } = await crashedSession(storage, dir, T0);
    const notes = `${paths[0].slice(0, paths[0].lastIndexOf("/"))}/notes.txt`;
    await storage.write(notes, "mine");
    const clock = () => T0 + 2 * DAY;
    assert.deepEqual(await ContextManager.cleanupStaleSessions({ contextDir: dir, fileSystem: storage, clock, olderThanMs: DAY }), [id]);
    for (const p of paths) assert.equal(await storage.read(p), undefined, `${p} collected`);
    assert.equal(toText(await storage.read(notes)), "mine");
  });

  test("the store-wide operations run no task (the driver runs their host calls); cleanup removes under the session's lock", async () => {
    const base = makeStorage();
    const dir = contextDir();
    const log = [];
    let held = 0;
    const under = async (fn) => {
      held++;
      try {
        return await fn();
      } finally {
        held--;
      }
    };
    const storage = {
      read: (p, o) => base.read(p, o),
      write: (p, d, o) => base.write(p, d, o),
      list: (d) => base.list(d),
      remove: (p) => {
        if (p.includes("/sessions/")) log.push(`remove held=${held}`);
        return base.remove(p);
      },
      lock: (name, fn) => {
        log.push(`lock ${name}`);
        return typeof base.lock === "function" ? base.lock(name, () => under(fn)) : under(fn);
      },
    };
    if (typeof base.removeDir === "function") storage.removeDir = (p) => base.removeDir(p);
    const clock = () => T0;
    const old = await ContextManager.open({ contextDir: dir, fileSystem: storage, session: true, persistThreshold: 0, clock });
    await old.saveContext("grep", { pattern: "refund" }, { hits: ["refunds.ts"] });
    await old.close();
    const flat = new ContextManager({ contextDir: dir, fileSystem: storage, persistThreshold: 0 });
    await flat.saveContext("readFile", { path: "a.ts" }, "flat");
    const target = contextDir();
    log.length = 0;
    const [info] = await ContextManager.listSessions({ contextDir: dir, fileSystem: storage });
    assert.equal(info.id, old.sessionId);
    const hits = await ContextManager.search({ contextDir: dir, fileSystem: storage }, "refund");
    assert.deepEqual(hits.map((h) => h.sessionId), [old.sessionId]);
    const out = await ContextManager.exportRecords({ contextDir: dir, fileSystem: storage });
    assert.equal(out.exported, 1);
    assert.deepEqual(await ContextManager.importRecords({ contextDir: target, fileSystem: storage }, out), { imported: 1, unchanged: 0 });
    const later = () => T0 + 2 * DAY;
    assert.deepEqual(await ContextManager.cleanupStaleSessions({ contextDir: dir, fileSystem: storage, clock: later, olderThanMs: DAY }), [old.sessionId]);
    assert.equal(await ContextManager.purge({ contextDir: target, fileSystem: storage }), 1);
    assert.ok(log[0].startsWith("lock "), log.join(", "));
    assert.ok(log.length >= 3, log.join(", "));
    assert.deepEqual(log.slice(1).filter((e) => e !== "remove held=1"), [], "every session file removed under the lock");
  });

  test("a store-wide operation whose host call throws, or whose lock fails, rejects typed with the host's error as cause; nothing is removed", async () => {
    const base = makeStorage();
    const dir = contextDir();
    const clock = () => T0;
    const old = await ContextManager.open({ contextDir: dir, fileSystem: base, session: true, persistThreshold: 0, clock });
    const record = await old.saveContext("t", {}, 1);
    await old.close();
    const boom = Object.assign(new Error("list exploded"), { code: "EIO" });
    const throwing = { read: (p, o) => base.read(p, o), write: (p, d, o) => base.write(p, d, o), remove: (p) => base.remove(p), list: () => { throw boom; } };
    for (const op of ["purge", "exportRecords", "listSessions"]) {
      const err = await expectRejection(assert, () => ContextManager[op]({ contextDir: dir, fileSystem: throwing }), "STORAGE", op);
      assert.equal(err.cause, boom, `${op}: the host's error is the cause`);
    }
    const denied = new Error("lock denied");
    const locking = { ...throwing, list: (d) => base.list(d), lock: async () => { throw denied; } };
    const err = await expectRejection(
      assert,
      () => ContextManager.cleanupStaleSessions({ contextDir: dir, fileSystem: locking, clock: () => T0 + 2 * DAY, olderThanMs: DAY }),
      "STORAGE",
      "cleanupStaleSessions",
    );
    assert.equal(err.cause, denied);
    assert.ok(await base.read(record), "the session's record stays");
  });

  test("reconcile() adopts the records a crashed writer of the session left unlisted; endSession then removes them", async () => {
    const storage = makeStorage();
    const dir = contextDir();
    const clock = () => T0;
    const a = await ContextManager.open({ contextDir: dir, fileSystem: storage, session: true, persistThreshold: 0, clock });
    const mine = await a.saveContext("grep", { pattern: "mine" }, 1);
    await a.flush();
    // A second writer of the session saves three records and dies before its manifest write.
    const b = await ContextManager.open({ contextDir: dir, fileSystem: storage, session: a.sessionId, persistThreshold: 0, clock });
    const lost = [];
    for (let i = 0; i < 3; i++) lost.push(await b.saveContext("readFile", { path: `f${i}.ts` }, i, { category: i ? "code" : undefined, toolCallId: `call_${i}` }));
    const manifestPath = `${a.getContextDir()}/sessions/${a.sessionId}/.manifest.json`;
    assert.equal(Object.keys(JSON.parse(toText(await storage.read(manifestPath))).context_files).length, 1, "the manifest lags");
    const adopted = await a.reconcile();
    assert.deepEqual([...adopted].sort(), [...lost].sort());
    assert.deepEqual(await a.reconcile(), [], "nothing is adopted twice");
    assert.equal(a.size, 4);
    const pointer = a.getAllPointers().find((p) => p.filepath === lost[1]);
    assert.equal(pointer.toolCallId, "call_1", "the adopted pointer is the one its writer had");
    assert.equal(Object.keys(JSON.parse(toText(await storage.read(manifestPath))).context_files).length, 4);
    await a.endSession();
    for (const p of [mine, ...lost]) assert.equal(await storage.read(p), undefined, `${p} removed`);
    const outside = new ContextManager({ contextDir: dir, fileSystem: storage, persistThreshold: 0 });
    await outside.saveContext("t", {}, 1);
    assert.deepEqual(await outside.reconcile(), [], "outside a session there is nothing to reconcile");
  });

  test("retention in a session: maxAgeMs is enforced at open over the resumed records, and on save", async () => {
    const storage = makeStorage();
    const dir = contextDir();
    let now = T0;
    const clock = () => now;
    const m = await ContextManager.open({ contextDir: dir, fileSystem: storage, session: true, persistThreshold: 0, clock });
    const old = await m.saveContext("grep", { pattern: "old" }, 1);
    now += 10 * 60_000;
    const young = await m.saveContext("grep", { pattern: "young" }, 2);
    await m.close();
    now = T0 + 60 * 60_000;
    const evicted = [];
    const r = await ContextManager.open({
      contextDir: dir, fileSystem: storage, session: m.sessionId, persistThreshold: 0, clock,
      retention: { maxAgeMs: 55 * 60_000 }, onEvict: (pointers) => evicted.push(...pointers),
    });
    assert.deepEqual(evicted.map((p) => p.filepath), [old], "the hour-old record goes at open");
    assert.equal(evicted[0].args.pattern, "old", "onEvict gets the whole pointer");
    assert.deepEqual(r.getAllPointers().map((p) => p.filepath), [young]);
    assert.equal(await storage.read(old), undefined);
    const manifestPath = `${r.getContextDir()}/sessions/${r.sessionId}/.manifest.json`;
    assert.equal(Object.keys(JSON.parse(toText(await storage.read(manifestPath))).context_files).length, 1);
    now += 10 * 60_000;
    const fresh = await r.saveContext("grep", { pattern: "fresh" }, 3);
    assert.deepEqual(evicted.map((p) => p.filepath), [old, young]);
    await r.close();
    const manifest = JSON.parse(toText(await storage.read(manifestPath)));
    assert.deepEqual(Object.keys(manifest.context_files).map((rel) => `${r.getContextDir()}/sessions/${r.sessionId}/${rel}`), [fresh]);
  });

  // -- the persisted index (SPEC §4)

  const OUTPUTS = [
    ["readFile", { path: "src/upload.rs" }, "fn retry_upload(chunk: &[u8]) {\n    // retry the upload with backoff\n}\n"],
    ["grep", { pattern: "backoff" }, { hits: [{ file: "src/upload.rs", line: 2, text: "retry the upload with backoff" }] }],
    ["readFile", { path: "docs/parsing.md" }, "# Parsing\nHeaders are parsed lazily; the body never is.\n"],
    ["gitLog", { n: 3 }, "commit 1a2b3c\n    Fix the retry loop of the uploader\n"],
    ["listDir", { path: "src" }, ["lib.rs", "upload.rs", "parse.rs"]],
    ["runTests", { filter: "parse" }, "error[E0382]: borrow of moved value: `header`\n"],
  ];
  const QUERIES = ["retry upload backoff", "parsed lazily", "borrow of moved value", "upload.rs", "uploader"];
  const saveOutputs = async (m, rounds = 2) => {
    const saved = [];
    for (let r = 0; r < rounds; r++) {
      for (const [tool, args, result] of OUTPUTS) saved.push(await m.saveContext(tool, { ...args, r }, result));
    }
    return saved;
  };
  const rankingsOf = async (m) => {
    const out = [];
    for (const q of QUERIES) {
      const hits = await m.selectRelevant(q, { fallback: "none" });
      out.push(hits.map((h) => [h.filepath, h.score.toFixed(9), h.matched.join(" ")]));
    }
    return out;
  };
  /** `storage`, with the reads of record files counted (`reads.n`). */
  const counting = (storage) => {
    const reads = { n: 0 };
    const host = {
      read: (p) => {
        if (p.endsWith(".json") && !p.endsWith(".manifest.json")) reads.n++;
        return storage.read(p);
      },
      write: (p, d, o) => storage.write(p, d, o),
      remove: (p) => storage.remove(p),
      list: (d) => storage.list(d),
    };
    if (storage.removeDir) host.removeDir = (p) => storage.removeDir(p);
    if (storage.lock) host.lock = (n, fn) => storage.lock(n, fn);
    return { host, reads };
  };

  test("open({contextDir}) ranks every record at once from the index segments, as the manager that saved them did, reading no record", async () => {
    const storage = makeStorage();
    const dir = contextDir();
    const a = await ContextManager.open({ contextDir: dir, fileSystem: storage });
    const saved = await saveOutputs(a);
    const before = await rankingsOf(a);
    await a.close();
    assert.ok((await listSegments(storage, a.getContextDir())).length >= 1, "close wrote a segment");
    const { host, reads } = counting(storage);
    const b = await ContextManager.open({ contextDir: dir, fileSystem: host });
    assert.equal(reads.n, 0, "no record read");
    assert.deepEqual(b.getAllPointers().map((p) => p.filepath).sort(), [...saved].sort());
    const after = await rankingsOf(b);
    assert.ok(before[0].length >= 4 && before.every((r) => r.length > 0), JSON.stringify(before));
    assert.deepEqual(after.map((r) => r.map(([fp, score]) => [fp, score])), before.map((r) => r.map(([fp, score]) => [fp, score])));
  });

  test("a segment that is torn or foreign is refused, reported and rebuilt from the records; one that is stale loses its gone records", async () => {
    for (const damage of ["torn", "foreign", "stale"]) {
      const storage = makeStorage();
      const dir = contextDir();
      const a = await ContextManager.open({ contextDir: dir, fileSystem: storage });
      const saved = await saveOutputs(a);
      await a.close();
      const [segment] = await listSegments(storage, a.getContextDir());
      const bytes = toBytes(await storage.read(segment));
      if (damage === "torn") await storage.write(segment, bytes.slice(0, bytes.length >> 1));
      if (damage === "foreign") await storage.write(segment, "{\"not\":\"a segment\"}");
      if (damage === "stale") await storage.remove(saved[0]);
      const live = damage === "stale" ? saved.slice(1) : saved;
      const messages = [];
      const { host, reads } = counting(storage);
      const b = await ContextManager.open({ contextDir: dir, fileSystem: host, onDebug: (m) => messages.push(String(m)) });
      const opened = reads.n;
      assert.deepEqual(b.getAllPointers().map((p) => p.filepath).sort(), [...live].sort(), damage);
      const rebuilt = new ContextManager({ contextDir: dir, fileSystem: storage, readOnly: true });
      await rebuilt.rebuildIndex();
      assert.deepEqual(await rankingsOf(b), await rankingsOf(rebuilt), `${damage}: ranked as a rebuild from the records ranks`);
      if (damage === "stale") {
        assert.equal(opened, 0);
        continue;
      }
      assert.equal(opened, saved.length, `${damage}: its records are read`);
      assert.ok(messages.some((m) => m.includes("segment was refused")), `${damage}: ${messages.join(" | ")}`);
      assert.equal(await storage.read(segment), undefined, `${damage}: the refused segment is removed`);
      const again = counting(storage);
      await ContextManager.open({ contextDir: dir, fileSystem: again.host });
      assert.equal(again.reads.n, 0, `${damage}: the open wrote a segment of what it read`);
    }
  });

  /** A store of the outputs, its runTests output then rewritten under its name by another
   * program (other words, another size): the storage, its folder, the record and its text now. */
  const withRewrittenRecord = async () => {
    const storage = makeStorage();
    const dir = contextDir();
    const a = await ContextManager.open({ contextDir: dir, fileSystem: storage });
    const saved = await saveOutputs(a, 1);
    await a.close();
    const target = saved[OUTPUTS.findIndex(([tool]) => tool === "runTests")];
    const now = JSON.stringify({ ...JSON.parse(toText(await storage.read(target))), result: "thread quokka panicked at zanzibar.rs\n" });
    await storage.write(target, now);
    return { storage, dir, target, now };
  };
  test("selectRelevant's second phase indexes again a record it reads that was rewritten under its name", async () => {
    const { storage, dir, target } = await withRewrittenRecord();
    const b = await ContextManager.open({ contextDir: dir, fileSystem: storage });
    const found = async (q) => (await b.selectRelevant(q, { fallback: "none" })).map((h) => h.filepath);
    // Ranked by what its segment holds, then read by the second phase: no passage of the old words.
    const first = (await b.selectRelevant("borrow of moved value", { fallback: "none" })).find((h) => h.filepath === target);
    assert.ok(first !== undefined && first.passage === undefined, JSON.stringify(first));
    assert.deepEqual(await found("quokka zanzibar"), [target], "indexed as it is now");
    await b.close();
  });
  test("pointers cleared while selectRelevant reads its records: the ranking is made again, never a broken answer", async () => {
    const base = makeStorage();
    let onRead;
    const storage = { ...base, read: async (path) => { onRead?.(); return base.read(path); } };
    const m = new ContextManager({ contextDir: contextDir(), fileSystem: storage, persistThreshold: 0 });
    await m.saveContext("bash", { command: "curl" }, "error: connection refused by peer");
    await m.saveContext("bash", { command: "curl -v" }, "connection refused, then refused by the peer");
    onRead = () => {
      onRead = undefined;
      m.clearPointers();
    };
    const hits = await m.selectRelevant("connection refused by peer", { fallback: "none" });
    assert.deepEqual(hits, [], "no pointer is left to rank");
    assert.equal(onRead, undefined, "the second phase read a record");
  });
  test("a record rewritten under its name by another program is ranked by what it holds once it is read (its size is not the one its segment has)", async () => {
    const { storage, dir, target, now } = await withRewrittenRecord();
    const messages = [];
    const b = await ContextManager.open({ contextDir: dir, fileSystem: storage, onDebug: (m) => messages.push(String(m)) });
    const found = async (m, q) => (await m.selectRelevant(q, { fallback: "none" })).map((h) => h.filepath);
    const [record] = await b.loadContexts([target]);
    assert.match(record.result, /quokka/);
    assert.deepEqual(await found(b, "quokka zanzibar"), [target], "ranked by what it holds now");
    assert.ok(!(await found(b, "borrow of moved value")).includes(target), "no longer by what it held");
    assert.ok(messages.some((m) => m.includes("changed under its name")), messages.join(" | "));
    assert.equal(b.getAllPointers().find((p) => p.filepath === target).size, new TextEncoder().encode(now).length);
    await b.close();
    // The segment b wrote holds it as it is now: a later open ranks it so without reading it.
    const c = await ContextManager.open({ contextDir: dir, fileSystem: storage });
    assert.deepEqual(await found(c, "quokka zanzibar"), [target], "a later open");
    assert.ok(!(await found(c, "borrow of moved value")).includes(target), "a later open");
    await c.close();
  });

  test("a merge killed before it removed its inputs leaves segments whose records a newer one holds: open() removes them, and ranks as before", async () => {
    const storage = makeStorage();
    const dir = contextDir();
    const a = await ContextManager.open({ contextDir: dir, fileSystem: storage });
    await saveOutputs(a);
    const before = await rankingsOf(a);
    await a.close();
    const [input] = await listSegments(storage, a.getContextDir());
    // The merge's output, written before it was killed: here, the input's records again, newer.
    const name = input.slice(input.lastIndexOf("/") + 1).split("-");
    const output = `${a.getContextDir()}/.index/${name[0]}-${Number(name[1]) + 1000}-merged.seg`;
    await storage.write(output, toBytes(await storage.read(input)));
    const messages = [];
    const b = await ContextManager.open({ contextDir: dir, fileSystem: storage, onDebug: (m) => messages.push(String(m)) });
    assert.deepEqual(await rankingsOf(b), before);
    assert.deepEqual(await listSegments(storage, a.getContextDir()), [output], "the leftover input is removed");
    assert.ok(messages.some((m) => m.includes("every record of an index segment is in a newer one")), messages.join(" | "));
    await b.close();
  });

  test("queries in flight together rank as each does alone in any indexMemory, over segments one of which another process merged away", async () => {
    for (const indexMemory of [0, 2048, undefined]) {
      const storage = makeStorage();
      const dir = contextDir();
      const saved = [];
      for (let round = 0; round < 3; round++) {
        const m = await ContextManager.open({ contextDir: dir, fileSystem: storage });
        saved.push(...(await saveOutputs(m, 1)));
        await m.close();
      }
      const alone = await ContextManager.open({ contextDir: dir, fileSystem: storage, indexMemory });
      const want = await rankingsOf(alone);
      const m = await ContextManager.open({ contextDir: dir, fileSystem: storage, indexMemory });
      const together = await Promise.all(QUERIES.map((q) => m.selectRelevant(q, { fallback: "none" })));
      assert.deepEqual(together.map((hits) => hits.map((h) => [h.filepath, h.score.toFixed(9), h.matched.join(" ")])), want, `indexMemory ${indexMemory}`);
      // Another process merges the first segment away; every query in flight finds it gone.
      const segments = await listSegments(storage, m.getContextDir());
      assert.equal(segments.length, 3);
      const gone = toText(await storage.read(segments[0]));
      await storage.remove(segments[0]);
      const left = await Promise.all(QUERIES.map((q) => m.selectRelevant(q, { fallback: "none" })));
      // The records of the segments left are found as before (their scores move: the
      // statistics now count the gone segment's records by their metadata).
      const inGone = (path) => gone.includes(path.slice(path.lastIndexOf("/") + 1));
      assert.equal(saved.filter((path) => !inGone(path)).length, 2 * OUTPUTS.length);
      const kept = (hits) => hits.map((h) => h.filepath).filter((path) => !inGone(path)).sort();
      assert.deepEqual(left.map(kept), want.map((hits) => kept(hits.map(([filepath]) => ({ filepath })))), `indexMemory ${indexMemory}: the segments left`);
    }
  });

  testManySaves("a tight loop of awaited saves gets its segments as it goes: past 1,024 records in no segment, a save yields to the event loop (onDebug says so once)", async () => {
    const storage = makeStorage();
    // The segments whose write has finished, counted as each finishes (no await of the
    // test's own in the loop, so nothing but the saves yields to the event loop).
    let written = 0;
    const host = over(storage, {
      write: (p, d, o) => {
        const done = Promise.resolve(storage.write(p, d, o));
        if (p.endsWith(".seg")) done.then(() => written++, () => {});
        return done;
      },
    });
    const messages = [];
    const m = new ContextManager({ contextDir: contextDir(), fileSystem: host, persistThreshold: 0, onDebug: (msg) => messages.push(String(msg)) });
    const seen = [];
    // 2,000 saves: well past 1,024 + 256 records waiting (the old code wrote none by then).
    for (let i = 0; i < 2000; i++) {
      await m.saveContext("grep", { pattern: `p${i}` }, `hit ${i}`);
      if (i % 500 === 499) seen.push(written);
    }
    const waits = messages.filter((msg) => msg.includes("saves yield to the event loop"));
    await m.close();
    // A segment is due at 256 records; it starts once the event loop is free, which the
    // saves let happen past 1,024 records in no segment. (Over a storage whose every write
    // waits in the event loop, S3 or Redis, no backlog forms and onDebug hears nothing.)
    assert.ok(seen[3] >= 1, `a segment was written by the 2,000th save (after every 500: ${seen})`);
    assert.ok(waits.length <= seen.length, `onDebug says it once a backlog: ${waits.join(" | ")}`);
    assert.ok((await listSegments(storage, m.getContextDir())).length >= 1);
  });

  test("a record counts once toward the manifest's write every 64, though idle time indexes its content after the save", async () => {
    const storage = makeStorage();
    let writes = 0;
    const host = over(storage, {
      write: (p, d, o) => {
        if (p.endsWith(".manifest.json")) writes++;
        return storage.write(p, d, o);
      },
    });
    // One instant: only the count of records written since the last write moves a write.
    const m = await ContextManager.open({ contextDir: contextDir(), fileSystem: host, session: true, persistThreshold: 0, clock: () => T0 });
    writes = 0;
    for (let i = 0; i < 256; i++) {
      await m.saveContext("grep", { pattern: `p${i}` }, `hit ${i}`);
      await new Promise((resolve) => setTimeout(resolve, 0)); // idle time: the content is indexed
    }
    assert.equal(writes, 4, "256 records, a write every 64");
    await m.close();
  });

  testManySaves("a segment lock held for ever by another never holds up saves: past the backlog they yield and go on", async () => {
    const storage = makeStorage();
    // A lock held elsewhere that never calls back, whatever its options.
    const host = over(storage, { lock: () => new Promise(() => {}) });
    const m = new ContextManager({ contextDir: contextDir(), fileSystem: host, persistThreshold: 0 });
    let timer;
    const stalled = new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error("the saves stalled behind the segment's lock")), 60_000);
    });
    // Past 1,279 saves, where a save that waited for the segment plan hung.
    const saves = (async () => {
      for (let i = 0; i < 1400; i++) await m.saveContext("grep", { pattern: `p${i}` }, `hit ${i}`);
    })();
    try {
      await Promise.race([saves, stalled]);
    } finally {
      clearTimeout(timer);
    }
    assert.equal(m.size, 1400);
  });

  test("a writer that never closes gets a segment in the background once 256 records wait; endSession right after leaves nothing", async () => {
    const storage = makeStorage();
    const dir = contextDir();
    const m = await ContextManager.open({ contextDir: dir, fileSystem: storage, session: true });
    const base = `${m.getContextDir()}/sessions/${m.sessionId}`;
    for (let i = 0; i < 260; i++) await m.saveContext("grep", { pattern: `p${i}` }, { hits: [`hit ${i}`] });
    // The background write starts after a save resolves, off its path: wait for it.
    for (let waited = 0; (await listSegments(storage, base)).length === 0 && waited < 5000; waited += 20) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    assert.equal((await listSegments(storage, base)).length, 1, "a segment without close()");
    // The 256th save of another session, then endSession at once: whatever the background
    // write was doing, nothing of the session is left.
    const n = await ContextManager.open({ contextDir: dir, fileSystem: storage, session: true });
    for (let i = 0; i < 256; i++) await n.saveContext("grep", { pattern: `q${i}` }, { hits: [`hit ${i}`] });
    await n.endSession();
    // Whatever was in flight has settled once a tick has passed.
    await new Promise((resolve) => setTimeout(resolve, 50));
    const nBase = `${n.getContextDir()}/sessions/${n.sessionId}`;
    assert.deepEqual([...(await listFiles(storage, nBase)), ...(await listSegments(storage, nBase))], []);
    await m.close();
  });

  test("a resumed session ranks from its segments; endSession removes them with the folder", async () => {
    const storage = makeStorage();
    const dir = contextDir();
    const a = await ContextManager.open({ contextDir: dir, fileSystem: storage, session: true });
    await saveOutputs(a);
    const before = await rankingsOf(a);
    await a.close();
    const { host, reads } = counting(storage);
    const b = await ContextManager.open({ contextDir: dir, fileSystem: host, session: a.sessionId });
    assert.equal(reads.n, 0, "no record read");
    assert.deepEqual(await rankingsOf(b), before, "ranked on all of their content, as saved");
    await b.endSession();
    assert.deepEqual(await listFiles(storage, `${b.getContextDir()}/sessions/${b.sessionId}`), []);
    assert.deepEqual(await listSegments(storage, `${b.getContextDir()}/sessions/${b.sessionId}`), []);
  });
}

// ---------------------------------------------------------------------------
// locks (SPEC §4, §5): the optional host lock(name, fn)

/** Mutual exclusion of `storage.lock`, when the adapter has one. */
export function runLockTests({ name, makeStorage, test: t0, assert, tmpDir, contender }) {
  const test = (title, fn) => t0(`[${name}] lock: ${title}`, fn);
  test("lock(name, fn) runs one holder at a time and returns fn's value", async () => {
    const storage = makeStorage();
    if (typeof storage.lock !== "function") return;
    const lockName = joinPath(tmpDir(), "sessions/20250101-000000-lock.lock");
    let active = 0;
    let most = 0;
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        storage.lock(lockName, async () => {
          active++;
          most = Math.max(most, active);
          await new Promise((r) => setTimeout(r, 5));
          active--;
          return i;
        }),
      ),
    );
    assert.equal(most, 1, "never two holders at once");
    assert.deepEqual(results, [0, 1, 2, 3, 4, 5]);
    await assert.rejects?.(() => storage.lock(lockName, async () => { throw new Error("inside"); }));
    assert.equal(await storage.lock(lockName, async () => "free again"), "free again", "a throwing holder releases the lock");
  });
  test("lock(name, fn, {wait: false}) while another holds it is TIMEOUT at once (background index work never waits); free, it runs", async () => {
    const storage = makeStorage();
    if (typeof storage.lock !== "function") return;
    const lockName = joinPath(tmpDir(), "sessions/20250101-000000-nowait.lock");
    let release;
    let entered;
    const inside = new Promise((resolve) => (entered = resolve));
    const holding = storage.lock(lockName, () => {
      entered();
      return new Promise((resolve) => (release = resolve));
    });
    await inside;
    let ran = false;
    await expectRejection(assert, () => storage.lock(lockName, async () => (ran = true), { wait: false }), "TIMEOUT", "a lock asked without waiting");
    assert.equal(ran, false, "its fn never ran");
    release("held");
    assert.equal(await holding, "held", "the holder is undisturbed");
    assert.equal(await storage.lock(lockName, async () => "free", { wait: false }), "free");
  });
  if (contender) runLockFileTests({ test, assert, makeStorage, tmpDir, contender });
}

const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Lock files under contention (the Node, Bun and Deno adapters). `contender.spawn(args)`
 * starts tests/js/lock-contender.mjs with `args` in this runtime and returns
 * `{exited: Promise<exit code>, kill()}` (kill: SIGKILL); `contender.adapter` is the
 * adapter the processes use. makeStorage({lockStaleMs}) shortens the stale time, so
 * that takeovers happen within a test.
 */
function runLockFileTests({ test, assert, makeStorage, tmpDir, contender }) {
  const STALE_MS = 2000; // a heartbeat every second: slack for a loaded machine
  const start = (role, lock, dir, n, staleMs = STALE_MS) => contender.spawn([role, contender.adapter, lock, dir, String(staleMs), String(n ?? 1)]);
  const text = (storage, path) => readText(storage, path);
  async function waitFor(storage, path, what) {
    for (let i = 0; i < 1500; i++) {
      const found = await text(storage, path);
      if (found !== undefined) return found;
      await pause(20);
    }
    assert.fail(`timed out waiting for ${what}`);
  }
  const fresh = async (storage) => {
    const dir = tmpDir();
    await storage.write(joinPath(dir, "counter"), "0");
    return { dir, lock: joinPath(dir, "counter.lock") };
  };

  test("8 processes keep a read-modify-write counter exact while abandoned locks are taken over", async () => {
    const storage = makeStorage();
    const { dir, lock } = await fresh(storage);
    const counters = Array.from({ length: 8 }, () => start("count", lock, dir, 25));
    const planter = start("plant", lock, dir, 1000);
    const codes = await Promise.all(counters.map((c) => c.exited));
    planter.kill();
    await planter.exited;
    assert.deepEqual(codes, Array(8).fill(0), "every contender finished");
    const planted = (await text(storage, joinPath(dir, "planted")))?.length ?? 0;
    assert.ok(planted >= 5, `abandoned locks were taken over while the counters ran (${planted})`);
    const counter = await text(storage, joinPath(dir, "counter"));
    assert.equal(await text(storage, joinPath(dir, "overlaps")), undefined, `never two holders at once (counter ${counter} of 200)`);
    assert.equal(counter, "200", "no increment lost");
  });

  for (const role of ["crash", "exit", "throw"]) {
    const how = { crash: "was killed (SIGKILL)", exit: "called process.exit", throw: "threw" }[role];
    test(`a lock whose holder ${how} while holding it is taken over at once, not after its lease`, async () => {
      const LEASE_MS = 60_000; // the lease cannot explain a takeover within the test
      const storage = makeStorage({ lockStaleMs: LEASE_MS, lockWaitMs: 10_000 });
      const { dir, lock } = await fresh(storage);
      const holder = start(role, lock, dir, 1, LEASE_MS);
      await waitFor(storage, joinPath(dir, "held"), "the holder to take the lock");
      if (role === "crash") holder.kill();
      await holder.exited;
      // lockWaitMs 10 s: a lease waited out rejects with TIMEOUT instead of passing late.
      assert.equal(await storage.lock(lock, async () => "taken over"), "taken over");
    });
  }

  test("a holder that outlives the stale time keeps its lock (heartbeat) and nobody else enters", async () => {
    const storage = makeStorage();
    const { dir, lock } = await fresh(storage);
    const holder = start("hold", lock, dir, 3 * STALE_MS);
    await waitFor(storage, joinPath(dir, "inside"), "the holder to enter");
    const others = Array.from({ length: 3 }, () => start("enter", lock, dir));
    const codes = await Promise.all([holder, ...others].map((c) => c.exited));
    assert.deepEqual(codes, [0, 0, 0, 0], "the holder was never compromised; the others entered after it");
    assert.equal(await text(storage, joinPath(dir, "overlaps")), undefined, "nobody entered while it held the lock");
  });

  test("a lock of a holder on another machine is taken over after the stale time, not before (its pid means nothing here)", async () => {
    const storage = makeStorage({ lockStaleMs: STALE_MS });
    const { lock } = await fresh(storage);
    // What a holder in another container or on another host leaves: its pid names no
    // process here (or another one), so only its lease tells whether it lives.
    const holder = { host: "another-host.invalid", pid: 2 ** 22 + 1, start: "1", boot: "another-boot", ns: "pid:[1]" };
    await storage.write(lock, `0123456789abcdef01234567\n${JSON.stringify(holder)}\n`, { exclusive: true });
    const heldAt = Date.now();
    const enteredAt = await storage.lock(lock, async () => Date.now());
    assert.ok(enteredAt - heldAt >= STALE_MS - 250, `taken over ${enteredAt - heldAt} ms after it was held (stale time ${STALE_MS} ms)`);
  });

  test("a holder whose lock was taken over learns it: fn's outcome rejects ELOCKCOMPROMISED", async () => {
    const storage = makeStorage({ lockStaleMs: 400 });
    const { lock } = await fresh(storage);
    const err = await expectRejection(assert, () =>
      storage.lock(lock, async () => {
        await storage.remove(lock); // someone judged it stale and took it over
        await storage.write(lock, "someone else", { exclusive: true });
        await pause(500);
        return "done";
      }),
      "ELOCKCOMPROMISED",
      "lock",
    );
    assert.match(err.message, /lock/);
    assert.equal(await text(storage, lock), "someone else", "releasing leaves the new holder's lock alone");
  });
}

// ---------------------------------------------------------------------------
// ranking strategies (SPEC §6)

export function runRankingTests({ name, ContextManager, memoryStorage, test: t0, assert }) {
  const test = (title, fn) => t0(`[${name}] ranking: ${title}`, fn);
  test("bm25 (the default) weighs rare keywords and short texts; overlap counts keywords", async () => {
    const m = new ContextManager({ contextDir: "/rank", fileSystem: memoryStorage() });
    const a = await m.saveContext("readFile", { path: "src/auth/login.ts" }, 1);
    const b = await m.saveContext("readFile", { path: "README.md" }, 1);
    const c = await m.saveContext("listDirectory", { path: "src" }, 1);
    const pointers = m.getAllPointers();
    assert.deepEqual(m.selectRelevantContexts("src readme", pointers), [b, c, a]);
    assert.deepEqual(m.selectRelevantContexts("src readme", pointers, { strategy: "bm25" }), [b, c, a]);
    assert.deepEqual(m.selectRelevantContexts("src readme", pointers, { strategy: "overlap" }), [a, b, c]);
    const scored = await m.selectRelevant("src readme");
    assert.ok(scored[0].score > scored[1].score && scored[1].score > scored[2].score, JSON.stringify(scored.map((s) => s.score)));
    assert.throws(() => m.selectRelevantContexts("x", pointers, { strategy: "magic" }), (e) => e.code === "INVALID_ARGUMENT");
  });
  test("a record is found by its result's content (string values, first indexContentBytes bytes)", async () => {
    const m = new ContextManager({ contextDir: "/rank", fileSystem: memoryStorage() });
    const body = "export function rotateRefreshToken(token) {\n  if (isExpired(token)) throw new TokenExpiredError();\n}";
    const refresh = await m.saveContext("readFile", { path: "src/auth/refresh.ts" }, { path: "src/auth/refresh.ts", content: body });
    const grep = await m.saveContext("grep", { pattern: "TODO" }, ["src/db/pool.ts: // TODO reconnect"]);
    const all = m.getAllPointers();
    assert.deepEqual(m.selectRelevantContexts("rotate", all, { fallback: "none" }), [refresh]);
    assert.deepEqual(m.selectRelevantContexts("why does it reconnect", all, { fallback: "none" }), [grep]);
    const scored = await m.selectRelevant("rotate the refresh token");
    assert.equal(scored[0].filepath, refresh);
    assert.deepEqual(scored[0].matched, ["rotate", "refresh", "token"]);
    // Keys name the schema, not the record: they are not indexed.
    assert.deepEqual(m.selectRelevantContexts("content", all, { fallback: "none" }), []);
    // The bound: only the first indexContentBytes bytes of the result's JSON are read; 0 reads none.
    for (const [bytes, found] of [[0, false], [24, false], [4096, true]]) {
      const b = new ContextManager({ contextDir: "/rank", fileSystem: memoryStorage(), indexContentBytes: bytes });
      const p = await b.saveContext("fetchPage", { url: "https://example.com" }, `${"padding ".repeat(8)}kubernetes`);
      assert.deepEqual(b.selectRelevantContexts("kubernetes", b.getAllPointers(), { fallback: "none" }), found ? [p] : [], `${bytes}`);
    }
  });
  test("every word of every record is found, short words too, and each hit carries its passage", async () => {
    const m = new ContextManager({ contextDir: "/rank", fileSystem: memoryStorage() });
    // A 120 KB file read: the words looked for lie far past its first 16 KiB.
    const filler = Array.from({ length: 4000 }, (_, i) => `const value${i} = compute(${i});`).join("\n");
    const content = `${filler}\n// Opens the db handle before the first query.\nexport function openDb() {}\n`;
    const big = await m.saveContext("readFile", { path: "src/store.ts" }, { path: "src/store.ts", content });
    const other = await m.saveContext("grep", { pattern: "handle" }, { matches: [{ file: "src/io.ts", line: 3, text: "close the handle" }] });
    const hits = await m.selectRelevant("opens the db handle", { fallback: "none" });
    assert.deepEqual(hits.map((h) => h.filepath), [big, other]);
    assert.deepEqual(hits[0].matched, ["opens", "the", "db", "handle"], "db: a word of 2 characters");
    // Line 1 of the view is the path, line 2 "content:", then the file's own lines.
    assert.deepEqual(hits[0].passage, { text: "// Opens the db handle before the first query.", startLine: 4003, endLine: 4003 });
    assert.deepEqual(hits[1].passage, { text: 'matches[0]: {"file":"src/io.ts","line":3,"text":"close the handle"}', startLine: 1, endLine: 1 });
    assert.deepEqual((await m.selectRelevant("db", { fallback: "none" })).map((h) => h.filepath), [big]);
    assert.deepEqual((await m.selectRelevant("value3999", { fallback: "none" })).map((h) => h.filepath), [big]);
    // The seed's contract stands: only words of 3 characters or more make a pointer relevant there.
    assert.deepEqual(m.selectRelevantContexts("db", m.getAllPointers(), { fallback: "none" }), []);
    assert.deepEqual(m.selectRelevantContexts("db handle", m.getAllPointers(), { fallback: "none" }), [big, other]);
  });
  test("a passage that cannot be made costs the hit its passage, never the ranking (onDebug says why)", async () => {
    const heard = [];
    const m = new ContextManager({ contextDir: "/rank", fileSystem: memoryStorage(), onDebug: (msg) => heard.push(msg) });
    let deep = "needle deep";
    for (let i = 0; i < 200; i++) deep = [deep]; // deeper than the core's JSON reader goes
    const nested = await m.saveContext("parse", { file: "ast.json" }, deep);
    const plain = await m.saveContext("grep", { pattern: "needle" }, "a needle here");
    const hits = await m.selectRelevant("needle", { fallback: "none" });
    assert.deepEqual(hits.map((h) => h.filepath).sort(), [nested, plain].sort());
    assert.equal(hits.find((h) => h.filepath === plain).passage?.text, "a needle here");
    assert.equal(hits.find((h) => h.filepath === nested).passage, undefined);
    assert.ok(heard.some((msg) => msg.startsWith(`no passage for ${nested}`)), JSON.stringify(heard));
    // A fallback hit matched nothing: no record is read for it.
    const all = await m.selectRelevant("zebra");
    assert.ok(all.length === 2 && all.every((h) => h.passage === undefined));
  });
  test("selectRelevant's second phase: words that stand together outrank the same words scattered", async () => {
    const m = new ContextManager({ contextDir: "/rank", fileSystem: memoryStorage() });
    // The log names each word more often, scattered; the output prints the message once, as written.
    const scattered = await m.saveContext("readFile", { path: "notes.md" },
      "peer list: blocked by policy\nthe connection pool, the peer, a connection\nrefused: the peer connection");
    const together = await m.saveContext("bash", { command: "curl localhost:8080" },
      "curl: (7) failed to reach the service on port 8080\nerror: connection refused by peer\nexit code 7");
    const query = "connection refused by peer";
    // The first phase (BM25F, all selectRelevantContexts ranks by) puts the log first ...
    assert.deepEqual(m.selectRelevantContexts(query, m.getAllPointers(), { fallback: "none" }), [scattered, together]);
    // ... the second reads both records and puts the message quoted whole first, scored so.
    const hits = await m.selectRelevant(query, { fallback: "none" });
    assert.deepEqual(hits.map((h) => h.filepath), [together, scattered]);
    assert.ok(hits[0].score > hits[1].score, JSON.stringify(hits.map((h) => h.score)));
    assert.deepEqual(hits[0].passage, { text: "error: connection refused by peer", startLine: 2, endLine: 2 });
    // The order given to rerank and a limit are the second phase's too.
    const seen = [];
    await m.selectRelevant(query, { rerank: (q, candidates) => { seen.push(...candidates.map((c) => c.filepath)); return seen; } });
    assert.deepEqual(seen, [together, scattered]);
    assert.deepEqual((await m.selectRelevant(query, { limit: 1 })).map((h) => h.filepath), [together]);
    // A budget chooses after the second phase too: one that cuts nothing changes nothing.
    assert.deepEqual((await m.selectRelevant(query, { limit: 1, maxBytes: 1e9 })).map((h) => h.filepath), [together]);
    const fits = hits[0].pointer.size;
    assert.deepEqual((await m.selectRelevant(query, { maxBytes: fits })).map((h) => h.filepath), [together]);
    // The overlap strategy is the seed's count, which the second phase leaves as it is.
    const overlap = await m.selectRelevant(query, { strategy: "overlap", fallback: "none" });
    assert.deepEqual(overlap.map((h) => h.score), [3, 3], "connection, refused, peer: keywords of 3 characters or more");
  });
  test("words meet whatever their inflection (English stemming), identifiers still whole", async () => {
    const m = new ContextManager({ contextDir: "/rank", fileSystem: memoryStorage() });
    const refunds = await m.saveContext("readFile", { path: "src/billing/refunds.ts" }, null);
    const expiry = await m.saveContext("searchCode", { query: "expired tokens" }, null);
    const ident = await m.saveContext("grep", { pattern: "issueCredit" }, null);
    const all = m.getAllPointers();
    const find = (q) => m.selectRelevantContexts(q, all, { fallback: "none" });
    assert.deepEqual(find("refund"), [refunds]);
    assert.deepEqual(find("Refunds"), [refunds]);
    assert.deepEqual(find("token expiring"), [expiry]);
    assert.deepEqual(find("issueCredit"), [ident], "the identifier whole");
    assert.deepEqual(find("ISSUECREDITS"), [ident], "in any case, inflected");
    assert.deepEqual(find("credits"), [ident], "and by its parts");
    const scored = await m.selectRelevant("refunds");
    assert.deepEqual(scored.map((s) => s.filepath), [refunds]);
    assert.deepEqual(scored[0].matched, ["refunds"], "matched holds the query's words as written");
  });
  test("the same tool, args and result count once in selectRelevant and budgets (latest kept); dedupe option", async () => {
    const m = new ContextManager({ contextDir: "/rank", fileSystem: memoryStorage() });
    const first = await m.saveContext("readFile", { path: "src/auth/refresh.ts" }, "refresh token rotation");
    const login = await m.saveContext("readFile", { path: "src/auth/login.ts" }, "login then refresh");
    const again = await m.saveContext("readFile", { path: "src/auth/refresh.ts" }, "refresh token rotation");
    const edited = await m.saveContext("readFile", { path: "src/auth/refresh.ts" }, "refresh token rotation, edited");
    const other = await m.saveContext("grep", { path: "src/auth/refresh.ts" }, "refresh token rotation");
    const paths = async (options) => (await m.selectRelevant("refresh token", options)).map((s) => s.filepath);
    const deduped = await paths();
    assert.equal(deduped.length, 4, JSON.stringify(deduped));
    assert.ok(!deduped.includes(first) && deduped.includes(again), "the latest copy is kept");
    assert.deepEqual([...deduped].sort(), [again, edited, login, other].sort());
    assert.equal((await paths({ dedupe: false })).length, 5);
    assert.deepEqual(await paths({ limit: 2 }), deduped.slice(0, 2));
    const all = m.getAllPointers();
    assert.equal(m.selectRelevantContexts("refresh token", all).length, 5, "selectRelevantContexts keeps the seed contract");
    assert.deepEqual(m.selectRelevantContexts("refresh token", all, { dedupe: true }), deduped);
    // A budget that fits the four distinct records holds all four: the duplicate takes none of it.
    const size = Object.fromEntries(all.map((p) => [p.filepath, p.size]));
    const budget = [again, edited, login, other].reduce((n, p) => n + size[p], 0);
    assert.deepEqual([...(await paths({ maxBytes: budget }))].sort(), [...deduped].sort());
    assert.deepEqual([...(await paths({ maxTokens: Math.ceil(budget / 4) + 4 }))].sort(), [...deduped].sort());
    await expectRejection(assert, () => m.selectRelevant("x", { dedupe: "yes" }), "INVALID_ARGUMENT", "selectRelevant");
  });
}

export function runBudgetAndRerankTests({ name, ContextManager, memoryStorage, test: t0, assert }) {
  const test = (title, fn) => t0(`[${name}] selection: ${title}`, fn);
  async function three() {
    const debug = [];
    const m = new ContextManager({ contextDir: "/sel", fileSystem: memoryStorage(), onDebug: (msg) => debug.push(msg) });
    const big = await m.saveContext("grep", { pattern: "auth" }, "x".repeat(2000));
    const mid = await m.saveContext("readFile", { path: "auth.ts" }, "y".repeat(500));
    const small = await m.saveContext("listDirectory", { path: "auth" }, ["z"]);
    return { m, big, mid, small, debug };
  }
  test("maxBytes / maxTokens keep the best set that fits, in rank order", async () => {
    const { m, big, mid, small } = await three();
    const sizes = Object.fromEntries(m.getAllPointers().map((p) => [p.filepath, p.size]));
    const all = m.selectRelevantContexts("auth", m.getAllPointers());
    assert.deepEqual([...all].sort(), [big, mid, small].sort());
    const budget = sizes[mid] + sizes[small];
    const fit = m.selectRelevantContexts("auth", m.getAllPointers(), { maxBytes: budget });
    assert.deepEqual([...fit].sort(), [mid, small].sort());
    assert.ok(fit.reduce((n, p) => n + sizes[p], 0) <= budget);
    const tokens = (await m.selectRelevant("auth", { maxTokens: Math.ceil(sizes[small] / 4) })).map((s) => s.filepath);
    assert.deepEqual(tokens, [small]);
  });
  test("rerank reorders and cuts; on error or timeout the heuristic order stands", async () => {
    const { m, big, small, debug } = await three();
    const heuristic = (await m.selectRelevant("auth")).map((s) => s.filepath);
    const seen = [];
    const reranked = await m.selectRelevant("auth", {
      rerank: async (q, candidates, signal) => {
        seen.push(q, candidates.length, signal instanceof AbortSignal);
        return [small, "not/a/candidate.json", big];
      },
    });
    assert.deepEqual(seen, ["auth", 3, true]);
    assert.deepEqual(reranked.map((s) => s.filepath), [small, big]);
    const failed = await m.selectRelevant("auth", { rerank: async () => { throw new Error("model down"); } });
    assert.deepEqual(failed.map((s) => s.filepath), heuristic);
    let aborted = false;
    const slow = await m.selectRelevant("auth", {
      rerankTimeoutMs: 20,
      rerank: (q, c, signal) => new Promise((resolve) => { signal.addEventListener("abort", () => { aborted = true; }); setTimeout(() => resolve([small]), 500); }),
    });
    assert.deepEqual(slow.map((s) => s.filepath), heuristic);
    assert.ok(aborted, "the signal aborted on timeout");
    assert.ok(debug.some((d) => d.includes("model down")) && debug.some((d) => d.includes("timed out")), JSON.stringify(debug));
  });
}

/**
 * Pointer arrays made on demand (past 1,024 pointers): they behave as plain arrays of
 * plain objects, rank through the index when passed back untouched, and stay copies.
 */
export function runPointerArrayTests({ name, ContextManager, memoryStorage, test: t0, assert }) {
  const test = (title, fn) => t0(`[${name}] pointer arrays: ${title}`, fn);
  const N = 1500;
  const WORDS = ["auth", "login", "token", "cache", "route", "error", "billing", "invoice", "search", "index"];
  async function store() {
    const m = new ContextManager({ contextDir: "/lazy", fileSystem: memoryStorage(), persistThreshold: Infinity, memoryBudget: Infinity });
    const paths = [];
    for (let i = 0; i < N; i++) {
      const w = (k) => WORDS[(i * 7 + k * 3) % WORDS.length];
      const tool = ["readFile", "grep", "searchCode"][i % 3];
      paths.push(await m.saveContext(tool, { path: `src/${w(1)}/${w(2)}_${i}.ts`, q: `${w(3)}` }, `r${i}`, i % 2 ? 1 : 2, i % 5 ? undefined : "q5"));
    }
    return { m, paths };
  }

  test("retention: a list handed out keeps its pointers through evictions and the compaction that frees them", async () => {
    const m = new ContextManager({ contextDir: "/lazy", fileSystem: memoryStorage(), persistThreshold: 0, retention: { maxRecords: 1100 } });
    const paths = [];
    for (let i = 0; i < 1100; i++) paths.push(await m.saveContext("grep", { i }, i));
    const before = m.getAllPointers(); // lazy: no element made yet
    for (let i = 1100; i < 2300; i++) paths.push(await m.saveContext("grep", { i }, i));
    assert.equal(m.size, 1100);
    assert.deepEqual(m.getAllPointers().map((p) => p.filepath), paths.slice(1200), "evicted pointers are gone, the rest in save order");
    assert.deepEqual(before.map((p) => p.filepath), paths.slice(0, 1100), "the earlier list still holds what it held");
    assert.equal(before[1099].args.i, 1099);
    assert.deepEqual(m.selectRelevantContexts("grep", m.getAllPointers()).length, 1100);
  });

  test("they read, iterate, serialise and copy like plain arrays of plain objects", async () => {
    const { m, paths } = await store();
    const all = m.getAllPointers();
    assert.ok(Array.isArray(all));
    assert.equal(all.length, N);
    assert.equal(all[N - 1].filepath, paths[N - 1]);
    assert.equal(all.at(-1).args.path, `src/${WORDS[((N - 1) * 7 + 3) % 10]}/${WORDS[((N - 1) * 7 + 6) % 10]}_${N - 1}.ts`);
    assert.deepEqual(all.map((p) => p.filepath), paths, "save order");
    const copy = [...all];
    assert.deepEqual(JSON.parse(JSON.stringify(all)), JSON.parse(JSON.stringify(copy)));
    assert.deepEqual(Object.keys(all).length, N);
    assert.equal(Object.getPrototypeOf(all[7]), Object.prototype, "plain objects");
    assert.deepEqual(all[3], { ...all[3] });
    assert.equal(m.getPointersForTask(1).length, N / 2);
    assert.ok(m.getPointersForTask(1).every((p) => p.taskId === 1));
    assert.equal(m.getPointersForQuery("q5").length, N / 5);
    assert.equal(m.getAllPointers()[0].taskId, 2);
  });

  test("passed back untouched they rank exactly like a plain copy", async () => {
    const { m } = await store();
    const all = m.getAllPointers();
    const task = m.getPointersForTask(1);
    for (const query of ["auth token error", "billing", "zebra", "read file cache", "search_code index"]) {
      for (const options of [undefined, { strategy: "overlap" }, { limit: 7 }, { fallback: "none" }, { maxBytes: 3000 }, { maxTokens: 100, limit: 3 }]) {
        const label = `${query} ${JSON.stringify(options)}`;
        assert.deepEqual(m.selectRelevantContexts(query, all, options), m.selectRelevantContexts(query, [...all], options), label);
        assert.deepEqual(m.selectRelevantContexts(query, task, options), m.selectRelevantContexts(query, [...task], options), label);
        const fast = await m.selectRelevant(query, options);
        const slow = await m.selectRelevant(query, { ...options, pointers: [...all] });
        assert.deepEqual(fast, slow, label);
        const sub = await m.selectRelevant(query, { ...options, pointers: task });
        assert.deepEqual(sub, await m.selectRelevant(query, { ...options, pointers: [...task] }), label);
        assert.ok(sub.every((s) => s.pointer.taskId === 1), label);
      }
    }
  });

  test("only the pointers of the array are considered, in its order once it is written to", async () => {
    const { m } = await store();
    const all = m.getAllPointers();
    const later = await m.saveContext("grep", { pattern: "zebra" }, "z");
    assert.deepEqual(m.selectRelevantContexts("zebra", all, { fallback: "none" }), []);
    assert.deepEqual(m.selectRelevantContexts("zebra", m.getAllPointers()), [later]);
    const twice = m.getAllPointers().filter((p) => p.filepath === later);
    assert.deepEqual(m.selectRelevantContexts("zebra", [...twice, ...twice]), [later, later], "a pointer given twice is ranked twice");
    all.reverse();
    const fallback = m.selectRelevantContexts("nothing-matches-this", all);
    assert.equal(fallback.length, N);
    assert.equal(fallback[0], all[0].filepath);
    assert.equal(all[N - 1].args.path.endsWith("_0.ts"), true);
  });

  test("they stay copies when the manager forgets its pointers", async () => {
    const { m, paths } = await store();
    const all = m.getAllPointers();
    const task = m.getPointersForTask(2);
    m.clearPointers();
    assert.equal(m.getAllPointers().length, 0);
    assert.equal(all.length, N);
    assert.deepEqual(all.map((p) => p.filepath), paths);
    assert.equal(task[task.length - 1].taskId, 2);
    assert.deepEqual(m.selectRelevantContexts("auth", all).length > 0, true, "foreign pointers still rank");
  });

  test("a listed pointer has the fields of the core's pointer, in its order", async () => {
    const m = new ContextManager({ contextDir: "/lazy", fileSystem: memoryStorage() });
    await m.saveContext("grep", { pattern: "x", deep: { list: [1, { y: 2 }] } }, 1, { taskId: 3, queryId: "q", toolCallId: "call_1" });
    await m.saveContext("grep", { pattern: "y" }, 2);
    const listed = m.getAllPointers();
    const scored = await m.selectRelevant("grep", { fallback: "none" });
    for (const [i, p] of listed.entries()) {
      const core = scored.find((s) => s.filepath === p.filepath).pointer;
      assert.deepEqual(Object.keys(p), Object.keys(core), `pointer ${i}`);
      assert.deepEqual(p, core);
    }
    listed[0].args.deep.list[1].y = 99;
    assert.equal(m.getAllPointers()[0].args.deep.list[1].y, 2, "args are copied deep");
  });

  test("structuredClone copies them whole, past 1,024 pointers (they are plain data)", async () => {
    const m = new ContextManager({ contextDir: "/lazy", fileSystem: memoryStorage(), persistThreshold: Infinity, memoryBudget: Infinity });
    for (let i = 0; i < 1100; i++) await m.saveContext("grep", { pattern: `p${i}`, nested: { i } }, i, i % 3, `q${i % 4}`);
    const all = m.getAllPointers();
    // Compared as JSON text: some edge runtimes clone into another realm's Object.
    const cloned = structuredClone(all);
    assert.equal(cloned.length, 1100);
    assert.equal(JSON.stringify(cloned), JSON.stringify(all));
    assert.equal(cloned[1099].args.pattern, "p1099");
    assert.equal(cloned[1099].args.nested.i, 1099);
    for (const list of [m.getPointersForQuery("q1"), m.getPointersForTask(2)]) {
      assert.ok(list.length > 250);
      assert.equal(JSON.stringify(structuredClone(list)), JSON.stringify(list));
    }
  });

  test("a list taken while rebuildIndex runs stays whole after it", async () => {
    const m = new ContextManager({ contextDir: "/lazy-rebuild", fileSystem: memoryStorage(), persistThreshold: 0 });
    const paths = [];
    for (let i = 0; i < 1100; i++) paths.push(await m.saveContext("grep", { i }, i));
    const before = m.getAllPointers();
    const rebuilding = m.rebuildIndex();
    const during = m.getAllPointers();
    assert.equal(await rebuilding, 1100);
    assert.deepEqual(during.map((p) => p.filepath), paths);
    assert.deepEqual(before.map((p) => p.args.i), paths.map((_, i) => i));
    assert.deepEqual(m.getAllPointers().map((p) => p.filepath).sort(), [...paths].sort());
  });

  test("selectRelevant({queryId, taskId}) ranks the pointers saved with them, through the index", async () => {
    const { m } = await store();
    const both = (p) => p.queryId === "q5" && p.taskId === 2;
    for (const query of ["auth token error", "billing", "zebra", "search_code index"]) {
      for (const options of [undefined, { limit: 7 }, { fallback: "none" }, { maxBytes: 3000 }, { strategy: "overlap", limit: 3 }]) {
        const label = `${query} ${JSON.stringify(options)}`;
        const byQuery = await m.selectRelevant(query, { ...options, queryId: "q5" });
        assert.deepEqual(byQuery, await m.selectRelevant(query, { ...options, pointers: m.getPointersForQuery("q5") }), label);
        assert.ok(byQuery.length > 0 || options?.fallback === "none", label);
        assert.ok(byQuery.every((s) => s.pointer.queryId === "q5"), label);
        const byTask = await m.selectRelevant(query, { ...options, taskId: 1 });
        assert.deepEqual(byTask, await m.selectRelevant(query, { ...options, pointers: m.getPointersForTask(1) }), label);
        assert.ok(byTask.every((s) => s.pointer.taskId === 1), label);
        const byBoth = await m.selectRelevant(query, { ...options, queryId: "q5", taskId: 2 });
        assert.deepEqual(byBoth, await m.selectRelevant(query, { ...options, pointers: m.getAllPointers().filter(both) }), label);
        // With pointers: the filters narrow the list given.
        const narrowed = await m.selectRelevant(query, { ...options, pointers: m.getPointersForQuery("q5"), taskId: 2 });
        assert.deepEqual(narrowed, byBoth, label);
      }
    }
    assert.deepEqual(await m.selectRelevant("auth", { queryId: "q_unknown" }), []);
    assert.deepEqual(await m.selectRelevant("auth", { taskId: 77 }), []);
    await expectRejection(assert, () => m.selectRelevant("auth", { queryId: 5 }), "INVALID_ARGUMENT", "queryId: 5");
    await expectRejection(assert, () => m.selectRelevant("auth", { taskId: "1" }), "INVALID_ARGUMENT", 'taskId: "1"');
  });
}
