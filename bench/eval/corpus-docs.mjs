// Documentation translated into Chinese, Japanese and Russian (the vuejs-translations
// repositories): the repository corpus of corpus.mjs (page reads, grep, listings, git
// output, web searches over the sections), asked in those languages. Headings as in
// corpus.mjs; the first sentences of paragraphs; and those of them that mix code
// identifiers into the language's text.

import { addQuery, buildCorpus, toQueries } from "./corpus.mjs";
import { docSections, firstSentence, plainText, proseParagraphs } from "./extract.mjs";

/** Bump when records or queries change shape: cached corpora of another version are rebuilt. */
export const DOCS_VERSION = 1;
// A sentence found in more pages than this is boilerplate (a translated notice), not a page's own.
const MAX_PAGES = 3;
const TRANSLATED = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Cyrillic}]/u;
const CODE_IDENTIFIER = /`[^`\n]*[A-Za-z_$][\w$]*[^`\n]*`/;

/**
 * First sentences of prose paragraphs, as plain text, that are written in the translation
 * (at least one Han, kana or Cyrillic letter outside code) → the page reads holding them.
 * The first paragraph of a section is left out: the web-search snippets repeat it, and
 * the label is the page. `mixed` holds the sentences with an inline code identifier
 * (`ref()` 接收参数…), `sentences` the others.
 */
function sentenceQueries(pages) {
  const sets = { sentences: new Map(), mixed: new Map() };
  for (const page of pages) {
    for (const section of docSections(page.args.path, page.result.content)) {
      for (const paragraph of proseParagraphs(section.body).slice(1)) {
        const sentence = firstSentence(paragraph);
        if (!sentence || !TRANSLATED.test(sentence.replace(/`[^`]*`/g, ""))) continue;
        addQuery(CODE_IDENTIFIER.test(sentence) ? sets.mixed : sets.sentences, plainText(sentence), [page.id]);
      }
    }
  }
  for (const map of Object.values(sets)) for (const [q, ids] of map) if (ids.size > MAX_PAGES) map.delete(q);
  return sets;
}

/** The repository corpus with its headings, and the sentence sets; no code, so no docstrings, tests or commits. */
export function buildDocsCorpus(gitDir, { maxQueries = 200 } = {}) {
  const corpus = buildCorpus(gitDir, { maxQueries });
  const pages = corpus.records.filter((r) => r.toolName === "readFile" && r.args.path.endsWith(".md"));
  const { sentences, mixed } = sentenceQueries(pages);
  const queries = {
    headings: corpus.queries.headings,
    sentences: toQueries(sentences, maxQueries, `${corpus.name}:sentences`),
    mixed: toQueries(mixed, maxQueries, `${corpus.name}:mixed`),
  };
  return { ...corpus, version: DOCS_VERSION, queries };
}
