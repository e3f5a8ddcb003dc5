// The bench's Fastify floor stands for the cheapest WorkItem/{id} a Fastify service can answer:
// that holds only while it sends what the real route sends, with the same statement.
import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
import { launch, REPO_ROOT } from "../../scripts/lib/processes.ts";
import { sqliteBackend } from "../helpers/backends.ts";
import { createTestApp, validWorkItem } from "../helpers/test-app.ts";


test("the bench's Fastify floor answers Ping, WorkItem/{id} and WorkItems with the real routes' bodies", async () => {
  const testApp = await createTestApp(sqliteBackend);
  // Under tsx, the floor's imports of dist/…/x.js resolve to src/…/x.ts.
  const floor = launch(process.execPath, ["--import", "tsx", join(REPO_ROOT, "bench", "servers", "fastify-floor.mjs"), "0", testApp.databaseUrl.slice("sqlite:".length), join(REPO_ROOT, "src")]);
  try {
    const tenant = await testApp.tenant(5);
    const other = await testApp.tenant(6);
    const headers = { authorization: `Bearer ${tenant.token}` };
    let workItemId = 0;
    for (const reference of ["FLOOR-1", "FLOOR-2", "FLOOR-3"]) {
      const added = await testApp.app.inject({ method: "POST", url: "/api/AuthorityRvdm/AddWorkItemCreate", headers, payload: validWorkItem({ customerReference: reference }) });
      assert.equal(added.statusCode, 200, added.body);
      workItemId = added.json<{ workItemId: number }>().workItemId;
    }
    const real = await testApp.app.inject({ method: "GET", url: `/api/AuthorityRvdm/WorkItem/${workItemId}`, headers });
    assert.equal(real.statusCode, 200, real.body);

    const port = Number(await floor.waitForLine("the floor to listen", (line) => /^listening (\d+)$/.exec(line)?.[1], 30_000));
    const base = `http://127.0.0.1:${port}/api/AuthorityRvdm`;
    const item = await fetch(`${base}/WorkItem/${workItemId}`, { headers });
    assert.equal(item.status, 200);
    assert.equal(item.headers.get("content-type"), real.headers["content-type"]);
    assert.equal(await item.text(), real.body);
    // The company comes from the token: another company's token finds nothing.
    assert.equal((await fetch(`${base}/WorkItem/${workItemId}`, { headers: { authorization: `Bearer ${other.token}` } })).status, 404);
    // A page with a next cursor, and the page that cursor leads to.
    const firstPage = await testApp.app.inject({ method: "GET", url: "/api/AuthorityRvdm/WorkItems?limit=2", headers });
    const { nextCursor } = firstPage.json<{ nextCursor: string }>();
    assert.ok(nextCursor);
    for (const query of ["limit=2", `limit=2&cursor=${nextCursor}`]) {
      const real = await testApp.app.inject({ method: "GET", url: `/api/AuthorityRvdm/WorkItems?${query}`, headers });
      const page = await fetch(`${base}/WorkItems?${query}`, { headers });
      assert.equal(await page.text(), real.body, query);
    }
    // Pong's text changes each second: the same form, so the same length, is what matters.
    const pong = /^Pong --> [A-Z][a-z]+day, \d{1,2} [A-Z][a-z]+ \d{4} \d\d:\d\d:\d\d$/;
    assert.match(await (await fetch(`${base}/Ping`, { headers })).text(), pong);
    assert.match((await testApp.app.inject({ method: "GET", url: "/api/AuthorityRvdm/Ping", headers })).body, pong);
  } finally {
    await floor.kill();
    await testApp.close();
  }
});
