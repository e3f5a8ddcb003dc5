/**
 * API key rows, cached per key for at most `ttlMs` (default 2 s). The app keeps two: one for the
 * bearer guard (is the key of this token still active?) and one for login (the row with its
 * secret hash), so a login does not warm the guard's entry for a key.
 *
 * Revocation: a key revoked through any process is refused by every process once its entry
 * goes stale, i.e. within `ttlMs`, well within the promised 5 seconds, for tokens AND for
 * logins alike; in the process that revokes through `forget` at once. The price is one store
 * read per key per interval instead of one per login (a read was ~12% of a login's CPU on
 * SQLite and a network round trip on PostgreSQL). The cache holds only what the store holds
 * (the SHA-256 of the secret, never the secret), and login still hashes the presented secret
 * and compares it in constant time on every attempt. A failed read is not cached and is not
 * answered from a stale entry: with the store gone, a key whose entry is stale gets 503.
 */
import type { ApiKeyWithHash, Store } from "../store/store.ts";

interface Entry {
  /** Undefined when the store has no such key. */
  key: ApiKeyWithHash | undefined;
  checkedAt: number;
  pending?: Promise<ApiKeyWithHash | undefined>;
}

const isActiveKey = (key: ApiKeyWithHash | undefined) => key !== undefined && key.revokedAt === null;

export class KeyStatusCache {
  /** Company id -> key id -> entry: no key string is built per lookup (this runs per request). */
  private readonly entries = new Map<number, Map<string, Entry>>();
  private size = 0;

  constructor(
    private readonly store: Store,
    private readonly ttlMs = 2000,
    private readonly maxEntries = 100_000,
  ) {}

  /**
   * The key's row as the store held it at most `ttlMs` ago: synchronously when cached, else a
   * promise of one store read (concurrent callers share it).
   */
  lookup(companyId: number, keyId: string, now = Date.now()): ApiKeyWithHash | undefined | Promise<ApiKeyWithHash | undefined> {
    const entry = this.entries.get(companyId)?.get(keyId);
    if (entry && now - entry.checkedAt < this.ttlMs) return entry.key;
    if (entry?.pending) return entry.pending;
    const pending = this.store.findApiKey(companyId, keyId).then(
      (key) => {
        if (this.size >= this.maxEntries) {
          this.entries.clear();
          this.size = 0;
        }
        this.set(companyId, keyId, { key, checkedAt: Date.now() });
        return key;
      },
      (error: unknown) => {
        // Keep serving the last known answer to in-flight callers' successors, then rethrow.
        if (entry) delete entry.pending;
        throw error;
      },
    );
    if (entry) entry.pending = pending;
    else this.set(companyId, keyId, { key: undefined, checkedAt: 0, pending });
    return pending;
  }

  private set(companyId: number, keyId: string, entry: Entry): void {
    let companyKeys = this.entries.get(companyId);
    if (companyKeys === undefined) this.entries.set(companyId, (companyKeys = new Map()));
    if (!companyKeys.has(keyId)) this.size += 1;
    companyKeys.set(keyId, entry);
  }

  /** Resolves synchronously-cached answers without touching the store. */
  isActive(companyId: number, keyId: string, now = Date.now()): boolean | Promise<boolean> {
    const key = this.lookup(companyId, keyId, now);
    return key instanceof Promise ? key.then(isActiveKey) : isActiveKey(key);
  }

  /** Forget a key at once in this process (used right after a local revoke). */
  forget(companyId: number, keyId: string): void {
    if (this.entries.get(companyId)?.delete(keyId)) this.size -= 1;
  }

  /** Forget every key of a company at once in this process (right after its keys were revoked for its erase). */
  forgetCompany(companyId: number): void {
    this.size -= this.entries.get(companyId)?.size ?? 0;
    this.entries.delete(companyId);
  }
}
