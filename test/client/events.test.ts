/**
 * The SDK's event feed (SPEC §9, §11.2) against the real route over loopback HTTP: one page,
 * the async iterator over every page, filters, resuming from `cursor`, and following the feed
 * until aborted.
 */
import assert from "node:assert/strict";
import type { AddressInfo } from "node:net";
import { describe, test } from "node:test";
import { WorkItemApiError, WorkItemClient, type AuthorityRvdmWorkItemCreate, type FeedEvent } from "../../src/client/index.ts";
import { sqliteBackend } from "../helpers/backends.ts";
import { withBot, type Setup } from "../helpers/bot-harness.ts";
import { validWorkItem } from "../helpers/test-app.ts";
import { HANG_TIMEOUT_MS, waitUntil } from "../helpers/waiting.ts";

const item = (overrides: Record<string, unknown> = {}) => validWorkItem(overrides) as AuthorityRvdmWorkItemCreate;

/** The test app listening on loopback, and an SDK client of the harness's company. */
async function withClient(body: (s: Setup, client: WorkItemClient) => Promise<void>): Promise<void> {
  await withBot(sqliteBackend, {}, async (s) => {
    await s.t.app.listen({ port: 0, host: "127.0.0.1" });
    const { port } = s.t.app.server.address() as AddressInfo;
    await body(s, new WorkItemClient({ baseUrl: `http://127.0.0.1:${port}`, apiKey: s.tenant.apiKey, secret: s.tenant.secret }));
  });
}

const collect = async (events: AsyncIterable<FeedEvent>) => {
  const seen: FeedEvent[] = [];
  for await (const event of events) seen.push(event);
  return seen;
};

describe("WorkItemClient event feed", { timeout: HANG_TIMEOUT_MS }, () => {
  test("events() walks every page oldest first, filters by type, and resumes from its cursor", () =>
    withClient(async ({ run }, client) => {
      const ids = [];
      for (const ref of ["E-1", "E-2", "E-3", "E-4"]) ids.push((await client.addWorkItemCreate(item({ customerReference: ref }))).workItemId);
      ids.push((await client.addWorkItemCreate(item({ customerReference: "E-bad", senderChamberOfCommerceNo: { sendValue: "123" } }))).workItemId);
      assert.deepEqual(await run(), { batches: 1, submitted: 5, succeeded: 4, failed: 1, retried: 0 });

      const page = await client.listEvents({ limit: 500 });
      assert.equal(page.events.length, 5);
      const stream = client.events({ limit: 2 });
      assert.deepEqual(await collect(stream), page.events, "three pages of 2, 2 and 1");
      assert.equal(stream.cursor, page.nextCursor);
      assert.deepEqual(await collect(client.events({ after: stream.cursor })), [], "nothing after the end");

      const failed = await collect(client.events({ type: "workitem.failed" }));
      assert.deepEqual(failed.map((e) => [e.type, e.data.workItemId, e.data.error?.code]), [["workitem.failed", ids[4], "AUTHORITY_REJECTED"]]);
      assert.deepEqual((await client.listEvents({ workItemId: ids[0]! })).events.map((e) => e.type), ["workitem.succeeded"]);

      const error = await client.listEvents({ after: "garbage" }).catch((e: unknown) => e);
      assert.ok(error instanceof WorkItemApiError);
      assert.equal(error.status, 400);
      assert.deepEqual(Object.keys(error.errors ?? {}), ["after"]);
    }));

  test("follow: a stream that caught up gets newer events as they are committed, and ends when aborted", () =>
    withClient(async ({ run }, client) => {
      await client.addWorkItemCreate(item({ customerReference: "F-1" }));
      await run();
      const stop = new AbortController();
      const seen: FeedEvent[] = [];
      const stream = client.events({}, { follow: true, pollIntervalMs: 200, signal: stop.signal });
      const following = (async () => {
        for await (const event of stream) seen.push(event);
      })();
      try {
        await waitUntil("the first event", () => seen.length === 1, 30_000);
        const later = await client.addWorkItemCreate(item({ customerReference: "F-2" }));
        await run();
        await waitUntil("the event committed after the stream caught up", () => seen.length === 2, 30_000);
        assert.equal(seen[1]!.data.workItemId, later.workItemId);
      } finally {
        // Also when a step above fails: a stream left following would keep the server busy.
        stop.abort();
        await following;
      }
      assert.equal(seen.length, 2);
      assert.deepEqual(await collect(client.events({ after: stream.cursor })), [], "its cursor is past both");
    }));
});
