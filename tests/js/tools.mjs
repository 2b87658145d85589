// toolctx/tools, framework-free (SPEC §1, §3): the model's tools and references passed by
// handle, over a real ContextManager. Shared by Node (tools.test.mjs), Deno and Bun.

const HANDLE = /^ctx:[a-z2-7]{10,12}$/;

export function runToolTests({ test: t0, assert, ContextManager, memoryStorage, tools }) {
  /** Where toolctx/tools reads a manager's core (pkg-template/protocol.js READER). */
  const READER = Symbol.for("toolctx.reader");
  const test = (title, fn) => t0(`tools: ${title}`, fn);
  const { contextTools, resolveHandles, findRecord, lineView, createUsage, TOOL_NAMES, LIMITS } = tools;
  let n = 0;
  const manager = () => new ContextManager({ contextDir: `/tools/${++n}`, fileSystem: memoryStorage() });
  const byName = (m, options) => Object.fromEntries(contextTools(m, options).map((t) => [t.name, t]));
  // A tool answers every input with a text (`execute`); `run` also gives the error behind a failed call.
  const fails = async (tool, input, code, pattern) => {
    const { text, error } = await tool.run(input);
    assert.equal(error?.code, code, text);
    assert.equal(await tool.execute(input), text, "execute resolves to the same text");
    assert.ok(text.startsWith(`${tool.name}: `), text);
    if (pattern) assert.match(text, pattern);
  };
  const rejects = async (promise, code, pattern) => {
    let error;
    try {
      await promise;
    } catch (e) {
      error = e;
    }
    assert.ok(error, "rejected");
    assert.equal(error.code, code, error.message);
    if (pattern) assert.match(error.message, pattern);
    return error;
  };

  const FILE = Array.from({ length: 300 }, (_, i) => (i === 149 ? "export function retryUpload(chunk) { return backoff(chunk); }" : `// line ${i + 1} of upload.ts`)).join("\n");
  const HITS = { pattern: "backoff", hits: [{ file: "src/upload.ts", line: 150, text: "return backoff(chunk);" }, { file: "src/retry.ts", line: 9, text: "function backoff(n) {" }] };

  test("three tools with JSON Schema inputs and one description each, in TOOL_NAMES order", async () => {
    const m = manager();
    const list = contextTools(m);
    assert.deepEqual(list.map((t) => t.name), [...TOOL_NAMES]);
    for (const tool of list) {
      assert.equal(tool.inputSchema.type, "object");
      assert.equal(typeof tool.description, "string");
      assert.equal(typeof tool.execute, "function");
    }
    assert.deepEqual(list[0].inputSchema.required, ["handle"]);
    assert.deepEqual(Object.keys(list[0].inputSchema.properties), ["handle", "offset", "limit"]);
    assert.deepEqual(Object.keys(list[1].inputSchema.properties), ["query", "limit"]);
    assert.deepEqual(Object.keys(list[2].inputSchema.properties), ["pattern", "handle", "limit"]);
    assert.throws(() => contextTools(m, { readLines: 0 }), (e) => e.code === "INVALID_ARGUMENT");
    assert.throws(() => contextTools({}), (e) => e.code === "INVALID_ARGUMENT");
  });

  test("every pointer has a short handle; read_context reads numbered lines of the line view by it, and by the older forms", async () => {
    const m = manager();
    const fp = await m.saveContext("readFile", { path: "src/upload.ts" }, FILE);
    const [p] = m.getAllPointers();
    assert.match(p.handle, HANDLE);
    assert.ok(p.handle.length <= 16);
    assert.equal(m.resolveHandle(p.handle), fp);
    assert.equal(m.resolveHandle(p.handle.toUpperCase()), fp);
    assert.equal(m.resolveHandle("ctx:aaaaaaaaaa"), undefined);
    const { read_context } = byName(m);
    const text = await read_context.execute({ handle: p.handle, offset: 149, limit: 2 });
    const lines = text.split("\n");
    assert.match(lines[0], new RegExp(`^${p.handle} read file: path=src/upload.ts \\(\\d[\\d,]* bytes\\): lines 149–150 of 300$`));
    assert.equal(lines[1], "149  // line 149 of upload.ts");
    assert.equal(lines[2], "150  export function retryUpload(chunk) { return backoff(chunk); }");
    assert.match(lines[3], new RegExp(`^\\[150 more lines: read_context \\{"handle": "${p.handle}", "offset": 151\\}\\]$`));
    for (const older of [`toolctx://${p.filename}`, `toolctx://${fp}`, fp, p.filename]) {
      assert.equal((await read_context.execute({ handle: older, offset: 150, limit: 1 })).split("\n")[1], lines[2], older);
    }
    await fails(read_context, { handle: "ctx:bbbbbbbbbb" }, "NOT_FOUND", /handle: .*search_context lists the handles/);
    await fails(read_context, { handle: p.handle, offset: 301 }, "INVALID_ARGUMENT", /offset 301 is past the end/);
    await fails(read_context, { handle: p.handle, limit: -1 }, "INVALID_ARGUMENT", /limit must be/);
  });

  test("a structured output reads a field or an element per line: a grep hit is one line with its file, line and text", async () => {
    const m = manager();
    await m.saveContext("grep", { pattern: "backoff" }, HITS);
    const [p] = m.getAllPointers();
    assert.deepEqual(lineView(HITS, m), [
      "pattern: backoff",
      'hits[0]: {"file":"src/upload.ts","line":150,"text":"return backoff(chunk);"}',
      'hits[1]: {"file":"src/retry.ts","line":9,"text":"function backoff(n) {"}',
    ]);
    const { grep_context } = byName(m);
    const text = await grep_context.execute({ pattern: "retry\\.ts" });
    assert.equal(text, `${p.handle} grep: pattern=backoff (${p.size.toLocaleString("en-US")} bytes)\n  2- hits[0]: {"file":"src/upload.ts","line":150,"text":"return backoff(chunk);"}\n  3: hits[1]: {"file":"src/retry.ts","line":9,"text":"function backoff(n) {"}`);
  });

  test("search_context prints each hit's handle, description, size and its passage with line numbers", async () => {
    const m = manager();
    await m.saveContext("readFile", { path: "src/upload.ts" }, FILE);
    await m.saveContext("readFile", { path: "README.md" }, "# Uploads\nUploads are chunked.\n");
    const { search_context } = byName(m);
    const text = await search_context.execute({ query: "retryUpload backoff", limit: 3 });
    const [first, ...rest] = text.split("\n");
    const p = m.getAllPointers().find((x) => x.args.path === "src/upload.ts");
    assert.equal(first, `1. ${p.handle} read file: path=src/upload.ts (${p.size.toLocaleString("en-US")} bytes)`);
    assert.ok(rest.includes("   150: export function retryUpload(chunk) { return backoff(chunk); }"), text);
    assert.equal(await search_context.execute({ query: "kubernetes" }), 'No saved tool output matches "kubernetes".');
    await fails(search_context, { query: "  " }, "INVALID_ARGUMENT", /query must be/);
  });

  test("grep_context: every record newest first, or one by handle; context lines, a cap, and errors the model can read", async () => {
    const m = manager();
    await m.saveContext("readFile", { path: "src/upload.ts" }, FILE);
    await m.saveContext("grep", { pattern: "backoff" }, HITS);
    const [file, hits] = m.getAllPointers();
    const { grep_context } = byName(m);
    const all = await grep_context.execute({ pattern: "backoff" });
    assert.ok(all.indexOf(hits.handle) < all.indexOf(file.handle), all);
    assert.ok(all.includes("  149- // line 149 of upload.ts\n  150: export function retryUpload"), all);
    const one = await grep_context.execute({ pattern: "line 1\\d of", handle: file.handle, limit: 3 });
    assert.ok(one.endsWith("[more matches not shown; narrow the pattern, pass a handle or raise limit]"), one);
    assert.equal((one.match(/^ {2}\d+:/gm) ?? []).length, 3, one);
    assert.equal(await grep_context.execute({ pattern: "nowhere" }), "No line matches /nowhere/.");
    await fails(grep_context, { pattern: "(" }, "INVALID_ARGUMENT", /pattern: not a regular expression/);
    await fails(grep_context, { pattern: "x".repeat(LIMITS.maxPatternChars + 1) }, "INVALID_ARGUMENT", /pattern is 501 characters/);
  });

  test("resolveHandles: a handle becomes the stored value, a line slice its lines, a JSON path its part; other values stay", async () => {
    const m = manager();
    await m.saveContext("readFile", { path: "src/upload.ts" }, FILE);
    await m.saveContext("grep", { pattern: "backoff" }, HITS);
    const [file, hits] = m.getAllPointers();
    const args = {
      content: file.handle,
      lines: `${file.handle}#L150-151`,
      first: `${hits.handle}#$.hits[0:1]`,
      file: `${hits.handle}#$.hits[1].file`,
      nested: [{ keep: "ctx: not a handle", n: 3 }],
    };
    const out = await resolveHandles(args, m);
    assert.equal(out.content, FILE);
    assert.equal(out.lines, "export function retryUpload(chunk) { return backoff(chunk); }\n// line 151 of upload.ts");
    assert.deepEqual(out.first, [HITS.hits[0]]);
    assert.equal(out.file, "src/retry.ts");
    assert.deepEqual(out.nested, args.nested);
    assert.equal(args.content, file.handle, "the input is not changed");
    await rejects(resolveHandles({ x: "ctx:cccccccccc" }, m), "NOT_FOUND");
    await rejects(resolveHandles({ x: `${file.handle}#L400-401` }, m), "INVALID_ARGUMENT", /has 300 lines, so #L400-401 is past its end/);
    await rejects(resolveHandles({ x: `${hits.handle}#$.nope` }, m), "INVALID_ARGUMENT", /no field "nope"/);
    await rejects(resolveHandles({ x: `${hits.handle}#$.toString` }, m), "INVALID_ARGUMENT", /no field "toString"/);
    await rejects(resolveHandles({ x: `${hits.handle}#$.constructor` }, m), "INVALID_ARGUMENT", /no field "constructor"/);
    assert.equal(findRecord(m, file.handle).filepath, file.filepath);
    // A handle or a filepath finds its pointer alone, without listing every pointer.
    let listed = 0;
    const counting = {
      getAllPointers: () => (listed++, m.getAllPointers()),
      loadContexts: (paths) => m.loadContexts(paths),
      resolveHandle: (h) => m.resolveHandle(h),
      [READER]: m[READER],
    };
    assert.deepEqual(findRecord(counting, file.handle), file);
    assert.deepEqual(findRecord(counting, `toolctx://${hits.filepath}`), hits);
    assert.equal(listed, 0);
    assert.deepEqual(findRecord(counting, hits.filename), hits, "a file name is looked for");
    assert.equal(listed, 1);
  });

  test("usage counts what the tools read back; createUsage tallies what a wrapper kept out", async () => {
    const m = manager();
    await m.saveContext("readFile", { path: "src/upload.ts" }, FILE);
    const usage = createUsage();
    const { read_context } = byName(m, { usage });
    const text = await read_context.execute({ handle: m.getAllPointers()[0].handle, limit: 10 });
    usage.offloaded(FILE.length, 200);
    const tokensKeptOut = Math.ceil(FILE.length / 4) - Math.ceil(200 / 4);
    const tokensReadBack = Math.ceil(text.length / 4);
    assert.deepEqual(usage.snapshot(), {
      outputsOffloaded: 1,
      charsKeptOut: FILE.length - 200,
      tokensKeptOut,
      readsBack: 1,
      charsReadBack: text.length,
      tokensReadBack,
      definitionTokens: 0,
      modelCalls: 0,
      tokensSaved: tokensKeptOut - tokensReadBack,
      tokenizer: "estimate",
    });
  });
}
