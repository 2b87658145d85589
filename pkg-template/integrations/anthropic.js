// toolctx/anthropic: Anthropic's memory tool over any toolctx storage, and tool-result
// clearing after Anthropic's context editing, on the client.
//
// - `memoryToolHandlers({storage, dir})` implements the six commands of the memory tool
//   (`memory_20250818`: view, create, str_replace, insert, delete, rename under
//   /memories) over a StorageHost (node, Deno, Bun, OPFS, IndexedDB, memory, your own).
//   Pass the result to the SDK's `betaMemoryTool(handlers)`. Texts and errors are those
//   of the SDK's own filesystem tool (`BetaLocalFilesystemMemoryTool`), which works only
//   in Node; this file imports nothing from Node, so it runs in browsers and workers too.
// - `clearToolUses(messages, options)` does what `clear_tool_uses_20250919` does on the
//   server (re-exported from the main entry, where it lives with the window optimiser);
//   with a manager, each placeholder names the handle of the saved result.
// - `contextTools(manager, options)`: read_context, search_context and grep_context of
//   toolctx/tools in the SDK's tool-runner shape (what its `betaTool` makes), so the model
//   reads a cleared result back by its handle.
// - `withToolContext(tools, manager, options)`: the tools of a tool runner
//   (`client.beta.messages.toolRunner({tools})`), each runnable custom tool (betaTool,
//   betaZodTool, your own `{name, input_schema, run, parse}`) wrapped as the other
//   integrations wrap theirs: its output is saved (a JSON text as the JSON value it holds,
//   so read_context, grep_context, `#L` and `#$` see its fields and elements), a large one
//   reaches the model as the compact text naming its handle, and the retrieval tools are
//   added. `usageOf(tools)` reads the tally.
//
// The Anthropic SDK is an optional peer dependency: nothing here imports it. toolctx/tools
// imports only the package's errors.js (it reaches the core through the manager it is
// given), so this file loads wherever it is served, an import map or not.

import { toolctxError } from "../errors.js";
import { checkManager, countedDefinitions, errorText, isForTheModel, jsonSafe, modelError, resolveAsText, usageOfTools, wrapTools } from "./offload.js";

import { contentText, savedValue } from "../clear-tool-uses.js";

const MODULE = "toolctx/anthropic";

const MEMORIES = "/memories";
const MAX_LINES = 999999;
const LINE_NUMBER_WIDTH = String(MAX_LINES).length;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

// -- paths -------------------------------------------------------------------------------

/** A segment that is, or decodes to, something that could leave its folder. */
function unsafeSegment(segment) {
  if (segment === "..") return true;
  let decoded = segment;
  for (let i = 0; i < 3 && /%[0-9a-f]{2}/i.test(decoded); i++) {
    try {
      decoded = decodeURIComponent(decoded);
    } catch {
      return true; // a malformed escape: nobody means that as a file name
    }
  }
  return decoded !== segment && (decoded.split(/[/\\]/).includes("..") || /[/\\\0]/.test(decoded));
}

/**
 * The segments under /memories of a memory path, or an error with the protocol's text:
 * the path must start with /memories, and no `..` (plain or percent-encoded),
 * backslash or NUL may appear in it. Empty and `.` segments are dropped.
 */
export function memorySegments(memoryPath) {
  if (typeof memoryPath !== "string" || (memoryPath !== MEMORIES && !memoryPath.startsWith(`${MEMORIES}/`))) {
    throw toolctxError("OUTSIDE_STORE", `Path must start with /memories, got: ${memoryPath}`);
  }
  const segments = memoryPath.slice(MEMORIES.length).split("/").filter((s) => s !== "" && s !== ".");
  if (/[\\\0]/.test(memoryPath) || segments.some(unsafeSegment)) {
    throw toolctxError("OUTSIDE_STORE", `Path ${memoryPath} would escape /memories directory`);
  }
  return segments;
}

function formatFileSize(bytes) {
  if (bytes === 0) return "0B";
  const sizes = ["B", "K", "M", "G"];
  const i = Math.min(sizes.length - 1, Math.floor(Math.log(bytes) / Math.log(1024)));
  const size = bytes / 1024 ** i;
  return (size % 1 === 0 ? size.toString() : size.toFixed(1)) + sizes[i];
}

const numbered = (lines, start) => lines.map((line, i) => `${String(i + start).padStart(LINE_NUMBER_WIDTH, " ")}\t${line}`);

// -- the memory tool ---------------------------------------------------------------------

/**
 * Handlers for the six commands of Anthropic's memory tool over a StorageHost; give them
 * to the SDK's `betaMemoryTool`. Memory files live under `{dir}/memories/`.
 */
export function memoryToolHandlers(options = {}) {
  const { storage } = options;
  for (const method of ["read", "write", "remove", "list"]) {
    if (typeof storage?.[method] !== "function") {
      throw toolctxError("INVALID_ARGUMENT", `memoryToolHandlers: options.storage must be a StorageHost (it has no ${method}())`);
    }
  }
  const dir = options.dir ?? "memory";
  if (typeof dir !== "string") throw toolctxError("INVALID_ARGUMENT", "memoryToolHandlers: options.dir must be a string");
  const root = dir === "" ? "memories" : `${dir.replace(/\/+$/, "")}/memories`;
  const lockName = dir === "" ? ".memories.lock" : `${dir.replace(/\/+$/, "")}/.memories.lock`;

  const storagePath = (segments) => (segments.length ? `${root}/${segments.join("/")}` : root);
  const memoryPathOf = (segments) => (segments.length ? `${MEMORIES}/${segments.join("/")}` : MEMORIES);

  /**
   * One edit at a time (read-modify-write): the host's lock where it has one, else (no
   * lock, `guarantees.locks === false`, or a lock that rejects UNSUPPORTED, as
   * toolctx/unstorage's does) only the in-process queue.
   */
  let queue = Promise.resolve();
  function exclusive(fn) {
    const run = () => {
      if (typeof storage.lock !== "function" || storage.guarantees?.locks === false) return fn();
      let started = false;
      const body = (...args) => ((started = true), fn(...args));
      return storage.lock(lockName, body).catch((err) => {
        if (!started && err?.code === "UNSUPPORTED") return fn();
        throw err;
      });
    };
    const result = queue.then(run, run);
    queue = result.catch(() => {});
    return result;
  }

  /** "dir", "file" (or a link: the host lists a link without the folder slash) or undefined, from the parent's listing. */
  async function kindOf(segments) {
    if (segments.length === 0) return "dir";
    const names = await storage.list(storagePath(segments.slice(0, -1)));
    const name = segments.at(-1);
    if (names.includes(`${name}/`)) return "dir";
    if (names.includes(name)) return "file";
    return undefined;
  }

  /**
   * The kind of the path's target, after checking that every folder on the way is a real
   * folder: a name listed as a file on the way is a file or a symbolic link, which is never followed.
   */
  async function resolve(memoryPath) {
    const segments = memorySegments(memoryPath);
    for (let i = 1; i < segments.length; i++) {
      const kind = await kindOf(segments.slice(0, i));
      if (kind === undefined) return { segments, kind: undefined };
      if (kind === "file") {
        await readText(segments.slice(0, i), memoryPath); // a link fails here with the symlink error
        return { segments, kind: undefined, blockedBy: segments.slice(0, i) };
      }
    }
    return { segments, kind: await kindOf(segments) };
  }

  /** A file's text; a link (refused by the host: O_NOFOLLOW, or `root`) is the symlink error. */
  async function readText(segments, memoryPath) {
    let data;
    try {
      data = await storage.read(storagePath(segments), { root });
    } catch (err) {
      if (err?.code === "ELOOP" || err?.code === "OUTSIDE_STORE" || err?.code === "EMLINK") {
        throw toolctxError("OUTSIDE_STORE", "Path would escape /memories directory via symlink", { cause: err });
      }
      throw err;
    }
    if (data === undefined) {
      throw toolctxError("NOT_FOUND", `The file ${memoryPath} no longer exists (may have been deleted or renamed concurrently).`);
    }
    return typeof data === "string" ? data : decoder.decode(data);
  }

  /** Every file below a folder, depth first: `[{segments, bytes}]` (links and unreadable entries skipped). */
  async function walk(segments, depth, out) {
    for (const name of (await storage.list(storagePath(segments))).sort()) {
      const isDir = name.endsWith("/");
      const child = [...segments, isDir ? name.slice(0, -1) : name];
      if (isDir) {
        const entry = { segments: child, depth, dir: true, bytes: 0 };
        out.push(entry);
        const below = out.length;
        await walk(child, depth + 1, out);
        for (const e of out.slice(below)) if (!e.dir) entry.bytes += e.bytes;
      } else {
        try {
          out.push({ segments: child, depth, dir: false, bytes: encoder.encode(await readText(child, "")).length });
        } catch (err) {
          // a link, or a file removed meanwhile: not listed; any other failure (a timeout, EACCES) is the caller's
          if (err?.code !== "OUTSIDE_STORE" && err?.code !== "NOT_FOUND") throw err;
        }
      }
    }
    return out;
  }

  async function editableText(command) {
    const { segments, kind } = await resolve(command.path);
    if (kind === undefined) throw toolctxError("NOT_FOUND", `The path ${command.path} does not exist. Please provide a valid path.`);
    if (kind !== "file") throw toolctxError("INVALID_ARGUMENT", `The path ${command.path} is not a file.`);
    return { segments, content: await readText(segments, command.path) };
  }

  async function removeTree(segments) {
    for (const name of await storage.list(storagePath(segments))) {
      if (name.endsWith("/")) await removeTree([...segments, name.slice(0, -1)]);
      else await storage.remove(storagePath([...segments, name]));
    }
    await storage.removeDir?.(storagePath(segments));
  }

  return {
    async view(command) {
      const { segments, kind } = await resolve(command.path);
      if (kind === undefined) throw toolctxError("NOT_FOUND", `The path ${command.path} does not exist. Please provide a valid path.`);
      if (kind === "dir") {
        const entries = await walk(segments, 1, []);
        const shown = entries.filter((e) => e.depth <= 2 && !e.segments.slice(segments.length).some((s) => s.startsWith(".") || s === "node_modules"));
        const total = entries.filter((e) => !e.dir).reduce((n, e) => n + e.bytes, 0);
        const base = command.path.replace(/\/+$/, "") || MEMORIES;
        const lines = [
          `${formatFileSize(total)}\t${command.path}`,
          ...shown.map((e) => `${formatFileSize(e.bytes)}\t${base}/${e.segments.slice(segments.length).join("/")}${e.dir ? "/" : ""}`),
        ];
        return `Here're the files and directories up to 2 levels deep in ${command.path}, excluding hidden items and node_modules:\n${lines.join("\n")}`;
      }
      const lines = (await readText(segments, command.path)).split("\n");
      if (lines.length > MAX_LINES) {
        throw toolctxError("INVALID_ARGUMENT", `File ${command.path} has too many lines (${lines.length}). Maximum is ${MAX_LINES.toLocaleString()} lines.`);
      }
      let shownLines = lines;
      let start = 1;
      if (Array.isArray(command.view_range) && command.view_range.length === 2) {
        const first = Math.max(1, command.view_range[0]) - 1;
        const end = command.view_range[1] === -1 ? lines.length : command.view_range[1];
        shownLines = lines.slice(first, end);
        start = first + 1;
      }
      return `Here's the content of ${command.path} with line numbers:\n${numbered(shownLines, start).join("\n")}`;
    },

    create(command) {
      return exclusive(async () => {
        const { segments, kind, blockedBy } = await resolve(command.path);
        if (kind !== undefined) throw toolctxError("EEXIST", `File ${command.path} already exists`);
        if (blockedBy) throw toolctxError("INVALID_ARGUMENT", `The path ${memoryPathOf(blockedBy)} is not a directory`);
        try {
          await storage.write(storagePath(segments), String(command.file_text ?? ""), { exclusive: true });
        } catch (err) {
          if (err?.code === "EEXIST") throw toolctxError("EEXIST", `File ${command.path} already exists`, { cause: err });
          throw err;
        }
        return `File created successfully at: ${command.path}`;
      });
    },

    str_replace(command) {
      return exclusive(async () => {
        const { segments, content } = await editableText(command);
        const oldStr = String(command.old_str);
        const newStr = String(command.new_str ?? "");
        const starts = [];
        for (let at = oldStr === "" ? -1 : content.indexOf(oldStr); at !== -1; at = content.indexOf(oldStr, at + 1)) starts.push(at);
        const lineOf = (index) => content.slice(0, index).split("\n").length;
        if (starts.length === 0) {
          throw toolctxError("INVALID_ARGUMENT", `No replacement was performed, old_str \`${oldStr}\` did not appear verbatim in ${command.path}.`);
        }
        if (starts.length > 1) {
          const lines = [...new Set(starts.map(lineOf))];
          throw toolctxError("INVALID_ARGUMENT", `No replacement was performed. Multiple occurrences of old_str \`${oldStr}\` in lines: ${lines.join(", ")}. Please ensure it is unique`);
        }
        const next = content.slice(0, starts[0]) + newStr + content.slice(starts[0] + oldStr.length);
        await storage.write(storagePath(segments), next);
        const newLines = next.split("\n");
        const changed = lineOf(starts[0]) - 1;
        const from = Math.max(0, changed - 2);
        const to = Math.min(newLines.length, changed + newStr.split("\n").length + 2);
        return `The memory file has been edited. Here is the snippet showing the change (with line numbers):\n${numbered(newLines.slice(from, to), from + 1).join("\n")}`;
      });
    },

    insert(command) {
      return exclusive(async () => {
        const { segments, content } = await editableText(command);
        const lines = content.split("\n");
        const at = command.insert_line;
        if (!Number.isInteger(at) || at < 0 || at > lines.length) {
          throw toolctxError("INVALID_ARGUMENT", `Invalid \`insert_line\` parameter: ${at}. It should be within the range of lines of the file: [0, ${lines.length}]`);
        }
        lines.splice(at, 0, String(command.insert_text ?? "").replace(/\n$/, ""));
        await storage.write(storagePath(segments), lines.join("\n"));
        return `The file ${command.path} has been edited.`;
      });
    },

    delete(command) {
      return exclusive(async () => {
        const { segments, kind } = await resolve(command.path);
        if (segments.length === 0) throw toolctxError("INVALID_ARGUMENT", "Cannot delete the /memories directory itself");
        if (kind === undefined) throw toolctxError("NOT_FOUND", `The path ${command.path} does not exist`);
        if (kind === "dir") await removeTree(segments);
        else {
          await readText(segments, command.path); // a link is refused, never removed through
          await storage.remove(storagePath(segments));
        }
        return `Successfully deleted ${command.path}`;
      });
    },

    rename(command) {
      return exclusive(async () => {
        const from = await resolve(command.old_path);
        const to = await resolve(command.new_path);
        if (from.segments.length === 0) throw toolctxError("INVALID_ARGUMENT", "Cannot rename the /memories directory itself");
        if (to.kind !== undefined || to.segments.length === 0) throw toolctxError("EEXIST", `The destination ${command.new_path} already exists`);
        if (from.kind === undefined) throw toolctxError("NOT_FOUND", `The path ${command.old_path} does not exist`);
        if (to.blockedBy) throw toolctxError("INVALID_ARGUMENT", `The path ${memoryPathOf(to.blockedBy)} is not a directory`);
        if (from.kind === "dir" && to.segments.length > from.segments.length && from.segments.every((s, i) => to.segments[i] === s)) {
          throw toolctxError("INVALID_ARGUMENT", `Cannot move ${command.old_path} into itself`);
        }
        // The host has no rename: copy (each new file created exclusively and whole), then
        // remove the old. A crash in between leaves both copies, never neither.
        const files = from.kind === "dir" ? (await walk(from.segments, 1, [])).filter((e) => !e.dir).map((e) => e.segments) : [from.segments];
        const target = (segments) => [...to.segments, ...segments.slice(from.segments.length)];
        for (const segments of files) {
          try {
            await storage.write(storagePath(target(segments)), await readText(segments, memoryPathOf(segments)), { exclusive: true });
          } catch (err) {
            if (err?.code === "EEXIST") throw toolctxError("EEXIST", `The destination ${command.new_path} already exists`, { cause: err });
            throw err;
          }
        }
        if (from.kind === "dir") await removeTree(from.segments);
        else await storage.remove(storagePath(from.segments));
        return `Successfully renamed ${command.old_path} to ${command.new_path}`;
      });
    },
  };
}

// -- the tools that read saved outputs back ------------------------------------------------

/**
 * read_context, search_context and grep_context over `manager`, each as the SDK's
 * `betaTool` makes a tool: `{type: "custom", name, description, input_schema, run, parse}`,
 * for `client.beta.messages.toolRunner({tools})`. Names, descriptions and JSON Schemas
 * are toolctx/tools' own; `run` resolves to the text the model reads, or rejects with the
 * toolctx error, which the runner sends back as `Error: <message>` with `is_error`.
 * `options`: toolctx/tools' limits, and `usage` to count what the tools read back.
 */
export function contextTools(manager, options = {}) {
  checkManager(manager, MODULE);
  return countedDefinitions(manager, options).map((tool) => ({
    type: "custom",
    name: tool.name,
    description: tool.description,
    input_schema: tool.inputSchema,
    run: async (input) => {
      const { text, error } = await tool.run(input);
      if (error) throw modelError(text, error);
      return text;
    },
    parse: (input) => input,
  }));
}

// -- wrapping the tool runner's tools -------------------------------------------------------

/** A tool the runner runs on the client and this module wraps: a custom tool with `run` (not the memory tool, not a server tool). */
const isRunnableCustom = (t) => typeof t?.run === "function" && typeof t.name === "string" && (t.type === undefined || t.type === "custom");

function wrapRunnable(original, manager, offloader) {
  const run = async (args, context) => {
    let input = args;
    if (offloader.resolves(original.name)) {
      try {
        input = await resolveAsText(args, manager); // after parse: the tool's schema has validated the model's input
      } catch (error) {
        throw isForTheModel(error) ? modelError(errorText(original.name, error), error) : error;
      }
    }
    const content = await original.run(input, context);
    const call = { toolName: original.name, input: args, toolCallId: context?.toolUse?.id ?? context?.toolUseBlock?.id, context };
    const value = savedValue(content);
    const shown = await offloader.offload(call, value, contentText(content));
    return shown === value || shown === jsonSafe(value) ? content : shown;
  };
  return { ...original, run };
}

/**
 * `tools` (a tool runner's `tools`) with every runnable custom tool's output saved in
 * `manager` and the retrieval tools added (unless `retrievalTools: false`). The memory
 * tool, server tools and toolsets pass unchanged.
 */
export function withToolContext(tools, manager, options = {}) {
  const wrap = (t, offloader) => wrapRunnable(t, manager, offloader);
  return wrapTools(tools, manager, options, { module: MODULE, canWrap: isRunnableCustom, wrap, contextTools, nameOf: (t) => t?.name });
}

/**
 * What the tools of `tools` (withToolContext's result) kept out of the prompt, read back
 * and added. `options.modelCalls`: how many requests the runner sent.
 */
export function usageOf(tools, options) {
  return usageOfTools(tools, MODULE, options);
}

export { clearToolUses, messageTokens } from "../clear-tool-uses.js";
