/**
 * Who is calling, for the operator API and the console (SPEC §12.1): an operator bearer token or
 * a console session, each looked up by its hash in the store, so every API process accepts what
 * any of them issued. Answers are kept for at most CACHE_MS: a disabled operator, a reset
 * password or a sign-out on another process stops working within that time (the SPEC allows 5 s).
 */
import { StoreUnavailableError } from "../store/errors.ts";
import type { IdentitySignIn, Operator, ProviderIdentity, SignInDetail, Store } from "../store/store.ts";
import { hashCredential, newOperatorId, newSessionId } from "./credentials.ts";
import { decoyHash, refuseWhileHashingIsFull, verifyPassword } from "./passwords.ts";

/** A session ends after 8 hours without a request. */
export const SESSION_IDLE_MS = 8 * 3600_000;
const CACHE_MS = 2_000;
/** A session's last_seen_at moves on at most this often: an idle timeout of hours needs no write per request. */
const TOUCH_EVERY_MS = 60_000;
/** Only operators that exist are remembered, and only so many: random tokens cannot fill memory. */
const CACHE_LIMIT = 10_000;

interface Remembered {
  operator: Operator;
  until: number;
}

export class OperatorAuth {
  private readonly tokens = new Map<string, Remembered>();
  private readonly sessions = new Map<string, Remembered & { lastSeenAt: number }>();

  constructor(
    private readonly store: Store,
    private readonly now: () => number = Date.now,
  ) {}

  /** The enabled operator holding this bearer token, or undefined. */
  async byToken(token: string): Promise<Operator | undefined> {
    const hash = hashCredential(token);
    const known = this.tokens.get(hash);
    if (known && known.until > this.now()) return known.operator;
    const operator = await this.store.findOperatorByToken(hash);
    this.remember(this.tokens, hash, operator && { operator, until: this.now() + CACHE_MS });
    return operator;
  }

  /** The enabled operator of a session used within the idle timeout, or undefined. */
  async bySession(sessionId: string): Promise<Operator | undefined> {
    const hash = hashCredential(sessionId);
    const now = this.now();
    const known = this.sessions.get(hash);
    if (known && known.until > now && known.lastSeenAt + SESSION_IDLE_MS > now) {
      if (now - known.lastSeenAt >= TOUCH_EVERY_MS) await this.touch(hash, known, now);
      return known.operator;
    }
    const found = await this.store.findOperatorBySession(hash, new Date(now - SESSION_IDLE_MS).toISOString());
    if (!found) {
      this.sessions.delete(hash);
      return undefined;
    }
    const { lastSeenAt, ...operator } = found;
    const entry = { operator, until: now + CACHE_MS, lastSeenAt: Date.parse(lastSeenAt) };
    if (now - entry.lastSeenAt >= TOUCH_EVERY_MS) await this.touch(hash, entry, now);
    this.remember(this.sessions, hash, entry);
    return operator;
  }

  /**
   * Checks the password and opens a session; undefined for an unknown e-mail, a wrong password
   * or a disabled operator, alike and in about the same time.
   */
  async signIn(email: string, password: string): Promise<{ operator: Operator; sessionId: string } | undefined> {
    refuseWhileHashingIsFull();
    const found = await this.store.findOperatorByEmail(normaliseEmail(email));
    // An operator of the identity provider has no password: it costs the same time as a wrong one.
    const hasPassword = found?.signInMethod === "password";
    const matches = await verifyPassword(password, hasPassword ? found.passwordHash : await decoyHash());
    if (!found || !hasPassword || !matches || found.disabled) return undefined;
    const { passwordHash: _, ...operator } = found;
    return { operator, sessionId: await this.openSession(operator, { method: "password" }) };
  }

  /**
   * The operator the identity provider vouched for (SPEC §19), created at its first sign-in,
   * with the role its claim maps to now; a session, unless it is disabled or its e-mail is taken.
   */
  async signInWithIdentity(identity: ProviderIdentity): Promise<{ kind: "signedIn"; operator: Operator; sessionId: string } | Exclude<IdentitySignIn, { kind: "signedIn" }>> {
    const sessionId = newSessionId();
    const outcome = await this.store.signInWithIdentity({ identity, newOperatorId: newOperatorId(), sessionHash: hashCredential(sessionId), now: new Date(this.now()).toISOString() });
    return outcome.kind === "signedIn" ? { kind: "signedIn", operator: outcome.operator, sessionId } : outcome;
  }

  private async openSession(operator: Operator, signIn: SignInDetail): Promise<string> {
    const sessionId = newSessionId();
    await this.store.addOperatorSession({ operator, sessionHash: hashCredential(sessionId), now: new Date(this.now()).toISOString(), signIn });
    return sessionId;
  }

  async signOut(sessionId: string): Promise<void> {
    const hash = hashCredential(sessionId);
    this.sessions.delete(hash);
    await this.store.deleteOperatorSession(hash);
  }

  private async touch(hash: string, entry: { lastSeenAt: number }, now: number): Promise<void> {
    entry.lastSeenAt = now;
    // Best effort: on Citus this reference table is written on every node, and one lost node must
    // not sign every operator out (SPEC §23). This process keeps the session's idle clock meanwhile.
    await this.store.touchOperatorSession(hash, new Date(now).toISOString()).catch((error: unknown) => {
      if (!(error instanceof StoreUnavailableError)) throw error;
    });
  }

  private remember<T extends Remembered>(cache: Map<string, T>, hash: string, entry: T | undefined): void {
    if (!entry) {
      cache.delete(hash);
      return;
    }
    if (cache.size >= CACHE_LIMIT) cache.clear();
    cache.set(hash, entry);
  }
}

/** E-mail addresses are compared without case and surrounding space. */
export const normaliseEmail = (email: string): string => email.trim().toLowerCase();
