import { withRetry, RetryOptions } from "./retry";
import { loadSession } from "../auth/session";

export interface RequestOptions {
  retry?: RetryOptions | false;
  headers?: Record<string, string>;
}

async function request(method: string, url: string, body?: unknown, options: RequestOptions = {}): Promise<Response> {
  const send = () => {
    const session = loadSession();
    const headers: Record<string, string> = { "content-type": "application/json", ...options.headers };
    if (session) headers.authorization = `Bearer ${session.accessToken}`;
    return fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  };
  if (options.retry === false) return send();
  return withRetry(send, options.retry);
}

export const http = {
  get: (url: string, options?: RequestOptions) => request("GET", url, undefined, options),
  post: (url: string, body: unknown, options?: RequestOptions) => request("POST", url, body, options),
  put: (url: string, body: unknown, options?: RequestOptions) => request("PUT", url, body, options),
  delete: (url: string, options?: RequestOptions) => request("DELETE", url, undefined, options),
};
