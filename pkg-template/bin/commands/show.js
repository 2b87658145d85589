// `toolctx show <record>`: one record, its fields and then its result (the record as stored
// with --json). The record is named by its handle (as `ls` lists it), its older
// `toolctx://` form, or its path or file name. Paths the library refuses as outside the
// store are errors, never read.

import { isAbsolute, relative, resolve } from "node:path";

import { POINTER_SCHEME, parseReference } from "../../tools.js";
import { existingStore, readStore, toSlashes } from "../store.js";
import { CliError, absoluteTime, fields, humanBytes, out, print, printJson, relativeTime } from "../ui.js";

/**
 * `show <record>`: a handle (`ctx:…`, resolved by the library in the store and in each
 * session), a `toolctx://` pointer, a path relative to the store (as `ls` prints it) or
 * absolute, or a bare record file name found anywhere in the store. The library decides
 * what is inside the store: a path it refuses is an error, never read.
 */
export async function showCommand(file, opts) {
  const dir = existingStore(opts);
  const text = file.trim();
  // A handle copied out of a model's text may keep its quotes, backticks or a full stop:
  // read as the model tools read it (toolctx/tools' parseReference).
  const handle = parseReference(text)?.handle;
  // The filepaths the handle names, one manager (the store's, each session's) at a time.
  const named = [];
  let refused;
  const pick = (m) => {
    if (handle !== undefined) {
      try {
        const filepath = m.resolveHandle(handle);
        if (filepath !== undefined) named.push(filepath);
      } catch (err) {
        if (err?.code !== "INVALID_ARGUMENT") throw err;
        refused ??= err; // the library's reason (a short handle that names two records of one manager)
      }
    }
    return m.getAllPointers();
  };
  const { root, pointers, warnings } = await readStore(dir, { pick, quiet: true });
  let pointer;
  let wanted;
  if (handle !== undefined) {
    if (refused) throw new CliError(refused.message.replace(/^toolctx: /, ""), { hint: "pass the record's path, as 'toolctx ls' prints it" });
    const found = pointers.filter((p) => named.includes(p.filepath));
    if (found.length > 1) {
      throw new CliError(`${file} names ${found.length} records`, { hint: `pass the path: ${found.map((p) => p.path).join(", ")}` });
    }
    if (found.length === 0) throw new CliError(`no record ${file} in ${dir}`, { hint: "run 'toolctx ls' to list the records and their handles" });
    pointer = found[0];
  } else {
    const name = text.startsWith(POINTER_SCHEME) ? text.slice(POINTER_SCHEME.length) : file;
    wanted = toSlashes(isAbsolute(name) ? resolve(name) : resolve(dir, name));
    pointer = pointers.find((p) => p.filepath === wanted);
    if (!pointer && !name.includes("/") && !name.includes("\\")) {
      const byName = pointers.filter((p) => p.filename === name);
      if (byName.length > 1) {
        throw new CliError(`${file} names ${byName.length} records`, { hint: `pass the path: ${byName.map((p) => p.path).join(", ")}` });
      }
      pointer = byName[0];
    }
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
    ...(pointer?.handle ? [["handle", pointer.handle]] : []),
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
