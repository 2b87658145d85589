// `toolctx clear`: removes the records outside sessions, one session, or everything;
// asks on a terminal, needs --yes elsewhere.

import { createInterface } from "node:readline/promises";

import { nodeStorage } from "../../adapters/node.js";
import { ContextManager, existingStore } from "../store.js";
import { CliError, count, plural, print, printJson, usage } from "../ui.js";

async function confirm(question) {
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    const answer = await rl.question(`${question} [y/N] `);
    return /^y(es)?$/i.test(answer.trim());
  } finally {
    rl.close();
  }
}

/**
 * `clear`: removes every toolctx record outside sessions (ContextManager.purge: other
 * files stay); `--session ID` ends that session instead; `--all` does both for every
 * session. Asks first on a terminal; elsewhere `--yes` is required.
 */
export async function clearCommand(opts) {
  const dir = existingStore(opts);
  if (opts.all && opts.session !== undefined) throw usage("--all and --session cannot be combined");
  const storage = nodeStorage();
  const sessions = await ContextManager.listSessions({ contextDir: dir, fileSystem: storage });
  let targets = [];
  if (opts.session !== undefined) {
    targets = sessions.filter((s) => s.id === opts.session);
    if (!targets.length) throw new CliError(`no session ${opts.session} in ${dir}`, { hint: "run 'toolctx sessions' to list them" });
  } else if (opts.all) {
    targets = sessions;
  }
  const what =
    opts.session !== undefined
      ? `session ${opts.session}`
      : opts.all
        ? `every record and session (${count(sessions.length)}) of ${dir}`
        : `every record of ${dir} outside sessions`;
  if (!opts.yes) {
    if (!process.stdin.isTTY || !process.stderr.isTTY) {
      throw usage(`clear removes ${what}: pass --yes to confirm`, "clear asks on a terminal; elsewhere --yes is required");
    }
    if (!(await confirm(`Remove ${what}?`))) throw new CliError("nothing removed", { hint: "pass --yes to skip the question" });
  }
  let records = 0;
  if (opts.session === undefined) records = await ContextManager.purge({ contextDir: dir, fileSystem: storage });
  const ended = [];
  for (const s of targets) {
    const m = await ContextManager.open({ contextDir: dir, fileSystem: storage, session: s.id });
    await m.endSession();
    m.free();
    records += s.records;
    ended.push(s.id);
  }
  if (opts.json) return printJson({ dir, removedRecords: records, removedSessions: ended });
  print(`removed ${plural(records, "record")}${ended.length ? ` and ${plural(ended.length, "session")}` : ""} from ${dir}`);
}
