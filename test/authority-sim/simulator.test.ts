import assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import { ISO_3166_1_ALPHA_2 } from "../../src/authority-sim/iso-3166-1-alpha-2.ts";
import { rejectionReasons } from "../../src/authority-sim/rules.ts";
import { startAuthoritySim, type AuthoritySim, type SimStats } from "../../src/authority-sim/server.ts";
import { parseLine, startScript, stopAll } from "../helpers/processes.ts";
import { validWorkItem } from "../helpers/test-app.ts";
import { waitUntil } from "../helpers/waiting.ts";

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

describe("simulator over HTTP", { timeout: 30_000 }, () => {
  let sim: AuthoritySim;
  const register = (key: string | undefined, request: Record<string, unknown> = validWorkItem()) =>
    fetch(`${sim.url}/v1/registrations`, {
      method: "POST",
      headers: { "content-type": "application/json", ...(key === undefined ? {} : { "idempotency-key": key }) },
      body: JSON.stringify({ workType: "AuthorityRvdm", request }),
    });

  test("deduplicates on the Idempotency-Key: the same key gets the same answer and is registered once", async () => {
    sim = await startAuthoritySim({ host: "127.0.0.1", port: 0, latencyMs: 0, errorRate: 0, outage: false });
    try {
      assert.equal((await register(undefined)).status, 400);
      const first = await register("item-1");
      assert.equal(first.status, 201);
      const registration = (await first.json()) as { registrationNumber: string; registeredAt: string };
      const replay = await register("item-1");
      assert.equal(replay.status, 200);
      assert.equal(replay.headers.get("idempotency-replayed"), "true");
      assert.deepEqual(await replay.json(), registration);
      const rejected = await register("item-2", validWorkItem({ destinationCountry: { sendValue: "XX" } }));
      assert.equal(rejected.status, 422);
      const { reasons } = (await rejected.json()) as { reasons: Array<{ field: string }> };
      assert.deepEqual(reasons.map((r) => r.field), ["destinationCountry"]);
      assert.equal((await register("item-2")).status, 422, "a rejection is replayed too, even with another body");
      const other = (await (await register("item-3")).json()) as { registrationNumber: string };
      assert.notEqual(other.registrationNumber, registration.registrationNumber);

      const stats = (await (await fetch(`${sim.url}/_sim/stats`)).json()) as SimStats;
      assert.equal(stats.registrations, 2);
      assert.equal(stats.rejections, 1);
      assert.deepEqual(stats.keys["item-1"], { requests: 2, registrations: 1, registrationNumber: registration.registrationNumber });
      assert.deepEqual(stats.keys["item-2"], { requests: 2, registrations: 0, registrationNumber: null });
    } finally {
      await sim.close();
    }
  });

  test("switches: outage, error rate and latency, changed at run time through POST /_sim/config", async () => {
    sim = await startAuthoritySim({ host: "127.0.0.1", port: 0, latencyMs: 0, errorRate: 0, outage: true });
    const config = (patch: unknown) => fetch(`${sim.url}/_sim/config`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(patch) });
    try {
      assert.equal((await register("a")).status, 503);
      assert.deepEqual(await (await config({ outage: false, errorRate: 1 })).json(), { latencyMs: 0, errorRate: 1, outage: false });
      assert.equal((await register("a")).status, 500);
      assert.equal(sim.stats().registrations, 0, "a failed call registers nothing");
      await config({ errorRate: 0, latencyMs: 150 });
      const started = Date.now();
      assert.equal((await register("a")).status, 201);
      assert.ok(Date.now() - started >= 140);
      const bad = await config({ latencyMs: -1, errorRate: 2, outage: "yes" });
      assert.equal(bad.status, 400);
      assert.match(((await bad.json()) as { message: string }).message, /latencyMs.*errorRate.*outage/);
    } finally {
      await sim.close();
    }
  });
});

test("`npm run authority-sim` runs it as its own process, configured by flags", { timeout: 30_000 }, async () => {
  const sim = startScript("src/authority-sim/main.ts", ["--port", "0", "--outage", "--latency-ms", "5"], {});
  try {
    const line = await waitUntil("the simulator's address line", () => sim.lines.map(parseLine).find((entry) => typeof entry?.url === "string"), 20_000);
    assert.deepEqual({ ...line, url: "" }, { url: "", latencyMs: 5, errorRate: 0, outage: true });
    const response = await fetch(`${line.url}/v1/registrations`, { method: "POST", headers: { "content-type": "application/json", "idempotency-key": "k" }, body: "{}" });
    assert.equal(response.status, 503);
  } finally {
    await sim.kill();
  }
  const bad = startScript("src/authority-sim/main.ts", ["--error-rate", "7"], {});
  assert.equal(await bad.exited, 2);
  assert.match(bad.stderr(), /AUTHORITY_SIM_ERROR_RATE/);
});
