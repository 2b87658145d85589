// A strict CommonJS consumer: `require("toolctx")` works through Node's require(esm)
// (Node 20.19+, 22.12+), and TypeScript types it as such under `--module nodenext`.
import toolctx = require("toolctx");
import memory = require("toolctx/memory");

const manager: toolctx.ContextManager = new toolctx.ContextManager({ contextDir: "/ctx", fileSystem: memory.memoryStorage() });
const pointers: toolctx.ContextPointer[] = manager.getAllPointers();
export const count: number = pointers.length + manager.size;
