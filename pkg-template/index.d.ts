export * from "./toolctx_core.js";
export { memoryStorage } from "./adapters/memory.js";
