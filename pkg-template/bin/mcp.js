// `toolctx mcp`: the store as a Model Context Protocol server over stdio, so an agent
// (Claude Desktop, Claude Code, any MCP client) can search and read what was saved.
// Built on @modelcontextprotocol/sdk (McpServer + StdioServerTransport), which esbuild
// bundles into bin/toolctx.js with the rest of the command line; it loads only for this
// command.
//
// Tools: search_context (the store's ranking, selectRelevant), read_context (a record's
// result by pointer, paged by lines and capped in characters), list_sessions, and, with
// --allow-save only, save_context. Reads open the store read-only and re-read it on
// every call, so records saved meanwhile by the agent are found; stdout carries only the
// protocol, diagnostics go to stderr.

import { z } from "zod";

import { nodeStorage } from "../adapters/node.js";

export const READ_LINES = 200; // read_context's default `limit`
export const READ_MAX_LINES = 2000;
export const READ_MAX_CHARS = 20_000; // the most characters one read returns
export const SEARCH_LIMIT = 10;
export const SEARCH_MAX = 50;

/** `toolctx://{filepath}`: how the model names a record. */
export const pointerOf = (filepath) => `toolctx://${filepath}`;

const text = (value) => ({ content: [{ type: "text", text: value }] });
const failure = (message) => ({ content: [{ type: "text", text: message }], isError: true });

/** A record's result as the lines the model pages through. */
function resultLines(record) {
  const { result } = record;
  const body = result === undefined ? "" : typeof result === "string" ? result : JSON.stringify(result, null, 2);
  return body.split("\n");
}

export function registerMcpCommand(command, withGlobals, { storeDir, readStore, version }) {
  command("mcp", "serve the store to an agent over stdio (Model Context Protocol): search_context, read_context, list_sessions")
    .option("--allow-save", "also offer save_context, which writes records into the store (off by default)")
    .action(withGlobals((opts) => serve(storeDir(opts), opts, { readStore, version })));
}

async function serve(dir, opts, { readStore, version }) {
  const [{ McpServer }, { StdioServerTransport }, { ContextManager }] = await Promise.all([
    import("@modelcontextprotocol/sdk/server/mcp.js"),
    import("@modelcontextprotocol/sdk/server/stdio.js"),
    import("../index.node.js"),
  ]);
  const server = new McpServer({ name: "toolctx", version });
  const store = () => readStore(dir, { quiet: true });

  /** The pointer the model gave: `toolctx://…`, an absolute filepath, a path relative to the store, or a file name. */
  function find(pointers, given) {
    const raw = given.startsWith("toolctx://") ? given.slice("toolctx://".length) : given;
    return (
      pointers.find((p) => p.filepath === raw || p.path === raw) ??
      (raw.includes("/") ? undefined : pointers.find((p) => p.filename === raw))
    );
  }

  server.registerTool(
    "search_context",
    {
      title: "Search saved tool outputs",
      description:
        "Rank the tool outputs saved in the toolctx store against a query (BM25 over tool names, arguments and content). " +
        "Returns the best records with their toolctx:// pointer, tool, description and size; read one with read_context.",
      inputSchema: {
        query: z.string().min(1).describe("what you are looking for: words from file paths, tool arguments, identifiers"),
        limit: z.number().int().min(1).max(SEARCH_MAX).optional().describe(`how many records at most (default ${SEARCH_LIMIT})`),
        session: z.string().optional().describe("only this session's records (see list_sessions)"),
      },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async ({ query, limit = SEARCH_LIMIT, session }) => {
      const { root, pointers } = await store();
      const scoped = session === undefined ? pointers : pointers.filter((p) => p.session === session);
      const scored = await root.selectRelevant(query, { pointers: scoped, limit, fallback: "none" });
      const results = scored.map((c) => ({
        pointer: pointerOf(c.filepath),
        toolName: c.pointer.toolName,
        description: c.pointer.toolDescription,
        bytes: c.pointer.size ?? null,
        score: Number(c.score.toFixed(3)),
        matched: c.matched,
      }));
      if (results.length === 0) return text(`No saved tool output matches "${query}" (${scoped.length} records searched).`);
      const lines = results.map((r, i) => `${i + 1}. ${r.pointer}\n   ${r.toolName}: ${r.description} (${r.bytes ?? "?"} bytes; matched ${r.matched.join(", ")})`);
      return {
        ...text(`${results.length} of ${scoped.length} records match "${query}", best first:\n${lines.join("\n")}`),
        structuredContent: { results },
      };
    },
  );

  server.registerTool(
    "read_context",
    {
      title: "Read a saved tool output",
      description:
        `Read a saved tool output by its toolctx:// pointer (or its file path), ${READ_LINES} lines at a time by default, ` +
        `at most ${READ_MAX_LINES} lines and ${READ_MAX_CHARS} characters per call. Page on with offset.`,
      inputSchema: {
        pointer: z.string().min(1).describe("the record: toolctx://… as search_context gives it, or its file path"),
        offset: z.number().int().min(0).optional().describe("the first line to return, from 0 (default 0)"),
        limit: z.number().int().min(1).max(READ_MAX_LINES).optional().describe(`how many lines (default ${READ_LINES})`),
      },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async ({ pointer, offset = 0, limit = READ_LINES }) => {
      const { root, pointers } = await store();
      const found = find(pointers, pointer);
      if (!found) return failure(`No record ${pointer} in the store; search_context gives the pointers.`);
      const [record] = await root.loadContexts([found.filepath]);
      if (!record) return failure(`The record ${pointer} could not be read (removed, or not a valid record).`);
      const lines = resultLines(record);
      if (offset >= lines.length && !(offset === 0 && lines.length === 1)) {
        return failure(`offset ${offset} is past the end: the result has ${lines.length} lines.`);
      }
      const shown = [];
      let chars = 0;
      let cut = "";
      for (let i = offset; i < Math.min(lines.length, offset + limit); i++) {
        const line = lines[i];
        if (chars + line.length + 1 > READ_MAX_CHARS) {
          if (shown.length === 0) {
            // One line longer than a read: its start, and how much was left out.
            shown.push(line.slice(0, READ_MAX_CHARS));
            cut = `\n[line ${i + 1} cut at ${READ_MAX_CHARS} of its ${line.length} characters]`;
          }
          break;
        }
        shown.push(line);
        chars += line.length + 1;
      }
      const end = offset + shown.length;
      const header = `${pointerOf(found.filepath)}: ${record.toolName}: ${record.toolDescription}\nlines ${offset + 1}-${end} of ${lines.length}`;
      const more = end < lines.length ? `\n[${lines.length - end} more lines: read_context with offset=${end}]` : "";
      return text(`${header}\n${shown.join("\n")}${cut}${more}`);
    },
  );

  server.registerTool(
    "list_sessions",
    {
      title: "List the store's sessions",
      description: "The sessions of the toolctx store, most recently active first: id, records, bytes, created and last activity.",
      inputSchema: {},
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async () => {
      const sessions = await ContextManager.listSessions({ contextDir: dir, fileSystem: nodeStorage() });
      sessions.sort((a, b) => String(b.lastActivity).localeCompare(String(a.lastActivity)));
      if (sessions.length === 0) return { ...text("The store has no sessions."), structuredContent: { sessions } };
      const lines = sessions.map((s) => `${s.id}: ${s.records} records, ${s.bytes} bytes, last activity ${s.lastActivity}`);
      return { ...text(`${sessions.length} sessions:\n${lines.join("\n")}`), structuredContent: { sessions } };
    },
  );

  // One writer, opened by the first save: concurrent first calls share its in-flight open
  // (each opening its own would number their records from the same counter, and leak).
  let writing;
  const openWriter = () =>
    (writing ??= ContextManager.open({ contextDir: dir, fileSystem: nodeStorage(), persistThreshold: 0 }).catch((err) => {
      writing = undefined; // a failed open is tried again by the next call
      throw err;
    }));
  if (opts.allowSave) {
    server.registerTool(
      "save_context",
      {
        title: "Save a tool output",
        description: "Save a tool output into the toolctx store; returns its toolctx:// pointer.",
        inputSchema: {
          toolName: z.string().min(1).describe("the tool that produced the output"),
          args: z.record(z.string(), z.unknown()).optional().describe("the tool's arguments"),
          result: z.unknown().describe("the output: text or any JSON value"),
          taskId: z.number().int().optional(),
          queryId: z.string().optional(),
          description: z.string().optional().describe("a description (default: made from the tool name and arguments)"),
          toolCallId: z.string().optional().describe("the model's tool-call id, stored in the record"),
        },
        annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
      },
      async ({ toolName, args = {}, result, taskId, queryId, description, toolCallId }) => {
        // Written at once (persistThreshold 0): this process's memory ends with the session.
        const filepath = await (await openWriter()).saveContext(toolName, args, result, { taskId, queryId, description, toolCallId });
        return { ...text(`Saved as ${pointerOf(filepath)}`), structuredContent: { pointer: pointerOf(filepath) } };
      },
    );
  }

  const transport = new StdioServerTransport();
  transport.onclose = () => writing?.then((w) => w.close(), () => {});
  await server.connect(transport);
  process.stderr.write(`toolctx mcp: serving ${dir} over stdio${opts.allowSave ? " (save_context on)" : ""}\n`);
}
