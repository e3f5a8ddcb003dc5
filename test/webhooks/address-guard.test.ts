/**
 * The SSRF guard: a table of non-public targets refused at intake (400) and again at delivery
 * (after DNS resolution), unless WEBHOOK_ALLOW_PRIVATE_NETWORKS=true.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { startAuthoritySim } from "../../src/authority-sim/server.ts";
import { createHttpAuthorityAdapter } from "../../src/bot/http-authority-adapter.ts";
import { runBotOnce } from "../../src/bot/run-once.ts";
import { checkWebhookTarget, refusedBecause, systemLookup } from "../../src/webhooks/address-guard.ts";
import { createDispatcher } from "../../src/webhooks/dispatcher.ts";
import { availableBackends } from "../helpers/backends.ts";
import { bearer, createTestApp, problem, validWorkItem } from "../helpers/test-app.ts";
import { startReceiver } from "../helpers/webhook-receiver.ts";
import { createAuthorityGate } from "../../src/bot/authority-gate.ts";
import { HANG_TIMEOUT_MS } from "../helpers/waiting.ts";

/** The brief's table: each must be refused at intake and at delivery. */
const REFUSED_TARGETS = (port: string) => [
  `http://127.0.0.1:${port}/hooks`,
  `http://[::1]:${port}/hooks`,
  "http://10.0.0.1/hooks",
  "http://169.254.169.254/latest/meta-data/",
  `http://[::ffff:127.0.0.1]:${port}/hooks`,
  `http://localhost:${port}/hooks`,
];

test("refusedBecause classifies every non-public range and lets public addresses through", () => {
  const refused: Array<[string, RegExp]> = [
    ["127.0.0.1", /loopback/],
    ["127.255.0.9", /loopback/],
    ["::1", /loopback/],
    ["10.0.0.1", /private/],
    ["172.16.0.1", /private/],
    ["172.31.255.255", /private/],
    ["192.168.1.1", /private/],
    ["169.254.169.254", /link-local/],
    ["fe80::1", /link-local/],
    ["fe80::1%eth0", /scoped/],
    ["100.64.0.1", /carrier-grade NAT/],
    ["100.127.255.255", /carrier-grade NAT/],
    ["224.0.0.1", /multicast/],
    ["ff02::1", /multicast/],
    ["0.0.0.0", /unspecified/],
    ["::", /unspecified/],
    ["240.0.0.1", /reserved/],
    ["255.255.255.255", /reserved/],
    ["192.0.0.8", /reserved/],
    ["192.0.2.10", /documentation/],
    ["198.51.100.1", /documentation/],
    ["203.0.113.7", /documentation/],
    ["2001:db8::1", /documentation/],
    ["198.18.0.1", /benchmarking/],
    ["fc00::1", /unique local/],
    ["fd12:3456::1", /unique local/],
    ["fec0::1", /site-local/],
    ["::ffff:127.0.0.1", /loopback.*IPv4-mapped/],
    ["::ffff:7f00:1", /loopback.*IPv4-mapped/],
    ["::ffff:10.1.2.3", /private.*IPv4-mapped/],
    ["::ffff:169.254.169.254", /link-local.*IPv4-mapped/],
    ["64:ff9b::7f00:1", /loopback.*NAT64/],
    ["64:ff9b::a9fe:a9fe", /link-local.*NAT64/],
    ["64:ff9b:1::1", /reserved/],
    ["2002:7f00:1::1", /loopback.*6to4/],
    ["2001::1", /reserved/],
    ["::127.0.0.1", /reserved/],
    ["100::1", /reserved/],
  ];
  for (const [ip, reason] of refused) assert.match(refusedBecause(ip) ?? "allowed", reason, ip);
  for (const ip of ["8.8.8.8", "1.1.1.1", "172.32.0.1", "100.128.0.1", "93.184.215.14", "2606:4700:4700::1111", "2a00:1450::1", "::ffff:8.8.8.8", "64:ff9b::808:808"]) {
    assert.equal(refusedBecause(ip), undefined, ip);
  }
});

test("checkWebhookTarget resolves host names and checks every address; odd IPv4 spellings are normalised first", async () => {
  const options = { allowPrivateNetworks: false };
  assert.equal((await checkWebhookTarget("http://localhost/x", options)).kind, "refused");
  assert.equal((await checkWebhookTarget("http://2130706433/x", options)).kind, "refused");
  assert.equal((await checkWebhookTarget("http://0x7f.1/x", options)).kind, "refused");
  assert.equal((await checkWebhookTarget("http://user:pw@8.8.8.8/x", options)).kind, "refused");
  const mixed = await checkWebhookTarget("http://mixed.test/x", { ...options, lookup: async () => [{ address: "8.8.8.8", family: 4 }, { address: "10.0.0.1", family: 4 }] });
  assert.deepEqual(mixed.kind === "refused" && /10\.0\.0\.1/.test(mixed.reason), true, "one private address among public ones is enough to refuse");
  assert.equal((await checkWebhookTarget("https://8.8.8.8/x", options)).kind, "allowed");
  assert.equal((await checkWebhookTarget("http://does-not-exist.invalid/x", options)).kind, "unresolved");
  assert.equal((await checkWebhookTarget("http://localhost/x", { allowPrivateNetworks: true })).kind, "allowed");
});

for (const backend of await availableBackends()) {
  describe(`SSRF guard [${backend.name}]`, { timeout: HANG_TIMEOUT_MS }, () => {
    test("intake refuses each non-public target with 400 VALIDATION_FAILED naming webhookUrl, and stores nothing", async () => {
      const t = await createTestApp(backend);
      try {
        const tenant = await t.tenant(21);
        const before = await t.countRows();
        for (const url of [...REFUSED_TARGETS("8080"), "http://0x7f.1/", "http://[fd00::1]/", "http://100.64.0.1/", "http://[64:ff9b::7f00:1]/"]) {
          const response = await t.app.inject({ method: "POST", url: "/api/AuthorityRvdm/AddWorkItemCreate", headers: bearer(tenant.token), payload: validWorkItem({ webhookUrl: url }) });
          assert.equal(response.statusCode, 400, `${url}: ${response.body}`);
          const body = problem(response);
          assert.equal(body.type, "urn:work-item-api:problem:validation-failed");
          assert.deepEqual(Object.keys(body.errors ?? {}), ["webhookUrl"], url);
          assert.match(body.errors!.webhookUrl![0]!, /public/, url);
        }
        assert.deepEqual(await t.countRows(), before);
        const publicTarget = await t.app.inject({ method: "POST", url: "/api/AuthorityRvdm/AddWorkItemCreate", headers: bearer(tenant.token), payload: validWorkItem({ webhookUrl: "https://93.184.215.14/hooks" }) });
        assert.equal(publicTarget.statusCode, 200, publicTarget.body);
      } finally {
        await t.close();
      }
    });

    test("intake fails closed: a host that does not resolve is a 400 on webhookUrl, a lookup that times out a 503 with Retry-After, never a 200", async () => {
      const hangs = (host: string) => (host === "slow.test" ? new Promise<never>(() => {}) : systemLookup(host));
      const t = await createTestApp(backend, {}, { webhookLookup: hangs });
      try {
        const tenant = await t.tenant(23);
        const before = await t.countRows();
        const add = (webhookUrl: string) =>
          t.app.inject({ method: "POST", url: "/api/AuthorityRvdm/AddWorkItemCreate", headers: bearer(tenant.token), payload: validWorkItem({ webhookUrl }) });
        const bulk = (webhookUrl: string) =>
          t.app.inject({ method: "POST", url: "/api/AuthorityRvdm/AddWorkItemCreateBulk", headers: bearer(tenant.token), payload: { items: [validWorkItem({ webhookUrl })] } });

        const unknown = await add("https://does-not-exist.invalid/hooks");
        assert.equal(unknown.statusCode, 400, unknown.body);
        assert.match(problem(unknown).errors?.webhookUrl?.[0] ?? "", /does-not-exist\.invalid does not resolve/);
        const unknownInBulk = await bulk("https://does-not-exist.invalid/hooks");
        assert.equal(unknownInBulk.statusCode, 200, unknownInBulk.body);
        assert.equal(unknownInBulk.json<{ results: Array<{ status?: number; errors?: Record<string, string[]> }> }>().results[0]?.errors?.webhookUrl?.length, 1);

        const started = performance.now();
        for (const response of [await add("https://slow.test/hooks"), await bulk("https://slow.test/hooks")]) {
          assert.equal(response.statusCode, 503, response.body);
          assert.match(String(response.headers["content-type"]), /^application\/problem\+json/);
          assert.ok(Number(response.headers["retry-after"]) > 0, "Retry-After");
          assert.match(problem(response).detail, /webhookUrl host could not be looked up/);
        }
        assert.ok(performance.now() - started < 10_000, "each gives up after the lookup's 3 s");
        assert.deepEqual(await t.countRows(), before, "nothing stored");
      } finally {
        await t.close();
      }
    });

    test("with WEBHOOK_ALLOW_PRIVATE_NETWORKS=true intake accepts them; the dispatcher without it refuses each at delivery and records it", async () => {
      const receiver = await startReceiver(() => 200);
      // At intake rebinding.test resolves to a public address; at delivery (below) to the metadata one.
      const intakeLookup = async (host: string) => (host === "rebinding.test" ? [{ address: "93.184.215.14", family: 4 as const }] : systemLookup(host));
      const t = await createTestApp(backend, { WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true", WEBHOOK_TIMEOUT_MS: "1000" }, { webhookLookup: intakeLookup });
      const sim = await startAuthoritySim({ host: "127.0.0.1", port: 0, latencyMs: 0, errorRate: 0, outage: false, decisionDelayMs: 0 });
      const adapter = createHttpAuthorityAdapter({ baseUrl: sim.url, timeoutMs: 2000 });
      try {
        const tenant = await t.tenant(22);
        const targets = [...REFUSED_TARGETS(new URL(receiver.url).port), "http://rebinding.test/hooks"];
        const ids = new Map<number, string>();
        for (const url of targets) {
          const response = await t.app.inject({ method: "POST", url: "/api/AuthorityRvdm/AddWorkItemCreate", headers: bearer(tenant.token), payload: validWorkItem({ webhookUrl: url }) });
          assert.equal(response.statusCode, 200, `${url}: ${response.body}`);
          ids.set(response.json().workItemId, url);
        }
        assert.equal((await runBotOnce({ store: t.store, gate: createAuthorityGate({ store: t.store, adapter, config: t.config, owner: "bot" }), config: t.config, owner: "bot" })).succeeded, targets.length);

        // At delivery the flag is off, and rebinding.test now "resolves" to the metadata address.
        const dispatcher = createDispatcher({
          store: t.store,
          config: { ...t.config, webhookAllowPrivateNetworks: false },
          owner: "dispatcher",
          lookup: async (host) => (host === "rebinding.test" ? [{ address: "169.254.169.254", family: 4 }] : systemLookup(host)),
        });
        const summary = await dispatcher.deliverDue();
        assert.equal(summary.failed, targets.length, JSON.stringify(summary));
        for (const report of summary.deliveries) {
          assert.equal(report.outcome, "failed");
          assert.match(report.error ?? "", /^refused: .*public addresses/, ids.get(report.workItemId));
        }
        assert.deepEqual([...new Set(summary.deliveries.map((r) => ids.get(r.workItemId)))].sort(), [...targets].sort());
        assert.equal(receiver.requests.length, 0, "no request reached the loopback receiver");
        assert.deepEqual((await dispatcher.deliverDue()).deliveries, [], "a refusal is final, not retried");
        await dispatcher.stop();
      } finally {
        await adapter.close();
        await sim.close();
        await t.close();
        await receiver.close();
      }
    });
  });
}
