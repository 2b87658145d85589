import { http } from "../http/client";

export interface Note {
  id: string;
  title: string;
  body: string;
  tags: string[];
  updatedAt: string;
}

/** Notes cached in memory, written through to the API. */
export class NoteStore {
  private notes = new Map<string, Note>();

  async load(): Promise<Note[]> {
    const response = await http.get("/api/notes");
    const list: Note[] = await response.json();
    this.notes = new Map(list.map((n) => [n.id, n]));
    return list;
  }

  get(id: string): Note | undefined {
    return this.notes.get(id);
  }

  async save(note: Note): Promise<void> {
    const updated = { ...note, updatedAt: new Date().toISOString() };
    await http.put(`/api/notes/${encodeURIComponent(note.id)}`, updated);
    this.notes.set(note.id, updated);
  }

  async remove(id: string): Promise<void> {
    await http.delete(`/api/notes/${encodeURIComponent(id)}`);
    this.notes.delete(id);
  }

  all(): Note[] {
    return [...this.notes.values()].sort((a, b) => b.updatedAt.localeCompare(a.updatedAt));
  }
}
