/** The webhook signing secret: made once on first use, shared by concurrent first uses, replaced by rotation. */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { rotateWebhookSecret, webhookSecret } from "../../src/webhooks/secrets.ts";
import { availableBackends, openFreshStore } from "../helpers/backends.ts";

for (const backend of await availableBackends()) {
  describe(`webhook secrets [${backend.name}]`, () => {
    test("first uses agree on one secret, rotation replaces it, an unknown company has none", async () => {
      const { store, cleanup } = await openFreshStore(backend);
      try {
        await store.createCompany({ companyId: 7, name: "Seven" });
        const firstUses = await Promise.all([webhookSecret(store, 7), webhookSecret(store, 7), webhookSecret(store, 7)]);
        assert.match(firstUses[0]!, /^whsec_[A-Za-z0-9+/=]{40,}$/);
        assert.equal(new Set(firstUses).size, 1);

        const rotated = await rotateWebhookSecret(store, 7);
        assert.notEqual(rotated, firstUses[0]);
        assert.equal(await webhookSecret(store, 7), rotated);

        assert.equal(await webhookSecret(store, 404), undefined);
        assert.equal(await rotateWebhookSecret(store, 404), undefined);
      } finally {
        await cleanup();
      }
    });
  });
}
