// `toolctx import <file>`: writes the records of an export (a file or stdin) into the
// store, creating it; records already there with the same bytes are left alone.

import { existsSync, statSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { resolve } from "node:path";

import { nodeStorage } from "../../adapters/node.js";
import { ContextManager, observed, storeDir } from "../store.js";
import { CliError, count, plural, print, printJson, progress } from "../ui.js";

/** `import <file>`: the lines of an export written into the store (created if missing). */
export async function importCommand(file, opts) {
  const dir = storeDir(opts);
  if (existsSync(dir) && !statSync(dir).isDirectory()) throw new CliError(`${dir} is not a folder`);
  let jsonl;
  try {
    jsonl = file === "-" ? await readStdin() : await readFile(file, "utf8");
  } catch (e) {
    throw new CliError(`cannot read ${file}: ${e.code === "ENOENT" ? "no such file" : e.message}`, { cause: e });
  }
  const total = jsonl.split("\n").filter((l) => l.trim() !== "").length;
  const storage = nodeStorage();
  // One exclusive write per line (a record already there is then read and compared).
  const bar = progress("import", total);
  const watched = observed(storage, (op, [, , options]) => op === "write" && options?.exclusive && bar.tick());
  let report;
  try {
    report = await ContextManager.importRecords({ contextDir: dir, fileSystem: watched }, jsonl);
  } finally {
    bar.stop();
  }
  if (opts.json) return printJson({ dir, file: file === "-" ? "-" : resolve(file), ...report });
  print(`imported ${plural(report.imported, "record")} into ${dir}${report.unchanged ? ` (${count(report.unchanged)} already there, unchanged)` : ""}`);
}

async function readStdin() {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  return Buffer.concat(chunks).toString("utf8");
}
