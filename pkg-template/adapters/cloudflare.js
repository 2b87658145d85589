// toolctx/cloudflare: StorageHosts over the bindings a Cloudflare Worker receives, with no
// Cloudflare SDK, one file each over the key-value base (base/key-value.js):
//
// - r2Storage (r2.js): an R2 bucket (`env.MY_BUCKET`); exclusive create decided by R2,
//   a lease object as the lock;
// - kvStorage (workers-kv.js): a Workers KV namespace (`env.MY_KV`); eventually
//   consistent, exclusive create is a check then a put, no lock, no append;
// - durableObjectStorage (durable-object.js): the SQLite-backed storage of a Durable
//   Object (`ctx.storage`); values of any size cut into cells, transactional, a queue in
//   the object as the lock;
// - d1Storage (d1.js): a D1 database (`env.MY_DB`); one row a file in toolctx/sqlite's
//   table (base/sqlite-table.js), a lease row as the lock;
// - durableObjectSqlStorage (durable-object-sql.js): that same table in a Durable
//   Object's SQLite (`ctx.storage.sql`), synchronous, the object's queue as the lock.
//
// This entry only gathers them: the package exports it as `toolctx/cloudflare`.

export { r2Storage } from "./r2.js";
export { KV_MAX_KEY_BYTES, KV_MAX_VALUE_BYTES, kvStorage } from "./workers-kv.js";
export { DO_CHUNK_BYTES, durableObjectStorage } from "./durable-object.js";
export { D1_MAX_VALUE_BYTES, d1Storage } from "./d1.js";
export { DO_SQL_MAX_VALUE_BYTES, durableObjectSqlStorage } from "./durable-object-sql.js";
