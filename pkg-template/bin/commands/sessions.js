// `toolctx sessions`: the sessions, most recently active first, each stale or active
// (`--older-than`, default 24h).

import ms from "ms";

import { nodeStorage } from "../../adapters/node.js";
import { ContextManager, existingStore } from "../store.js";
import { absoluteTime, count, humanBytes, out, plural, print, printJson, relativeTime, table } from "../ui.js";

export async function sessionsCommand(opts) {
  const dir = existingStore(opts);
  const sessions = await ContextManager.listSessions({ contextDir: dir, fileSystem: nodeStorage() });
  sessions.sort((a, b) => (Date.parse(b.lastActivity) || 0) - (Date.parse(a.lastActivity) || 0));
  const now = Date.now();
  const staleAfter = opts.olderThan ?? 24 * 3600e3;
  const isStale = (s) => {
    const last = Date.parse(s.lastActivity);
    return Number.isFinite(last) && last <= now && now - last > staleAfter;
  };
  if (opts.json) return printJson({ dir, staleAfterMs: staleAfter, sessions: sessions.map((s) => ({ ...s, stale: isStale(s) })) });
  if (!sessions.length) return print(out.dim("no sessions"));
  const rows = sessions.map((s) => [
    s.id,
    out.dim(absoluteTime(s.createdAt)),
    relativeTime(s.lastActivity),
    count(s.records),
    humanBytes(s.bytes),
    isStale(s) ? out.yellow("stale") : out.green("active"),
  ]);
  const columns = [
    { title: "SESSION" },
    { title: "CREATED" },
    { title: "LAST ACTIVITY" },
    { title: "RECORDS", align: "right" },
    { title: "SIZE", align: "right" },
    { title: "STATE" },
  ];
  const stale = sessions.filter(isStale).length;
  print(
    table(columns, rows),
    out.dim(`${plural(sessions.length, "session")}; ${count(stale)} idle longer than ${ms(staleAfter, { long: true })}${stale ? " (remove them with 'toolctx gc')" : ""}`),
  );
}
