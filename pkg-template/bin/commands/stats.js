// `toolctx stats`: size and estimated tokens by tool, task and session; the largest records.

import { existingStore, groupBy, pointerJson, readStore, sum, tokens } from "../store.js";
import { count, fields, humanBytes, out, print, printJson, shorten, table } from "../ui.js";

export async function statsCommand(opts) {
  const dir = existingStore(opts);
  const { pointers, sessions } = await readStore(dir);
  const bytes = sum(pointers);
  const byTool = groupBy(pointers, (p) => p.toolName);
  const byTask = groupBy(pointers, (p) => p.taskId ?? null);
  const bySession = groupBy(pointers, (p) => p.session);
  const largest = [...pointers].sort((a, b) => (b.size ?? 0) - (a.size ?? 0)).slice(0, 5);
  if (opts.json) {
    return printJson({
      dir,
      records: pointers.length,
      bytes,
      estimatedTokens: tokens(bytes),
      sessions: sessions.length,
      byTool: byTool.map((g) => ({ toolName: g.key, records: g.records, bytes: g.bytes, estimatedTokens: tokens(g.bytes) })),
      byTask: byTask.map((g) => ({ taskId: g.key, records: g.records, bytes: g.bytes })),
      bySession: bySession.map((g) => ({ session: g.key, records: g.records, bytes: g.bytes })),
      largest: largest.map(pointerJson),
    });
  }
  const share = (b) => (bytes ? `${((100 * b) / bytes).toFixed(1)}%` : "-");
  const groupTable = (title, groups, label) =>
    table(
      [{ title }, { title: "RECORDS", align: "right" }, { title: "SIZE", align: "right" }, { title: "TOKENS", align: "right" }, { title: "SHARE", align: "right" }],
      groups.map((g) => [label(g.key), count(g.records), humanBytes(g.bytes), `~${count(tokens(g.bytes))}`, share(g.bytes)]),
    );
  print(
    fields([
      ["Records", count(pointers.length)],
      ["Size", `${humanBytes(bytes)} (~${count(tokens(bytes))} tokens at 4 bytes a token)`],
      ["Sessions", count(sessions.length)],
    ]),
  );
  if (!pointers.length) return;
  print("", groupTable("TOOL", byTool, (k) => out.cyan(k)));
  if (byTask.length > 1 || byTask[0].key !== null) print("", groupTable("TASK", byTask, (k) => (k === null ? out.dim("none") : String(k))));
  if (sessions.length) print("", groupTable("SESSION", bySession, (k) => k ?? out.dim("outside sessions")));
  print(
    "",
    out.bold("Largest records:"),
    ...largest.map((p) => `  ${humanBytes(p.size).padStart(8)}  ${p.handle} ${out.cyan(p.toolName)} ${shorten(p.toolDescription, 50)} ${out.dim(p.path)}`),
  );
}
