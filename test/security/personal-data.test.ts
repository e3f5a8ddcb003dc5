/**
 * Logs, spans and metrics carry ids, never a value an integrator wrote (SPEC §22, the personal-data
 * map in docs/security.md). The real process, on each store, takes two items their whole way with
 * values found nowhere else: intake under a traceparent, a read and a list filtered by the
 * customer reference, a refused add that echoes a value in its problem, the bot filing against the
 * simulated authority (one item registered, one rejected with the value in the authority's
 * reasons), a webhook delivery of each, the event feed. The process logs at trace (everything it can log) to stdout, exports
 * every span over OTLP, and /metrics is scraped at the end. None of the values is in any of them,
 * while the webhook receiver and the API's own answers hold them (the places the map names), so the
 * search looks for text that really travelled.
 */
import assert from "node:assert/strict";
import { randomInt } from "node:crypto";
import { after, describe, test } from "node:test";
import { availableBackends } from "../helpers/backends.ts";
import { newTraceParent } from "../helpers/otlp-receiver.ts";
import { stopAll } from "../helpers/processes.ts";
import { validWorkItem } from "../helpers/test-app.ts";
import { withRig } from "../helpers/traced-rig.ts";
import { HANG_TIMEOUT_MS, waitUntil } from "../helpers/waiting.ts";

after(() => stopAll());

const COMPANY = 2201;

/** Values of one item, each made for this run; chamber numbers are 8 digits, as the authority asks. */
function distinctiveItem(tag: string, chamberNumbers: [string, string]) {
  return {
    customerReference: `PDCUST-${tag}`,
    documentReference: `PDDOC-${tag}`,
    productName: { sendValue: `PDPRODUCT-${tag}`, documentValue: `Pd product document value ${tag}` },
    destinationRegion: { sendValue: `PDREGION-${tag}` },
    senderChamberOfCommerceNo: { sendValue: chamberNumbers[0], documentValue: `Pd sender ${tag}` },
    receiverChamberOfCommerceNo: { sendValue: chamberNumbers[1] },
    requestNo: { sendValue: `PDREQUEST-${tag}` },
  };
}

/** An 8-digit number that starts with a 9, so no id or port of the run is likely to hold it. */
const chamberNumber = () => `9${String(randomInt(0, 10_000_000)).padStart(7, "0")}`;

/** Where `value` stands in `text` as itself: a number not inside a longer number. */
const holds = (text: string, value: string) =>
  /^[0-9]+$/.test(value) ? new RegExp(`(?<![0-9])${value}(?![0-9])`).test(text) : text.toLowerCase().includes(value.toLowerCase());

for (const backend of await availableBackends()) {
  describe(`personal data stays out of logs, spans and metrics [${backend.name}]`, { timeout: HANG_TIMEOUT_MS }, () => {
    test("two items their whole way: no value an integrator wrote in the log, a span or /metrics; ids only", async () => {
      // The log at trace: everything the process can log.
      await withRig(backend, { companyId: COMPANY, roles: "one", protocol: "http/json", env: { LOG_LEVEL: "trace" } }, async ({ otlp, hooks, api: server, bearerToken: token }) => {
        const tag = `${Date.now().toString(36)}${randomInt(0, 1_000_000).toString(36)}`.toUpperCase();
        const filed = distinctiveItem(`${tag}A`, [chamberNumber(), chamberNumber()]);
        // The authority rejects a chamber number that is not 8 digits, and its reason quotes the value.
        const rejected = distinctiveItem(`${tag}B`, [`PDBADCHAMBER-${tag}`, chamberNumber()]);
        const webhookUrl = `${hooks.url}/hooks/PDHOOKPATH-${tag}`;
        const values = [filed, rejected].flatMap((item) => [
          item.customerReference,
          item.documentReference,
          item.productName.sendValue,
          item.productName.documentValue,
          item.destinationRegion.sendValue,
          item.senderChamberOfCommerceNo.sendValue,
          item.senderChamberOfCommerceNo.documentValue,
          item.receiverChamberOfCommerceNo.sendValue,
          item.requestNo.sendValue,
        ]);
        values.push(`PDHOOKPATH-${tag}`, `PDINVALID-${tag}`, `PDREASON-${tag}`);

        const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
          const response = await fetch(`${server.baseUrl}${path}`, {
            method,
            headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers },
            ...(body === undefined ? {} : { body: JSON.stringify(body) }),
          });
          return { status: response.status, text: await response.text() };
        };

        const ids: number[] = [];
        for (const item of [filed, rejected]) {
          const added = await call("POST", "/api/AuthorityRvdm/AddWorkItemCreate", validWorkItem({ ...item, webhookUrl }), { traceparent: newTraceParent().traceparent, "idempotency-key": `PDKEY-${item.customerReference}` });
          assert.equal(added.status, 200, added.text);
          ids.push((JSON.parse(added.text) as { workItemId: number }).workItemId);
        }
        values.push(...[filed, rejected].map((item) => `PDKEY-${item.customerReference}`));
        const refused = await call("POST", "/api/AuthorityRvdm/AddWorkItemCreate", validWorkItem({ customerReference: `PDINVALID-${tag}`.padEnd(120, "X") }));
        assert.equal(refused.status, 400);
        assert.ok(refused.text.length > 0);

        const [filedId, rejectedId] = ids as [number, number];
        const statusOf = async (id: number) => (JSON.parse((await call("GET", `/api/AuthorityRvdm/WorkItem/${id}`)).text) as { status: string }).status;
        await waitUntil("both items decided", async () => (await statusOf(filedId)) === "Successful" && (await statusOf(rejectedId)) === "Failed", undefined, 100);
        await hooks.waitForRequests(2);
        const listed = await call("GET", `/api/AuthorityRvdm/WorkItems?customerReference=${encodeURIComponent(filed.customerReference)}`);
        assert.ok(holds(listed.text, filed.customerReference), "the API answers the item's values: they really travelled");
        const events = await call("GET", "/api/Events");
        assert.ok(holds(events.text, rejected.senderChamberOfCommerceNo.sendValue), "the event feed holds the views, with the authority's reasons");
        const withdraw = await call("POST", "/api/AuthorityRvdm/AddWorkItemWithdraw", { originalWorkItemId: filedId, customerReference: `PDWITHDRAW-${tag}`, reason: `PDREASON-${tag}` });
        assert.equal(withdraw.status, 200, withdraw.text);
        values.push(`PDWITHDRAW-${tag}`);
        const withdrawId = (JSON.parse(withdraw.text) as { workItemId: number }).workItemId;
        await waitUntil("the withdrawal decided", async () => ["Successful", "Failed"].includes(await statusOf(withdrawId)), undefined, 100);
        await hooks.waitForRequests(3);

        const received = hooks.requests.map((request) => `${request.path}\n${request.body}`).join("\n");
        for (const value of [filed.customerReference, filed.productName.documentValue, rejected.senderChamberOfCommerceNo.sendValue]) {
          assert.ok(holds(received, value), `the webhook receiver holds ${value}: the payload is the item's view`);
        }
        // Every span of the items' lives: their intakes, the authority calls, and a span for each delivery received.
        await waitUntil("a span for every delivery", () => otlp.spans.filter((span) => span.name === "webhook delivery").length >= hooks.requests.length, undefined, 50);
        const metrics = await (await fetch(`${server.baseUrl}/metrics`)).text();
        assert.match(metrics, /work_item_api_work_items_created_total/);

        const places = {
          log: `${server.lines.join("\n")}\n${server.output()}`,
          spans: JSON.stringify(otlp.spans) + otlp.rawBodies.map((raw) => raw.body.toString("latin1")).join(""),
          metrics,
        };
        // What is searched holds the run: a log line per request, and the items' spans by id.
        assert.ok(places.log.includes(`"companyId":${COMPANY}`) && places.log.includes('"route":"/api/AuthorityRvdm/WorkItems"'), "the requests are logged");
        for (const id of [filedId, rejectedId, withdrawId]) assert.ok(otlp.spans.some((span) => span.attributes["work_item_api.work_item_id"] === id), `item ${id}'s spans are there`);
        const found = Object.entries(places).flatMap(([place, text]) => values.filter((value) => holds(text, value)).map((value) => `${value} in the ${place}`));
        assert.deepEqual(found, [], "no value an integrator wrote");
      });
    });
  });
}
