import { useEffect, useState } from "react";
import { login, logout } from "../auth/login";
import { AuthError, TokenExpiredError } from "../auth/errors";
import { NoteStore, Note } from "../notes/store";
import { searchNotes } from "../notes/search";

const store = new NoteStore();

export function App() {
  const [notes, setNotes] = useState<Note[]>([]);
  const [query, setQuery] = useState("");
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    store.load().then(setNotes).catch((err) => {
      if (err instanceof TokenExpiredError) setError("Your session expired. Please sign in again.");
      else if (err instanceof AuthError) setError(`Sign-in problem: ${err.message}`);
      else setError(String(err));
    });
  }, []);

  const shown = query ? searchNotes(notes, query) : notes;
  return (
    <main>
      {error && <p role="alert">{error}</p>}
      <input value={query} onChange={(e) => setQuery(e.target.value)} placeholder="Search notes" />
      <ul>{shown.map((n) => <li key={n.id}>{n.title}</li>)}</ul>
      <button onClick={() => logout().then(() => location.reload())}>Sign out</button>
    </main>
  );
}

export async function signIn(email: string, password: string) {
  return login({ email, password });
}
