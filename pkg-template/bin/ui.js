// Terminal output for the toolctx command line: colours (only on a terminal, never with
// NO_COLOR), aligned tables, human sizes and times, a progress bar on stderr, and the
// errors a user sees. Nothing here knows about stores.

import pc from "picocolors";
import Table from "cli-table3";
import cliProgress from "cli-progress";

/**
 * Colours for a stream: on when it is a terminal (or FORCE_COLOR asks for them), never
 * when NO_COLOR is set to anything (https://no-color.org) or TERM is "dumb".
 */
export function colorsFor(stream, env = process.env) {
  const forced = env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== "0" && env.FORCE_COLOR !== "false";
  const enabled = !env.NO_COLOR && (forced || (Boolean(stream?.isTTY) && env.TERM !== "dumb"));
  return pc.createColors(enabled);
}

export const out = colorsFor(process.stdout);
export const err = colorsFor(process.stderr);

/** A user mistake or a failure worth one line: `toolctx: <message>`, then the hint. */
export class CliError extends Error {
  /**
   * @param {string} message
   * @param {{ hint?: string, exitCode?: number, cause?: unknown }} [options]
   */
  constructor(message, { hint, exitCode = 1, cause } = {}) {
    super(message, { cause });
    this.name = "CliError";
    this.hint = hint;
    this.exitCode = exitCode;
  }
}

/** A usage error (bad flag, bad value): exit code 2. */
export const usage = (message, hint) => new CliError(message, { hint, exitCode: 2 });

const UNITS = ["B", "KB", "MB", "GB", "TB"];

/** 1024-based sizes, one decimal below 10: "512 B", "1.2 KB", "34 MB". */
export function humanBytes(bytes) {
  if (!Number.isFinite(bytes)) return "-";
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit++;
  }
  const shown = unit === 0 || value >= 10 ? Math.round(value) : Math.round(value * 10) / 10;
  return `${shown} ${UNITS[unit]}`;
}

/** Thousands separators: 85,420. */
export const count = (n) => n.toLocaleString("en-US");

/** "1 record", "3 records". */
export const plural = (n, word) => `${count(n)} ${word}${n === 1 ? "" : "s"}`;

const rtf = new Intl.RelativeTimeFormat("en", { numeric: "auto", style: "long" });
/** @type {[Intl.RelativeTimeFormatUnit, number][]} */
const STEPS = [
  ["year", 365 * 24 * 3600e3],
  ["month", 30 * 24 * 3600e3],
  ["week", 7 * 24 * 3600e3],
  ["day", 24 * 3600e3],
  ["hour", 3600e3],
  ["minute", 60e3],
  ["second", 1e3],
];

/** "3 minutes ago", "yesterday", "in 2 hours"; "-" for a missing or bad date. */
export function relativeTime(iso, now = Date.now()) {
  const t = typeof iso === "number" ? iso : Date.parse(iso ?? "");
  if (!Number.isFinite(t)) return "-";
  const diff = t - now;
  if (Math.abs(diff) < 10e3) return "just now";
  for (const [unit, ms] of STEPS) {
    if (Math.abs(diff) >= ms || unit === "second") return rtf.format(Math.round(diff / ms), unit);
  }
  return "-";
}

/** "2026-11-22 15:32:42 UTC". */
export function absoluteTime(iso) {
  const t = Date.parse(iso ?? "");
  return Number.isFinite(t) ? `${new Date(t).toISOString().slice(0, 19).replace("T", " ")} UTC` : "-";
}

/** Cuts a string to `max` characters with an ellipsis, on one line. */
export function shorten(text, max) {
  const line = String(text ?? "").replace(/\s+/g, " ");
  return line.length <= max ? line : `${line.slice(0, Math.max(1, max - 1))}…`;
}

const PLAIN = {
  top: "", "top-mid": "", "top-left": "", "top-right": "",
  bottom: "", "bottom-mid": "", "bottom-left": "", "bottom-right": "",
  left: "", "left-mid": "", mid: "", "mid-mid": "", right: "", "right-mid": "", middle: "  ",
};

/**
 * An aligned, borderless table: `columns` are `{ title, align? }`, `rows` arrays of
 * cells (already strings). Headers are bold on a terminal.
 */
export function table(columns, rows) {
  const t = new Table({
    head: columns.map((c) => out.bold(c.title)),
    colAligns: columns.map((c) => c.align ?? "left"),
    chars: PLAIN,
    style: { head: [], border: [], "padding-left": 0, "padding-right": 0, compact: true },
  });
  for (const row of rows) t.push(row.map((cell) => (cell == null ? "" : String(cell))));
  return t.toString().split("\n").map((line) => line.trimEnd()).join("\n");
}

/** `key value` lines, keys aligned and dimmed. */
export function fields(pairs, indent = "") {
  const width = Math.max(0, ...pairs.map(([k]) => k.length));
  return pairs.map(([k, v]) => `${indent}${out.dim(k.padEnd(width))}  ${v}`).join("\n");
}

/**
 * A progress bar on stderr for `total` steps of long work, shown only when stderr is a
 * terminal and the work is long enough to watch; otherwise every method does nothing.
 */
export function progress(label, total, { stream = process.stderr, minimum = 100 } = {}) {
  if (!stream.isTTY || !(total >= minimum)) return { tick() {}, stop() {} };
  const bar = new cliProgress.SingleBar(
    {
      stream,
      format: `${label} ${err.cyan("{bar}")} {percentage}% | {value}/{total} | {eta_formatted} left`,
      barCompleteChar: "█",
      barIncompleteChar: "░",
      hideCursor: true,
      clearOnComplete: true,
      etaBuffer: 50,
      fps: 10,
    },
    cliProgress.Presets.shades_classic,
  );
  bar.start(total, 0);
  // Ctrl-C mid-way: give the terminal its cursor back.
  const interrupted = () => {
    bar.stop();
    process.exit(130);
  };
  process.once("SIGINT", interrupted);
  let value = 0;
  return {
    tick(n = 1) {
      value = Math.min(total, value + n);
      bar.update(value);
    },
    stop() {
      process.off("SIGINT", interrupted);
      bar.stop();
    },
  };
}

/** Prints JSON on stdout (two-space indent, newline-terminated). */
export function printJson(value) {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** Prints lines on stdout. */
export function print(...lines) {
  process.stdout.write(`${lines.join("\n")}\n`);
}
