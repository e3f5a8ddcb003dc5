/**
 * Whether an API key is still active, cached per key for at most `ttlMs` (default 2 s). A key
 * revoked through any process is refused by every process once its entry goes stale, well
 * within the promised 5 seconds, at one store read per key per interval.
 */
import type { Store } from "../store/store.ts";

interface Entry {
  active: boolean;
  checkedAt: number;
  pending?: Promise<boolean>;
}

export class KeyStatusCache {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly store: Store,
    private readonly ttlMs = 2000,
    private readonly maxEntries = 100_000,
  ) {}

  /** Resolves synchronously-cached answers without touching the store. */
  isActive(companyId: number, keyId: string, now = Date.now()): boolean | Promise<boolean> {
    const cacheKey = `${companyId}:${keyId}`;
    const entry = this.entries.get(cacheKey);
    if (entry && now - entry.checkedAt < this.ttlMs) return entry.active;
    if (entry?.pending) return entry.pending;
    const pending = this.store.findApiKey(companyId, keyId).then(
      (key) => {
        const active = key !== undefined && key.revokedAt === null;
        if (this.entries.size >= this.maxEntries) this.entries.clear();
        this.entries.set(cacheKey, { active, checkedAt: Date.now() });
        return active;
      },
      (error: unknown) => {
        // Keep serving the last known answer to in-flight callers' successors, then rethrow.
        if (entry) delete entry.pending;
        throw error;
      },
    );
    if (entry) entry.pending = pending;
    else this.entries.set(cacheKey, { active: false, checkedAt: 0, pending });
    return pending;
  }

  /** Forget a key at once in this process (used right after a local revoke). */
  forget(companyId: number, keyId: string): void {
    this.entries.delete(`${companyId}:${keyId}`);
  }
}
