// `toolctx ls`: the records, oldest first, each with its handle (what `show` takes);
// `--query`, `--task` or `--session` narrow them.

import { ContextManager, existingStore, pointerJson, readStore, sum } from "../store.js";
import { humanBytes, out, plural, print, printJson, relativeTime, shorten, table, usage } from "../ui.js";

export async function lsCommand(opts) {
  const dir = existingStore(opts);
  let pick;
  if (opts.query !== undefined && opts.task !== undefined) throw usage("--query and --task cannot be combined");
  if (opts.query !== undefined) {
    // A queryId as saved, or the query's text (hashed as the agent would have).
    const id = /^q_[0-9a-f]{16}$/.test(opts.query) ? opts.query : ContextManager.hashQuery(opts.query);
    pick = (m) => {
      const exact = m.getPointersForQuery(opts.query);
      return exact.length || id === opts.query ? exact : m.getPointersForQuery(id);
    };
  } else if (opts.task !== undefined) {
    pick = (m) => m.getPointersForTask(opts.task);
  }
  const { pointers } = await readStore(dir, { pick, session: opts.session });
  if (opts.json) return printJson({ dir, records: pointers.map(pointerJson) });
  if (pointers.length === 0) return print(out.dim("no records"));
  const withSessions = pointers.some((p) => p.session !== null);
  const columns = [
    { title: "HANDLE" },
    { title: "FILE" },
    ...(withSessions ? [{ title: "SESSION" }] : []),
    { title: "TOOL" },
    { title: "DESCRIPTION" },
    { title: "TASK", align: "right" },
    { title: "SIZE", align: "right" },
    { title: "SAVED" },
  ];
  const rows = pointers.map((p) => [
    p.handle,
    p.filename,
    ...(withSessions ? [p.session ?? out.dim("-")] : []),
    out.cyan(p.toolName),
    shorten(p.toolDescription, 48),
    p.taskId ?? "",
    humanBytes(p.size),
    out.dim(relativeTime(p.timestamp)),
  ]);
  print(table(columns, rows), out.dim(`${plural(pointers.length, "record")}, ${humanBytes(sum(pointers))}`));
}
