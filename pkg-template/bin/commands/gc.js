// `toolctx gc`: removes the sessions idle longer than `--older-than` (cleanupStaleSessions:
// only the files their manifests track); `--dry-run` only lists them.

import ms from "ms";

import { nodeStorage } from "../../adapters/node.js";
import { ContextManager, existingStore, observed } from "../store.js";
import { humanBytes, out, plural, print, printJson, progress, relativeTime } from "../ui.js";

export async function gcCommand(opts) {
  const dir = existingStore(opts);
  const olderThanMs = opts.olderThan;
  const storage = nodeStorage();
  const sessions = await ContextManager.listSessions({ contextDir: dir, fileSystem: storage });
  const now = Date.now();
  const candidates = sessions.filter((s) => {
    const last = Date.parse(s.lastActivity);
    return Number.isFinite(last) && last <= now && now - last > olderThanMs;
  });
  let removed;
  if (opts.dryRun) {
    removed = candidates.map((s) => s.id);
  } else {
    // One remove per tracked record, plus the manifest: the bar follows the removals.
    const bar = progress("gc", candidates.reduce((n, s) => n + s.records + 1, 0));
    const watched = observed(storage, (op) => op === "remove" && bar.tick());
    try {
      removed = await ContextManager.cleanupStaleSessions({ contextDir: dir, fileSystem: watched, olderThanMs });
    } finally {
      bar.stop();
    }
  }
  const gone = sessions.filter((s) => removed.includes(s.id));
  const records = gone.reduce((n, s) => n + s.records, 0);
  const bytes = gone.reduce((n, s) => n + s.bytes, 0);
  if (opts.json) return printJson({ dir, olderThanMs, dryRun: Boolean(opts.dryRun), removed, records, bytes });
  const idle = ms(olderThanMs, { long: true });
  if (!removed.length) return print(`no session idle longer than ${idle}`);
  const verb = opts.dryRun ? "would remove" : "removed";
  print(
    `${verb} ${plural(removed.length, "session")} idle longer than ${idle} (${plural(records, "record")}, ${humanBytes(bytes)}):`,
    ...gone.map((s) => `  ${s.id}  ${out.dim(`last active ${relativeTime(s.lastActivity)}`)}`),
  );
}
