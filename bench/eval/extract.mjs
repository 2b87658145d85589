// The text the repositories' authors wrote about their own code, pulled out with plain
// regular expressions per language: doc comments, test names, documentation sections.
// These become the queries (and the web-search pages); nothing here looks at a ranking.

const ext = (path) => path.slice(path.lastIndexOf(".") + 1).toLowerCase();
const JS = new Set(["ts", "tsx", "mts", "cts", "js", "jsx", "mjs", "cjs"]);
const words = (text) => text.split(/\s+/).filter(Boolean);

// Chinese and Japanese, written without spaces between words, and their punctuation
// (Korean has spaces between its words: its words are counted as any other).
const CJK_RUN = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}ー、。，！？：；（）「」『』・]+/gu;
const CJK_LETTER = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]/gu;
// A Chinese word is one to three characters, most often two: the length of a CJK run in words.
const CJK_CHARS_PER_WORD = 2;

/** A text's length in words: whitespace-separated runs, a run of CJK counting a word every two letters. */
export function wordCount(text) {
  const cjkLetters = (text.match(CJK_LETTER) ?? []).length;
  return words(text.replace(CJK_RUN, " ")).length + cjkLetters / CJK_CHARS_PER_WORD;
}

/**
 * The first sentence of a comment or paragraph, whitespace collapsed, or null when it is
 * not 4-25 words long (shorter is a label such as "Constructor.", longer is rarely one
 * sentence). A sentence ends at . ! ? before a space, or at a CJK full stop 。！？.
 */
export function firstSentence(comment) {
  const paragraph = comment.trim().split(/\n\s*\n/)[0].replace(/\s+/g, " ").trim();
  const end = paragraph.search(/[.!?](\s|$)|[。！？]/);
  const sentence = end < 0 ? paragraph : paragraph.slice(0, end + 1);
  const n = wordCount(sentence);
  return n >= 4 && n <= 25 ? sentence : null;
}

/** Python docstrings: a triple-quoted string right after a `def`/`class` header (ends in ':') or opening the module. */
function pythonDocstrings(text) {
  const out = [];
  for (const m of text.matchAll(/[rRuU]?("""|''')([\s\S]*?)\1/g)) {
    const before = text.slice(0, m.index).trimEnd();
    if (before === "" || before.endsWith(":") || /^(#[^\n]*\n?\s*)*$/.test(before)) out.push(m[2]);
  }
  return out;
}

/** JSDoc blocks (/** … *\/): the prose before the first @tag, without the leading stars. */
function jsDocComments(text) {
  return [...text.matchAll(/\/\*\*([\s\S]*?)\*\//g)].map((m) => {
    const lines = m[1].split("\n").map((l) => l.replace(/^\s*\*\s?/, ""));
    const tag = lines.findIndex((l) => /^\s*@/.test(l));
    return (tag < 0 ? lines : lines.slice(0, tag)).join("\n");
  });
}

/** Runs of consecutive comment lines that match `marker` (Rust `///` and `//!`), joined. */
function lineCommentRuns(text, marker, isDocRun = () => true) {
  const out = [];
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    if (!marker.test(lines[i])) continue;
    const run = [];
    while (i < lines.length && marker.test(lines[i])) run.push(lines[i++].replace(marker, ""));
    if (isDocRun(lines[i] ?? "")) out.push(run.join("\n"));
  }
  return out;
}

/** Doc comments of a source file, by language; [] for other files. */
export function docComments(path, text) {
  const e = ext(path);
  if (e === "py") return pythonDocstrings(text);
  if (JS.has(e)) return jsDocComments(text);
  if (e === "rs") return lineCommentRuns(text, /^\s*\/\/[/!] ?/);
  // Go doc comments: the `//` lines right above a declaration (or the package clause).
  if (e === "go") return lineCommentRuns(text, /^\s*\/\/ ?/, (next) => /^(func|type|var|const|package)\b/.test(next));
  return [];
}

/** `fooBar_baz` → "foo Bar baz": identifiers of test functions turned back into the words they spell. */
const identifierWords = (name) => name.replace(/^test_?(?=\w)/i, "").replace(/_/g, " ").replace(/([a-z0-9])([A-Z])/g, "$1 $2").replace(/\s+/g, " ").trim();

export const isTestFile = (path) =>
  /(^|\/)tests?\//.test(path) || /\.(test|spec)\.[cm]?[jt]sx?$/.test(path) || /(^|\/)test_[^/]*\.py$|_test\.(py|go)$/.test(path);

/** Test names of a file as the author wrote them (strings) or spelled them (identifiers → words). */
export function testNames(path, text) {
  const e = ext(path);
  if (JS.has(e) && /\.(test|spec)\./.test(path)) {
    return [...text.matchAll(/\b(?:it|test)(?:\.(?:only|skip|concurrent|todo))?\s*\(\s*(['"`])((?:\\.|(?!\1)[^\\\n])*?)\1/g)]
      .map((m) => m[2].replace(/\\(.)/g, "$1"))
      .filter((name) => !name.includes("${") && !/%[sdifjo#]/.test(name)); // templated names are not the author's words
  }
  if (e === "py") return [...text.matchAll(/^\s*(?:async\s+)?def (test_\w+)\s*\(/gm)].map((m) => identifierWords(m[1]));
  if (e === "rs") return [...text.matchAll(/#\[test\]\s*(?:#\[[^\]]*\]\s*)*fn\s+(\w+)/g)].map((m) => identifierWords(m[1]));
  if (e === "go") return [...text.matchAll(/^func Test(\w+)\s*\(\s*\w+\s+\*testing\.T\)/gm)].map((m) => identifierWords(m[1]));
  return [];
}

/**
 * The module a test file tests, by naming convention only: foo.test.ts → foo.ts (or .tsx,
 * .js…, same folder); test_foo.py / foo_test.py → the non-test foo.py (when at most two
 * exist); foo_test.go → foo.go; a Rust file outside tests/ → itself (inline unit tests),
 * foo.rs in a tests folder → a non-test foo.rs. Only paths in `files` (a Set) are returned.
 */
export function moduleUnderTest(path, files) {
  const dir = path.slice(0, path.lastIndexOf("/") + 1);
  const base = path.slice(dir.length);
  const e = ext(path);
  const byBase = (name) => {
    const found = [...files].filter((f) => (f === name || f.endsWith("/" + name)) && !isTestFile(f) && !/(^|\/)(examples?|docs?)\//.test(f));
    return found.length <= 2 ? found : [];
  };
  if (JS.has(e)) {
    const stem = base.replace(/\.(test|spec)\.[cm]?[jt]sx?$/, "");
    return [...JS].map((x) => `${dir}${stem}.${x}`).filter((f) => files.has(f)).slice(0, 1);
  }
  if (e === "py") {
    const m = base.match(/^test_(.+\.py)$/) ?? base.match(/^(.+)_test(\.py)$/);
    return m ? byBase(m[2] ? m[1] + m[2] : m[1]) : [];
  }
  if (e === "go") return [`${dir}${base.replace(/_test\.go$/, ".go")}`].filter((f) => f !== path && files.has(f));
  if (e === "rs") return /(^|\/)tests\//.test(path) ? byBase(base) : [path];
  return [];
}

const slug = (heading) => heading.toLowerCase().replace(/[^a-z0-9 _-]/g, "").trim().replace(/\s+/g, "-");

/** Markdown headings (ATX, outside fenced code) as {heading, line}. */
function markdownHeadings(lines) {
  const out = [];
  let fence = null;
  for (let i = 0; i < lines.length; i++) {
    const f = lines[i].match(/^\s*(```|~~~)/);
    if (f) fence = fence === f[1] ? null : (fence ?? f[1]);
    const h = !fence && lines[i].match(/^(#{1,6})\s+(.+?)\s*#*\s*$/);
    if (h) out.push({ heading: h[2].replace(/\s*\{#[^}]*\}$/, ""), line: i, skip: 1 });
  }
  return out;
}

/** reStructuredText section titles: a line underlined (and maybe overlined) by one punctuation character. */
function rstHeadings(lines) {
  const out = [];
  for (let i = 0; i + 1 < lines.length; i++) {
    const text = lines[i].trim();
    const under = lines[i + 1].match(/^([=\-~^"'`#*+])\1{2,}\s*$/);
    if (text && under && lines[i + 1].trim().length >= text.length && !/^[=\-~^"'`#*+]+$/.test(text)) {
      out.push({ heading: text, line: i, skip: 2 });
    }
  }
  return out;
}

/** The sections of a Markdown or reStructuredText document: {heading, anchor, body}; sections with no text are left out. */
export function docSections(path, text) {
  const e = ext(path);
  if (e !== "md" && e !== "rst") return [];
  const lines = text.replace(/^---\n[\s\S]*?\n---\n/, (fm) => "\n".repeat(fm.split("\n").length - 1)).split("\n");
  const heads = e === "md" ? markdownHeadings(lines) : rstHeadings(lines);
  return heads
    .map((h, k) => {
      const end = k + 1 < heads.length ? heads[k + 1].line - (e === "rst" && /^[=\-~^"'`#*+]{3,}\s*$/.test(lines[heads[k + 1].line - 1] ?? "") ? 1 : 0) : lines.length;
      const body = lines.slice(h.line + h.skip, end).join("\n").trim();
      return { heading: h.heading, anchor: slug(h.heading), body };
    })
    .filter((s) => s.body.length > 0 && s.heading.length > 0);
}

/** A document's title: its first heading, else its file name. */
export function docTitle(path, text) {
  const e = ext(path);
  const lines = text.split("\n");
  const first = (e === "md" ? markdownHeadings(lines) : e === "rst" ? rstHeadings(lines) : [])[0];
  return first?.heading ?? path.slice(path.lastIndexOf("/") + 1);
}

/** The first ~300 characters of a section, whitespace collapsed, cut at a word boundary. */
export function snippet(body, max = 300) {
  const flat = body.replace(/\s+/g, " ").trim();
  if (flat.length <= max) return flat;
  const cut = flat.lastIndexOf(" ", max);
  return flat.slice(0, cut > max / 2 ? cut : max) + " …";
}

/**
 * The prose paragraphs of a Markdown section's body: blocks between blank lines outside
 * fenced code, leaving out headings, lists, tables, quotes, HTML blocks and the blocks a
 * container marker opens (VitePress `::: tip`), which are not running text.
 */
export function proseParagraphs(body) {
  const out = [];
  let block = [];
  let fence = null;
  const flush = () => {
    if (block.length && !/^\s*([#>|<*+-]|\d+\.\s|:::|\[!)/.test(block[0])) out.push(block.join("\n"));
    block = [];
  };
  for (const line of body.split("\n")) {
    const f = line.match(/^\s*(```|~~~)/);
    if (f || fence) {
      flush();
      if (f) fence = fence === f[1] ? null : (fence ?? f[1]);
      continue;
    }
    if (line.trim() === "" || /^\s*:::/.test(line)) flush();
    if (line.trim() !== "") block.push(line);
  }
  flush();
  return out;
}

/** Markdown inline markup taken away: images dropped, links to their text, code and emphasis marks and HTML tags removed. */
export const plainText = (markdown) =>
  markdown
    .replace(/!\[[^\]]*\]\([^)]*\)/g, "")
    .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/<[^>]+>/g, "")
    .replace(/`+|\*\*|__/g, "")
    .replace(/\s+/g, " ")
    .trim();
