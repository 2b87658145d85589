// Prints the default store of two managers made without contextDir, and what onDebug
// heard (tests/js/node.test.mjs and deno.suite.mjs run it with and without environment).
import { ContextManager } from "toolctx";
import { memoryStorage } from "toolctx/memory";

const heard = [];
const onDebug = (msg) => heard.push(msg);
const first = new ContextManager({ fileSystem: memoryStorage(), onDebug });
const second = new ContextManager({ fileSystem: memoryStorage(), onDebug });
console.log(JSON.stringify({ dirs: [first.getContextDir(), second.getContextDir()], heard }));
