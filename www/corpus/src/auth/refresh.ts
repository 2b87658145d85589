import { Session } from "./session";
import { TokenExpiredError, AuthError } from "./errors";
import { http } from "../http/client";

let inFlight: Promise<Session> | null = null;

/**
 * Exchanges a refresh token for a new session. Concurrent callers share one request:
 * the server rotates refresh tokens, so two parallel refreshes would revoke each other.
 */
export function refreshAccessToken(refreshToken: string): Promise<Session> {
  inFlight ??= doRefresh(refreshToken).finally(() => {
    inFlight = null;
  });
  return inFlight;
}

async function doRefresh(refreshToken: string): Promise<Session> {
  const response = await http.post("/api/auth/refresh", { refresh_token: refreshToken }, { retry: false });
  if (response.status === 401) {
    const body = await response.json().catch(() => ({}));
    if (body.error === "token_expired") throw new TokenExpiredError("refresh token expired");
    throw new AuthError("refresh rejected", { status: 401 });
  }
  if (!response.ok) throw new AuthError(`refresh failed with HTTP ${response.status}`, { status: response.status });
  return Session.fromResponse(await response.json());
}
