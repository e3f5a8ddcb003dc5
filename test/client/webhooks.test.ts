/** verifyWebhook against signatures made by the reference `standardwebhooks` package. */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import fc from "fast-check";
import { Webhook } from "standardwebhooks";
import { verifyWebhook, WebhookVerificationError } from "../../src/client/index.ts";
import type { WebhookEvent } from "../../src/client/index.ts";
import { newWebhookSecret } from "../../src/webhooks/secrets.ts";
import { signEvent } from "../../src/webhooks/signing.ts";

const secret = newWebhookSecret();
const event = { type: "workitem.succeeded", timestamp: "2026-11-21T14:04:02.000Z", data: { workItemId: 4711, status: "Successful" } };
const body = JSON.stringify(event);

function signed(payload: string, options: { id?: string; at?: Date; key?: string } = {}) {
  const id = options.id ?? "msg_2Kc0x";
  const at = options.at ?? new Date();
  return {
    "webhook-id": id,
    "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
    "webhook-signature": new Webhook(options.key ?? secret).sign(id, at, payload),
  };
}

const refusal = (fn: () => unknown) => {
  try {
    fn();
  } catch (error) {
    assert.ok(error instanceof WebhookVerificationError, String(error));
    return error.message;
  }
  assert.fail("expected a WebhookVerificationError");
};

describe("verifyWebhook", () => {
  test("accepts a standardwebhooks signature and returns the parsed event", () => {
    assert.deepEqual(verifyWebhook(signed(body), body, secret), event);
  });

  test("takes Node's header record, a fetch Headers and a Buffer body alike", () => {
    const headers = signed(body);
    const upper = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toUpperCase(), v]));
    assert.deepEqual(verifyWebhook(upper, Buffer.from(body), secret), event);
    assert.deepEqual(verifyWebhook(new Headers(headers), new TextEncoder().encode(body), secret), event);
  });

  test("one matching signature among several is enough (secret rotation)", () => {
    const headers = signed(body);
    const other = signed(body, { key: newWebhookSecret() })["webhook-signature"];
    headers["webhook-signature"] = `v1,${Buffer.alloc(32).toString("base64")} ${other} v2,abc ${headers["webhook-signature"]}`;
    assert.deepEqual(verifyWebhook(headers, body, secret), event);
  });

  test("a header with the service's two signatures (rotation overlap) verifies with either secret alone", () => {
    const previous = newWebhookSecret();
    const at = new Date();
    const { headers, body: signedBody } = signEvent(event as unknown as WebhookEvent, "msg_rotated", [secret, previous], at);
    assert.equal(headers["webhook-signature"]!.split(" ").length, 2);
    assert.deepEqual(verifyWebhook(headers, signedBody, secret), event);
    assert.deepEqual(verifyWebhook(headers, signedBody, previous), event);
    assert.match(refusal(() => verifyWebhook(headers, signedBody, newWebhookSecret())), /no webhook-signature matches/);
    // The reference library agrees.
    assert.deepEqual(new Webhook(previous).verify(signedBody, headers), event);
  });

  test("a verifier given two secrets accepts a signature by either, and refuses when neither matches", () => {
    const next = newWebhookSecret();
    assert.deepEqual(verifyWebhook(signed(body), body, [next, secret]), event);
    assert.deepEqual(verifyWebhook(signed(body, { key: next }), body, [next, secret]), event);
    assert.match(refusal(() => verifyWebhook(signed(body, { key: newWebhookSecret() }), body, [next, secret])), /no webhook-signature matches/);
    assert.match(refusal(() => verifyWebhook(signed(body), body, [])), /no webhook secret/);
  });

  test("refuses a wrong secret, a changed body, and a signature of another id", () => {
    assert.match(refusal(() => verifyWebhook(signed(body), body, newWebhookSecret())), /no webhook-signature matches/);
    assert.match(refusal(() => verifyWebhook(signed(body), body.replace("4711", "4712"), secret)), /no webhook-signature matches/);
    const headers = signed(body);
    headers["webhook-id"] = "msg_other";
    assert.match(refusal(() => verifyWebhook(headers, body, secret)), /no webhook-signature matches/);
  });

  test("refuses timestamps outside 5 minutes either way", () => {
    const now = Date.now();
    assert.match(refusal(() => verifyWebhook(signed(body, { at: new Date(now - 301_000) }), body, secret, { now })), /old/);
    assert.match(refusal(() => verifyWebhook(signed(body, { at: new Date(now + 301_000) }), body, secret, { now })), /future/);
    assert.deepEqual(verifyWebhook(signed(body, { at: new Date(now - 299_000) }), body, secret, { now }), event);
  });

  test("names the missing header", () => {
    for (const name of ["webhook-id", "webhook-timestamp", "webhook-signature"]) {
      const headers: Record<string, string> = signed(body);
      delete headers[name];
      assert.match(refusal(() => verifyWebhook(headers, body, secret)), new RegExp(`${name} header is missing`));
    }
  });

  test("agrees with standardwebhooks' own verify on arbitrary payloads and ids", () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 40 }).filter((s) => !/[\s.]/.test(s)), fc.json(), fc.boolean(), (id, json, tamper) => {
        const payload = JSON.stringify({ type: "workitem.failed", timestamp: "t", data: JSON.parse(json) });
        const headers = signed(payload, { id });
        const received = tamper ? `${payload} ` : payload;
        let reference = true;
        try {
          new Webhook(secret).verify(received, headers);
        } catch {
          reference = false;
        }
        let ours = true;
        try {
          verifyWebhook(headers, received, secret);
        } catch {
          ours = false;
        }
        assert.equal(ours, reference);
        assert.equal(ours, !tamper);
      }),
      { numRuns: 200 },
    );
  });
});
