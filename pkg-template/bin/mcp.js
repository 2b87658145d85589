// `toolctx mcp`: the store as a Model Context Protocol server over stdio, so an agent
// (Claude Desktop, Claude Code, any MCP client) can search and read what was saved.
// Built on @modelcontextprotocol/sdk, which esbuild bundles into bin/toolctx.js with the
// rest of the command line; it loads only for this command.
//
// Tools: read_context, search_context and grep_context are toolctx/tools' own (names,
// descriptions, JSON Schemas and what they answer, as every integration has them), over
// every record of the store, sessions included; list_sessions; and, with --allow-save
// only, save_context. The SDK's high-level McpServer takes zod schemas only, so the
// server answers tools/list and tools/call itself, with the JSON Schemas as they are.
// Reads open the store read-only and re-read it on every call, so records saved
// meanwhile by the agent are found; stdout carries only the protocol, diagnostics go to
// stderr.
//
// Every call is bounded: the tools answer any input in bounded time (grep_context matches
// in linear time and stops at its own budget, yielding between chunks), and a call that
// has not answered after --call-timeout (a slow disk, a huge store) is answered with an
// error then, so one client's call never holds the server from the others.

import { nodeStorage } from "../adapters/node.js";
import { toolctxError } from "../errors.js";
import { READER } from "../protocol.js";

/** `toolctx://{filepath}`: how records were named before handles; save_context still gives it. */
const pointerOf = (filepath) => `toolctx://${filepath}`;

const text = (value) => ({ content: [{ type: "text", text: value }] });
const failure = (message) => ({ content: [{ type: "text", text: message }], isError: true });

const READ_ONLY = { readOnlyHint: true, openWorldHint: false };

/** The key of a retrieval call's `_meta` that holds the server's usage tally (toolctx/tools' `createUsage` shape). */
const USAGE_META = "toolctx/usage";

/** What a client shows for each tool. */

const SAVE_SCHEMA = {
  type: "object",
  properties: {
    toolName: { type: "string", minLength: 1, description: "the tool that produced the output" },
    args: { type: "object", description: "the tool's arguments" },
    result: { description: "the output: text or any JSON value" },
    taskId: { type: "integer" },
    queryId: { type: "string" },
    description: { type: "string", description: "a description (default: made from the tool name and arguments)" },
    toolCallId: { type: "string", description: "the model's tool-call id, stored in the record" },
  },
  required: ["toolName", "result"],
  additionalProperties: false,
};

export function registerMcpCommand(command, withGlobals, { storeDir, readStore, version }) {
  command("mcp", "serve the store to an agent over stdio (Model Context Protocol): read_context, search_context, grep_context, list_sessions")
    .option("--allow-save", "also offer save_context, which writes records into the store (off by default)")
    .option("--call-timeout <seconds>", "answer a call that has not finished by then with an error (default 10)", positiveNumber)
    .action(withGlobals((opts) => serve(storeDir(opts), opts, { readStore, version })));
}

/**
 * The whole store as toolctx/tools reads a manager: every record (readStore's pointers,
 * sessions included, oldest first), loaded and ranked through the root manager.
 * @param {{ root?: any, pointers: any[] }} store
 * @returns {any} the members of a ContextManager that toolctx/tools uses, not a whole one
 */
function storeView({ root, pointers }) {
  return {
    getAllPointers: () => pointers.slice(),
    loadContexts: (filepaths) => root.loadContexts(filepaths),
    // The root's line view and matcher; its one pointer at a filepath is not of every session.
    [READER]: {
      lines: (resultJson) => root[READER].lines(resultJson),
      matchingLines: (pattern, text) => root[READER].matchingLines(pattern, text),
    },
    selectRelevant: (query, options) => root.selectRelevant(query, { ...options, pointers }),
    // As a manager resolves one: the handle itself, or the short form of a lengthened one.
    resolveHandle(handle) {
      const wanted = handle.trim().toLowerCase();
      // A long handle extends the short one: either names the record.
      const found = pointers.filter((p) => p.handle.startsWith(wanted) || wanted.startsWith(p.handle));
      if (found.length > 1) {
        throw toolctxError("INVALID_ARGUMENT", `the handle "${handle}" names more than one record: use a long handle`);
      }
      return found[0]?.filepath;
    },
  };
}

/** A command-line number of seconds. */
function positiveNumber(text) {
  const value = Number(text);
  if (!(Number.isFinite(value) && value > 0)) throw toolctxError("INVALID_ARGUMENT", `--call-timeout takes a positive number of seconds, got ${text}`);
  return value;
}

/** `work`'s answer, or a failure saying that `name` took longer than `seconds`. */
async function bounded(work, name, seconds) {
  let timer;
  const late = new Promise((resolve) => {
    timer = setTimeout(() => resolve(failure(`${name}: no answer within ${seconds} s (the store is slow or large): try again, or narrow the call (a handle, a smaller limit)`)), seconds * 1000);
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** What a value of each JSON Schema type is called, and how to tell one. */
const TYPES = {
  string: { name: "a string", is: (v) => typeof v === "string" },
  integer: { name: "an integer", is: (v) => Number.isInteger(v) },
  object: { name: "an object", is: (v) => v !== null && typeof v === "object" && !Array.isArray(v) },
};

/** The first way `input` does not fit `schema` (an object schema's required and typed properties), or undefined. */
function misfit(schema, input) {
  if (input === null || typeof input !== "object" || Array.isArray(input)) return "the arguments must be an object";
  for (const key of schema.required ?? []) if (input[key] === undefined) return `${key} is required`;
  for (const [key, value] of Object.entries(input)) {
    const property = schema.properties[key];
    if (!property) return `unknown argument ${key}`;
    const type = TYPES[property.type];
    if (type && !type.is(value)) return `${key} must be ${type.name}`;
    if (property.minLength !== undefined && value.length < property.minLength) return `${key} must not be empty`;
  }
  return undefined;
}

async function serve(dir, opts, { readStore, version }) {
  const [{ Server }, { StdioServerTransport }, { CallToolRequestSchema, ListToolsRequestSchema }, { ContextManager }, tools] = await Promise.all([
    import("@modelcontextprotocol/sdk/server/index.js"),
    import("@modelcontextprotocol/sdk/server/stdio.js"),
    import("@modelcontextprotocol/sdk/types.js"),
    import("../index.node.js"),
    import("../tools.js"),
  ]);

  const usage = tools.createUsage();

  /** A retrieval tool's answer over the store as it is now. */
  async function retrieve(name, input) {
    const snapshot = await readStore(dir, { quiet: true });
    try {
      const tool = tools.contextTools(storeView(snapshot), { usage }).find((t) => t.name === name);
      const answer = await tool.run(input);
      // What this server's calls read back so far, in every integration's usage shape.
      return { ...(answer.error ? failure(answer.text) : text(answer.text)), _meta: { [USAGE_META]: usage.snapshot() } };
    } finally {
      snapshot.root.free();
    }
  }

  // One writer, opened by the first save: concurrent first calls share its in-flight open
  // (each opening its own would number their records from the same counter, and leak).
  let writing;
  const openWriter = () =>
    (writing ??= ContextManager.open({ contextDir: dir, fileSystem: nodeStorage(), persistThreshold: 0 }).catch((err) => {
      writing = undefined; // a failed open is tried again by the next call
      throw err;
    }));

  /** The tools that are not toolctx/tools': their definitions and what they do. */
  const extras = {
    list_sessions: {
      title: "List the store's sessions",
      description: "The sessions of the toolctx store, most recently active first: id, records, bytes, created and last activity.",
      inputSchema: { type: "object", properties: {}, additionalProperties: false },
      annotations: READ_ONLY,
      async run() {
        const sessions = await ContextManager.listSessions({ contextDir: dir, fileSystem: nodeStorage() });
        sessions.sort((a, b) => String(b.lastActivity).localeCompare(String(a.lastActivity)));
        if (sessions.length === 0) return { ...text("The store has no sessions."), structuredContent: { sessions } };
        const lines = sessions.map((s) => `${s.id}: ${s.records} records, ${s.bytes} bytes, last activity ${s.lastActivity}`);
        return { ...text(`${sessions.length} sessions:\n${lines.join("\n")}`), structuredContent: { sessions } };
      },
    },
  };
  if (opts.allowSave) {
    extras.save_context = {
      title: "Save a tool output",
      description: "Save a tool output into the toolctx store; returns its handle (ctx:…), which read_context reads.",
      inputSchema: SAVE_SCHEMA,
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
      async run({ toolName, args = {}, result, taskId, queryId, description, toolCallId }) {
        // Written at once (persistThreshold 0): this process's memory ends with the session.
        const writer = await openWriter();
        const filepath = await writer.saveContext(toolName, args, result, { taskId, queryId, description, toolCallId });
        const handle = writer.handleOf(filepath);
        return { ...text(`Saved as ${handle} (${filepath})`), structuredContent: { handle, pointer: pointerOf(filepath) } };
      },
    };
  }

  // What the tools say of themselves does not depend on the records: listed once.
  const listed = [
    ...tools.contextTools(storeView({ pointers: [] })).map(({ name, title, description, inputSchema }) => ({ name, title, description, inputSchema, annotations: READ_ONLY })),
    ...Object.entries(extras).map(([name, { title, description, inputSchema, annotations }]) => ({ name, title, description, inputSchema, annotations })),
  ];

  const server = new Server({ name: "toolctx", version }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: listed }));
  const call = async (name, input) => {
    try {
      if (tools.TOOL_NAMES.includes(name)) return await retrieve(name, input);
      const extra = extras[name];
      if (!extra) return failure(`No tool ${name}${name === "save_context" ? " (toolctx mcp --allow-save offers save_context)" : ""}.`);
      const wrong = misfit(extra.inputSchema, input);
      if (wrong) return failure(`${name}: ${wrong}.`);
      return await extra.run(input);
    } catch (error) {
      return failure(tools.errorText(name, error));
    }
  };
  const seconds = opts.callTimeout ?? 10;
  server.setRequestHandler(CallToolRequestSchema, ({ params: { name, arguments: input = {} } }) => bounded(call(name, input), name, seconds));

  const transport = new StdioServerTransport();
  transport.onclose = () => writing?.then((w) => w.close(), () => {});
  await server.connect(transport);
  process.stderr.write(`toolctx mcp: serving ${dir} over stdio${opts.allowSave ? " (save_context on)" : ""}\n`);
}
