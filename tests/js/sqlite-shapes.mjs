// A table or a row of the wrong shape, made by other SQL, met by an adapter over one
// SQLite table (base/sqlite-table.js: toolctx/sqlite's sqliteStorage, toolctx/cloudflare's
// d1Storage and durableObjectSqlStorage), and what each must answer, alike. Runtime-neutral
// (no imports): tests/edge/cloudflare-faults.mjs runs `wrongShapes` inside workerd and
// cloudflare.test.mjs asserts on its findings; sqlite.mjs does both in Node, Deno and Bun.
//
//   assertWrongShapes(assert, await wrongShapes(open, exec, dir))

/** What `read()` answers: its length and its first 40 characters as text, or the code and message it rejects with. */
async function answered(read) {
  try {
    const bytes = await read();
    return { bytes: bytes?.length, text: new TextDecoder().decode(bytes?.subarray(0, 40)) };
  } catch (err) {
    return { code: err?.code, message: String(err?.message ?? err) };
  }
}

/** What `read()` answers as plain numbers (findings cross from workerd as JSON): its bytes, or the code and message it rejects with. */
async function answeredBytes(read) {
  try {
    const bytes = await read();
    return bytes === undefined ? { bytes } : { bytes: Array.from(bytes) };
  } catch (err) {
    return { code: err?.code, message: String(err?.message ?? err) };
  }
}

/** The values of the bytes column, as SQL literals: a bound JavaScript number is a REAL in some drivers (better-sqlite3), 12345 here is an INTEGER in all. */
const VALUES = { integer: "12345", real: "1.5", null: "NULL", text: "'hello'" };

/** TEXT of characters of 2, 3 and 4 bytes in UTF-8 (é: c3 a9; €: e2 82 ac; 😀: f0 9f 98 80): 14 bytes, 8 characters. */
const MULTIBYTE = "héllo €😀";
/** Ranges [offset, length) of MULTIBYTE's UTF-8 bytes, each starting or ending inside a character (the last runs past the end). */
const MULTIBYTE_RANGES = [[1, 3], [2, 3], [0, 2], [7, 2], [8, 3], [10, 2], [11, 10]];

/**
 * The findings: `open(table)` (a storage over `table`) over a table of the name given
 * with other columns, used for a read; and rows, written by `exec(sql, ...params)`, of a
 * table with the columns but no NOT NULL, whose bytes column holds an INTEGER, a REAL, a
 * NULL or TEXT, read whole and by range (bytes [1, 4)); and a row holding TEXT of
 * multi-byte characters, read whole and by ranges that cut inside them. `dir` is a fresh
 * folder.
 */
export async function wrongShapes(open, exec, dir) {
  await exec("CREATE TABLE IF NOT EXISTS other_shape (x TEXT)");
  const otherTable = await answered(async () => open("other_shape").read(`${dir}/a.json`));
  await exec("CREATE TABLE IF NOT EXISTS loose_rows (id INTEGER PRIMARY KEY, path TEXT UNIQUE, bytes, size, created, modified)");
  const storage = open("loose_rows");
  const rows = {};
  for (const [type, value] of Object.entries(VALUES)) {
    const path = `${dir}/${type}.json`;
    await exec(`INSERT INTO loose_rows (path, bytes, size, created, modified) VALUES (?, ${value}, 5, 0, 0)`, path);
    rows[type] = { read: await answered(() => storage.read(path)), range: await answered(() => storage.readRange(path, 1, 3)) };
  }
  const path = `${dir}/multibyte.json`;
  await exec(`INSERT INTO loose_rows (path, bytes, size, created, modified) VALUES (?, '${MULTIBYTE}', 14, 0, 0)`, path);
  const multibyte = { read: await answeredBytes(() => storage.read(path)), ranges: [] };
  for (const [offset, length] of MULTIBYTE_RANGES) multibyte.ranges.push({ offset, length, ...(await answeredBytes(() => storage.readRange(path, offset, length))) });
  return { otherTable, rows, multibyte };
}

/**
 * What every adapter over one SQLite table answers for `wrongShapes`' findings: a table of
 * the name given with other columns is INVALID_ARGUMENT; a row whose bytes column holds
 * no bytes (an INTEGER, a REAL, a NULL) is CORRUPT_RECORD, read whole or by range; TEXT is
 * read as its UTF-8 bytes, and a range of it is that range of those bytes (not of its
 * characters, as SQLite's substr() counts TEXT). `assert`: node:assert/strict's, or one
 * of its shape.
 */
export function assertWrongShapes(assert, { otherTable, rows, multibyte }) {
  assert.equal(otherTable.code, "INVALID_ARGUMENT", otherTable.message);
  assert.match(otherTable.message, /other_shape.*columns/, "the message names the table and its columns");
  for (const type of ["integer", "real", "null"]) {
    assert.equal(rows[type].read.code, "CORRUPT_RECORD", `a read of a row holding ${type}: ${JSON.stringify(rows[type].read)}`);
    assert.equal(rows[type].range.code, "CORRUPT_RECORD", `a range of a row holding ${type}: ${JSON.stringify(rows[type].range)}`);
  }
  assert.deepEqual(rows.text, { read: { bytes: 5, text: "hello" }, range: { bytes: 3, text: "ell" } }, "TEXT: its UTF-8 bytes");
  const utf8 = Array.from(new TextEncoder().encode(MULTIBYTE));
  assert.deepEqual(multibyte.read, { bytes: utf8 }, "TEXT of multi-byte characters: its UTF-8 bytes");
  const expected = MULTIBYTE_RANGES.map(([offset, length]) => ({ offset, length, bytes: utf8.slice(offset, offset + length) }));
  assert.deepEqual(multibyte.ranges, expected, "a range of TEXT: those bytes of its UTF-8 encoding, cut inside a character where the range is");
}
