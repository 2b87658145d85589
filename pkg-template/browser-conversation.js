// The conversation store's module in browsers and workers: fetched by the first
// ConversationStore.open (module.js), from the URL given here. A bundler keeps this module,
// and the store's glue, only in a page that uses ConversationStore (see browser-core.js).
import { ConversationStore as Store, conversationModule } from "./conversation.js";

conversationModule.provide(new URL("./toolctx_conversation_bg.wasm", import.meta.url));

export const ConversationStore = Store;
