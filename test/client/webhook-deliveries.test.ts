/**
 * The SDK's webhook delivery methods against the real service process (SPEC §9, §11.3), with the
 * bot and the dispatcher running in it and a receiver on loopback: list and iterate deliveries
 * with their attempts, redeliver one (same webhook-id, fresh signature), and verify deliveries
 * across a secret rotation made with the real CLI: two signatures during the overlap, one after
 * `--revoke-previous`.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { verifyWebhook, WorkItemApiError, WorkItemClient, type AuthorityRvdmWorkItemCreate, type WebhookDelivery } from "../../src/client/index.ts";
import { sqliteBackend } from "../helpers/backends.ts";
import { createKeyWithCli, runCli, startServer, type CliKey, type ServerProcess } from "../helpers/processes.ts";
import { validWorkItem } from "../helpers/test-app.ts";
import { HANG_TIMEOUT_MS, waitUntil } from "../helpers/waiting.ts";
import { startReceiver, type Receiver } from "../helpers/webhook-receiver.ts";

const COMPANY = 73;

describe("WorkItemClient webhook deliveries against the real server", { timeout: HANG_TIMEOUT_MS }, () => {
  let data: Awaited<ReturnType<typeof sqliteBackend.create>>;
  let server: ServerProcess;
  let key: CliKey;
  let receiver: Receiver;
  let sdk: WorkItemClient;
  const secretCli = async (...flags: string[]) => {
    const result = await runCli(["webhooks", "secret", "--company-id", String(COMPANY), ...flags, "--json"], { DATABASE_URL: data.databaseUrl });
    assert.equal(result.code, 0, result.stderr);
    return (JSON.parse(result.stdout) as { secret: string }).secret;
  };
  /** The delivery of `workItemId` once `done` holds for it. */
  const deliveryOf = (workItemId: number, done: (delivery: WebhookDelivery) => boolean) =>
    waitUntil(`the delivery of item ${workItemId}`, async () => (await sdk.listWebhookDeliveries({ workItemId })).deliveries.find(done), undefined, 100);

  before(async () => {
    data = await sqliteBackend.create();
    // The first attempt fails, every later one is accepted.
    receiver = await startReceiver((i) => (i === 0 ? 500 : 204));
    server = await startServer({
      DATABASE_URL: data.databaseUrl,
      RATE_LIMIT_TENANT_RPS: "0",
      BOT_SCHEDULE: "* * * * * *",
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true",
      WEBHOOK_POLL_INTERVAL_MS: "100",
      WEBHOOK_RETRY_BASE_MS: "200",
      WEBHOOK_RETRY_MAX_MS: "400",
    });
    key = await createKeyWithCli(data.databaseUrl, COMPANY);
    sdk = new WorkItemClient({ baseUrl: server.baseUrl, apiKey: key.apiKey, secret: key.secret });
  });
  after(async () => {
    await server?.stop();
    await receiver?.close();
    await data?.cleanup();
  });

  test("list, iterate and redeliver; verify across a rotation with two signatures, then one", async () => {
    const old = await secretCli();
    const first = await sdk.addWorkItemCreate({ ...validWorkItem({ customerReference: "SDK-HOOK-1" }), webhookUrl: receiver.url } as AuthorityRvdmWorkItemCreate);
    const delivered = await deliveryOf(first.workItemId, (d) => d.status === "delivered");
    assert.deepEqual(delivered.attempts.map((a) => a.statusCode), [500, 204]);
    assert.equal(delivered.type, "workitem.succeeded");
    assert.equal(delivered.nextAttemptAt, null);
    assert.equal(receiver.requests[1]!.headers["webhook-id"], delivered.eventId);
    assert.equal(verifyWebhook(receiver.requests[1]!.headers, receiver.requests[1]!.body, old).type, "workitem.succeeded");

    const second = await sdk.addWorkItemCreate({ ...validWorkItem({ customerReference: "SDK-HOOK-2" }), webhookUrl: receiver.url } as AuthorityRvdmWorkItemCreate);
    await deliveryOf(second.workItemId, (d) => d.status === "delivered");
    const all: WebhookDelivery[] = [];
    for await (const delivery of sdk.iterateWebhookDeliveries({ status: "delivered", limit: 1 })) all.push(delivery);
    assert.deepEqual(all.map((d) => d.workItemId), [second.workItemId, first.workItemId], "newest first, page after page");

    // Rotate with the real CLI: the overlap starts, and a redelivery carries both signatures.
    const rotated = await secretCli("--rotate");
    const requestsBefore = receiver.requests.length;
    const due = await sdk.redeliverWebhook(delivered.deliveryId);
    assert.deepEqual([due.deliveryId, due.status, due.eventId], [delivered.deliveryId, "pending", delivered.eventId]);
    await receiver.waitForRequests(requestsBefore + 1);
    const during = receiver.requests[requestsBefore]!;
    assert.equal(during.headers["webhook-id"], delivered.eventId, "the same webhook-id");
    assert.equal(String(during.headers["webhook-signature"]).split(" ").length, 2);
    assert.equal(verifyWebhook(during.headers, during.body, old).data.workItemId, first.workItemId, "the previous secret still verifies");
    assert.equal(verifyWebhook(during.headers, during.body, rotated).data.workItemId, first.workItemId, "the new one too");
    assert.equal((await deliveryOf(first.workItemId, (d) => d.status === "delivered" && d.attempts.length === 3)).attempts.length, 3);

    // End the overlap: only the new secret signs.
    assert.equal(await secretCli("--revoke-previous"), rotated);
    await sdk.redeliverWebhook(delivered.deliveryId);
    await receiver.waitForRequests(requestsBefore + 2);
    const after = receiver.requests[requestsBefore + 1]!;
    assert.equal(String(after.headers["webhook-signature"]).split(" ").length, 1);
    assert.equal(verifyWebhook(after.headers, after.body, [old, rotated]).type, "workitem.succeeded");
    assert.throws(() => verifyWebhook(after.headers, after.body, old), /no webhook-signature matches/);

    await assert.rejects(sdk.redeliverWebhook(987_654_321), (error: unknown) => error instanceof WorkItemApiError && error.status === 404);
    await assert.rejects(sdk.listWebhookDeliveries({ status: "Delivered" as never }), (error: unknown) => error instanceof WorkItemApiError && error.status === 400 && "status" in (error.errors ?? {}));
  });
});
