// `toolctx show <file>`: one record, its fields and then its result (the record as stored
// with --json). Paths the library refuses as outside the store are errors, never read.

import { isAbsolute, relative, resolve } from "node:path";

import { existingStore, readStore, toSlashes } from "../store.js";
import { CliError, absoluteTime, fields, humanBytes, out, print, printJson, relativeTime } from "../ui.js";

/**
 * `show <file>`: a path relative to the store (as `ls` prints it) or absolute, or a bare
 * record file name found anywhere in the store. The library decides what is inside the
 * store: a path it refuses is an error, never read.
 */
export async function showCommand(file, opts) {
  const dir = existingStore(opts);
  const { root, pointers, warnings } = await readStore(dir, { quiet: true });
  const wanted = toSlashes(isAbsolute(file) ? resolve(file) : resolve(dir, file));
  let pointer = pointers.find((p) => p.filepath === wanted);
  if (!pointer && !file.includes("/") && !file.includes("\\")) {
    const named = pointers.filter((p) => p.filename === file);
    if (named.length > 1) {
      throw new CliError(`${file} names ${named.length} records`, { hint: `pass the path: ${named.map((p) => p.path).join(", ")}` });
    }
    pointer = named[0];
  }
  const filepath = pointer?.filepath ?? wanted;
  const [record] = await root.loadContexts([filepath]);
  if (!record) {
    // The library's reason: onDebug("Failed to load <filepath>: <reason>").
    const prefix = `Failed to load ${filepath}: `;
    const reason = warnings.map((w) => w.msg).find((m) => m.startsWith(prefix))?.slice(prefix.length) ?? "";
    if (/^outside/.test(reason)) {
      throw new CliError(`${file} is outside the store ${dir}`, { hint: "show reads only records of the store" });
    }
    if (/ELOOP|symbolic link/.test(reason)) {
      throw new CliError(`${file} is a symbolic link, which the store does not follow`, { hint: "show reads only records of the store" });
    }
    const why = reason === "" || /missing/.test(reason) ? undefined : reason;
    throw new CliError(why ? `${file}: ${why.replace(/ \([^()]*\)$/, "")}` : `no record ${file} in ${dir}`, {
      hint: "run 'toolctx ls' to list the records",
    });
  }
  if (opts.json) return printJson(record);
  const size = pointer?.size ?? Buffer.byteLength(JSON.stringify(record));
  const pairs = [
    ["file", pointer?.path ?? toSlashes(relative(dir, filepath))],
    ["tool", out.cyan(record.toolName)],
    ["description", record.toolDescription],
    ["args", JSON.stringify(record.args)],
  ];
  if (record.taskId !== undefined) pairs.push(["task", String(record.taskId)]);
  if (record.queryId !== undefined) pairs.push(["query", record.queryId]);
  if (pointer?.session) pairs.push(["session", pointer.session]);
  pairs.push(["saved", `${absoluteTime(record.timestamp)} (${relativeTime(record.timestamp)})`]);
  pairs.push(["size", humanBytes(size)]);
  const result =
    record.result === undefined ? out.dim("(no result)") : typeof record.result === "string" ? record.result : JSON.stringify(record.result, null, 2);
  print(fields(pairs), "", out.bold("result"), result);
}
