#!/usr/bin/env node
// toolctx: the command line over a toolctx store (SPEC §8). It works through the
// package's public API only (ContextManager, nodeStorage); see `toolctx --help`.
// This file declares the commands and their options and turns errors into exit codes;
// each command runs in commands/<name>.js (conversations.js and mcp.js declare their own),
// over store.js (the store) and ui.js (the output).
//
// Exit codes: 0 success, 1 failure (missing store, unknown record, storage error),
// 2 usage error (bad flag, bad value). Errors are one line on stderr, `toolctx: ...`,
// with a hint; TOOLCTX_DEBUG=1 adds the stack.

import { readFileSync } from "node:fs";
import { Command, InvalidArgumentError, Option } from "commander";
import ms from "ms";

import { CliError, err as errColors } from "./ui.js";
import { existingStore, loadLibrary, readStore, storeDir } from "./store.js";
import { summaryCommand } from "./commands/summary.js";
import { lsCommand } from "./commands/ls.js";
import { showCommand } from "./commands/show.js";
import { selectCommand } from "./commands/select.js";
import { statsCommand } from "./commands/stats.js";
import { sessionsCommand } from "./commands/sessions.js";
import { gcCommand } from "./commands/gc.js";
import { clearCommand } from "./commands/clear.js";
import { exportCommand } from "./commands/export.js";
import { importCommand } from "./commands/import.js";
import { registerConversationCommands } from "./conversations.js";
import { registerMcpCommand } from "./mcp.js";

export { storeDir };

const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));

// -- argument parsers --------------------------------------------------------------------

function integer(what, { min = 0 } = {}) {
  return (value) => {
    if (!/^-?\d+$/.test(value) || Number(value) < min || !Number.isSafeInteger(Number(value))) {
      throw new InvalidArgumentError(`expected ${what} (an integer ≥ ${min})`);
    }
    return Number(value);
  };
}

/** "30m", "24h", "7d", "90s", "2w" → milliseconds. A unit is required. */
export function duration(value) {
  const msValue = /^\s*\d+(\.\d+)?\s*[a-z]+\s*$/i.test(value) ? ms(value.trim()) : undefined;
  if (!Number.isFinite(msValue) || msValue < 0) {
    throw new InvalidArgumentError("expected a duration such as 30m, 24h or 7d");
  }
  return msValue;
}

// -- the program -------------------------------------------------------------------------

/** The commander program; `run(argv)` parses and runs it. */
export function buildProgram() {
  const program = new Command("toolctx")
    .description("Inspect and manage a toolctx store: the tool outputs an agent saved, its sessions and conversations.")
    .version(pkg.version, "-V, --version")
    .option("--dir <path>", "the store folder (default: $TOOLCTX_DIR, else ~/.agent/context)")
    .option("--json", "print machine-readable JSON on stdout")
    .showSuggestionAfterError(true)
    .hook("preAction", loadLibrary)
    .configureOutput({ outputError: () => {} })
    .addHelpText(
      "after",
      `
Exit codes: 0 success, 1 failure (no store, unknown record...), 2 usage error.
Colours only on a terminal, never with NO_COLOR. TOOLCTX_DEBUG=1 shows stacks.
Run 'toolctx <command> --help' for a command's options.`,
    );

  const command = (name, description, options) => {
    const cmd = program.command(name, options).description(description);
    // Which command a usage error came from, for the hint.
    cmd.exitOverride((e) => {
      throw Object.assign(e, { command: cmd });
    });
    return cmd;
  };
  program.exitOverride((e) => {
    throw Object.assign(e, { command: program });
  });
  const withGlobals = (fn) =>
    async function action(...args) {
      const cmd = args.at(-1);
      return fn(...args.slice(0, -2), cmd.optsWithGlobals());
    };
  const sessionOption = () => new Option("--session <id>", "only this session's records");

  command("summary", "the store at a glance: records, sizes, tools, tasks, recent records (the default command)")
    .action(withGlobals(summaryCommand));

  command("ls", "list the records, oldest first")
    .option("--query <query>", "only the records saved for this query (its text, or its q_… id)")
    .option("--task <n>", "only the records of this task", integer("a task id"))
    .addOption(sessionOption())
    .action(withGlobals(lsCommand));

  command("show", "print one record: its fields, then its result (the raw record with --json)")
    .argument("<record>", "the record: its handle (ctx:…, as 'ls' prints it), a path relative to the store, an absolute path, a file name, or a toolctx:// pointer")
    .action(withGlobals(showCommand));

  command("select", "the records relevant to a query, best first, with scores")
    .argument("<query>", "what the next model call is about")
    .option("--limit <n>", "at most this many records", integer("a count", { min: 1 }))
    .option("--max-tokens <n>", "the best set whose records fit in this many tokens (4 bytes a token)", integer("a token count", { min: 1 }))
    .option("--max-bytes <n>", "the best set whose records fit in this many bytes", integer("a byte count", { min: 1 }))
    .addOption(new Option("--strategy <name>", "ranking").choices(["bm25", "overlap"]).default("bm25"))
    .option("--fallback", "when nothing matches, list every record (the library's default) instead of none")
    .addOption(sessionOption())
    .option("--all-sessions", "rank the records of every session from their manifests alone (ContextManager.search; no record is read)")
    .action(withGlobals(selectCommand));

  command("stats", "sizes and estimated tokens by tool, task and session; the largest records")
    .action(withGlobals(statsCommand));

  command("sessions", "list the sessions: records, size, last activity, stale or active")
    .option("--older-than <duration>", "what counts as stale (default 24h)", duration)
    .action(withGlobals(sessionsCommand));

  command("gc", "remove sessions idle longer than a duration (only the files their manifests track)")
    .addOption(new Option("--older-than <duration>", "idle time, such as 30m, 24h or 7d").argParser(duration).default(24 * 3600e3, "24h"))
    .option("--dry-run", "list the sessions that would be removed, remove nothing")
    .action(withGlobals(gcCommand));

  command("clear", "remove the records outside sessions (other files stay); --all: every session too")
    .option("--all", "also end every session (all toolctx records of the store)")
    .addOption(new Option("--session <id>", "end only this session"))
    .option("-y, --yes", "do not ask (required when not on a terminal)")
    .action(withGlobals(clearCommand));

  command("export", "write the records as JSON Lines (lossless; 'import' reads it back)")
    .argument("<file>", "the file to write, or - for stdout")
    .addOption(new Option("--session <id>", "export this session's records instead"))
    .option("--all", "export every record: outside sessions and in every session")
    .action(withGlobals(exportCommand));

  command("import", "write the records of an export into the store (created if missing)")
    .argument("<file>", "an export file, or - for stdin")
    .action(withGlobals(importCommand));

  registerConversationCommands(command, withGlobals, { existingStore, integer });
  registerMcpCommand(command, withGlobals, { storeDir, readStore, version: pkg.version });

  return program;
}

function printError(e) {
  const message = String(e.message ?? e).replace(/^error: /, "").replace(/^toolctx: /, "");
  process.stderr.write(`${errColors.red("toolctx:")} ${message}\n`);
  if (e.hint) process.stderr.write(`${errColors.dim(`hint: ${e.hint}`)}\n`);
  if (process.env.TOOLCTX_DEBUG && e.stack) process.stderr.write(`${e.stack}\n`);
}

/** `toolctx`, `toolctx --dir D`, `toolctx --json`: no command means `summary`. */
function withDefaultCommand(argv) {
  const args = argv.slice(2);
  let i = 0;
  while (i < args.length && (args[i] === "--json" || args[i].startsWith("--dir"))) i += args[i] === "--dir" ? 2 : 1;
  return i >= args.length ? [...argv, "summary"] : argv;
}

/** Runs the command line; resolves to the exit code. */
export async function run(argv = process.argv) {
  const program = buildProgram();
  argv = withDefaultCommand(argv);
  try {
    await program.parseAsync(argv);
    return 0;
  } catch (e) {
    if (e?.code?.startsWith?.("commander.")) {
      if (["commander.helpDisplayed", "commander.version", "commander.help"].includes(e.code)) return e.exitCode ?? 0;
      const name = e.command && e.command !== program ? `toolctx ${e.command.name()}` : "toolctx";
      printError({ message: e.message.split("\n")[0] + (e.message.includes("(Did you mean") ? ` ${e.message.split("\n")[1]}` : ""), hint: `see '${name} --help'` });
      return 2;
    }
    if (e instanceof CliError) {
      printError(e);
      return e.exitCode;
    }
    if (e?.code === "NOT_FOUND" || e?.code === "OUTSIDE_STORE" || e?.code === "CORRUPT_RECORD" || e?.code === "INVALID_ARGUMENT") {
      printError(e);
      return 1;
    }
    if (typeof e?.code === "string") {
      printError({ ...e, message: e.message, hint: e.hint ?? (e.code === "QUOTA_EXCEEDED" ? "the disk is full" : undefined), stack: e.stack });
      return 1;
    }
    printError({ message: `unexpected error: ${e?.message ?? e}`, hint: "set TOOLCTX_DEBUG=1 to see the stack", stack: e?.stack });
    return 1;
  }
}

// `toolctx ls | head`: a reader that stops early is not an error.
process.stdout.on("error", (e) => {
  if (e.code !== "EPIPE") throw e;
  process.exit(process.exitCode ?? 0);
});
process.exitCode = await run();
