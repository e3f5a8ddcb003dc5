import assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import { ISO_3166_1_ALPHA_2 } from "../../src/authority-sim/iso-3166-1-alpha-2.ts";
import { rejectionReasons } from "../../src/authority-sim/rules.ts";
import { startAuthoritySim, type AuthoritySim } from "../../src/authority-sim/server.ts";
import { parseLine, startScript, stopAll } from "../helpers/processes.ts";
import { validWorkItem } from "../helpers/test-app.ts";
import { HANG_TIMEOUT_MS, waitUntil } from "../helpers/waiting.ts";

after(() => stopAll());

test("ships the 249 officially assigned ISO 3166-1 alpha-2 codes, and no reserved ones", () => {
  assert.equal(ISO_3166_1_ALPHA_2.size, 249);
  for (const code of ISO_3166_1_ALPHA_2.keys()) assert.match(code, /^[A-Z]{2}$/);
  for (const code of ["DE", "NL", "BE", "GB", "SS", "BQ", "AQ", "AX"]) assert.ok(ISO_3166_1_ALPHA_2.has(code), code);
  for (const code of ["UK", "EU", "XK", "AN", "ZZ", "YU", "de"]) assert.ok(!ISO_3166_1_ALPHA_2.has(code), code);
});

test("rules: 8-digit chamber numbers, assigned country code, export date from today on", () => {
  const now = new Date("2026-11-21T14:00:00Z");
  assert.deepEqual(rejectionReasons(validWorkItem({ exportDate: "2026-11-21T00:00:00Z" }), now), []);
  assert.deepEqual(rejectionReasons(validWorkItem({ exportDate: "2027-01-01T00:00:00+01:00" }), now), []);
  const fields = (request: Record<string, unknown>) => rejectionReasons(request, now).map((r) => r.field);
  assert.deepEqual(fields(validWorkItem({ exportDate: "2026-11-20T23:59:59Z" })), ["exportDate"]);
  assert.deepEqual(fields(validWorkItem({ exportDate: "2027-01-01" })), [], "a date alone is a date");
  assert.deepEqual(fields(validWorkItem({ senderChamberOfCommerceNo: { sendValue: "1234567" } })), ["senderChamberOfCommerceNo"]);
  assert.deepEqual(fields(validWorkItem({ receiverChamberOfCommerceNo: { sendValue: "1234567a" } })), ["receiverChamberOfCommerceNo"]);
  assert.deepEqual(fields(validWorkItem({ receiverChamberOfCommerceNo: { sendValue: " 12345678" } })), ["receiverChamberOfCommerceNo"]);
  assert.deepEqual(fields(validWorkItem({ destinationCountry: { sendValue: "de" } })), ["destinationCountry"]);
  assert.deepEqual(fields(validWorkItem({ destinationCountry: { sendValue: "DEU" } })), ["destinationCountry"]);
  assert.deepEqual(fields({}), ["senderChamberOfCommerceNo", "receiverChamberOfCommerceNo", "destinationCountry", "exportDate"]);
});

describe("simulator over HTTP", { timeout: HANG_TIMEOUT_MS }, () => {
  let sim: AuthoritySim;
  const register = (key: string | undefined, request: Record<string, unknown> = validWorkItem()) =>
    fetch(`${sim.url}/v1/registrations`, {
      method: "POST",
      headers: { "content-type": "application/json", ...(key === undefined ? {} : { "idempotency-key": key }) },
      body: JSON.stringify({ workType: "AuthorityRvdm", request }),
    });

  const status = (applicationNumber: string) => fetch(`${sim.url}/v1/registrations/${encodeURIComponent(applicationNumber)}`);
  const submitted = async (key: string, request?: Record<string, unknown>) => {
    const response = await register(key, request);
    assert.ok(response.status === 202 || response.status === 200, `submit answered ${response.status}`);
    return ((await response.json()) as { applicationNumber: string }).applicationNumber;
  };

  test("submit answers an application number at once; the same key gets the same one, counted per key", async () => {
    sim = await startAuthoritySim({ host: "127.0.0.1", port: 0, latencyMs: 0, errorRate: 0, outage: false, decisionDelayMs: 0 });
    try {
      assert.equal((await register(undefined)).status, 400);
      const first = await register("item-1");
      assert.equal(first.status, 202);
      const { applicationNumber } = (await first.json()) as { applicationNumber: string };
      assert.match(applicationNumber, /^RVDM-A-[0-9A-Z]{10}$/);
      const replay = await register("item-1");
      assert.equal(replay.status, 200);
      assert.equal(replay.headers.get("idempotency-replayed"), "true");
      assert.deepEqual(await replay.json(), { applicationNumber });
      assert.notEqual(await submitted("item-3"), applicationNumber);
      const malformed = await fetch(`${sim.url}/v1/registrations`, { method: "POST", headers: { "content-type": "application/json", "idempotency-key": "m" }, body: "{}" });
      assert.equal(malformed.status, 422, "the syntax check of the first stage");
      assert.equal((await status("RVDM-A-NOSUCHNUMB")).status, 404);
      const stats = sim.stats();
      assert.deepEqual(stats.keys["item-1"], { submits: 2, statusRequests: 0, applicationNumber, registrationNumber: null, changes: 0, withdrawals: 0, traceparents: [] });
    } finally {
      await sim.close();
    }
  });

  test("the decision comes from status: pending until the decision delay passed, then the §5 rules, once for good", async () => {
    sim = await startAuthoritySim({ host: "127.0.0.1", port: 0, latencyMs: 0, errorRate: 0, outage: false, decisionDelayMs: 300 });
    try {
      const good = await submitted("good");
      const bad = await submitted("bad", validWorkItem({ destinationCountry: { sendValue: "XX" } }));
      assert.deepEqual(await (await status(good)).json(), { status: "pending", applicationNumber: good });
      await new Promise((resolve) => setTimeout(resolve, 320));
      const registered = (await (await status(good)).json()) as { status: string; registrationNumber: string; registeredAt: string };
      assert.equal(registered.status, "registered");
      assert.match(registered.registrationNumber, /^RVDM-\d{4}-[0-9A-Z]{10}$/);
      assert.deepEqual(await (await status(good)).json(), registered, "decided once");
      const rejected = (await (await status(bad)).json()) as { status: string; reasons: Array<{ field: string }> };
      assert.equal(rejected.status, "rejected");
      assert.deepEqual(rejected.reasons.map((reason) => reason.field), ["destinationCountry"]);
      const stats = sim.stats();
      assert.equal(stats.registrations, 1);
      assert.equal(stats.rejections, 1);
      assert.deepEqual(stats.keys.good, { submits: 1, statusRequests: 3, applicationNumber: good, registrationNumber: registered.registrationNumber, changes: 0, withdrawals: 0, traceparents: [] });
    } finally {
      await sim.close();
    }
  });

  test("numbers are unique across simulator restarts; a restarted simulator no longer knows earlier applications", async () => {
    const settings = { host: "127.0.0.1", port: 0, latencyMs: 0, errorRate: 0, outage: false, decisionDelayMs: 0 };
    sim = await startAuthoritySim(settings);
    const before = await submitted("same-key");
    const registration = ((await (await status(before)).json()) as { registrationNumber: string }).registrationNumber;
    await sim.close();
    sim = await startAuthoritySim(settings);
    try {
      assert.equal((await status(before)).status, 404);
      const after = await submitted("same-key");
      assert.notEqual(after, before);
      assert.notEqual(((await (await status(after)).json()) as { registrationNumber: string }).registrationNumber, registration);
    } finally {
      await sim.close();
    }
  });

  test("switches: outage, error rate and latency, changed at run time through POST /_sim/config", async () => {
    sim = await startAuthoritySim({ host: "127.0.0.1", port: 0, latencyMs: 0, errorRate: 0, outage: true, decisionDelayMs: 0 });
    const config = (patch: unknown) => fetch(`${sim.url}/_sim/config`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(patch) });
    try {
      assert.equal((await register("a")).status, 503);
      assert.deepEqual(await (await config({ outage: false, errorRate: 1 })).json(), { latencyMs: 0, errorRate: 1, outage: false, decisionDelayMs: 0 });
      assert.equal((await register("a")).status, 500);
      assert.equal(sim.stats().keys.a?.applicationNumber, null, "a failed call files nothing");
      await config({ errorRate: 0, latencyMs: 150, decisionDelayMs: 10 });
      const started = Date.now();
      assert.equal((await register("a")).status, 202);
      assert.ok(Date.now() - started >= 140);
      assert.equal(sim.behaviour.decisionDelayMs, 10);
      const bad = await config({ latencyMs: -1, errorRate: 2, outage: "yes", decisionDelayMs: 1.5 });
      assert.equal(bad.status, 400);
      assert.match(((await bad.json()) as { message: string }).message, /latencyMs.*decisionDelayMs.*errorRate.*outage/);
    } finally {
      await sim.close();
    }
  });
});

test("`npm run authority-sim` runs it as its own process, configured by flags", { timeout: HANG_TIMEOUT_MS }, async () => {
  const sim = startScript("src/authority-sim/main.ts", ["--port", "0", "--outage", "--latency-ms", "5"], {});
  try {
    const line = await waitUntil("the simulator's address line", () => sim.lines.map(parseLine).find((entry) => typeof entry?.url === "string"));
    assert.deepEqual({ ...line, url: "" }, { url: "", latencyMs: 5, errorRate: 0, outage: true, decisionDelayMs: 0 });
    const response = await fetch(`${line.url}/v1/registrations`, { method: "POST", headers: { "content-type": "application/json", "idempotency-key": "k" }, body: "{}" });
    assert.equal(response.status, 503);
  } finally {
    await sim.kill();
  }
  const bad = startScript("src/authority-sim/main.ts", ["--error-rate", "7"], {});
  assert.equal(await bad.exited, 2);
  assert.match(bad.stderr(), /AUTHORITY_SIM_ERROR_RATE/);
});
