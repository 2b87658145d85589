const STORAGE_KEY = "acme.session";
const CLOCK_SKEW_MS = 30_000;

export class Session {
  constructor(
    readonly userId: string,
    readonly accessToken: string,
    readonly refreshToken: string,
    readonly expiresAt: number,
  ) {}

  static fromResponse(body: { user_id: string; access_token: string; refresh_token: string; expires_in: number }): Session {
    return new Session(body.user_id, body.access_token, body.refresh_token, Date.now() + body.expires_in * 1000);
  }

  /** Treats a token as expired 30 s early, so a request never leaves with a token that dies in flight. */
  isExpired(now = Date.now()): boolean {
    return now + CLOCK_SKEW_MS >= this.expiresAt;
  }

  toJSON() {
    return { userId: this.userId, accessToken: this.accessToken, refreshToken: this.refreshToken, expiresAt: this.expiresAt };
  }
}

export function loadSession(): Session | null {
  const raw = localStorage.getItem(STORAGE_KEY);
  if (!raw) return null;
  try {
    const s = JSON.parse(raw);
    return new Session(s.userId, s.accessToken, s.refreshToken, s.expiresAt);
  } catch {
    localStorage.removeItem(STORAGE_KEY);
    return null;
  }
}

export function saveSession(session: Session | null): void {
  if (session) localStorage.setItem(STORAGE_KEY, JSON.stringify(session));
  else localStorage.removeItem(STORAGE_KEY);
}
