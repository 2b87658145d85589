// Cross-implementation vectors (tests/vectors/*.json, computed outside this code base):
// canonical args hash, hashQuery, tool-name sanitising — checked through the built package.

import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";

import { ContextManager, memoryStorage } from "toolctx";

const load = (name) => JSON.parse(readFileSync(new URL(`../vectors/${name}.json`, import.meta.url), "utf8")).vectors;

const canonical = load("canonical");
const hashQuery = load("hash_query");
const sanitize = load("sanitize");

const NAME_RE = /^[A-Za-z0-9_-]{1,64}_[0-9a-f]{12}_[0-9]{13}_[0-9]+_[a-z0-9]{4}\.json$/;
const base = (p) => p.slice(p.lastIndexOf("/") + 1);

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

// One record file, byte for byte, from fixed inputs (tests/vectors/record.json), when present.
let recordVector;
try {
  recordVector = JSON.parse(readFileSync(new URL("../vectors/record.json", import.meta.url), "utf8"));
} catch {
  recordVector = undefined;
}

test("record vector: filename and file bytes from fixed clock/random inputs", { skip: !recordVector }, async () => {
  const { input, filename, file } = recordVector;
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
