// A plain-JS implementation of the seed's context-window algorithm (Cline's
// ContextManager: FileReadOptimizer, TruncationCalculator, ContextUpdateApplicator,
// OptimizationMetrics), extended to the same inputs toolctx recognises (structured
// tool_use / tool_result pairs, write-tool inputs), so both do the same work. The
// benchmark baseline for bench/window.mjs; not part of the package.

const NOTICE =
  "[[NOTE] This file read has been removed to save space in the context window. " +
  "Refer to the latest file read for the most up to date version of this file.]";
const TRUNCATION_NOTICE =
  "[NOTE] Some previous conversation history with the user has been removed to maintain optimal context window " +
  "length. The initial user task has been retained for continuity, while intermediate conversation history has been " +
  "removed. Keep this in mind as you continue assisting the user. Pay special attention to the user's latest messages.";
const READ = new Set(["read_file", "readFile", "Read", "view_file", "read"]);
const WRITE = new Set(["write_to_file", "writeFile", "write_file", "Write", "replace_in_file", "Edit", "create_file"]);
const TAG_RE = /<(final_file_content|file_content) path="([^"\n]+)"[^>]*>([\s\S]*?)<\/\1>/g;
const HEADER_RE = /^\[([^\s]+) for '([^'\n]+)'\] Result:/;

function textOf(content) {
  if (typeof content === "string") return content;
  if (Array.isArray(content) && content.every((b) => b.type === "text")) return content.map((b) => b.text).join("\n");
  return undefined;
}

/** path -> [{message, block, part: "whole"|"input"|{start, end}}] in order. */
function findFileReads(messages) {
  const readsById = new Map();
  for (const m of messages) {
    if (m.role === "user" || !Array.isArray(m.content)) continue;
    for (const b of m.content) {
      if (b.type === "tool_use" && READ.has(b.name) && typeof (b.input?.path ?? b.input?.file_path) === "string") {
        readsById.set(b.id, b.input.path ?? b.input.file_path);
      }
    }
  }
  const reads = new Map();
  const found = (path, message, block, part) => {
    if (!reads.has(path)) reads.set(path, []);
    reads.get(path).push({ message, block, part });
  };
  const scanTags = (text, i, b) => {
    for (const match of text.matchAll(TAG_RE)) {
      const start = match.index + match[0].length - match[3].length - `</${match[1]}>`.length;
      found(match[2], i, b, { start, end: start + match[3].length });
    }
  };
  for (let i = 2; i < messages.length; i++) {
    const m = messages[i];
    const blocks = typeof m.content === "string" ? [{ type: "text", text: m.content }] : m.content;
    if (m.role !== "user") {
      blocks.forEach((b, j) => {
        if (b.type === "tool_use" && WRITE.has(b.name) && typeof b.input?.content === "string") {
          found(b.input.path ?? b.input.file_path, i, j, "input");
        }
      });
      continue;
    }
    for (let j = 0; j < blocks.length; j++) {
      const b = blocks[j];
      if (b.type === "text") {
        const header = HEADER_RE.exec(b.text);
        if (header && READ.has(header[1])) {
          const rest = b.text.slice(header[0].length);
          if (rest.trim()) found(header[2], i, j, { start: header[0].length + (rest.startsWith("\n") ? 1 : 0), end: b.text.length });
          else if (blocks[j + 1]?.type === "text") found(header[2], i, ++j, "whole");
        } else scanTags(b.text, i, j);
      } else if (b.type === "tool_result") {
        if (readsById.has(b.tool_use_id)) {
          if (!b.is_error) found(readsById.get(b.tool_use_id), i, j, "whole");
        } else {
          const text = textOf(b.content);
          if (text !== undefined) scanTags(text, i, j);
        }
      }
    }
  }
  return reads;
}

function chars(messages) {
  let n = 0;
  for (const m of messages) {
    if (typeof m.content === "string") n += m.content.length;
    else {
      for (const b of m.content) {
        if (b.type === "text") n += b.text.length;
        else if (b.type === "tool_use") n += JSON.stringify(b.input).length;
        else if (b.type === "tool_result") n += textOf(b.content)?.length ?? JSON.stringify(b.content ?? "").length;
        else n += JSON.stringify(b).length;
      }
    }
  }
  return n;
}

/** The seed's getNextTruncationRange (keep the first pair, end on an assistant message). */
function truncationRange(messages, keep) {
  const startOfRest = 2;
  const rest = messages.length - startOfRest;
  const remove = keep === "none" ? rest : keep === "lastTwo" ? rest - 2 : keep === "half" ? Math.floor(rest / 4) * 2
    : Math.floor((rest * 3) / 4 / 2) * 2;
  let end = startOfRest + remove - 1;
  if (messages[end].role !== "assistant") end -= 1;
  return [2, end];
}

export function seedOptimize(messages, { minSavings = 0.3, strategy = "half" } = {}) {
  const reads = findFileReads(messages);
  const out = messages.slice();
  const cloned = new Set();
  const edit = (i) => {
    if (!cloned.has(i)) {
      out[i] = structuredClone(messages[i]);
      cloned.add(i);
    }
    return out[i];
  };
  // A block as {get, set} over the text it holds (a string content is block 0).
  const textBlock = (m, j) => {
    if (typeof m.content === "string") return { get: () => m.content, set: (t) => (m.content = t) };
    const b = m.content[j];
    if (b.type === "text") return { get: () => b.text, set: (t) => (b.text = t) };
    return { get: () => textOf(b.content), set: (t) => (b.content = t) };
  };
  const spans = new Map();
  for (const occurrences of reads.values()) {
    for (const o of occurrences.slice(0, -1)) {
      const m = edit(o.message);
      if (o.part === "input") m.content[o.block].input.content = NOTICE;
      else if (o.part === "whole") textBlock(m, o.block).set(NOTICE);
      else {
        const key = `${o.message}:${o.block}`;
        if (!spans.has(key)) spans.set(key, []);
        spans.get(key).push(o.part);
      }
    }
  }
  for (const [key, list] of spans) {
    const [i, j] = key.split(":").map(Number);
    const block = textBlock(out[i], j);
    const text = block.get();
    let next = "";
    let at = 0;
    for (const { start, end } of list.sort((x, y) => x.start - y.start)) {
      next += text.slice(at, start) + NOTICE;
      at = end;
    }
    block.set(next + text.slice(at));
  }
  const before = chars(messages);
  const after = chars(out);
  if ((before - after) / before >= minSavings) return { messages: out, truncated: null };
  const [start, end] = truncationRange(out, strategy);
  const first = edit(1);
  if (typeof first.content === "string") first.content = [{ type: "text", text: first.content }];
  first.content.push({ type: "text", text: TRUNCATION_NOTICE });
  out.splice(start, end - start + 1);
  return { messages: out, truncated: [start, end] };
}
