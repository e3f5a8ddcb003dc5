/**
 * Secret rotation with overlap (SPEC §11.3), through the dispatcher and a real receiver, on each
 * store: after `rotate`, every delivery carries two signatures (space-separated `v1,…`), the new
 * secret's and the previous one's, and each verifies with its own secret alone, so a receiver can
 * switch at any moment. After `revokePrevious`, or once the overlap is over, one signature again.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { Webhook } from "standardwebhooks";
import { verifyWebhook } from "../../src/client/index.ts";
import { availableBackends } from "../helpers/backends.ts";
import { signatureHeaders, withWebhooks } from "../helpers/webhook-harness.ts";
import type { ReceivedRequest } from "../helpers/webhook-receiver.ts";
import { HANG_TIMEOUT_MS } from "../helpers/waiting.ts";

const signaturesOf = (request: ReceivedRequest) => String(request.headers["webhook-signature"]).split(" ");
const verifies = (secret: string, request: ReceivedRequest) => {
  try {
    new Webhook(secret).verify(request.body, signatureHeaders(request));
    return true;
  } catch {
    return false;
  }
};

for (const backend of await availableBackends()) {
  describe(`webhook secret rotation [${backend.name}]`, { timeout: HANG_TIMEOUT_MS }, () => {
    test("two signatures during the overlap, each verifying with its own secret; one after a revoke", () =>
      withWebhooks(backend, {}, () => 204, async (s) => {
        const old = await s.secret();
        await s.complete();
        await s.dispatcher().deliverDue();
        assert.equal(signaturesOf(s.receiver.requests[0]!).length, 1, "no rotation yet: one signature");

        const rotated = (await s.secrets.rotate(s.tenant.companyId, new Date()))!;
        assert.ok(Date.parse(rotated.previousValidUntil!) - Date.now() > 86_000_000, "the previous secret stays valid for 24 h by default");
        await s.complete();
        await s.dispatcher().deliverDue();
        const during = s.receiver.requests[1]!;
        const signatures = signaturesOf(during);
        assert.equal(signatures.length, 2);
        for (const signature of signatures) assert.match(signature, /^v1,[A-Za-z0-9+/]{43}=$/);
        assert.ok(verifies(rotated.secret, during), "the new secret verifies");
        assert.ok(verifies(old, during), "the previous secret verifies");
        // Each signature on its own belongs to one secret.
        const only = (signature: string) => ({ ...during, headers: { ...during.headers, "webhook-signature": signature } });
        assert.deepEqual([verifies(rotated.secret, only(signatures[0]!)), verifies(old, only(signatures[0]!))], [true, false], "the current secret's first");
        assert.deepEqual([verifies(rotated.secret, only(signatures[1]!)), verifies(old, only(signatures[1]!))], [false, true]);
        assert.deepEqual(verifyWebhook(during.headers, during.body, [old, rotated.secret]), JSON.parse(during.body), "the SDK with both secrets");

        assert.equal(await s.secrets.revokePrevious(s.tenant.companyId), rotated.secret);
        await s.complete();
        await s.dispatcher().deliverDue();
        const after = s.receiver.requests[2]!;
        assert.equal(signaturesOf(after).length, 1);
        assert.ok(verifies(rotated.secret, after));
        assert.ok(!verifies(old, after), "the previous secret no longer verifies");
      }));

    test("once the overlap is over, deliveries carry the new signature alone", () =>
      withWebhooks(backend, { WEBHOOK_SECRET_OVERLAP_SECONDS: "3600" }, () => 204, async (s) => {
        const old = await s.secret();
        const rotated = (await s.secrets.rotate(s.tenant.companyId, new Date()))!;
        await s.complete();
        await s.complete();
        // One dispatcher inside the overlap, one with its clock past it.
        await s.dispatcher({ owner: "now" }).deliverDue();
        assert.equal(s.receiver.requests.length, 2);
        assert.equal(signaturesOf(s.receiver.requests[0]!).length, 2);
        await s.complete();
        const later = () => new Date(Date.parse(rotated.previousValidUntil!) + 1000);
        await s.dispatcher({ owner: "later", clock: later }).deliverDue();
        const after = s.receiver.requests[2]!;
        assert.equal(signaturesOf(after).length, 1);
        // Signed at the dispatcher's (later) time: verified as of then.
        const asOfThen = { now: later().getTime() };
        assert.equal(verifyWebhook(after.headers, after.body, rotated.secret, asOfThen).type, "workitem.succeeded");
        assert.throws(() => verifyWebhook(after.headers, after.body, old, asOfThen), /no webhook-signature matches/);
      }));
  });
}
