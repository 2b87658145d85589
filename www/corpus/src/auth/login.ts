import { AuthError, TokenExpiredError } from "./errors";
import { Session, loadSession, saveSession } from "./session";
import { refreshAccessToken } from "./refresh";
import { http } from "../http/client";

export interface Credentials {
  email: string;
  password: string;
}

/**
 * Signs a user in. The access token lives 15 minutes; the refresh token 30 days.
 * A stale access token is refreshed once before the request is retried.
 */
export async function login(credentials: Credentials): Promise<Session> {
  const existing = loadSession();
  if (existing && !existing.isExpired()) return existing;
  if (existing?.refreshToken) {
    try {
      const refreshed = await refreshAccessToken(existing.refreshToken);
      saveSession(refreshed);
      return refreshed;
    } catch (err) {
      if (!(err instanceof TokenExpiredError)) throw err;
      // The refresh token expired too: fall through to a full sign-in.
    }
  }
  const response = await http.post("/api/auth/login", credentials);
  if (response.status === 401) {
    throw new AuthError("invalid email or password", { status: 401 });
  }
  if (response.status !== 200) {
    throw new AuthError(`login failed with HTTP ${response.status}`, { status: response.status });
  }
  const session = Session.fromResponse(await response.json());
  saveSession(session);
  return session;
}

export async function logout(): Promise<void> {
  const session = loadSession();
  if (!session) return;
  await http.post("/api/auth/logout", { refreshToken: session.refreshToken }).catch(() => undefined);
  saveSession(null);
}
