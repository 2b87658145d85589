// Uses of wasm-bindgen internals, one a line: each line must fail to type-check.
import { initSync } from "toolctx";
import type { InitOutput } from "toolctx";
import type { SyncInitInput } from "toolctx";
import * as core from "toolctx/toolctx_core.js";
export const uses = [initSync, core] as const;
export type Uses = [InitOutput, SyncInitInput];
