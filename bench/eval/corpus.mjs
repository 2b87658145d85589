// Builds, from one bare git directory, what an agent's tools would have returned while
// working in that repository (the records) and the queries its authors wrote (each
// labelled with the records it should find, by mechanical rules only). See README.md.

import { existsSync, readdirSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { commits, git, headCommit, listTree, readBlobs } from "./git.mjs";
import { docComments, docSections, docTitle, firstSentence, moduleUnderTest, snippet, testNames } from "./extract.mjs";
import { prng, sample } from "./prng.mjs";

/** Bump when records or queries change shape: cached corpora of another version are rebuilt. */
export const CORPUS_VERSION = 4;
const MAX_FILE_BYTES = 512 * 1024;
const GREP_RECORDS = 250;
const GREP_CAP = 50;
const SHOW_RECORDS = 100;
const WEB_RECORDS = 500;

// Generated files an agent would not read for understanding, and that dwarf the rest.
const LOCKFILE = /(^|\/)(Cargo\.lock|uv\.lock|poetry\.lock|bun\.lockb?|package-lock\.json|yarn\.lock|pnpm-lock\.yaml|go\.sum)$/;
const CHANGELOG = /(^|\/)(CHANGES|CHANGELOG|HISTORY|NEWS)(\.\w+)?$/i;

/** The repositories under the mirror folder: every `…/owner+name/repo` that is a git directory. */
export function findRepos(roots) {
  const out = [];
  for (const root of roots) {
    if (!existsSync(root)) continue;
    if (existsSync(join(root, "HEAD")) && existsSync(join(root, "objects"))) out.push(root);
    else for (const entry of readdirSync(root).sort()) {
      const gitDir = join(root, entry, "repo");
      if (existsSync(join(gitDir, "HEAD")) && existsSync(join(gitDir, "objects"))) out.push(gitDir);
    }
  }
  return out;
}

/** "owner/name" from /work/.mirror/owner+name/repo (or the folder's name). */
export function repoName(gitDir) {
  const folder = basename(gitDir) === "repo" ? basename(dirname(gitDir)) : basename(gitDir).replace(/\.git$/, "");
  return folder.replace("+", "/");
}

/** The text files at HEAD an agent could read: valid UTF-8, no NUL byte, at most 512 KB, no lockfile. */
export function textFiles(gitDir) {
  const tree = listTree(gitDir);
  const blobs = readBlobs(gitDir, tree.filter((e) => e.size <= MAX_FILE_BYTES).map((e) => e.sha));
  const decoder = new TextDecoder("utf-8", { fatal: true });
  const files = [];
  for (const e of tree) {
    const bytes = blobs.get(e.sha);
    if (!bytes || bytes.includes(0) || LOCKFILE.test(e.path)) continue;
    try {
      files.push({ path: e.path, text: decoder.decode(bytes) });
    } catch {
      // not UTF-8: a binary an agent's readFile would refuse
    }
  }
  return { tree, files };
}

// ---------------------------------------------------------------------------------------
// Records: {id, toolName, args, result}, shaped as agent tools return them.

export const readFileRecords = (files) =>
  files.map((f) => ({ id: `readFile ${f.path}`, toolName: "readFile", args: { path: f.path }, result: { path: f.path, content: f.text } }));

/** One listing per folder (the root is "."), of every entry at HEAD, folders ending in "/". */
function listDirRecords(tree) {
  const dirs = new Map([[".", new Set()]]);
  for (const { path } of tree) {
    const parts = path.split("/");
    for (let i = 0; i < parts.length; i++) {
      const parent = i === 0 ? "." : parts.slice(0, i).join("/");
      if (!dirs.has(parent)) dirs.set(parent, new Set());
      dirs.get(parent).add(i === parts.length - 1 ? parts[i] : parts[i] + "/");
    }
  }
  return [...dirs.keys()].sort().map((dir) => ({
    id: `listDir ${dir}`,
    toolName: "listDir",
    args: { path: dir },
    result: { path: dir, entries: [...dirs.get(dir)].sort() },
  }));
}

/** Identifiers found in 2 to 40 files: the words an agent greps for (common words would flood the cap). */
function grepPatterns(files) {
  const df = new Map();
  for (const f of files) for (const word of new Set(f.text.match(/[A-Za-z_][A-Za-z0-9_]{3,}/g))) df.set(word, (df.get(word) ?? 0) + 1);
  return [...df].filter(([, n]) => n >= 2 && n <= 40).map(([word]) => word);
}

/** `grep -rn pattern [path]` computed in JS: the first 50 matching lines, files in path order. */
function grepRecords(files, name) {
  const random = prng(`${name}:grep-path`);
  return sample(grepPatterns(files), GREP_RECORDS, `${name}:grep`).map((pattern) => {
    const first = files.find((f) => f.text.includes(pattern)).path;
    // A third of the calls are narrowed to the top folder of the first hit, as agents do.
    const path = random() < 1 / 3 && first.includes("/") ? first.slice(0, first.indexOf("/")) : undefined;
    const matches = [];
    for (const f of files) {
      if (matches.length >= GREP_CAP) break;
      if ((path && !f.path.startsWith(path + "/")) || !f.text.includes(pattern)) continue;
      f.text.split("\n").forEach((text, i) => {
        if (matches.length < GREP_CAP && text.includes(pattern)) matches.push({ file: f.path, line: i + 1, text: text.trim().slice(0, 200) });
      });
    }
    const args = path ? { pattern, path } : { pattern };
    return { id: `grep ${pattern}${path ? " in " + path : ""}`, toolName: "grep", args, result: { matches } };
  });
}

export const bash = (id, command, output) => ({ id, toolName: "bash", args: { command }, result: output });

/** `git log --oneline -n 30 -- <dir>` for every folder: the real output. */
function gitLogRecords(gitDir, dirs) {
  return dirs
    .map((dir) => bash(`bash git log -- ${dir}`, `git log --oneline -n 30 -- ${dir}`, git(gitDir, ["log", "--oneline", "-n", "30", "--", dir])))
    .filter((r) => r.result.length > 0);
}

/** `git show --stat <sha>` for sampled commits: the real output. */
const gitShowRecords = (gitDir, shas) =>
  shas.map((sha) => bash(`bash git show ${sha.slice(0, 12)}`, `git show --stat ${sha}`, git(gitDir, ["show", "--stat", sha])));

/**
 * Web-search results made of the repository's documentation: one record per sampled
 * section, the section first, then the next one or two of the same document and one
 * from another document (a search engine returns related pages). The record's query is
 * what an agent would have typed to land there: the project's name and the title of the
 * document (not the section's heading, which would make a heading query match the
 * record's own arguments verbatim and test nothing but that).
 */
function webSearchRecords(sections, name) {
  const random = prng(`${name}:web-mix`);
  const project = name.split("/")[1];
  const result = (s) => ({ title: s.heading, url: `https://docs.example.com/${project}/${s.path.replace(/\.\w+$/, "")}#${s.anchor}`, snippet: snippet(s.body) });
  return sample(sections, WEB_RECORDS, `${name}:web`, (s) => s.key).map((s) => {
    const same = sections.filter((o) => o.path === s.path && o.index > s.index).slice(0, 1 + Math.floor(random() * 2));
    const others = sections.filter((o) => o.path !== s.path);
    const picked = [s, ...same, ...(others.length ? [others[Math.floor(random() * others.length)]] : [])];
    return {
      id: `webSearch ${s.key}`,
      toolName: "webSearch",
      args: { query: `${project} ${s.title}` },
      result: { results: picked.map(result) },
      sectionKeys: picked.map((p) => p.key), // for labelling only; never given to an engine
    };
  });
}

// ---------------------------------------------------------------------------------------
// Queries: {query, relevant: [record ids]}; the same text from several places counts once,
// with every place's records relevant.

export function addQuery(map, text, ids) {
  const key = text.trim();
  if (!map.has(key)) map.set(key, new Set());
  for (const id of ids) map.get(key).add(id);
}

// A message of fewer words ("permission denied", "Error: boom") names no one failure.
const MIN_MESSAGE_WORDS = 3;

/** Messages printed by command outputs ({id, output}) → every output that printed each; `messagesOf(output)` finds them. */
export function messageQueries(outputs, messagesOf) {
  const map = new Map();
  for (const o of outputs) for (const message of messagesOf(o.output)) if (message.split(/\s+/).length >= MIN_MESSAGE_WORDS) addQuery(map, message, [o.id]);
  return map;
}

export const toQueries = (map, n, seed) =>
  sample([...map], n, seed, ([q]) => q).map(([query, ids]) => ({ query, relevant: [...ids].sort() }));

/** First sentences of doc comments → the file holding them (dropped when more than 3 files hold it: boilerplate). */
function docstringQueries(files) {
  const map = new Map();
  for (const f of files) for (const c of docComments(f.path, f.text)) {
    const s = firstSentence(c);
    if (s) addQuery(map, s, [`readFile ${f.path}`]);
  }
  for (const [q, ids] of map) if (ids.size > 3) map.delete(q);
  return map;
}

/** Test names (at least two words) → the module under test, by file-naming convention. */
function testQueries(files) {
  const paths = new Set(files.map((f) => f.path));
  const map = new Map();
  for (const f of files) {
    const modules = moduleUnderTest(f.path, paths);
    if (!modules.length) continue;
    for (const name of testNames(f.path, f.text)) if (name.split(/\s+/).length >= 2) addQuery(map, name, modules.map((m) => `readFile ${m}`));
  }
  return map;
}

/** Subjects (at least three words) of commits that touched 1-5 files, all of them read in the corpus → those files. */
function commitQueries(history, paths) {
  const map = new Map();
  for (const c of history) {
    if (c.files.length < 1 || c.files.length > 5 || !c.files.every((f) => paths.has(f))) continue;
    if (c.subject.split(/\s+/).length >= 3) addQuery(map, c.subject, c.files.map((f) => `readFile ${f}`));
  }
  return map;
}

/** Section headings → every web-search record whose results hold a section of that heading. */
function headingQueries(webRecords, sectionsByKey) {
  const map = new Map();
  for (const r of webRecords) for (const key of r.sectionKeys) addQuery(map, sectionsByKey.get(key).heading, [r.id]);
  return map;
}

// ---------------------------------------------------------------------------------------

/** Records and query sets of one repository, at most `maxQueries` a set. */
export function buildCorpus(gitDir, { maxQueries = 200 } = {}) {
  const name = repoName(gitDir);
  const { tree, files } = textFiles(gitDir);
  const paths = new Set(files.map((f) => f.path));
  const sections = files
    .filter((f) => !CHANGELOG.test(f.path))
    .flatMap((f) => {
      const title = docTitle(f.path, f.text);
      return docSections(f.path, f.text).map((s, index) => ({ ...s, title, path: f.path, index, key: `${f.path}#${s.anchor}~${index}` }));
    });
  const sectionsByKey = new Map(sections.map((s) => [s.key, s]));

  const history = commits(gitDir);
  const commitSets = commitQueries(history, paths);
  const queries = {
    docstrings: toQueries(docstringQueries(files), maxQueries, `${name}:docstrings`),
    tests: toQueries(testQueries(files), maxQueries, `${name}:tests`),
    commits: toQueries(commitSets, maxQueries, `${name}:commits`),
  };
  // `git show` quotes its subject: commits asked about are kept out of the shown ones, so
  // that a query is never answered by the record that prints it verbatim.
  const asked = new Set(queries.commits.map((q) => q.query));
  const shown = sample(history.filter((c) => !asked.has(c.subject)).map((c) => c.sha), SHOW_RECORDS, `${name}:show`);

  const listings = listDirRecords(tree);
  const web = webSearchRecords(sections, name);
  queries.headings = toQueries(headingQueries(web, sectionsByKey), maxQueries, `${name}:headings`);

  const records = [
    ...readFileRecords(files),
    ...grepRecords(files, name),
    ...listings,
    ...gitLogRecords(gitDir, listings.map((r) => r.args.path)),
    ...gitShowRecords(gitDir, shown),
    ...web.map(({ sectionKeys, ...r }) => r),
  ];
  return { name, head: headCommit(gitDir), version: CORPUS_VERSION, records, queries };
}
