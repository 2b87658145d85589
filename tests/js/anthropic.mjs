// toolctx/anthropic over every adapter in every runtime (node, Deno, Bun, Chromium: OPFS
// and IndexedDB): the memory-tool handlers give the protocol's texts (those of the SDK's
// own filesystem tool; tests/js/anthropic.test.mjs checks them against it), keep every
// path inside /memories, and clearToolUses saves what it clears so its handle reads it
// back. No `node:` import here: the same module runs in a browser.
//
//   runAnthropicTests(test, assert, makeStorage, { api, name, dir })
//   api: { memoryToolHandlers, clearToolUses, ContextManager }; dir(): a fresh folder path.
// Only ok / equal / deepEqual / match are used from `assert` (the browser harness has those).

const decoder = new TextDecoder();
const text = (data) => (typeof data === "string" ? data : decoder.decode(data));

/** What a handler call gives: its text, or `Error: <message>` as the SDK's tool runner sends it back. */
export async function outcome(handlers, command) {
  try {
    return await handlers[command.command](command);
  } catch (e) {
    return `Error: ${e.message}`;
  }
}

const LISTING = "Here're the files and directories up to 2 levels deep in";
const CONTENT = "Here's the content of";
const EDITED = "The memory file has been edited. Here is the snippet showing the change (with line numbers):";

/** Commands and the texts the model gets back (those of the SDK's BetaLocalFilesystemMemoryTool; folder sizes are toolctx's). */
export const SCRIPT = [
  [{ command: "view", path: "/memories" }, `${LISTING} /memories, excluding hidden items and node_modules:\n0B\t/memories`],
  [{ command: "create", path: "/memories/a.md", file_text: "alpha\nbeta\ngamma\nbeta\n" }, "File created successfully at: /memories/a.md"],
  [{ command: "create", path: "/memories/a.md", file_text: "again" }, "Error: File /memories/a.md already exists"],
  [{ command: "create", path: "/memories/deep/er/b.txt", file_text: "one line" }, "File created successfully at: /memories/deep/er/b.txt"],
  [{ command: "create", path: "/memories/.hidden.md", file_text: "h" }, "File created successfully at: /memories/.hidden.md"],
  [
    { command: "view", path: "/memories" },
    `${LISTING} /memories, excluding hidden items and node_modules:\n31B\t/memories\n22B\t/memories/a.md\n8B\t/memories/deep/\n8B\t/memories/deep/er/`,
  ],
  [{ command: "view", path: "/memories/a.md" }, `${CONTENT} /memories/a.md with line numbers:\n     1\talpha\n     2\tbeta\n     3\tgamma\n     4\tbeta\n     5\t`],
  [{ command: "view", path: "/memories/a.md", view_range: [2, 3] }, `${CONTENT} /memories/a.md with line numbers:\n     2\tbeta\n     3\tgamma`],
  [{ command: "view", path: "/memories/missing.md" }, "Error: The path /memories/missing.md does not exist. Please provide a valid path."],
  [
    { command: "str_replace", path: "/memories/a.md", old_str: "beta", new_str: "BETA" },
    "Error: No replacement was performed. Multiple occurrences of old_str `beta` in lines: 2, 4. Please ensure it is unique",
  ],
  [
    { command: "str_replace", path: "/memories/a.md", old_str: "delta", new_str: "x" },
    "Error: No replacement was performed, old_str `delta` did not appear verbatim in /memories/a.md.",
  ],
  [{ command: "str_replace", path: "/memories/a.md", old_str: "gamma", new_str: "$& GAMMA" }, `${EDITED}\n     1\talpha\n     2\tbeta\n     3\t$& GAMMA\n     4\tbeta\n     5\t`],
  [{ command: "str_replace", path: "/memories/deep", old_str: "a", new_str: "b" }, "Error: The path /memories/deep is not a file."],
  [{ command: "insert", path: "/memories/a.md", insert_line: 0, insert_text: "top\n" }, "The file /memories/a.md has been edited."],
  [
    { command: "insert", path: "/memories/a.md", insert_line: 99, insert_text: "x" },
    "Error: Invalid `insert_line` parameter: 99. It should be within the range of lines of the file: [0, 6]",
  ],
  [{ command: "insert", path: "/memories/gone.md", insert_line: 0, insert_text: "x" }, "Error: The path /memories/gone.md does not exist. Please provide a valid path."],
  [{ command: "rename", old_path: "/memories/a.md", new_path: "/memories/deep/er/b.txt" }, "Error: The destination /memories/deep/er/b.txt already exists"],
  [{ command: "rename", old_path: "/memories/nope.md", new_path: "/memories/c.md" }, "Error: The path /memories/nope.md does not exist"],
  [{ command: "rename", old_path: "/memories", new_path: "/memories/x" }, "Error: Cannot rename the /memories directory itself"],
  [{ command: "rename", old_path: "/memories/a.md", new_path: "/memories/moved/a.md" }, "Successfully renamed /memories/a.md to /memories/moved/a.md"],
  [{ command: "view", path: "/memories/moved/a.md", view_range: [1, 1] }, `${CONTENT} /memories/moved/a.md with line numbers:\n     1\ttop`],
  [{ command: "rename", old_path: "/memories/deep", new_path: "/memories/deeper" }, "Successfully renamed /memories/deep to /memories/deeper"],
  [{ command: "view", path: "/memories/deeper/er/b.txt" }, `${CONTENT} /memories/deeper/er/b.txt with line numbers:\n     1\tone line`],
  [{ command: "delete", path: "/memories" }, "Error: Cannot delete the /memories directory itself"],
  [{ command: "delete", path: "/memories/nope.md" }, "Error: The path /memories/nope.md does not exist"],
  [{ command: "delete", path: "/memories/deeper" }, "Successfully deleted /memories/deeper"],
  [{ command: "view", path: "/memories/deeper/er/b.txt" }, "Error: The path /memories/deeper/er/b.txt does not exist. Please provide a valid path."],
  [{ command: "create", path: "/memories/../../escape.txt", file_text: "x" }, "Error: Path /memories/../../escape.txt would escape /memories directory"],
  [{ command: "view", path: "/var/log" }, "Error: Path must start with /memories, got: /var/log"],
];

/** Paths that try to leave /memories, and the protocol's error for them. */
export const TRAVERSALS = [
  ["/etc/passwd", "Path must start with /memories, got: /etc/passwd"],
  ["memories/a.md", "Path must start with /memories, got: memories/a.md"],
  ["/memoriesx/a.md", "Path must start with /memories, got: /memoriesx/a.md"],
  ["//memories/a.md", "Path must start with /memories, got: //memories/a.md"],
  ["", "Path must start with /memories, got: "],
  ["/memories/../etc/passwd", "Path /memories/../etc/passwd would escape /memories directory"],
  ["/memories/a/../../b", "Path /memories/a/../../b would escape /memories directory"],
  ["/memories/..", "Path /memories/.. would escape /memories directory"],
  ["/memories/a/..", "Path /memories/a/.. would escape /memories directory"],
  ["/memories/%2e%2e/x", "Path /memories/%2e%2e/x would escape /memories directory"],
  ["/memories/%2E%2E%2Fx", "Path /memories/%2E%2E%2Fx would escape /memories directory"],
  ["/memories/%252e%252e/x", "Path /memories/%252e%252e/x would escape /memories directory"],
  ["/memories/a%2fb", "Path /memories/a%2fb would escape /memories directory"],
  ["/memories/%c0%ae%c0%ae/x", "Path /memories/%c0%ae%c0%ae/x would escape /memories directory"], // overlong UTF-8 dots
  ["/memories/..\\x", "Path /memories/..\\x would escape /memories directory"],
  ["/memories\\..\\x", "Path must start with /memories, got: /memories\\..\\x"],
  ["/memories/a\\b", "Path /memories/a\\b would escape /memories directory"],
  ["/memories/a\0.md", "Path /memories/a\0.md would escape /memories directory"],
];

/** All the paths under `dir` that the storage holds, found through list(). */
async function paths(storage, dir) {
  const out = [];
  for (const name of await storage.list(dir)) {
    if (name.endsWith("/")) out.push(...(await paths(storage, `${dir}/${name.slice(0, -1)}`)));
    else out.push(`${dir}/${name}`);
  }
  return out.sort();
}

export function runAnthropicTests(test, assert, makeStorage, { api, name, dir }) {
  const { memoryToolHandlers, clearToolUses, ContextManager } = api;

  test(`[${name}] memory tool: every command gives the protocol's text`, async () => {
    const h = memoryToolHandlers({ storage: makeStorage(), dir: dir() });
    for (const [command, expected] of SCRIPT) assert.equal(await outcome(h, command), expected, JSON.stringify(command));
  });

  test(`[${name}] memory tool: every traversal attempt is refused by every command, and nothing is written`, async () => {
    const storage = makeStorage();
    const base = dir();
    const h = memoryToolHandlers({ storage, dir: base });
    await h.create({ command: "create", path: "/memories/a/keep.md", file_text: "keep" });
    const before = await paths(storage, base);
    assert.deepEqual(before, [`${base}/memories/a/keep.md`]);
    for (const [path, message] of TRAVERSALS) {
      for (const command of [
        { command: "view", path },
        { command: "create", path, file_text: "x" },
        { command: "str_replace", path, old_str: "keep", new_str: "x" },
        { command: "insert", path, insert_line: 0, insert_text: "x" },
        { command: "delete", path },
        { command: "rename", old_path: path, new_path: "/memories/moved.md" },
        { command: "rename", old_path: "/memories/a/keep.md", new_path: path },
      ]) {
        let error;
        try {
          await h[command.command](command);
        } catch (e) {
          error = e;
        }
        assert.ok(error, `refused: ${JSON.stringify(command)}`);
        assert.equal(error.message, message, JSON.stringify(command));
        assert.equal(error.code, "OUTSIDE_STORE");
      }
    }
    assert.deepEqual(await paths(storage, base), before);
    assert.equal(text(await storage.read(`${base}/memories/a/keep.md`)), "keep");
  });

  test(`[${name}] clearToolUses: cleared results are saved in the store and read back by their handle`, async () => {
    const storage = makeStorage();
    const contextDir = dir();
    const manager = await ContextManager.open({ storage, contextDir, persistThreshold: 0 });
    const messages = [{ role: "user", content: "Why does login fail?" }];
    for (let i = 0; i < 4; i++) {
      messages.push({ role: "assistant", content: [{ type: "tool_use", id: `tu_${i}`, name: "read_file", input: { path: `src/f${i}.ts` } }] });
      messages.push({ role: "user", content: [{ type: "tool_result", tool_use_id: `tu_${i}`, content: `file ${i}\n`.repeat(500) }] });
    }
    const { messages: next, clearedToolUses, clearedInputTokens } = await clearToolUses(messages, { trigger: 1000, keep: 1, manager });
    assert.equal(clearedToolUses, 3);
    assert.ok(clearedInputTokens > 2400, String(clearedInputTokens));
    for (let i = 0; i < 3; i++) {
      const placeholder = next[2 + 2 * i].content[0].content;
      const match = /^\[toolctx: tool result cleared to save context \(read_file, ~875 tokens\); read_context \{"handle": "(ctx:[a-z2-7]{10,12})"\} reads it back\]$/.exec(placeholder);
      assert.ok(match, placeholder);
      // Another manager over the same storage (a restart) reads it back by the handle.
      const reader = await ContextManager.open({ storage, contextDir, readOnly: true });
      const [record] = await reader.loadContexts([reader.resolveHandle(match[1])]);
      assert.equal(record.result, `file ${i}\n`.repeat(500));
      assert.deepEqual(record.args, { path: `src/f${i}.ts` });
    }
    assert.equal(next[8].content[0].content, messages[8].content[0].content);
    await manager.clear();
  });
}
