// `toolctx summary`, also plain `toolctx`: the store at a glance (records, size and tokens,
// sessions, tools, tasks, conversations, the most recent records).

import { existsSync } from "node:fs";

import { nodeStorage } from "../../adapters/node.js";
import { existingStore, groupBy, pointerJson, readStore, sum, tokens } from "../store.js";
import { absoluteTime, count, fields, humanBytes, out, plural, print, printJson, relativeTime, shorten } from "../ui.js";

export async function summaryCommand(opts) {
  const dir = existingStore(opts);
  const { sessions, pointers } = await readStore(dir);
  const bytes = sum(pointers);
  const byTool = groupBy(pointers, (p) => p.toolName);
  const tasks = [...new Set(pointers.map((p) => p.taskId).filter((t) => t !== undefined))].sort((a, b) => a - b);
  const outside = pointers.filter((p) => p.session === null).length;
  const recent = pointers.slice(-5).reverse();
  const conversations = await countConversations(dir);
  if (opts.json) {
    return printJson({
      dir,
      records: pointers.length,
      bytes,
      estimatedTokens: tokens(bytes),
      outsideSessions: outside,
      sessions: sessions.length,
      tools: byTool.map((g) => ({ toolName: g.key, records: g.records, bytes: g.bytes })),
      tasks,
      conversations,
      oldest: pointers[0]?.timestamp ?? null,
      newest: pointers.at(-1)?.timestamp ?? null,
      recent: recent.map(pointerJson),
    });
  }
  const lines = [
    out.bold(`toolctx store ${dir}`),
    "",
    fields([
      ["Records", `${count(pointers.length)} (${humanBytes(bytes)}, ~${count(tokens(bytes))} tokens)`],
      ["Sessions", `${count(sessions.length)}${sessions.length ? ` (${plural(pointers.length - outside, "record")})` : ""}; ${plural(outside, "record")} outside sessions`],
      ["Tools", byTool.length ? byTool.slice(0, 6).map((g) => `${g.key} ${g.records}`).join(", ") + (byTool.length > 6 ? `, +${byTool.length - 6} more` : "") : "-"],
      ["Tasks", tasks.length ? shorten(tasks.join(", "), 60) : "-"],
      ...(conversations ? [["Conversations", `${count(conversations)} (run 'toolctx conversations')`]] : []),
      ["Oldest", pointers.length ? `${absoluteTime(pointers[0].timestamp)} (${relativeTime(pointers[0].timestamp)})` : "-"],
      ["Newest", pointers.length ? `${absoluteTime(pointers.at(-1).timestamp)} (${relativeTime(pointers.at(-1).timestamp)})` : "-"],
    ]),
  ];
  if (recent.length) {
    lines.push("", out.bold("Recent records:"));
    for (const p of recent) lines.push(`  ${p.handle} ${out.cyan(`[${p.toolName}]`)} ${shorten(p.toolDescription, 60)} ${out.dim(relativeTime(p.timestamp))}`);
    lines.push("", out.dim("Run 'toolctx ls' to list every record, 'toolctx show <handle>' to read one."));
  }
  print(...lines);
}

/** Conversations of the store (0 when it has none, or this build has no ConversationStore). */
async function countConversations(dir) {
  if (!existsSync(`${dir}/conversations`)) return 0;
  const { ConversationStore } = await import("../../index.node.js");
  if (typeof ConversationStore?.open !== "function") return 0;
  const store = await ConversationStore.open({ contextDir: dir, storage: nodeStorage() });
  return (await store.listConversations()).length;
}
