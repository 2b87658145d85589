// The conversation store (SPEC §7) from its own wasm module (toolctx_conversation_bg.wasm),
// instantiated by the first `ConversationStore.open` (lazy.js). Its methods are guarded
// like ContextManager's (extras.js).
import * as glue from "./toolctx_conversation.js";
import { disposeWithClose } from "./extras.js";
import { LazyModule } from "./lazy.js";

export const conversationModule = new LazyModule("conversation", glue);
const Conversations = glue.ConversationStore;
conversationModule.guardClass(Conversations);

// These results cross as JSON text, parsed here once the wasm call has returned (a
// JSON.parse inside a wasm call can crash Node 20's V8; see __pointers in src/wasm/manager.rs).
for (const name of [
  "createConversation", "listConversations", "getConversation", "appendMessage", "getMessages", "storeArtifact",
  "appendWithArtifact", "getArtifact", "listArtifacts", "resolveArtifacts", "stats", "prune", "import", "sync",
  "syncStatus",
]) {
  const method = Conversations.prototype[name];
  Object.defineProperty(Conversations.prototype, name, {
    value: { async [name](...args) { return JSON.parse(await method.apply(this, args)); } }[name],
    writable: true,
    configurable: true,
  });
}

// The only way to a store: where the module is fetched (browsers), open waits for it.
conversationModule.loadBeforeOpen(Conversations);

disposeWithClose(Conversations);

export const ConversationStore = Conversations;
