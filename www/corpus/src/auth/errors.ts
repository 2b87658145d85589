export class AuthError extends Error {
  readonly status?: number;
  constructor(message: string, options: { status?: number; cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.name = "AuthError";
    this.status = options.status;
  }
}

/** The server answered 401 with `{"error":"token_expired"}`. */
export class TokenExpiredError extends AuthError {
  constructor(message = "token expired") {
    super(message, { status: 401 });
    this.name = "TokenExpiredError";
  }
}

export class RateLimitError extends Error {
  constructor(readonly retryAfterMs: number) {
    super(`rate limited; retry after ${retryAfterMs} ms`);
    this.name = "RateLimitError";
  }
}
