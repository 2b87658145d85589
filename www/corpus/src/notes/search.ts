import type { Note } from "./store";

const tokenize = (text: string) => text.toLowerCase().split(/[^a-z0-9]+/).filter((t) => t.length > 1);

/** A tiny in-memory full-text index over titles (weight 3), tags (2) and bodies (1). */
export function searchNotes(notes: Note[], query: string, limit = 20): Note[] {
  const terms = tokenize(query);
  if (terms.length === 0) return [];
  const scored = notes.map((note) => {
    const title = tokenize(note.title);
    const body = tokenize(note.body);
    let score = 0;
    for (const term of terms) {
      score += 3 * title.filter((t) => t === term).length;
      score += 2 * note.tags.filter((t) => t.toLowerCase() === term).length;
      score += body.filter((t) => t === term).length;
    }
    return { note, score };
  });
  return scored
    .filter((s) => s.score > 0)
    .sort((a, b) => b.score - a.score)
    .slice(0, limit)
    .map((s) => s.note);
}
