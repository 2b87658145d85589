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

/** The values of the bytes column, as SQL literals: a bound JavaScript number is a REAL in some drivers (better-sqlite3), 12345 here is an INTEGER in all. */
const VALUES = { integer: "12345", real: "1.5", null: "NULL", text: "'hello'" };

/**
 * The findings: `open(table)` (a storage over `table`) over a table of the name given
 * with other columns, used for a read; and rows, written by `exec(sql, ...params)`, of a
 * table with the columns but no NOT NULL, whose bytes column holds an INTEGER, a REAL, a
 * NULL or TEXT, read whole and by range (bytes [1, 4)). `dir` is a fresh folder.
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
  return { otherTable, rows };
}

/**
 * What every adapter over one SQLite table answers for `wrongShapes`' findings: a table of
 * the name given with other columns is INVALID_ARGUMENT; a row whose bytes column holds
 * no bytes (an INTEGER, a REAL, a NULL) is CORRUPT_RECORD, read whole or by range; TEXT is
 * read as its UTF-8 bytes. `assert`: node:assert/strict's, or one of its shape.
 */
export function assertWrongShapes(assert, { otherTable, rows }) {
  assert.equal(otherTable.code, "INVALID_ARGUMENT", otherTable.message);
  assert.match(otherTable.message, /other_shape.*columns/, "the message names the table and its columns");
  for (const type of ["integer", "real", "null"]) {
    assert.equal(rows[type].read.code, "CORRUPT_RECORD", `a read of a row holding ${type}: ${JSON.stringify(rows[type].read)}`);
    assert.equal(rows[type].range.code, "CORRUPT_RECORD", `a range of a row holding ${type}: ${JSON.stringify(rows[type].range)}`);
  }
  assert.deepEqual(rows.text, { read: { bytes: 5, text: "hello" }, range: { bytes: 3, text: "ell" } }, "TEXT: its UTF-8 bytes");
}
