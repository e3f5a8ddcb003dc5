/**
 * Traces (SPEC §17), black box: real server processes export to an OTLP receiver, the simulated
 * authority and a webhook receiver say what `traceparent` they were sent.
 * - One trace per item: the intake's server span (under an incoming `traceparent`, or starting
 *   the trace), the bot's authority calls, and every webhook delivery about the item; for creates,
 *   changes, withdrawals and bulk adds; with one process on SQLite and with an api and a worker
 *   process on PostgreSQL.
 * - Log lines inside a span carry trace_id and span_id; a problem's traceId is the trace id.
 * - No span carries a secret. OTLP over http/protobuf as well as http/json.
 */
import assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import { availableBackends, queryRows, sqliteBackend } from "../helpers/backends.ts";
import { newTraceParent, type ReceivedSpan } from "../helpers/otlp-receiver.ts";
import { parseLine, stopAll } from "../helpers/processes.ts";
import { validWorkItem } from "../helpers/test-app.ts";
import { withRig, type Rig } from "../helpers/traced-rig.ts";
import { HANG_TIMEOUT_MS, waitUntil } from "../helpers/waiting.ts";

after(() => stopAll());

const COMPANY = 1701;
const SERVER = 2;
const CLIENT = 3;

const successful = (rig: Rig, id: number) =>
  waitUntil(`item ${id} to succeed`, async () => {
    const rows = await queryRows<{ status: string }>(rig.location, "SELECT status FROM work_items WHERE company_id = $1 AND work_item_id = $2", [COMPANY, id]);
    return rows[0]?.status === "Successful";
  }, undefined, 100);

/** The spans of one trace, once those named have all arrived. */
async function traceOf(rig: Rig, traceId: string, names: string[]): Promise<ReceivedSpan[]> {
  for (const name of names) await rig.otlp.waitForSpan(`a "${name}" span in trace ${traceId}`, (span) => span.traceId === traceId && span.name === name);
  return rig.otlp.spans.filter((span) => span.traceId === traceId);
}

const webhookTraceparents = (rig: Rig, id: number) =>
  rig.hooks.requests.filter((request) => (JSON.parse(request.body) as { data: { workItemId: number } }).data.workItemId === id).map((request) => String(request.headers.traceparent ?? ""));

/** Checks what every item's trace must hold; returns the intake's server span. */
async function assertItemTrace(rig: Rig, id: number, traceId: string, call: "submit" | "change" | "withdraw", intakeRoute: string): Promise<ReceivedSpan> {
  await successful(rig, id);
  await waitUntil(`a webhook about item ${id}`, () => webhookTraceparents(rig, id).length > 0, undefined, 50);
  const spans = await traceOf(rig, traceId, [`POST ${intakeRoute}`, `authority ${call}`, "webhook delivery"]);
  const intake = spans.find((span) => span.name === `POST ${intakeRoute}`)!;
  assert.equal(intake.kind, SERVER);
  assert.equal(intake.attributes["http.route"], intakeRoute);
  assert.equal(intake.attributes["work_item_api.company_id"], COMPANY);
  // A bulk add's items share a trace: each item's spans are told apart by its id.
  const ofItem = (name: string) => waitUntil(`a "${name}" span of item ${id}`, () => rig.otlp.spans.find((span) => span.traceId === traceId && span.name === name && span.attributes["work_item_api.work_item_id"] === id), undefined, 50);
  const authority = await ofItem(`authority ${call}`);
  assert.equal(authority.kind, CLIENT);
  assert.equal(authority.parentSpanId, intake.spanId, "the bot's call is a child of the item's intake");
  assert.equal(authority.attributes["work_item_api.work_item_id"], id);
  // The pass ends after its calls, so its span may reach the receiver a batch later.
  assert.ok(authority.links.length > 0, "the bot's call links to the pass that made it");
  await rig.otlp.waitForSpan(`the pass that made item ${id}'s call`, (span) => span.name === "bot pass" && authority.links.some((link) => link.spanId === span.spanId));
  const delivery = await ofItem("webhook delivery");
  assert.equal(delivery.kind, CLIENT);
  assert.equal(delivery.parentSpanId, intake.spanId);
  assert.equal(delivery.attributes["work_item_api.work_item_id"], id);
  assert.ok(typeof delivery.attributes["work_item_api.webhook.event_id"] === "string");
  // What the authority and the webhook receiver were sent: traceparents in the item's trace.
  const sent = rig.sim.stats().keys[String(id)]!.traceparents;
  assert.ok(sent.length > 0 && sent.every((header) => header.split("-")[1] === traceId), `the authority got the trace: ${sent}`);
  assert.ok(webhookTraceparents(rig, id).every((header) => header.split("-")[1] === traceId));
  return intake;
}

test("one trace per item, one process on SQLite: create, change and withdraw, bulk, and an item without a traceparent", { timeout: HANG_TIMEOUT_MS }, async () => {
  await withRig(sqliteBackend, { companyId: COMPANY, roles: "one", protocol: "http/json" }, async (rig) => {
    const hook = `${rig.hooks.url}/hooks`;
    const created = newTraceParent();
    const add = await rig.post("AddWorkItemCreate", validWorkItem({ webhookUrl: hook }), created.traceparent);
    assert.equal(add.status, 200);
    const original = Number(add.body.workItemId);
    const intake = await assertItemTrace(rig, original, created.traceId, "submit", "/api/AuthorityRvdm/AddWorkItemCreate");
    assert.equal(intake.parentSpanId, created.spanId, "the incoming traceparent is honoured");
    assert.equal(intake.service, "work-item-api-under-test");
    await traceOf(rig, created.traceId, ["authority status"]);

    const changeTrace = newTraceParent();
    const change = await rig.post("AddWorkItemChange", { originalWorkItemId: original, customerReference: "CHANGE-1", changes: { plannedLoad: 20 }, webhookUrl: hook }, changeTrace.traceparent);
    assert.equal(change.status, 200, JSON.stringify(change.body));
    await assertItemTrace(rig, Number(change.body.workItemId), changeTrace.traceId, "change", "/api/AuthorityRvdm/AddWorkItemChange");

    const withdrawTrace = newTraceParent();
    const withdraw = await rig.post("AddWorkItemWithdraw", { originalWorkItemId: original, customerReference: "WITHDRAW-1", reason: "called off", webhookUrl: hook }, withdrawTrace.traceparent);
    assert.equal(withdraw.status, 200, JSON.stringify(withdraw.body));
    await assertItemTrace(rig, Number(withdraw.body.workItemId), withdrawTrace.traceId, "withdraw", "/api/AuthorityRvdm/AddWorkItemWithdraw");

    const bulkTrace = newTraceParent();
    const bulk = await rig.post("AddWorkItemCreateBulk", { items: [validWorkItem({ webhookUrl: hook, customerReference: "B-1" }), validWorkItem({ webhookUrl: hook, customerReference: "B-2" })] }, bulkTrace.traceparent);
    assert.equal(bulk.status, 200, JSON.stringify(bulk.body));
    for (const result of bulk.body.results as Array<{ workItemId: number }>) {
      await assertItemTrace(rig, result.workItemId, bulkTrace.traceId, "submit", "/api/AuthorityRvdm/AddWorkItemCreateBulk");
    }

    // Without a traceparent, the intake span starts the item's trace.
    const untraced = await rig.post("AddWorkItemCreate", validWorkItem({ webhookUrl: hook, customerReference: "U-1" }));
    const untracedId = Number(untraced.body.workItemId);
    const own = await rig.otlp.waitForSpan("the untraced add's server span", (span) => span.name === "POST /api/AuthorityRvdm/AddWorkItemCreate" && span.parentSpanId === "" && span.traceId !== created.traceId);
    await assertItemTrace(rig, untracedId, own.traceId, "submit", "/api/AuthorityRvdm/AddWorkItemCreate");

    // A problem's traceId is the trace id; the log lines of the request carry it.
    const badTrace = newTraceParent();
    const bad = await rig.post("AddWorkItemCreate", { customerReference: "" }, badTrace.traceparent);
    assert.equal(bad.status, 400);
    assert.equal(bad.body.traceId, badTrace.traceId);
    await waitUntil("a log line in the bad request's trace", () => rig.api.lines.some((line) => parseLine(line)?.trace_id === badTrace.traceId), undefined, 50);
    const logged = rig.api.lines.map(parseLine).find((line) => line?.trace_id === badTrace.traceId)!;
    assert.match(String(logged.span_id), /^[0-9a-f]{16}$/);

    // No span carries a secret: not the API secret, the bearer token, or a webhook secret.
    const exported = JSON.stringify(rig.otlp.spans);
    for (const secret of rig.secrets) assert.ok(!exported.includes(secret), "a secret in a span");
    assert.ok(!/whsec_|Bearer /i.test(exported), "a webhook secret or a bearer token in a span");
    assert.ok(!rig.otlp.spans.some((span) => span.name.includes("healthz") || span.name.includes("metrics")), "health and metrics are not traced");
  });
});

for (const backend of (await availableBackends()).filter((candidate) => candidate.name === "postgres")) {
  describe("tracing across processes [postgres]", { timeout: HANG_TIMEOUT_MS }, () => {
    test("an api and a worker process: the intake in one, the authority call and the webhook in the other, one trace", async () => {
      await withRig(backend, { companyId: COMPANY, roles: "two", protocol: "http/json" }, async (rig) => {
        const created = newTraceParent();
        const add = await rig.post("AddWorkItemCreate", validWorkItem({ webhookUrl: `${rig.hooks.url}/hooks` }), created.traceparent);
        assert.equal(add.status, 200);
        await assertItemTrace(rig, Number(add.body.workItemId), created.traceId, "submit", "/api/AuthorityRvdm/AddWorkItemCreate");
        const spans = rig.otlp.spans.filter((span) => span.traceId === created.traceId);
        const [api, worker] = rig.processes.map((process) => process.pid);
        const pidOf = (name: string) => spans.find((span) => span.name === name)!.pid;
        // The launcher's pid leads a process group; the node process is that pid or its child.
        assert.notEqual(pidOf("POST /api/AuthorityRvdm/AddWorkItemCreate"), pidOf("authority submit"), `two processes (api ${api}, worker ${worker})`);
        assert.equal(pidOf("authority submit"), pidOf("webhook delivery"));
      });
    });
  });
}

test("OTLP over http/protobuf: the exporter posts protobuf with the item's trace id", { timeout: HANG_TIMEOUT_MS }, async () => {
  await withRig(sqliteBackend, { companyId: COMPANY, roles: "one", protocol: "http/protobuf" }, async (rig) => {
    const created = newTraceParent();
    const add = await rig.post("AddWorkItemCreate", validWorkItem(), created.traceparent);
    assert.equal(add.status, 200);
    await successful(rig, Number(add.body.workItemId));
    const traceBytes = Buffer.from(created.traceId, "hex");
    await waitUntil("protobuf spans of the item's trace", () => rig.otlp.rawBodies.some(({ body }) => body.includes(traceBytes)), undefined, 50);
    assert.ok(rig.otlp.rawBodies.every(({ contentType }) => contentType === "application/x-protobuf"));
    assert.deepEqual(rig.otlp.spans, [], "nothing came as JSON");
    assert.ok(rig.sim.stats().keys[String(add.body.workItemId)]!.traceparents.every((header) => header.includes(created.traceId)));
  });
});
