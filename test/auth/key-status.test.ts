/**
 * The key cache login and the bearer guard share: a revoked key is seen as revoked by both
 * once the entry is older than the TTL (the 5 s revocation promise with room to spare), and
 * concurrent misses share one store read. Real SQLite store; a short TTL keeps it quick.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { KeyStatusCache } from "../../src/auth/key-status.ts";
import { hashSecret, newCredentials } from "../../src/auth/credentials.ts";
import { openStore } from "../../src/store/open-store.ts";
import { sqliteBackend } from "../helpers/backends.ts";

test("key rows are cached for the TTL only, and revocation shows for login and tokens alike", async () => {
  const location = await sqliteBackend.create();
  const store = await openStore(location.location);
  try {
    await store.createCompany({ companyId: 9, name: "Nine" });
    const credentials = newCredentials(9);
    await store.createApiKey({ companyId: 9, keyId: credentials.keyId, name: null, secretHash: credentials.secretHash });
    let reads = 0;
    const counted = new Proxy(store, {
      get: (target, property, receiver) => {
        if (property === "findApiKey") reads++;
        return Reflect.get(target, property, receiver) as unknown;
      },
    });
    const ttlMs = 150;
    const cache = new KeyStatusCache(counted, ttlMs);
    const [first, second] = await Promise.all([cache.lookup(9, credentials.keyId), cache.lookup(9, credentials.keyId)]);
    assert.equal(reads, 1, "concurrent misses share one read");
    assert.equal(first, second);
    assert.equal(first?.secretHash, hashSecret(credentials.secret));
    assert.equal(cache.isActive(9, credentials.keyId), true, "answered from the cache, synchronously");
    assert.equal(reads, 1);

    await store.revokeApiKey(credentials.keyId);
    const revokedAt = Date.now();
    await new Promise((resolve) => setTimeout(resolve, ttlMs + 10));
    const row = await cache.lookup(9, credentials.keyId);
    assert.notEqual(row?.revokedAt, null, "a stale entry is read again and shows the revocation");
    assert.equal(await cache.isActive(9, credentials.keyId), false);
    assert.ok(Date.now() - revokedAt < 5000);
    assert.equal(reads, 2);

    assert.equal(await cache.lookup(9, "0000000000000000"), undefined, "an unknown key is undefined");
    cache.forget(9, credentials.keyId);
    await cache.lookup(9, credentials.keyId);
    assert.equal(reads, 4, "forget drops the entry at once");
  } finally {
    await store.close();
    await location.cleanup();
  }
});
