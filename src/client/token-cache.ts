/**
 * The SDK's bearer token: one login serves every call until the token is within the refresh
 * margin of its expiry, and calls that need a token while a login runs wait for that same login
 * (single flight).
 */
import type { TokenResponse } from "./types.ts";

export interface LoginAnswer extends TokenResponse {
  /** The server's clock when it answered (the `Date` header), to cancel out local clock skew. */
  serverDate?: number;
}

export interface CachedToken {
  token: string;
  answer: LoginAnswer;
  /** Local clock: when to log in again. */
  refreshAt: number;
  /** Local clock: when the server stops accepting the token. */
  expiresAt: number;
}

export class TokenCache {
  private current: CachedToken | undefined;
  private pending: Promise<CachedToken> | undefined;

  constructor(
    private readonly login: () => Promise<LoginAnswer>,
    private readonly refreshMarginMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** A token valid for at least the refresh margin; logs in (once, shared) when needed. */
  async get(): Promise<string> {
    const current = this.current;
    if (current && this.now() < current.refreshAt) return current.token;
    try {
      return (await this.refresh()).token;
    } catch (error) {
      // A failed refresh is no reason to fail a call the old token can still make.
      if (current && this.now() < current.expiresAt - 1000) return current.token;
      throw error;
    }
  }

  /** Logs in now (joining a login already under way) and caches the answer. */
  refresh(): Promise<CachedToken> {
    this.pending ??= this.login()
      .then((answer) => (this.current = this.toCached(answer)))
      .finally(() => {
        this.pending = undefined;
      });
    return this.pending;
  }

  /** Forgets `token` after the server refused it, unless a newer one has replaced it already. */
  invalidate(token: string): void {
    if (this.current?.token === token) this.current = undefined;
  }

  private toCached(answer: LoginAnswer): CachedToken {
    const now = this.now();
    const expires = Date.parse(answer.expires);
    // The lifetime by the server's own clock, when it told us its time; else trust `expires`.
    const lifetime = answer.serverDate !== undefined && !Number.isNaN(answer.serverDate) ? expires - answer.serverDate : expires - now;
    const expiresAt = now + Math.max(0, lifetime);
    // A token shorter-lived than the margin is renewed halfway, not on every call.
    const margin = lifetime > this.refreshMarginMs ? this.refreshMarginMs : lifetime / 2;
    return { token: answer.bearerToken, answer, expiresAt, refreshAt: expiresAt - margin };
  }
}
