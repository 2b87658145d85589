// The window optimiser's exports, as bindings of this module (api.js re-exports them): what
// ties the window module's load at import to their use. Its functions are synchronous, so
// where the runtime fetches the wasm (browsers and workers), the module must be ready when
// the import resolves: index.js awaits the load added to `atImport` here, beside the core's
// (api-core.js says why these are bindings of this file and not re-exports). The other
// runtimes never call it: their entry points say where the module's bytes are, and its
// first use instantiates it.
import * as optimiser from "./window.js";
import { atImport } from "./module.js";

atImport.push(() => optimiser.windowModule.load());

export const { ContextHistory, estimateTokens, findDuplicateFileReads, optimizeWindow, shouldCompact, truncationRange } = optimiser;
