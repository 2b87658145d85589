// `toolctx export <file>`: the records as lossless JSON Lines (exportRecords), to a file
// or stdout; `import` reads them back.

import { writeFile } from "node:fs/promises";
import { relative, resolve } from "node:path";

import { nodeStorage } from "../../adapters/node.js";
import { ContextManager, existingStore, observed, toSlashes } from "../store.js";
import { CliError, err as errColors, humanBytes, plural, print, printJson, progress, usage } from "../ui.js";

/** A record's file name, as the library names them: what export counts and shows progress on. */
const RECORD_NAME = /^[A-Za-z0-9_-]{1,64}_[0-9a-f]{12}_[0-9]{13}_[0-9]+_[a-z0-9]{4}\.json$/;

/** The folders of one session that hold records: the session folder and its categories. */
async function sessionFolders(storage, dir, id) {
  const base = `${dir}/sessions/${id}`;
  const names = await storage.list(base);
  return [base, ...names.filter((n) => n.endsWith("/")).map((n) => `${base}/${n.slice(0, -1)}`)];
}

/**
 * `export <file>`: the records as JSON Lines (`ContextManager.exportRecords`, lossless: a
 * record that is not one line, as the TypeScript original writes them, travels as its exact
 * text). Files named as records that are not whole ones are listed on stderr (and under
 * `skipped` with `--json`).
 * Default: the records outside sessions; `--session ID`: that session's; `--all`: both,
 * every session included. `-` writes to stdout.
 */
export async function exportCommand(file, opts) {
  const dir = existingStore(opts);
  if (opts.all && opts.session !== undefined) throw usage("--all and --session cannot be combined");
  const storage = nodeStorage();
  const folders = [];
  if (opts.session === undefined) folders.push(dir);
  if (opts.session !== undefined || opts.all) {
    const sessions = await ContextManager.listSessions({ contextDir: dir, fileSystem: storage });
    const ids = opts.session !== undefined ? [opts.session] : sessions.map((s) => s.id);
    if (opts.session !== undefined && !sessions.some((s) => s.id === opts.session)) {
      throw new CliError(`no session ${opts.session} in ${dir}`, { hint: "run 'toolctx sessions' to list them" });
    }
    for (const id of ids) folders.push(...(await sessionFolders(storage, dir, id)));
  }
  let total = 0;
  for (const folder of folders) total += (await storage.list(folder)).filter((n) => RECORD_NAME.test(n)).length;
  const bar = progress("export", total);
  const watched = observed(storage, (op, [path]) => op === "read" && RECORD_NAME.test(path.split("/").pop()) && bar.tick());
  let jsonl = "";
  let records = 0;
  const skipped = [];
  try {
    for (const folder of folders) {
      const out = await ContextManager.exportRecords({ contextDir: folder, fileSystem: watched });
      jsonl += out.jsonl;
      records += out.exported;
      const prefix = toSlashes(relative(dir, folder));
      for (const s of out.skipped) skipped.push({ ...s, filename: prefix ? `${prefix}/${s.filename}` : s.filename });
    }
  } finally {
    bar.stop();
  }
  // Files named as records that are not whole ones (torn by a crash, corrupt): never left out silently.
  if (skipped.length && (!opts.json || file === "-")) {
    const one = skipped.length === 1;
    process.stderr.write(errColors.yellow(`toolctx: skipped ${plural(skipped.length, "file")} that ${one ? "is" : "are"} not a whole record:\n`));
    for (const s of skipped) process.stderr.write(`  ${s.filename}: ${s.reason}\n`);
  }
  if (file === "-") {
    process.stdout.write(jsonl);
    return;
  }
  await writeFile(file, jsonl, { mode: 0o600 });
  const bytes = Buffer.byteLength(jsonl);
  if (opts.json) return printJson({ dir, file: resolve(file), records, skipped, bytes });
  print(`exported ${plural(records, "record")} (${humanBytes(bytes)}) to ${file}`);
}
