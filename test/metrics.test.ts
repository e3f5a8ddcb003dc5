/** GET /metrics: what is counted, by which labels, per app instance, and how it is turned off. */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { Histogram, Registry } from "prom-client";
import { botMetricsEvents, createMetrics, webhookMetricsEvents, type Metrics, type StoreCountSource } from "../src/metrics.ts";
import { RequestDurationHistogram } from "../src/request-duration-histogram.ts";
import { availableBackends } from "./helpers/backends.ts";
import { metricValue } from "./helpers/prometheus.ts";
import { bearer, createTestApp, validWorkItem, type TestApp } from "./helpers/test-app.ts";

const DURATION_COUNT = "work_item_api_http_request_duration_seconds_count";

test("the request-duration histogram prints exactly the samples prom-client's Histogram prints", async () => {
  const bounds = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];
  const reference = new Registry();
  const ours = new Registry();
  const histogram = new Histogram({ name: "h_seconds", help: "help", labelNames: ["method", "route", "status_code"], buckets: bounds, registers: [reference] });
  const fast = new RequestDurationHistogram("h_seconds", "help", bounds, ours);
  const observations: Array<[string, string, number, number]> = [
    ["GET", "/a/:id", 200, 0.0004],
    ["GET", "/a/:id", 200, 0.001], // on a bound: counted in that bucket
    ["GET", "/a/:id", 200, 0.0031],
    ["POST", "/b", 404, 7], // above every bound: only +Inf
    ["GET", "/a/:id", 500, 0.3],
    ["GET", 'un"matched', 200, 0.02],
  ];
  for (const [method, route, status, seconds] of observations) {
    histogram.observe({ method, route, status_code: String(status) }, seconds);
    fast.observe(method, route, status, seconds);
  }
  const lines = async (registry: Registry) => (await registry.metrics()).split("\n").sort();
  assert.deepEqual(await lines(ours), await lines(reference));
  fast.reset();
  histogram.reset();
  assert.deepEqual(await lines(ours), await lines(reference));
});

for (const backend of await availableBackends()) {
  describe(`GET /metrics [${backend.name}]`, () => {
    let t: TestApp;
    before(async () => {
      t = await createTestApp(backend);
    });
    after(() => t.close());
    const scrape = async (app = t) => {
      const response = await app.app.inject({ url: "/metrics" });
      assert.equal(response.statusCode, 200);
      assert.match(String(response.headers["content-type"]), /^text\/plain; version=0\.0\.4/);
      return response.body;
    };

    test("counts requests by route pattern and status, items created and tokens issued", async () => {
      const tenant = await t.tenant(81);
      const body = validWorkItem();
      const add = (headers: Record<string, string> = {}) =>
        t.app.inject({ method: "POST", url: "/api/AuthorityRvdm/AddWorkItemCreate", headers: { ...bearer(tenant.token), ...headers }, payload: body });
      const first = (await add({ "idempotency-key": "m-1" })).json<{ workItemId: number }>();
      const replay = await add({ "idempotency-key": "m-1" });
      assert.equal(replay.headers["idempotency-replayed"], "true");
      const second = (await add()).json<{ workItemId: number }>();
      for (const id of [first.workItemId, second.workItemId, 999_999]) {
        await t.app.inject({ url: `/api/AuthorityRvdm/WorkItem/${id}`, headers: bearer(tenant.token) });
      }
      await t.app.inject({ url: "/no/such/path/12345" });

      const text = await scrape();
      const route = "/api/AuthorityRvdm/WorkItem/:workItemId";
      assert.equal(metricValue(text, DURATION_COUNT, { method: "GET", route, status_code: "200" }), 2, "both ids under one route label");
      assert.equal(metricValue(text, DURATION_COUNT, { method: "GET", route, status_code: "404" }), 1);
      assert.equal(metricValue(text, DURATION_COUNT, { method: "POST", route: "/api/AuthorityRvdm/AddWorkItemCreate", status_code: "200" }), 3);
      assert.equal(metricValue(text, DURATION_COUNT, { route: "unmatched", status_code: "404" }), 1);
      assert.doesNotMatch(text, /route="[^"]*(\d{3,}|no\/such)/, "no raw URL in a label");
      assert.equal(metricValue(text, "work_item_api_work_items_created_total", { work_type: "AuthorityRvdm" }), 2, "a replay is not a new item");
      assert.equal(metricValue(text, "work_item_api_tokens_issued_total"), 1);
      for (const name of ["bot_runs_total", "bot_item_outcomes_total", "webhook_deliveries_total", "outbox_backlog", "items_overdue", "bot_schedule_interval_seconds"]) {
        assert.match(text, new RegExp(`# TYPE work_item_api_${name} `), name);
      }
    });

    test("every app instance has its own registry", async () => {
      const other = await createTestApp(backend);
      try {
        await other.tenant(82);
        await other.tenant(83);
        assert.equal(metricValue(await scrape(other), "work_item_api_tokens_issued_total"), 2);
        assert.equal(metricValue(await scrape(), "work_item_api_tokens_issued_total"), 1);
      } finally {
        await other.close();
      }
    });

    test("METRICS_ENABLED=false removes the route and its documentation", async () => {
      const off = await createTestApp(backend, { METRICS_ENABLED: "false" });
      try {
        assert.equal((await off.app.inject({ url: "/metrics" })).statusCode, 404);
        const doc = (await off.app.inject({ url: "/openapi.json" })).json<{ paths: Record<string, unknown> }>();
        assert.equal(doc.paths["/metrics"], undefined);
      } finally {
        await off.close();
      }
    });
  });
}

describe("createMetrics recorders", () => {
  test("the bot and the dispatcher record runs, item outcomes and deliveries", async () => {
    const metrics = createMetrics();
    metrics.recordBotRun("completed");
    metrics.recordBotRun("failed");
    metrics.recordBotItem("succeeded", 3);
    metrics.recordBotItem("failed");
    metrics.recordWebhookDelivery("delivered");
    metrics.recordWebhookDelivery("retried");
    const { body } = await metrics.render();
    assert.equal(metricValue(body, "work_item_api_bot_runs_total", { outcome: "completed" }), 1);
    assert.equal(metricValue(body, "work_item_api_bot_runs_total"), 2);
    assert.equal(metricValue(body, "work_item_api_bot_item_outcomes_total", { outcome: "succeeded" }), 3);
    assert.equal(metricValue(body, "work_item_api_webhook_deliveries_total", { outcome: "retried" }), 1);
  });

  test("filed items count as on time or late, with their slack in the histogram; items without a deadline are not counted", async () => {
    const metrics = createMetrics();
    const bot = botMetricsEvents(metrics);
    bot.itemSubmitted({ deadlineAt: "2026-11-25T11:00:00.000Z", submittedAt: "2026-11-25T10:00:00.000Z" });
    bot.itemSubmitted({ deadlineAt: "2026-11-25T11:00:00.000Z", submittedAt: "2026-11-25T11:00:00.000Z" });
    bot.itemSubmitted({ deadlineAt: "2026-11-25T11:00:00.000Z", submittedAt: "2026-11-25T11:05:00.000Z" });
    bot.itemSubmitted({ deadlineAt: null, submittedAt: "2026-11-25T11:05:00.000Z" });
    const { body } = await metrics.render();
    assert.equal(metricValue(body, "work_item_api_bot_submits_total", { timing: "on_time" }), 2, "at the deadline itself is on time");
    assert.equal(metricValue(body, "work_item_api_bot_submits_total", { timing: "late" }), 1);
    assert.equal(metricValue(body, "work_item_api_bot_submit_slack_seconds_count"), 3);
    assert.equal(metricValue(body, "work_item_api_bot_submit_slack_seconds_sum"), 3600 + 0 - 300);
    assert.equal(metricValue(body, "work_item_api_bot_submit_slack_seconds_bucket", { le: "0" }), 2, "late and exactly on time");
  });

  test("the bot's and the dispatcher's event hooks record into the metrics", async () => {
    const metrics = createMetrics();
    const bot = botMetricsEvents(metrics);
    const hooks = webhookMetricsEvents(metrics);
    bot.itemFinished({ result: "retried" });
    bot.runFinished({});
    bot.runFinished({ error: new Error("store down") });
    assert.equal(metricValue((await metrics.render()).body, "work_item_api_bot_last_lap_timestamp_seconds"), 0, "no lap yet");
    bot.lapRecorded({ finishedAt: "2026-11-25T11:00:00.500Z" });
    hooks.deliveryAttempted({ outcome: "failed" });
    const { body } = await metrics.render();
    assert.equal(metricValue(body, "work_item_api_bot_last_lap_timestamp_seconds"), Date.parse("2026-11-25T11:00:00.500Z") / 1000);
    assert.equal(metricValue(body, "work_item_api_bot_item_outcomes_total", { outcome: "retried" }), 1);
    assert.equal(metricValue(body, "work_item_api_bot_runs_total", { outcome: "completed" }), 1);
    assert.equal(metricValue(body, "work_item_api_bot_runs_total", { outcome: "failed" }), 1);
    assert.equal(metricValue(body, "work_item_api_webhook_deliveries_total", { outcome: "failed" }), 1);
  });

  const storeCounts = [
    { name: "work_item_api_outbox_backlog", setSource: (metrics: Metrics, source: StoreCountSource) => metrics.setOutboxBacklogSource(source) },
    { name: "work_item_api_items_overdue", setSource: (metrics: Metrics, source: StoreCountSource) => metrics.setItemsOverdueSource(source) },
  ];
  for (const { name, setSource } of storeCounts) {
    test(`${name} is read from its source on every scrape; a failing source keeps the last value`, async () => {
      let count = 7;
      let fail = false;
      const metrics = createMetrics();
      assert.equal(metricValue((await metrics.render()).body, name), 0, "no source: 0");
      setSource(metrics, async () => {
        if (fail) throw new Error("store down");
        return count;
      });
      assert.equal(metricValue((await metrics.render()).body, name), 7);
      count = 2;
      assert.equal(metricValue((await metrics.render()).body, name), 2);
      count = 5;
      fail = true;
      assert.equal(metricValue((await metrics.render()).body, name), 2);
    });
  }

  test("the bot's schedule interval is read from the cron on every scrape; 0 without a worker", async () => {
    const metrics = createMetrics();
    assert.equal(metricValue((await metrics.render()).body, "work_item_api_bot_schedule_interval_seconds"), 0);
    metrics.setScheduleIntervalSource(() => 300);
    assert.equal(metricValue((await metrics.render()).body, "work_item_api_bot_schedule_interval_seconds"), 300);
  });

  test("process metrics carry the prefix when asked for", async () => {
    const { body } = await createMetrics({ defaultMetrics: true }).render();
    assert.match(body, /^work_item_api_process_cpu_user_seconds_total /m);
    assert.doesNotMatch((await createMetrics().render()).body, /process_cpu/);
  });
});
