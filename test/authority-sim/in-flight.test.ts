// The simulator's account of calls in flight (SPEC §14: `maxInFlight`), which bench:deadlines
// turns into the authority's utilisation: real HTTP over loopback, calls held open by latency.
import assert from "node:assert/strict";
import { test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { startAuthoritySim, type SimStats } from "../../src/authority-sim/server.ts";
import { validWorkItem } from "../helpers/test-app.ts";
import { HANG_TIMEOUT_MS, waitUntil } from "../helpers/waiting.ts";

/** Long enough that every call of a wave has arrived while the first is still held, on a loaded machine too. */
const LATENCY_MS = 2000;
/** How long the calls of a wave may take to arrive: well inside the latency, so none has been answered yet. */
const ARRIVAL_MS = LATENCY_MS * 0.75;

test("counts submits and status requests in flight together: the most at once, and their sum over time", { timeout: HANG_TIMEOUT_MS }, async () => {
  const sim = await startAuthoritySim({ host: "127.0.0.1", port: 0, latencyMs: 0, errorRate: 0, outage: false, decisionDelayMs: 0 });
  try {
    const submit = async (key: string) => {
      const response = await fetch(`${sim.url}/v1/registrations`, {
        method: "POST",
        headers: { "content-type": "application/json", "idempotency-key": key },
        body: JSON.stringify({ workType: "AuthorityRvdm", request: validWorkItem() }),
      });
      assert.equal(response.status, 202);
      return ((await response.json()) as { applicationNumber: string }).applicationNumber;
    };
    const status = async (applicationNumber: string) => {
      const response = await fetch(`${sim.url}/v1/registrations/${applicationNumber}`);
      assert.equal(response.status, 200);
      await response.json();
    };
    // Two applications to ask about, made before the latency is switched on.
    const numbers = [await submit("first"), await submit("second")];
    const before = sim.stats();
    assert.equal(before.maxInFlight, 1);
    assert.equal(before.inFlight, 0);
    sim.behaviour.latencyMs = LATENCY_MS;

    // Three waves of five calls at once: three submits and two status requests each.
    const waves = 3;
    const concurrency = 5;
    for (let wave = 0; wave < waves; wave++) {
      const calls = [
        ...[0, 1, 2].map((i) => submit(`wave-${wave}-${i}`)),
        ...numbers.map((number) => status(number)),
      ];
      // Every call of the wave is held by the latency: all of them are in flight at once.
      await waitUntil("every call of the wave in flight", () => sim.stats().inFlight === concurrency, ARRIVAL_MS, 5);
      await Promise.all(calls);
    }

    const response = await fetch(`${sim.url}/_sim/stats`);
    const after = (await response.json()) as SimStats;
    assert.equal(after.maxInFlight, concurrency);
    assert.equal(after.maxConcurrent, concurrency, "the first name of the figure says the same");
    assert.equal(after.inFlight, 0);
    assert.equal(after.statusRequests, waves * numbers.length);
    assert.equal(Object.keys(after.keys).length, 2 + waves * 3, "the per-key counts are there by default");
    // Each call is in flight at least the latency, and not much longer on loopback (a loaded
    // machine may answer late, but counting a call twice would show).
    const summed = after.inFlightMs - before.inFlightMs;
    const calls = waves * concurrency;
    assert.ok(summed >= calls * (LATENCY_MS - 5), `${summed} call-ms for ${calls} calls of ${LATENCY_MS} ms`);
    assert.ok(summed <= calls * LATENCY_MS * 1.5, `${summed} call-ms for ${calls} calls of ${LATENCY_MS} ms`);
    assert.ok(after.readAt > before.readAt && after.readAt <= Date.now() + 1, "readAt is a time on the epoch clock");

    // The cheap read: the same totals, without the per-key counts.
    const totals = (await (await fetch(`${sim.url}/_sim/stats?keys=false`)).json()) as Record<string, unknown>;
    assert.equal("keys" in totals, false);
    assert.equal(totals.maxInFlight, concurrency);
    assert.equal(totals.requests, after.requests);
  } finally {
    await sim.close();
  }
});

test("an idle simulator adds nothing to the sum, and a call held open adds to it while it is read", { timeout: HANG_TIMEOUT_MS }, async () => {
  const sim = await startAuthoritySim({ host: "127.0.0.1", port: 0, latencyMs: LATENCY_MS, errorRate: 0, outage: false, decisionDelayMs: 0 });
  try {
    const idle = sim.stats();
    await sleep(50);
    assert.equal(sim.stats().inFlightMs, idle.inFlightMs);
    const call = fetch(`${sim.url}/v1/registrations/RVDM-A-NOSUCHNUMB`);
    const arrived = await waitUntil("the call in flight", () => (sim.stats().inFlight === 1 ? sim.stats() : undefined), ARRIVAL_MS, 5);
    await sleep(50);
    const during = sim.stats();
    assert.equal(during.inFlight, 1);
    // One call in flight all along: the sum grew by exactly the time between the two reads (a
    // timer may fire a fraction of a millisecond early, so the sleep itself is no measure).
    const grew = during.inFlightMs - arrived.inFlightMs;
    assert.ok(grew >= 40, `read mid-call, the sum includes the call so far (${grew} ms)`);
    assert.ok(Math.abs(grew - (during.readAt - arrived.readAt)) < 0.01, `${grew} ms against ${during.readAt - arrived.readAt} ms between the reads`);
    const answer = await call;
    assert.equal(answer.status, 404);
    await answer.body?.cancel();
    assert.equal(sim.stats().inFlight, 0);
  } finally {
    await sim.close();
  }
});
