/**
 * Webhook signing secrets (SPEC §6, §11.3): made once on first use and shared by concurrent first
 * uses; a rotation keeps the previous one signing for the overlap, a revoke ends it; stored
 * encrypted (the column is never the secret, and a row copied to another company does not
 * decrypt); secrets stored in plain text before are encrypted by the start-up step, once.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { createWebhookSecrets, newWebhookSecret } from "../../src/webhooks/secrets.ts";
import { availableBackends, openFreshStore, queryRows } from "../helpers/backends.ts";

const CONFIG = { dataEncryptionKey: "a-data-encryption-key-of-forty-characters!", webhookSecretOverlapSeconds: 3600 };
const stored = async (location: Parameters<typeof queryRows>[0], companyId: number) =>
  (await queryRows<{ webhook_secret: string | null; webhook_secret_previous: string | null }>(
    location,
    "SELECT webhook_secret, webhook_secret_previous FROM companies WHERE company_id = $1",
    [companyId],
  ))[0]!;

for (const backend of await availableBackends()) {
  describe(`webhook secrets [${backend.name}]`, () => {
    test("first uses agree on one secret, stored encrypted; an unknown company has none", async () => {
      const { store, location, cleanup } = await openFreshStore(backend);
      try {
        await store.createCompany({ companyId: 7, name: "Seven" });
        const secrets = createWebhookSecrets(store, CONFIG);
        const firstUses = await Promise.all([secrets.current(7), secrets.current(7), createWebhookSecrets(store, CONFIG).current(7)]);
        assert.match(firstUses[0]!, /^whsec_[A-Za-z0-9+/=]{40,}$/);
        assert.equal(new Set(firstUses).size, 1);
        const row = await stored(location, 7);
        assert.match(row.webhook_secret!, /^enc1\.[0-9a-f]{8}\.[\w-]+\.[\w-]+$/);
        assert.ok(!row.webhook_secret!.includes(firstUses[0]!.slice("whsec_".length, 20)), "the column is not the secret");
        assert.equal(await secrets.current(404), undefined);
        assert.equal(await secrets.rotate(404, new Date()), undefined);
        assert.equal(await secrets.revokePrevious(404), undefined);
        assert.equal(await secrets.signingSecrets(404, new Date()), undefined);
      } finally {
        await cleanup();
      }
    });

    test("a rotation signs with both secrets during the overlap, then with the new one; a revoke ends the overlap", async () => {
      const { store, cleanup } = await openFreshStore(backend);
      try {
        await store.createCompany({ companyId: 8, name: "Eight" });
        const secrets = createWebhookSecrets(store, CONFIG);
        const first = (await secrets.current(8))!;
        const now = new Date("2026-11-21T12:00:00.000Z");
        assert.deepEqual(await secrets.signingSecrets(8, now), [first]);

        const rotated = (await secrets.rotate(8, now))!;
        assert.notEqual(rotated.secret, first);
        assert.equal(rotated.previousValidUntil, "2026-11-21T13:00:00.000Z");
        assert.equal(await secrets.current(8), rotated.secret);
        assert.deepEqual(await secrets.signingSecrets(8, new Date("2026-11-21T12:59:59.000Z")), [rotated.secret, first], "current first, then the previous");
        assert.deepEqual(await secrets.signingSecrets(8, new Date("2026-11-21T13:00:00.000Z")), [rotated.secret], "the overlap is over");

        const again = (await secrets.rotate(8, now))!;
        assert.deepEqual(await secrets.signingSecrets(8, now), [again.secret, rotated.secret], "only the one just replaced stays");
        assert.equal(await secrets.revokePrevious(8), again.secret);
        assert.deepEqual(await secrets.signingSecrets(8, now), [again.secret]);

        const noOverlap = createWebhookSecrets(store, { ...CONFIG, webhookSecretOverlapSeconds: 0 });
        const abrupt = (await noOverlap.rotate(8, now))!;
        assert.equal(abrupt.previousValidUntil, null);
        assert.deepEqual(await secrets.signingSecrets(8, now), [abrupt.secret]);
      } finally {
        await cleanup();
      }
    });

    test("secrets stored in plain text are encrypted by the start-up step, once, and read the same before and after", async () => {
      const { store, location, cleanup } = await openFreshStore(backend);
      try {
        const plain = newWebhookSecret();
        for (const companyId of [21, 22, 23]) await store.createCompany({ companyId, name: `Company ${companyId}` });
        // Rows as a process before encryption at rest left them.
        await store.ensureWebhookSecret(21, plain);
        await store.rotateWebhookSecret(22, { secret: plain, previousUntil: null });
        await store.rotateWebhookSecret(22, { secret: newWebhookSecret(), previousUntil: "2099-01-01T00:00:00.000Z" });
        const secrets = createWebhookSecrets(store, CONFIG);
        const before22 = await secrets.signingSecrets(22, new Date());
        assert.equal(await secrets.current(21), plain, "a plain row is read as it is");
        const made23 = (await secrets.current(23))!;

        assert.equal(await secrets.encryptStored(), 2, "the two companies with plain secrets");
        for (const companyId of [21, 22]) {
          const row = await stored(location, companyId);
          assert.match(row.webhook_secret!, /^enc1\./);
          if (companyId === 22) assert.match(row.webhook_secret_previous!, /^enc1\./);
        }
        assert.equal(await secrets.current(21), plain);
        assert.deepEqual(await secrets.signingSecrets(22, new Date()), before22);
        assert.equal(await secrets.current(23), made23);
        assert.equal(await secrets.encryptStored(), 0, "idempotent");
        assert.equal(await createWebhookSecrets(store, CONFIG).encryptStored(), 0);
      } finally {
        await cleanup();
      }
    });

    test("another key cannot read them; a generated key is kept by the store", async () => {
      const { store, location, cleanup } = await openFreshStore(backend);
      try {
        await store.createCompany({ companyId: 9, name: "Nine" });
        await store.createCompany({ companyId: 10, name: "Ten" });
        const generated = createWebhookSecrets(store, { dataEncryptionKey: undefined, webhookSecretOverlapSeconds: 60 });
        const secret = (await generated.current(9))!;
        assert.equal(await createWebhookSecrets(store, { dataEncryptionKey: undefined, webhookSecretOverlapSeconds: 60 }).current(9), secret, "the same generated key");
        await assert.rejects(createWebhookSecrets(store, CONFIG).current(9), /encrypted with another key/);

        // A ciphertext copied to another company's row does not decrypt there.
        const row = await stored(location, 9);
        await store.ensureWebhookSecret(10, row.webhook_secret!);
        await assert.rejects(generated.current(10), /damaged or belongs to another record/);
      } finally {
        await cleanup();
      }
    });
  });
}
