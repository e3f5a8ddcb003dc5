import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { availableBackends } from "../helpers/backends.ts";
import { bearer, createTestApp, problem, type TestApp, type Tenant } from "../helpers/test-app.ts";

for (const backend of await availableBackends()) {
  describe(`path ids and query numbers must be finite [${backend.name}]`, () => {
    let t: TestApp;
    let tenant: Tenant;
    before(async () => {
      t = await createTestApp(backend);
      tenant = await t.tenant(901);
    });
    after(() => t.close());

    for (const url of ["/api/AuthorityRvdm/WorkItem/Infinity", "/api/AuthorityRvdm/WorkBatch/1e400", "/api/AuthorityRvdm/WorkItems?workBatchId=Infinity", "/api/AuthorityRvdm/WorkItems?limit=-Infinity"]) {
      test(`${url} is a 400 naming the field`, async () => {
        const response = await t.app.inject({ url, headers: bearer(tenant.token) });
        assert.equal(response.statusCode, 400, response.body);
        assert.equal(Object.keys(problem(response).errors ?? {}).length, 1);
      });
    }

    test("a body-less DELETE with a JSON content type is not a malformed request", async () => {
      const response = await t.app.inject({ method: "DELETE", url: "/api/AuthorityRvdm/WorkItem/424242", headers: { ...bearer(tenant.token), "content-type": "application/json" } });
      assert.equal(response.statusCode, 404);
    });
  });
}
