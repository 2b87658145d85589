// Command output with error messages: what `psql -c` printed for the statements of a
// PostgreSQL extension's regression tests (their expected outputs, src/test/regress/
// expected/*.out in Citus, test/expected/*.out in pgvector), short ones, beside the
// extension's C sources that define those messages with `errmsg("…")`: the source file
// that repeats the message's words is the competitor the short output must beat.

import { bash, messageQueries, readFileRecords, repoName, textFiles, toQueries } from "./corpus.mjs";
import { headCommit } from "./git.mjs";
import { sample } from "./prng.mjs";

/** Bump when records or queries change shape: cached corpora of another version are rebuilt. */
export const SQL_VERSION = 1;
const ERROR_RECORDS = 600; // statements whose output holds an ERROR, sampled
const OTHER_RECORDS = 400; // statements with other output (rows, notices), sampled
const MAX_OUTPUT_LINES = 30; // "short ones": what a psql call prints for one statement

const EXPECTED_OUTPUT = /(^|\/)expected\/[^/]+\.out$/;
// Lines psql prints for a statement: server messages, their LINE/caret context, and result tables.
const MESSAGE = /^(ERROR|WARNING|NOTICE|DETAIL|HINT|CONTEXT|INFO|LOG|QUERY|STATEMENT|LINE \d+):|^\s+\^\s*$|^(PL\/pgSQL|SQL statement|SQL function|while ) /;
const TABLE_RULE = /^-+(\+-+)*$/;
const ROW_COUNT = /^\(\d+ rows?\)$/;

/**
 * The statements of a regression test's expected output, each with what psql printed
 * after it: {line, sql, output}. psql echoes a statement (lines up to one ending in `;`,
 * or a backslash command), then its messages and result table, then the next statement;
 * comment lines (`--`) and blank lines between them are skipped.
 */
export function psqlStatements(text) {
  const lines = text.split("\n");
  const out = [];
  let i = 0;
  while (i < lines.length) {
    if (lines[i].trim() === "" || lines[i].startsWith("--")) {
      i++;
      continue;
    }
    const start = i;
    if (!lines[i].startsWith("\\")) while (i < lines.length - 1 && !lines[i].trimEnd().endsWith(";")) i++;
    const sql = lines.slice(start, ++i).join("\n");
    const output = [];
    while (i < lines.length) {
      if (MESSAGE.test(lines[i])) output.push(lines[i++]);
      else if (TABLE_RULE.test(lines[i + 1] ?? "") && lines[i].trim() !== "") {
        while (i < lines.length && !ROW_COUNT.test(lines[i])) output.push(lines[i++]);
        output.push(lines[i++] ?? "");
        if (lines[i]?.trim() === "") i++; // psql's blank line after a table
      } else break;
    }
    out.push({ line: start + 1, sql, output: output.join("\n") });
  }
  return out;
}

/** The message of each `ERROR:` line of an output. */
const errorMessages = (output) => [...output.matchAll(/^ERROR:\s+(.+)$/gm)].map((m) => m[1].trim());

const shellQuote = (text) => `'${text.replaceAll("'", "'\\''")}'`;

/** Records (sampled statement outputs as `bash` psql calls, and the C sources with errmsg) and the `errors` set. */
export function buildSqlCorpus(gitDir, { maxQueries = 200 } = {}) {
  const name = repoName(gitDir);
  const { files } = textFiles(gitDir);
  const statements = files
    .filter((f) => EXPECTED_OUTPUT.test(f.path))
    .flatMap((f) => psqlStatements(f.text).map((s) => ({ ...s, id: `bash psql ${f.path}:${s.line}` })))
    .filter((s) => s.output && s.output.split("\n").length <= MAX_OUTPUT_LINES);
  const failed = statements.filter((s) => errorMessages(s.output).length);
  const others = statements.filter((s) => !errorMessages(s.output).length);
  const shown = [...sample(failed, ERROR_RECORDS, `${name}:psql-errors`, (s) => s.id), ...sample(others, OTHER_RECORDS, `${name}:psql-others`, (s) => s.id)];
  const psql = shown.map((s) => bash(s.id, `psql -X -d regression -c ${shellQuote(s.sql)}`, s.output));
  const sources = files.filter((f) => /\.[ch]$/.test(f.path) && f.text.includes("errmsg("));

  const errors = messageQueries(shown, errorMessages); // an exact error message → every psql call that printed it
  return {
    name,
    head: headCommit(gitDir),
    version: SQL_VERSION,
    records: [...psql, ...readFileRecords(sources)],
    queries: { errors: toQueries(errors, maxQueries, `${name}:errors`) },
  };
}
