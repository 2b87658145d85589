// SPEC §9 in every runtime (Node, Deno, Bun, Chromium): a panic in the core, in every
// kind of export, is a typed INTERNAL error for the call it happened in and for every
// call in flight; the module is instantiated again, the next call works, and the
// process (or page, or worker) lives. Run these last in a suite: a trap costs the
// managers made before it their in-memory state.

/** A storage whose writes wait until `release()` is called: a save stays in flight. */
function heldStorage(memoryStorage) {
  const inner = memoryStorage();
  let open;
  const gate = new Promise((resolve) => {
    open = resolve;
  });
  return {
    storage: {
      read: (p, o) => inner.read(p, o),
      list: (d) => inner.list(d),
      remove: (p) => inner.remove(p),
      write: async (p, b, o) => {
        await gate;
        return inner.write(p, b, o);
      },
    },
    release: open,
  };
}

export function runTrapTests({ name, test, assert, toolctx }) {
  const { ContextManager, ConversationStore, ContextHistory, memoryStorage, optimizeWindow, estimateTokens } = toolctx;
  const internal = (message) => (err) => {
    assert.equal(err?.code, "INTERNAL", `${err?.code}: ${err?.message}`);
    assert.ok(err instanceof Error);
    if (message) assert.match(err.message, message);
    return true;
  };

  test(`[${name}] trap: a panic in a synchronous export throws INTERNAL, and the next call works`, async () => {
    assert.throws(() => ContextManager.__panicForTests("deliberate, synchronous"), internal(/deliberate, synchronous/));
    const m = new ContextManager({ contextDir: "/trap-sync", fileSystem: memoryStorage(), persistThreshold: 0 });
    const fp = await m.saveContext("readFile", { path: "a.ts" }, "after the trap");
    assert.equal((await m.loadContexts([fp]))[0].result, "after the trap");
  });

  test(`[${name}] trap: ContextManager is a plain class: subclasses, instanceof and the runtime's defaults hold after a trap`, async () => {
    class Counting extends ContextManager {
      saves = 0;
      saveContext(...args) {
        this.saves++;
        return super.saveContext(...args);
      }
      static at(contextDir) {
        return new this({ contextDir, fileSystem: memoryStorage(), persistThreshold: 0 });
      }
    }
    const plain = new ContextManager({ fileSystem: memoryStorage() });
    assert.equal(plain.constructor, ContextManager, "an instance's constructor is the exported class");
    assert.equal(ContextManager.prototype.constructor, ContextManager);
    const defaultDir = plain.getContextDir();
    assert.equal(Counting.at("/trap-class").constructor, Counting);

    assert.throws(() => ContextManager.__panicForTests("deliberate, class"), internal(/deliberate, class/));
    const after = Counting.at("/trap-class");
    assert.ok(after instanceof Counting && after instanceof ContextManager);
    assert.equal(typeof (await after.saveContext("t", {}, 1)), "string");
    assert.equal(after.saves, 1, "the subclass's override ran");
    assert.equal(Counting.hashQuery("x"), ContextManager.hashQuery("x"), "static methods are inherited");
    const fresh = new ContextManager({ fileSystem: memoryStorage() });
    assert.equal(fresh.getContextDir(), defaultDir, "the runtime's default context dir, after the trap");
    assert.ok(fresh instanceof ContextManager);
  });

  test(`[${name}] trap: a panic inside the constructor throws INTERNAL, fails the calls in flight, and the next new works`, async () => {
    const held = heldStorage(memoryStorage);
    const waiting = new ContextManager({ contextDir: "/trap-ctor-held", fileSystem: held.storage, persistThreshold: 0 });
    const inFlight = waiting.saveContext("grep", { q: "x" }, "in flight");
    const caught = [];
    try {
      new ContextManager({ fileSystem: memoryStorage(), __panicForTests: "deliberate, constructor" });
    } catch (err) {
      caught.push(err);
    }
    assert.equal(caught.length, 1, "new threw");
    assert.ok(internal(/deliberate, constructor/)(caught[0]));
    assert.ok(caught[0].cause instanceof WebAssembly.RuntimeError, "the trap is the cause");
    await assert.rejects(inFlight, internal());
    held.release();

    const after = new ContextManager({ contextDir: "/trap-ctor", fileSystem: memoryStorage(), persistThreshold: 0 });
    assert.ok(after instanceof ContextManager && after.constructor === ContextManager);
    const fp = await after.saveContext("readFile", { path: "a.ts" }, "after the trap");
    assert.equal((await after.loadContexts([fp]))[0].result, "after the trap");
    class Sub extends ContextManager {}
    assert.throws(() => new Sub({ fileSystem: memoryStorage(), __panicForTests: "deliberate, subclass" }), internal(/deliberate, subclass/));
    assert.ok(new Sub({ fileSystem: memoryStorage() }) instanceof Sub, "a subclass constructs after the trap");
  });

  test(`[${name}] trap: after a trap, only an object from before it reports lost state`, () => {
    assert.throws(() => ContextManager.__panicForTests("deliberate, classification"), internal());
    // Not a manager at all: the glue's own error, not "state lost".
    assert.throws(() => ContextManager.prototype.getContextDir.call({}), (err) => {
      assert.notEqual(err?.code, "INTERNAL", err?.message);
      return err instanceof Error;
    });
  });

  test(`[${name}] trap: a panic inside an async operation rejects it and every call in flight with INTERNAL; the process lives`, async () => {
    const storage = memoryStorage();
    const before = new ContextManager({ contextDir: "/trap-async", fileSystem: storage, persistThreshold: 0 });
    const kept = await before.saveContext("readFile", { path: "kept.ts" }, "kept");
    const held = heldStorage(memoryStorage);
    const waiting = new ContextManager({ contextDir: "/trap-held", fileSystem: held.storage, persistThreshold: 0 });
    const inFlight = waiting.saveContext("grep", { q: "x" }, "in flight");

    await assert.rejects(ContextManager.__panicForTestsAsync("deliberate, async"), internal(/deliberate, async/));
    await assert.rejects(inFlight, internal());
    held.release();

    // The next calls work: a new manager saves, loads and ranks; the old one fails cleanly.
    const after = new ContextManager({ contextDir: "/trap-async", fileSystem: storage, persistThreshold: 0 });
    const fp = await after.saveContext("grep", { pattern: "login" }, ["src/login.ts:1"]);
    assert.deepEqual((await after.loadContexts([fp])).map((r) => r.result), [["src/login.ts:1"]]);
    assert.deepEqual(after.selectRelevantContexts("login", after.getAllPointers()), [fp]);
    const old = before.saveContext("t", {}, 1);
    assert.ok(old instanceof Promise, "an I/O method of an old manager still returns a Promise");
    await assert.rejects(old, internal());

    // What was persisted before the trap is all there.
    const reader = new ContextManager({ contextDir: "/trap-async", fileSystem: storage });
    assert.equal(await reader.rebuildIndex(), 2);
    assert.ok(reader.getAllPointers().some((p) => p.filepath === kept));
  });

  test(`[${name}] trap: a panic while a loadContexts reads rejects it with INTERNAL at once; the next load works`, async () => {
    const inner = memoryStorage();
    let open;
    const gate = new Promise((resolve) => {
      open = resolve;
    });
    const storage = {
      read: async (p, o) => {
        await gate;
        return inner.read(p, o);
      },
      write: (p, b, o) => inner.write(p, b, o),
      remove: (p) => inner.remove(p),
      list: (d) => inner.list(d),
    };
    const before = new ContextManager({ contextDir: "/trap-load", fileSystem: storage, persistThreshold: 0 });
    const fp = await before.saveContext("readFile", { path: "a.ts" }, "read after the trap");
    const loading = before.loadContexts([fp]);
    await assert.rejects(ContextManager.__panicForTestsAsync("deliberate, load"), internal(/deliberate, load/));
    await assert.rejects(loading, internal(), "the load in flight fails before its read ends");
    open();
    const after = new ContextManager({ contextDir: "/trap-load", fileSystem: storage, persistThreshold: 0 });
    assert.deepEqual((await after.loadContexts([fp])).map((r) => r.result), ["read after the trap"]);
  });

  test(`[${name}] trap: after a trap the conversation store and the window optimiser work`, async () => {
    await assert.rejects(ContextManager.__panicForTestsAsync("deliberate, again"), internal());
    const store = await ConversationStore.open({ storage: memoryStorage(), contextDir: "/trap-conversations" });
    const { id } = await store.createConversation({ title: "after" });
    await store.appendMessage(id, { role: "user", content: "hello" });
    assert.equal((await store.getMessages(id)).length, 1);
    assert.ok(estimateTokens("some words to count") > 0);
    assert.equal(optimizeWindow([{ role: "user", content: "hi" }]).messages.length, 1);
  });

  test(`[${name}] trap: a panic in the conversation module or the window module is INTERNAL, and each works again`, async () => {
    const store = await ConversationStore.open({ storage: memoryStorage(), contextDir: "/trap-modules" });
    assert.throws(() => ConversationStore.__panicForTests("deliberate, conversation"), internal(/deliberate, conversation/));
    const again = await ConversationStore.open({ storage: memoryStorage(), contextDir: "/trap-modules" });
    const { id } = await again.createConversation({ title: "after" });
    assert.equal((await again.listConversations()).length, 1);
    await assert.rejects(store.createConversation({ title: "old" }), internal());
    assert.equal(again.constructor, store.constructor);
    assert.ok(id);

    assert.throws(() => ContextHistory.__panicForTests("deliberate, window"), internal(/deliberate, window/));
    assert.equal(optimizeWindow([{ role: "user", content: "hi" }]).messages.length, 1);
    const m = new ContextManager({ contextDir: "/trap-modules", fileSystem: memoryStorage(), persistThreshold: 0 });
    assert.equal(typeof (await m.saveContext("t", {}, 1)), "string", "the core is untouched");
  });
}
