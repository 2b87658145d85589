// A sample Anthropic-style conversation for the window optimiser: an agent debugging the
// corpus reads the same files several times (read_file tool calls and a
// `<file_content path="…">` mention the user pasted), as long sessions do.

import { corpus } from "./agent.js";

/** The conversation, built from the corpus so the repeated reads carry real file text. */
export function sampleConversation() {
  const messages = [];
  let id = 0;
  const read = (path, note) => {
    const toolUseId = `toolu_${String(++id).padStart(2, "0")}`;
    messages.push({
      role: "assistant",
      content: [
        { type: "text", text: note },
        { type: "tool_use", id: toolUseId, name: "read_file", input: { path } },
      ],
    });
    messages.push({ role: "user", content: [{ type: "tool_result", tool_use_id: toolUseId, content: corpus[path] }] });
  };
  const say = (role, text) => messages.push({ role, content: text });

  say("user", "Users with two tabs open get signed out with a token expired error. Can you find out why?");
  read("src/auth/login.ts", "I'll start with the sign-in flow: reading the login entry point.");
  read("src/auth/refresh.ts", "login() refreshes through refreshAccessToken; reading it.");
  read("src/auth/session.ts", "Checking how expiry is computed.");
  read("src/auth/login.ts", "Back to login.ts to see what happens when the refresh fails.");
  say("assistant", "login() falls back to a full sign-in when the refresh token expired. Is there a design doc for tokens?");
  say(
    "user",
    `Here is the doc we wrote about it:\n<file_content path="docs/auth.md">\n${corpus["docs/auth.md"]}</file_content>`,
  );
  read("src/auth/refresh.ts", "The doc says refresh tokens rotate. Re-reading refresh.ts for the in-flight sharing.");
  read("docs/auth.md", "Confirming the rotation rule in the doc.");
  read("src/http/client.ts", "Checking whether the HTTP client retries the refresh.");
  read("src/auth/refresh.ts", "One more look at refresh.ts before proposing the fix.");
  say(
    "assistant",
    "Found it: refresh tokens rotate on use, and refreshAccessToken only shares its in-flight request within one " +
      "tab. Two tabs refresh at once, the second uses a revoked token and gets 401 token_expired. Wrapping the " +
      "refresh in a Web Lock (navigator.locks.request) serialises it across tabs.",
  );
  say("user", "Great, please make that change.");
  return messages;
}
